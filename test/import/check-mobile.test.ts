/** The wallet number rule: an Egyptian mobile number in international form, +20 and 10 digits (interface doc §2.4.1). */
import { describe, expect, it } from 'vitest';
import { checkMobile } from '../../src/import/check-mobile.js';
import { describeIssue } from '../../src/import/reasons.js';

const EG = ['EG'] as const;

describe('checkMobile', () => {
  it.each(['+201001234567', '+201123456789', '+201234567890', '+201512345678', '+201098765432'])(
    'accepts %s',
    (value) => {
      expect(checkMobile(value, EG)).toBeUndefined();
    },
  );

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

describe('checkMobile: +20 and exactly 10 digits, as written', () => {
  it.each([
    // value, digits after +20, a 0 right after +20, suggestion
    ['+2001001234567', 11, true, '+201001234567'],
    ['+2001101234567', 11, true, '+201101234567'],
    ['+2001201234567', 11, true, '+201201234567'],
    ['+2001512345678', 11, true, '+201512345678'],
    ['+20201001234567', 12, false, '+201001234567'],
    ['+2010012345678', 11, false, undefined],
    ['+2015123456789', 11, false, undefined],
    ['+20010012345678', 12, true, undefined],
    ['+20001001234567', 12, true, undefined],
    ['+200201001234567', 13, true, undefined],
    ['+200100123456', 10, true, undefined],
    ['+20100123456', 9, false, undefined],
    ['+2001001234', 8, true, undefined],
  ])('%s (%i digits after +20, 0 first: %s) is invalid, suggestion %j', (value, digits, zero, suggestion) => {
    const issue = checkMobile(value, EG);
    expect(issue).toMatchObject({ column: 'mobile_number', code: 'mobile_invalid', found: value });
    expect(issue?.params).toEqual({ callingCode: '20', digits, expected: '10', zero });
    expect(issue?.suggestion).toBe(suggestion);
  });

  it('says why +2001001234567 is refused and what to write instead', () => {
    expect(describeIssue(checkMobile('+2001001234567', EG)!)).toBe(
      'found "+2001001234567", which is not a valid mobile number: it has 11 digits after +20, starting with 0 ' +
        '(the national 0 is not written after the country code), expected +20 and exactly 10 digits ' +
        '(did you mean "+201001234567"?)',
    );
  });

  it('names the count of digits of a number too long or too short, and a 0 kept at the right length', () => {
    const expected = 'expected +20 and exactly 10 digits';
    expect(describeIssue(checkMobile('+2010012345678', EG)!)).toContain(`it has 11 digits after +20, ${expected}`);
    expect(describeIssue(checkMobile('+2010012345', EG)!)).toContain(`it has 8 digits after +20, ${expected}`);
    expect(describeIssue(checkMobile('+200100123456', EG)!)).toContain('the national 0 is not written after +20');
  });

  it('refuses a 0 kept after the country code of another configured country as well', () => {
    const issue = checkMobile('+9710501234567', ['EG', 'AE']);
    expect(issue).toMatchObject({ code: 'mobile_invalid', suggestion: '+971501234567' });
  });

  it('accepts only +20 and 10 digits with a mobile prefix (10, 11, 12, 15), 5,000 cases', async () => {
    const fc = await import('fast-check');
    const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^\\d{${min},${max}}$`));
    const near = fc.oneof(
      digits(0, 14).map((d) => `+20${d}`),
      fc.constantFrom('0', '00', '20', '020', '0020', '2').chain((p) => digits(8, 12).map((d) => `+20${p}${d}`)),
      fc.constantFrom('10', '11', '12', '15').chain((p) => digits(6, 10).map((d) => `+20${p}${d}`)),
      fc
        .constantFrom('+200', '+20')
        .chain((p) => fc.constantFrom('10', '11', '12', '15').chain((o) => digits(8, 8).map((d) => `${p}${o}${d}`))),
    );
    fc.assert(
      fc.property(near, (value) => {
        const accepted = checkMobile(value, EG) === undefined;
        expect(accepted, value).toBe(/^\+201[0125]\d{8}$/.test(value));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('the fast path agrees with the full parse', () => {
  it('for any +20 number and a sample of other countries (2,000 cases)', async () => {
    const fc = await import('fast-check');
    const { checkMobileFully } = await import('../../src/import/check-mobile.js');
    const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^\\d{${min},${max}}$`));
    const numbers = fc.oneof(
      digits(8, 12).map((d) => `+20${d}`),
      fc.constantFrom('0', '20', '00').chain((p) => digits(8, 11).map((d) => `+20${p}${d}`)),
      fc
        .constantFrom('10', '11', '12', '15', '13', '2', '3', '800', '900')
        .chain((p) => digits(6, 9).map((d) => `+20${p}${d}`)),
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
