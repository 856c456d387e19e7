/** The amount rule: digits, one dot, exactly two decimals, greater than zero (interface doc §2.4.1/§2.4.2). */
import { describe, expect, it } from 'vitest';
import { checkAmount, MAX_AMOUNT_INTEGER_DIGITS } from '../../src/import/check-amount.js';
import { describeIssue } from '../../src/import/reasons.js';

describe('checkAmount', () => {
  it.each(['1500.00', '250.00', '45000.00', '0.50', '0.01', '1.99', '999999999999.99'])('accepts %s', (value) => {
    expect(checkAmount(value)).toBeUndefined();
  });

  it.each([
    // value, code, suggestion (undefined when none can be derived without guessing)
    ['1,500.00', 'amount_thousands_separator', '1500.00'],
    ['1,500', 'amount_thousands_separator', '1500.00'],
    ['1,234,567.50', 'amount_thousands_separator', '1234567.50'],
    ['1.500,00', 'amount_decimal_comma', '1500.00'],
    ['1500,50', 'amount_decimal_comma', '1500.50'],
    ['100.5', 'amount_decimal_places', '100.50'],
    ['100', 'amount_decimal_places', '100.00'],
    ['100.505', 'amount_decimal_places', undefined],
    ['100.', 'amount_decimal_places', undefined],
    ['.50', 'amount_decimal_places', undefined],
    ['-5.00', 'amount_not_positive', undefined],
    ['0.00', 'amount_not_positive', undefined],
    ['000.00', 'amount_not_positive', undefined],
    ['100.00 EGP', 'amount_currency_text', '100.00'],
    ['EGP 1500', 'amount_currency_text', '1500.00'],
    ['250.00 جنيه', 'amount_currency_text', '250.00'],
    // The dot of the abbreviation "ج.م" makes the number ambiguous: no suggestion.
    ['ج.م 250.00', 'amount_currency_text', undefined],
    ['١٥٠٠.٠٠', 'amount_non_latin_digits', '1500.00'],
    ['١٥٠٠٫٥', 'amount_non_latin_digits', '1500.50'],
    [' 1500.00', 'amount_whitespace', '1500.00'],
    ['1500.00 ', 'amount_whitespace', '1500.00'],
    ['01500.00', 'amount_leading_zero', '1500.00'],
    ['1e3', 'amount_format', undefined],
    ['abc', 'amount_currency_text', undefined],
    ['1 500.00', 'amount_format', undefined],
    ['1.2.3', 'amount_format', undefined],
    // A formula's value is unknown here: no number is built from its digits.
    ['=1+2', 'amount_format', undefined],
    ['=SUM(A1:A3)', 'amount_format', undefined],
    ['@100', 'amount_format', undefined],
    ['+100.00', 'amount_currency_text', '100.00'],
    // Two numbers in the text: no suggestion glued from both.
    ['100 or 200', 'amount_currency_text', undefined],
  ])('%j → %s, suggestion %j', (value, code, suggestion) => {
    const issue = checkAmount(value);
    expect(issue?.column).toBe('amount');
    expect(issue?.code).toBe(code);
    expect(issue?.found).toBe(value);
    expect(issue?.suggestion).toBe(suggestion);
  });

  it('refuses more integer digits than the guard allows, with the limit as a parameter', () => {
    const value = `${'9'.repeat(MAX_AMOUNT_INTEGER_DIGITS + 1)}.00`;
    expect(checkAmount(value)).toMatchObject({
      code: 'amount_too_large',
      params: { maxDigits: MAX_AMOUNT_INTEGER_DIGITS },
    });
    expect(checkAmount(`${'9'.repeat(MAX_AMOUNT_INTEGER_DIGITS)}.00`)).toBeUndefined();
  });

  it('never suggests a value that is not itself a valid amount', () => {
    for (const value of ['1,500.00', '100.5', '100', '100.00 EGP', '١٥٠٠.٠٠', ' 1500.00', '01500.00', '0,00', '0']) {
      const s = checkAmount(value)?.suggestion;
      if (s !== undefined) expect(checkAmount(s), `${value} → ${s}`).toBeUndefined();
    }
  });

  it.each([
    ['1,500.00', '"1,500.00"'],
    ['100.5', '"100.5"'],
    ['-5.00', '"-5.00"'],
  ])('is described with the value found (%s) and the suggestion', (value, shown) => {
    const sentence = describeIssue(checkAmount(value)!);
    expect(sentence).toContain(shown);
    const suggestion = checkAmount(value)!.suggestion;
    if (suggestion !== undefined) expect(sentence).toContain(`"${suggestion}"`);
  });
});
