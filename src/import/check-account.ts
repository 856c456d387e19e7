/**
 * Bank account rule (interface doc §2.4.2: `number`, "bank account number of the receiver"; the
 * document does not say whether a domestic number or an IBAN is expected, so both are accepted):
 * either digits only (domestic numbers vary by bank, roughly 12 to 19 digits, so a wide range is
 * accepted), or an Egyptian IBAN — `EG`, two check digits, 25 more digits, 29 characters — whose
 * ISO 7064 MOD-97 check passes.
 */
import type { RowIssue } from './row-issues.js';
import { NON_LATIN_DIGIT, SCIENTIFIC, digitKind, toLatinDigits } from './digits.js';

/** Fewest and most digits accepted for a domestic account number. */
export const ACCOUNT_DIGITS = { min: 6, max: 30 } as const;

/** True when `iban` (compact, upper case) passes the ISO 7064 MOD-97-10 check. */
export function ibanChecksumOk(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const digits = code >= 65 && code <= 90 ? String(code - 55) : ch;
    for (const d of digits) remainder = (remainder * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

function checkCompact(value: string): RowIssue['code'] | undefined {
  if (/^\d+$/.test(value)) {
    return value.length >= ACCOUNT_DIGITS.min && value.length <= ACCOUNT_DIGITS.max ? undefined : 'account_invalid';
  }
  if (/^[A-Z]{2}/.test(value)) {
    if (!/^EG\d{27}$/.test(value)) return 'iban_invalid';
    return ibanChecksumOk(value) ? undefined : 'iban_checksum';
  }
  return 'account_invalid';
}

/** Checks one `account_number` cell; returns `undefined` when it is fine. */
export function checkAccount(value: string): RowIssue | undefined {
  const column = 'account_number';
  const params = ACCOUNT_DIGITS;
  const direct = checkCompact(value);
  if (direct === undefined) return undefined;
  if (SCIENTIFIC.test(value)) return { column, code: 'number_scientific', found: value };
  const compact = toLatinDigits(value)
    .replace(/[\s\-.\u00a0]/g, '')
    .toUpperCase();
  if (compact !== value && checkCompact(compact) === undefined) {
    return NON_LATIN_DIGIT.test(value)
      ? {
          column,
          code: 'account_non_latin_digits',
          found: value,
          suggestion: compact,
          params: { kind: digitKind(value) },
        }
      : { column, code: 'account_format', found: value, suggestion: compact };
  }
  const code = /^[A-Za-z]{2}/.test(value) ? (checkCompact(compact) ?? direct) : direct;
  return { column, code, found: value, params };
}
