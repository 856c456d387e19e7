/**
 * Mobile wallet number rule (interface doc §2.4.1: "mobile number of the receiver's wallet,
 * international format"), checked with libphonenumber-js's full metadata: the value must be
 * written in E.164 form (+ and digits) exactly as the library writes the number back, be a valid
 * number, be of mobile type, and belong to one of the configured countries (default Egypt). For
 * Egypt that is `+20` and exactly 10 digits (../shared/reference/egypt-payout-facts.md): the
 * library reads `+2001001234567` (a 0 kept after +20) as `+201001234567`, but the service is sent
 * what the file holds, so such a value is refused, not accepted as written. Never corrects the
 * value; suggests the international form when it can be derived without guessing.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { CountryCode } from 'libphonenumber-js/max';
import { Metadata } from 'libphonenumber-js/core';
import metadataMax from 'libphonenumber-js/metadata.max.json';
import type { RowIssue } from './row-issues.js';
import { NON_LATIN_DIGIT, SCIENTIFIC, digitKind, toLatinDigits } from './digits.js';

/** Number types a national number is tested against besides MOBILE (libphonenumber's order). */
const OTHER_TYPES = [
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
  'FIXED_LINE',
] as const;

/** One country's mobile rule, taken from libphonenumber-js's own metadata. */
interface MobilePlan {
  readonly callingCode: string;
  readonly mobile: RegExp;
  readonly others: readonly RegExp[];
  readonly lengths: ReadonlySet<number>;
}

const plans = new Map<string, MobilePlan | null>();

/** The part of libphonenumber-js's Metadata class used here (its published types leave it out). */
interface MetadataApi {
  hasCountry(country: string): boolean;
  selectNumberingPlan(country: string): void;
  numberingPlan: {
    callingCode(): string;
    type(name: string): { pattern(): string | undefined; possibleLengths(): number[] | undefined } | undefined;
  };
}

/**
 * The library's MOBILE pattern for a country, compiled once, with the patterns of every other
 * number type: a national number that matches the mobile pattern and no other type is exactly a
 * number libphonenumber-js validates as MOBILE. Null when the metadata has no distinct mobile type
 * (the full parse then decides).
 */
function mobilePlan(country: string): MobilePlan | null {
  let plan = plans.get(country);
  if (plan !== undefined) return plan;
  plan = null;
  const md = new Metadata(metadataMax) as unknown as MetadataApi;
  if (md.hasCountry(country)) {
    md.selectNumberingPlan(country);
    const np = md.numberingPlan;
    const mobile = np.type('MOBILE');
    const pattern = mobile?.pattern();
    if (mobile && pattern) {
      const others = OTHER_TYPES.flatMap((t) => {
        const p = np.type(t)?.pattern();
        return p ? [new RegExp(`^(?:${p})$`)] : [];
      });
      if (!others.some((r) => r.source === `^(?:${pattern})$`)) {
        plan = {
          callingCode: np.callingCode(),
          mobile: new RegExp(`^(?:${pattern})$`),
          others,
          lengths: new Set(mobile.possibleLengths() ?? []),
        };
      }
    }
  }
  plans.set(country, plan);
  return plan;
}

/** True when an E.164 value is, by the library's metadata, a mobile number of one of `countries`. */
function isKnownMobile(value: string, countries: readonly string[]): boolean {
  for (const country of countries) {
    const plan = mobilePlan(country);
    if (!plan || !value.startsWith(`+${plan.callingCode}`)) continue;
    const national = value.slice(plan.callingCode.length + 1);
    if (
      (plan.lengths.size === 0 || plan.lengths.has(national.length)) &&
      plan.mobile.test(national) &&
      !plan.others.some((r) => r.test(national))
    )
      return true;
  }
  return false;
}

/**
 * The `mobile_invalid` issue of a value written as + and digits. When it starts with the calling
 * code of a configured country whose metadata gives its mobile numbers' lengths, `params` say how
 * many digits follow the code (`digits`), how many are expected (`expected`, e.g. "10") and
 * whether a 0 follows the code (`zero`); `suggestion` is given when one plain slip explains the
 * value and removing it leaves a valid mobile number: a national 0 kept after the country code
 * (`+2001001234567`) or the country code written twice (`+20201001234567`).
 */
function invalidWritten(value: string, countries: readonly string[]): RowIssue {
  const issue: RowIssue = { column: 'mobile_number', code: 'mobile_invalid', found: value };
  for (const country of countries) {
    const plan = mobilePlan(country);
    if (!plan || plan.lengths.size === 0 || !value.startsWith(`+${plan.callingCode}`)) continue;
    const code = plan.callingCode;
    const national = value.slice(code.length + 1);
    const expected = [...plan.lengths].sort((a, b) => a - b).join(' or ');
    const params = { callingCode: code, digits: national.length, expected, zero: national.startsWith('0') };
    const zeroKept = national.startsWith('0') ? national.slice(1) : '';
    const codeTwice = national.startsWith(code) ? national.slice(code.length) : '';
    const slips = [zeroKept, codeTwice];
    const fix = slips.find((rest) => rest !== '' && isKnownMobile(`+${code}${rest}`, countries));
    return fix === undefined ? { ...issue, params } : { ...issue, params, suggestion: `+${code}${fix}` };
  }
  return issue;
}

/** Checks one `mobile_number` cell; returns `undefined` when it is fine, else the issue. */
export function checkMobile(value: string, countries: readonly string[]): RowIssue | undefined {
  // Fast path for the common case, with the same metadata the full parse uses.
  if (value.charCodeAt(0) === 43 /* + */ && /^\+\d+$/.test(value) && isKnownMobile(value, countries)) return undefined;
  return checkMobileFully(value, countries);
}

/** `checkMobile` without the fast path: the full parse by libphonenumber-js (exported for tests). */
export function checkMobileFully(value: string, countries: readonly string[]): RowIssue | undefined {
  const column = 'mobile_number';
  const found = value;
  if (/^\+\d+$/.test(value)) {
    const phone = parsePhoneNumberFromString(value);
    if (!phone || !phone.isValid()) return invalidWritten(value, countries);
    if (!phone.country || !countries.includes(phone.country)) {
      return {
        column,
        code: 'mobile_country',
        found,
        params: { country: phone.country ?? 'an unknown country', allowed: countries.join(', ') },
      };
    }
    const kind = phone.getType();
    if (kind !== 'MOBILE' && kind !== 'FIXED_LINE_OR_MOBILE') {
      return {
        column,
        code: 'mobile_not_mobile',
        found,
        params: { kind: (kind ?? 'unknown').toLowerCase().replace(/_/g, ' ') },
      };
    }
    // Valid only as the library reads it (a national 0 kept after the country code): the service
    // would be sent other digits than the number, so the written form must be the E.164 form.
    if (phone.number !== value) return { ...invalidWritten(value, countries), suggestion: phone.number };
    return undefined;
  }
  // A spreadsheet's scientific notation (2.01001E+11) has lost digits: nothing can be suggested.
  if (SCIENTIFIC.test(value)) return { column, code: 'number_scientific', found };
  // Not in E.164 form: find out whether it is a recognisable mobile number written another way.
  const compact = toLatinDigits(value.replace(/\uff0b/g, '+'))
    .replace(/[\s\-().\u00a0]/g, '')
    .replace(/^00/, '+');
  const digits = NON_LATIN_DIGIT.test(value) ? { params: { digits: digitKind(value) } } : {};
  const defaultCountry = (countries[0] ?? 'EG') as CountryCode;
  const candidates = compact.startsWith('+') ? [compact] : [compact, `+${compact}`];
  for (const c of candidates) {
    const phone = c.startsWith('+') ? parsePhoneNumberFromString(c) : parsePhoneNumberFromString(c, defaultCountry);
    if (phone && phone.isValid() && phone.country && countries.includes(phone.country)) {
      const kind = phone.getType();
      if (kind === 'MOBILE' || kind === 'FIXED_LINE_OR_MOBILE') {
        return { column, code: 'mobile_not_international', found, suggestion: phone.number, ...digits };
      }
    }
  }
  return { column, code: 'mobile_invalid', found };
}
