/**
 * The one wording table: turns a `RowIssue` into a sentence a finance clerk can act on, saying
 * what was found, what is expected, and a suggestion where one exists.
 */
import type { RowIssue, RowIssueCode } from './row-issues.js';
import { SHOWN_ESCAPED } from './invisible.js';

const AMOUNT_EXPECTED =
  'an amount in EGP with digits, one dot and exactly two decimals, greater than zero, e.g. 1500.00';

/**
 * Shows a found value in quotes, shortened to 60 characters, with invisible characters, controls
 * and no-break spaces written as `\uXXXX` (one backslash), so a person sees where they are.
 */
export function showValue(value: string | undefined): string {
  if (value === undefined) return '""';
  const short = value.length > 60 ? `${value.slice(0, 57)}...` : value;
  return JSON.stringify(short).replace(SHOWN_ESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** "U+200D ZERO WIDTH JOINER and U+2028 LINE SEPARATOR", from `params.chars` of `text_invisible_chars`. */
function invisibleNames(i: RowIssue): string {
  const names = (i.params?.chars as readonly string[] | undefined) ?? [];
  if (names.length === 0) return 'invisible characters';
  const list = names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]!}`;
  return `the invisible character${names.length === 1 ? '' : 's'} ${list}`;
}

/** `field_count`, naming the value a quote inside it split, when that is the cause. */
function fieldCount(i: RowIssue): string {
  const base = `the row has ${String(i.params?.found)} fields but the header has ${String(i.params?.expected)}`;
  if (i.params?.quote !== true) return `${base}, check for a missing or extra comma`;
  // Shown as written in the file, not JSON-quoted: the fix is about quotes, so they must read plainly.
  return (
    `${base}: the value ${String(i.params?.value)} holds a quote (") but does not start with one, so the ` +
    `delimiter inside it splits it; put the whole value in quotes and write each inner quote twice: ${String(i.suggestion)}`
  );
}

/**
 * `mobile_invalid`, saying what is wrong with a number written as + and digits when the check
 * knows it (`../import/check-mobile.ts`: digits after the country code, expected count, a 0 kept
 * after the code): "+20 and exactly 10 digits" is the wallet rule of the README's CSV template.
 */
function mobileInvalid(i: RowIssue): string {
  const base = `found ${showValue(i.found)}, which is not a valid mobile number`;
  const code = i.params?.callingCode;
  if (typeof code !== 'string') return `${base}, expected the international format, e.g. +201001234567`;
  const expected = `expected +${code} and exactly ${String(i.params?.expected)} digits`;
  const digits = Number(i.params?.digits);
  const lengthOk = String(i.params?.expected).split(' or ').includes(String(digits));
  if (!lengthOk) {
    const zero =
      i.params?.zero === true ? ', starting with 0 (the national 0 is not written after the country code)' : '';
    return `${base}: it has ${String(digits)} digits after +${code}${zero}, ${expected}`;
  }
  if (i.params?.zero === true) return `${base}: the national 0 is not written after +${code}, ${expected}`;
  return `${base}, ${expected} that form a mobile number`;
}

const WORDING: Record<RowIssueCode, (i: RowIssue) => string> = {
  required: () => 'is empty, a value is required',
  not_for_channel: (i) =>
    `must be empty on a ${String(i.params?.channel)} row, found ${showValue(i.found)}, check the channel or move the value`,
  field_count: fieldCount,
  channel_invalid: (i) => `found ${showValue(i.found)}, expected wallet or bank`,
  type_invalid: (i) => `found ${showValue(i.found)}, expected TRANSFER or REFUND (upper case)`,
  amount_format: (i) => `found ${showValue(i.found)}, expected ${AMOUNT_EXPECTED}`,
  amount_decimal_places: (i) => `found ${showValue(i.found)}, expected exactly two decimals, e.g. 1500.00`,
  amount_thousands_separator: (i) =>
    `found ${showValue(i.found)} with a thousands separator, expected digits and a dot only`,
  amount_decimal_comma: (i) =>
    `found ${showValue(i.found)} with a decimal comma, expected a dot before the two decimals`,
  amount_not_positive: (i) => `found ${showValue(i.found)}, the amount must be greater than zero`,
  amount_whitespace: (i) => `found ${showValue(i.found)} with spaces around it, expected the amount alone`,
  amount_currency_text: (i) =>
    `found ${showValue(i.found)}, expected the number alone, without a currency or other text`,
  amount_non_latin_digits: (i) =>
    `found ${showValue(i.found)} in ${String(i.params?.kind ?? 'Arabic-Indic')} digits, expected Western digits 0-9 and a dot`,
  amount_leading_zero: (i) => `found ${showValue(i.found)} with a leading zero, expected no leading zeros`,
  amount_too_large: (i) =>
    `found ${showValue(i.found)}, the amount has more than ${String(i.params?.maxDigits)} digits before the dot`,
  amount_over_limit: (i) =>
    `found ${showValue(i.found)}, over the limit of EGP ${String(i.params?.limit)} per payout item (CASHOUT_MAX_ITEM_AMOUNT)`,
  mobile_not_international: (i) =>
    i.params?.digits === undefined
      ? `found ${showValue(i.found)}, expected the international format with + and country code, e.g. +201001234567`
      : `found ${showValue(i.found)} in ${String(i.params.digits)} digits, expected Western digits 0-9 in the international format, e.g. +201001234567`,
  mobile_invalid: mobileInvalid,
  mobile_not_mobile: (i) =>
    `found ${showValue(i.found)}, which is a ${String(i.params?.kind ?? 'non-mobile')} number, a wallet needs a mobile number`,
  mobile_country: (i) =>
    `found ${showValue(i.found)}, a number of ${String(i.params?.country ?? 'another country')}, wallets are accepted for ${String(i.params?.allowed)} numbers only`,
  bank_near_match: (i) =>
    `found ${showValue(i.found)}, which differs from a supported bank name only in case, spacing or dashes, the service needs the exact name`,
  bank_unknown: (i) =>
    `found ${showValue(i.found)}, which is not on the supported bank list, expected a name exactly as the list gives it`,
  account_format: (i) =>
    `found ${showValue(i.found)} with spaces, dashes or lower-case letters, expected the number written without them`,
  account_non_latin_digits: (i) =>
    `found ${showValue(i.found)} in ${String(i.params?.kind ?? 'non-Western')} digits, expected Western digits 0-9 (or EG and 27 digits)`,
  number_scientific: (i) =>
    `found ${showValue(i.found)}, a number a spreadsheet showed in scientific notation: its last digits are lost; ` +
    'format the column as Text and type the number again',
  bank_no_break_space: (i) =>
    `found ${showValue(i.found)}, which holds U+00A0 NO-BREAK SPACE where the supported bank name has an ordinary space`,
  account_invalid: (i) =>
    `found ${showValue(i.found)}, expected an account number of ${String(i.params?.min)} to ${String(i.params?.max)} digits or an Egyptian IBAN (EG and 27 digits)`,
  iban_invalid: (i) => `found ${showValue(i.found)}, an Egyptian IBAN is EG followed by 27 digits (29 characters)`,
  iban_checksum: (i) =>
    `found ${showValue(i.found)}, whose IBAN check digits do not match, check the number with the beneficiary`,
  text_too_long: (i) => `is ${String(i.params?.length)} characters long, at most ${String(i.params?.max)} are accepted`,
  text_control_chars: (i) => `found ${showValue(i.found)}, which holds control characters, remove them`,
  text_invisible_chars: (i) =>
    `found ${showValue(i.found)}, which holds ${invisibleNames(i)}, not allowed in a value sent to the service, remove ${((i.params?.chars as unknown[] | undefined)?.length ?? 2) === 1 ? 'it' : 'them'}`,
  possible_duplicate: (i) =>
    `pays the same amount to the same ${String(i.params?.same ?? 'holder').replace('_', ' ')} as line ${String(i.params?.firstLine)} (refused by --strict-duplicates)`,
  reference_duplicate: (i) =>
    `found ${showValue(i.found)}, already used on line ${String(i.params?.firstLine)}, each reference must be unique in the file`,
};

/** The reason for one issue, without the column name: "found "100.5", expected exactly two decimals…". */
export function describeIssue(issue: RowIssue): string {
  const base = WORDING[issue.code](issue);
  if (issue.code === 'field_count') return base;
  const banks = issue.params?.banks as readonly string[] | undefined;
  if (issue.suggestion !== undefined) return `${base} (did you mean ${showValue(issue.suggestion)}?)`;
  if (banks && banks.length > 0) return `${base} (did you mean ${banks.map((b) => showValue(b)).join(' or ')}?)`;
  return base;
}

/** "column: reason" entries joined by "; ", as the report's `errors` column holds them. */
export function describeIssues(issues: readonly RowIssue[]): string {
  return issues.map((i) => `${i.column}: ${describeIssue(i)}`).join('; ');
}
