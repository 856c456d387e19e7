/**
 * Mobile wallet number rule (interface doc §2.4.1: "mobile number of the receiver's wallet,
 * international format"), checked with libphonenumber-js's full metadata: the value must be
 * written in E.164 form (+ and digits), be a valid number, be of mobile type, and belong to one
 * of the configured countries (default Egypt). Never corrects the value; suggests the
 * international form when it can be derived.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { CountryCode } from 'libphonenumber-js/max';
import type { RowIssue } from './row-issues.js';
import { toLatinDigits } from './digits.js';

/** Checks one `mobile_number` cell; returns `undefined` when it is fine, else the issue. */
export function checkMobile(value: string, countries: readonly string[]): RowIssue | undefined {
  const column = 'mobile_number';
  const found = value;
  if (/^\+\d+$/.test(value)) {
    const phone = parsePhoneNumberFromString(value);
    if (!phone || !phone.isValid()) return { column, code: 'mobile_invalid', found };
    if (!phone.country || !countries.includes(phone.country)) {
      return { column, code: 'mobile_country', found, params: { country: phone.country ?? 'an unknown country', allowed: countries.join(', ') } };
    }
    const kind = phone.getType();
    if (kind !== 'MOBILE' && kind !== 'FIXED_LINE_OR_MOBILE') {
      return { column, code: 'mobile_not_mobile', found, params: { kind: (kind ?? 'unknown').toLowerCase().replace(/_/g, ' ') } };
    }
    return undefined;
  }
  // Not in E.164 form: find out whether it is a recognisable mobile number written another way.
  const compact = toLatinDigits(value).replace(/[\s\-().\u00a0]/g, '').replace(/^00/, '+');
  const defaultCountry = (countries[0] ?? 'EG') as CountryCode;
  const candidates = compact.startsWith('+') ? [compact] : [compact, `+${compact}`];
  for (const c of candidates) {
    const phone = c.startsWith('+') ? parsePhoneNumberFromString(c) : parsePhoneNumberFromString(c, defaultCountry);
    if (phone && phone.isValid() && phone.country && countries.includes(phone.country)) {
      const kind = phone.getType();
      if (kind === 'MOBILE' || kind === 'FIXED_LINE_OR_MOBILE') {
        return { column, code: 'mobile_not_international', found, suggestion: phone.number };
      }
    }
  }
  return { column, code: 'mobile_invalid', found };
}
