/** The wallet number rule: an Egyptian mobile number in international form, +20 and 10 digits (interface doc §2.4.1). */
import { describe, expect, it } from 'vitest';
import { checkMobile } from '../../src/import/check-mobile.js';
import { describeIssue } from '../../src/import/reasons.js';

const EG = ['EG'] as const;

describe('checkMobile', () => {
  it.each(['+201001234567', '+201123456789', '+201234567890', '+201512345678', '+201098765432'])('accepts %s', (value) => {
    expect(checkMobile(value, EG)).toBeUndefined();
  });

  it.each([
    // value, code, suggestion
    ['01001234567', 'mobile_not_international', '+201001234567'],
    ['1001234567', 'mobile_not_international', '+201001234567'],
    ['201001234567', 'mobile_not_international', '+201001234567'],
    ['00201001234567', 'mobile_not_international', '+201001234567'],
    ['+20 100 123 4567', 'mobile_not_international', '+201001234567'],
    ['010-0123-4567', 'mobile_not_international', '+201001234567'],
    ['+201001234567 ', 'mobile_not_international', '+201001234567'],
    ['٠١٠٠١٢٣٤٥٦٧', 'mobile_not_international', '+201001234567'],
    ['0100123456', 'mobile_invalid', undefined],
    ['+20225791234', 'mobile_not_mobile', undefined],
    ['+971501234567', 'mobile_country', undefined],
    ['+2010012345', 'mobile_invalid', undefined],
    ['+201301234567', 'mobile_invalid', undefined],
    ['+2010012345678', 'mobile_invalid', undefined],
    ['n/a', 'mobile_invalid', undefined],
  ])('%j → %s, suggestion %j', (value, code, suggestion) => {
    const issue = checkMobile(value, EG);
    expect(issue?.column).toBe('mobile_number');
    expect(issue?.code).toBe(code);
    expect(issue?.found).toBe(value);
    expect(issue?.suggestion).toBe(suggestion);
  });

  it('names the kind of a landline and the country of a foreign number', () => {
    expect(checkMobile('+20225791234', EG)?.params).toMatchObject({ kind: 'fixed line' });
    expect(checkMobile('+971501234567', EG)?.params).toMatchObject({ country: 'AE', allowed: 'EG' });
  });

  it('accepts another country only when it is configured', () => {
    expect(checkMobile('+971501234567', ['EG', 'AE'])).toBeUndefined();
    expect(checkMobile('+201001234567', ['AE'])?.code).toBe('mobile_country');
  });

  it('does not suggest a national number of a country that is not configured', () => {
    expect(checkMobile('0501234567', EG)?.suggestion).toBeUndefined();
  });

  it.each([
    ['01001234567', '"01001234567"'],
    ['+20225791234', '"+20225791234"'],
    ['+971501234567', '"+971501234567"'],
  ])('is described with the value found (%s)', (value, shown) => {
    const sentence = describeIssue(checkMobile(value, EG)!);
    expect(sentence).toContain(shown);
  });

  it('puts the international form in the sentence as the suggestion', () => {
    expect(describeIssue(checkMobile('01001234567', EG)!)).toContain('did you mean "+201001234567"');
  });
});

describe('the fast path agrees with the full parse', () => {
  it('for any +20 number and a sample of other countries (2,000 cases)', async () => {
    const fc = await import('fast-check');
    const { checkMobileFully } = await import('../../src/import/check-mobile.js');
    const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^\\d{${min},${max}}$`));
    const numbers = fc.oneof(
      digits(8, 12).map((d) => `+20${d}`),
      fc.constantFrom('10', '11', '12', '15', '13', '2', '3', '800', '900').chain((p) => digits(6, 9).map((d) => `+20${p}${d}`)),
      fc.constantFrom('+971', '+1', '+44', '+966').chain((c) => digits(7, 11).map((d) => `${c}${d}`)),
    );
    fc.assert(
      fc.property(numbers, fc.constantFrom(['EG'], ['EG', 'AE'], ['AE']), (n, countries) => {
        expect(checkMobile(n, countries)).toEqual(checkMobileFully(n, countries));
      }),
      { numRuns: 2000 },
    );
  });
});
