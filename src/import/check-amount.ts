/**
 * Amount rule (interface doc §2.4.1/§2.4.2: "decimal with two decimal places"; §2.1 shows the
 * `NN.NN` format): digits, one dot, exactly two decimals, greater than zero. The string is sent
 * to the service exactly as written. Each common spreadsheet mistake gets its own code and, where
 * it can be derived without rounding, a suggestion.
 */
import { AMOUNT_PATTERN } from '../money.js';
import { NON_LATIN_DIGIT, digitKind, toLatinDigits } from './digits.js';
import type { RowIssue } from './row-issues.js';

/** Most digits accepted before the dot (a guard against typos; the service's maximum is not shown, §8). */
export const MAX_AMOUNT_INTEGER_DIGITS = 12;

function suggestFrom(candidate: string): string | undefined {
  if (/^\d+$/.test(candidate)) candidate = `${candidate}.00`;
  else if (/^\d+\.\d$/.test(candidate)) candidate = `${candidate}0`;
  return AMOUNT_PATTERN.test(candidate) && !/^0\d/.test(candidate) && !/^0+\.00$/.test(candidate)
    ? candidate
    : undefined;
}

/** Checks one `amount` cell; returns `undefined` when it is a valid positive EGP amount. */
export function checkAmount(value: string): RowIssue | undefined {
  const column = 'amount';
  const found = value;
  const issue = (code: RowIssue['code'], suggestion?: string): RowIssue =>
    suggestion === undefined ? { column, code, found } : { column, code, found, suggestion };

  if (AMOUNT_PATTERN.test(value)) {
    if (/^0+\.00$/.test(value)) return issue('amount_not_positive');
    if (/^0\d/.test(value)) return issue('amount_leading_zero', suggestFrom(value.replace(/^0+(?=\d)/, '')));
    if (value.indexOf('.') > MAX_AMOUNT_INTEGER_DIGITS) {
      return { column, code: 'amount_too_large', found, params: { maxDigits: MAX_AMOUNT_INTEGER_DIGITS } };
    }
    return undefined;
  }
  if (NON_LATIN_DIGIT.test(value)) {
    // The same value in digits 0-9: valid as it stands, or with the fix its own rule suggests.
    const latin = toLatinDigits(value).trim();
    const again = checkAmount(latin);
    const suggestion = again === undefined ? latin : again.suggestion;
    return { ...issue('amount_non_latin_digits', suggestion), params: { kind: digitKind(value) } };
  }
  if (value.trim() !== value) {
    const inner = value.trim();
    return issue('amount_whitespace', AMOUNT_PATTERN.test(inner) ? inner : undefined);
  }
  if (/^-/.test(value)) return issue('amount_not_positive');
  if (/^\d+(\.\d+)?[eE][+-]?\d+$/.test(value)) return issue('amount_format');
  // A spreadsheet formula or cell reference ("=A1*2", "@SUM(…)"): its value cannot be known here,
  // so no number is suggested from its digits.
  if (/^[=@]/.test(value)) return issue('amount_format');
  if (/[^\d.,\s]/.test(value)) {
    // Suggest only when the text holds one number ("100.00 EGP"), never digits glued from several.
    const numbers = value.match(/[\d.,]+/g) ?? [];
    const number = numbers.length === 1 ? numbers[0]! : '';
    return issue('amount_currency_text', /^\d+(\.\d+)?$/.test(number) ? suggestFrom(number) : undefined);
  }
  if (/^\d{1,3}(,\d{3})+(\.\d{1,2})?$/.test(value))
    return issue('amount_thousands_separator', suggestFrom(value.replace(/,/g, '')));
  if (/^\d{1,3}(\.\d{3})+,\d{2}$/.test(value))
    return issue('amount_decimal_comma', suggestFrom(value.replace(/\./g, '').replace(',', '.')));
  if (/^\d+,\d{1,2}$/.test(value)) return issue('amount_decimal_comma', suggestFrom(value.replace(',', '.')));
  if (/^\d+$/.test(value) || /^\d+\.\d$/.test(value)) return issue('amount_decimal_places', suggestFrom(value));
  if (/^\d+\.\d{3,}$/.test(value) || /^\d+\.$/.test(value) || /^\.\d+$/.test(value))
    return issue('amount_decimal_places');
  return issue('amount_format');
}
