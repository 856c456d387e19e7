/** The bank account rule: 6-30 digits, or an Egyptian IBAN (EG + 27 digits) passing MOD-97 (interface doc §2.4.2). */
import { describe, expect, it } from 'vitest';
import { ACCOUNT_DIGITS, checkAccount, ibanChecksumOk } from '../../src/import/check-account.js';
import { describeIssue } from '../../src/import/reasons.js';

const VALID_IBAN = 'EG380019000500000000263180002';

describe('checkAccount', () => {
  it.each(['123456', '100234567812', '1234567890123456', '1'.repeat(30), VALID_IBAN, 'EG270004010100000012345678901'])(
    'accepts %s',
    (value) => {
      expect(checkAccount(value)).toBeUndefined();
    },
  );

  it.each([
    // value, code, suggestion
    ['1002 3456 7890 12', 'account_format', '10023456789012'],
    ['1002-3456-7890', 'account_format', '100234567890'],
    ['EG38 0019 0005 0000 0000 2631 8000 2', 'account_format', VALID_IBAN],
    ['eg380019000500000000263180002', 'account_format', VALID_IBAN],
    ['١٠٠٢٣٤٥٦٧٨١٢', 'account_non_latin_digits', '100234567812'],
    ['１００２３４５６７８１２', 'account_non_latin_digits', '100234567812'],
    ['12345', 'account_invalid', undefined],
    ['1'.repeat(31), 'account_invalid', undefined],
    ['12345A7890', 'account_invalid', undefined],
    ['EG390019000500000000263180002', 'iban_checksum', undefined],
    ['EG380019000500000000263180003', 'iban_checksum', undefined],
    ['EG38001900050000000026318000', 'iban_invalid', undefined],
    ['EG38001900050000000026318000A', 'iban_invalid', undefined],
    ['DE89370400440532013000', 'iban_invalid', undefined],
    ['EG39 0019 0005 0000 0000 2631 8000 2', 'iban_checksum', undefined],
  ])('%j → %s, suggestion %j', (value, code, suggestion) => {
    const issue = checkAccount(value);
    expect(issue?.column).toBe('account_number');
    expect(issue?.code).toBe(code);
    expect(issue?.found).toBe(value);
    expect(issue?.suggestion).toBe(suggestion);
  });

  it('gives the accepted digit range with account_invalid', () => {
    expect(checkAccount('12345')?.params).toMatchObject({ min: ACCOUNT_DIGITS.min, max: ACCOUNT_DIGITS.max });
    expect(describeIssue(checkAccount('12345')!)).toContain('"12345"');
    expect(describeIssue(checkAccount('12345')!)).toContain(`${ACCOUNT_DIGITS.min} to ${ACCOUNT_DIGITS.max} digits`);
  });

  it('is described with the value found and the suggestion', () => {
    const sentence = describeIssue(checkAccount('1002 3456 7890 12')!);
    expect(sentence).toContain('"1002 3456 7890 12"');
    expect(sentence).toContain('did you mean "10023456789012"');
  });
});

describe('ibanChecksumOk', () => {
  it.each([
    [VALID_IBAN, true],
    ['EG270004010100000012345678901', true],
    ['GB82WEST12345698765432', true],
    ['EG390019000500000000263180002', false],
    ['EG380019000500000000263180020', false],
  ])('%s → %s', (iban, ok) => {
    expect(ibanChecksumOk(iban)).toBe(ok);
  });
});
