/**
 * The card charge signature (interface doc §5.2) and the body the client sends (§2.1): a fixed test
 * vector computed apart from the code, the order of the five values, the amount taken as the exact
 * string sent, and the client's own check of the fields before anything is sent.
 */
import { describe, expect, it } from 'vitest';
import { chargeSignature, signatureMatches } from '../../src/charge/signature.js';
import { buildChargeBody, checkChargeInput, type ChargeInput } from '../../src/charge/charge-client.js';
import { CHARGE_FIELDS } from '../../src/contract/charge-api.js';
import { isCashoutError } from '../../src/errors.js';

/** SHA-256 of "MERCHANT42" + "ORDER1001" + "cust-17" + "250.00" + "hk_5f2d9c", computed with sha256sum. */
const VECTOR = {
  fields: {
    merchantCode: 'MERCHANT42',
    merchantReferenceId: 'ORDER1001',
    customerMerchantProfileId: 'cust-17',
    amount: '250.00',
    hashKey: 'hk_5f2d9c',
  },
  signature: '9e3bcd1a67a8a08bde793b97bfbf84ffa8ae8da7644a6887b2716b1bca875b51',
  /** The same with amount "250.0": another string, another signature. */
  signatureOf2500: '6271c222de25209ae2bc19cad820744f3956b8c3c778f23a828f730106161f25',
};

const CARD = '9000000000000019';
const input: ChargeInput = {
  merchant_reference_id: 'ORDER1001',
  customer_merchant_profile_id: 'cust-17',
  amount: '250.00',
  customer_name: 'Mona Said',
  customer_mobile: '+201001234567',
  customer_email: 'mona@example.com',
  card_number: CARD,
  cvv: '731',
  expiry_year: '29',
  expiry_month: '05',
  description: 'Order 1001',
};

describe('chargeSignature (interface doc §5.2)', () => {
  it('matches the fixed test vector', () => {
    expect(chargeSignature(VECTOR.fields)).toBe(VECTOR.signature);
  });

  it('signs the amount string as given: "250.0" is another signature', () => {
    expect(chargeSignature({ ...VECTOR.fields, amount: '250.0' })).toBe(VECTOR.signatureOf2500);
  });

  it('depends on the order of the values (code, reference, profile, amount, key)', () => {
    const swapped = { ...VECTOR.fields, merchantReferenceId: 'cust-17', customerMerchantProfileId: 'ORDER1001' };
    expect(chargeSignature(swapped)).not.toBe(VECTOR.signature);
  });

  it('signatureMatches accepts the right signature only', () => {
    expect(signatureMatches(VECTOR.signature, VECTOR.fields)).toBe(true);
    expect(signatureMatches(VECTOR.signature.toUpperCase(), VECTOR.fields)).toBe(false);
    expect(signatureMatches(VECTOR.signatureOf2500, VECTOR.fields)).toBe(false);
    expect(signatureMatches('', VECTOR.fields)).toBe(false);
  });
});

describe('buildChargeBody (interface doc §2.1)', () => {
  const secrets = { merchantCode: 'MERCHANT42', hashKey: 'hk_5f2d9c' };

  it('sends every §2.1 field in document order, signed with the test vector', () => {
    const { body, text } = buildChargeBody(input, secrets);
    expect(Object.keys(JSON.parse(text))).toEqual(CHARGE_FIELDS);
    expect(body.signature).toBe(VECTOR.signature);
  });

  it('the amount in the JSON text is byte-identical to the string signed', () => {
    const { text } = buildChargeBody({ ...input, amount: '1500.50' }, secrets);
    const sent = /"amount":"([^"]*)"/.exec(text)?.[1];
    expect(sent).toBe('1500.50');
    const signed = chargeSignature({ ...VECTOR.fields, amount: sent! });
    expect(JSON.parse(text).signature).toBe(signed);
  });

  it('drops fields that are not §2.1 fields', () => {
    const { text } = buildChargeBody({ ...input, return_url: 'https://shop.example/x' } as ChargeInput, secrets);
    expect(JSON.parse(text)).not.toHaveProperty('return_url');
  });
});

describe('checkChargeInput: nothing is sent when a field breaks §2.1', () => {
  it.each([
    ['amount without two decimals', { amount: '250' }, 'amount must be a decimal with two places (NN.NN)'],
    ['amount as a number', { amount: 250 }, 'amount must be'],
    ['a 15-digit card number', { card_number: CARD.slice(1) }, 'card_number must be 16 digits'],
    ['a 4-digit CVV', { cvv: '7310' }, 'cvv must be 3 digits'],
    ['month 13', { expiry_month: '13' }, 'expiry_month must be 2 digits (MM, 01 to 12)'],
    ['a 4-digit year', { expiry_year: '2029' }, 'expiry_year must be 2 digits (YY)'],
    ['a reference with a dash', { merchant_reference_id: 'ORDER-1001' }, 'merchant_reference_id must be letters'],
    ['a national mobile number', { customer_mobile: '01001234567' }, 'customer_mobile must be a mobile number'],
    ['an e-mail without a domain', { customer_email: 'mona@' }, 'customer_email must be a valid e-mail address'],
    ['a blank name', { customer_name: '  ' }, 'customer_name must be not empty'],
    ['a missing description', { description: undefined }, 'description is missing'],
  ])('%s', (_label, change, expected) => {
    let thrown: unknown;
    try {
      checkChargeInput({ ...input, ...change });
    } catch (err) {
      thrown = err;
    }
    expect(isCashoutError(thrown, 'charge_invalid')).toBe(true);
    const err = thrown as Error & { context: unknown };
    expect(err.message).toContain(expected);
    // Neither the card number nor the CVV is echoed, whatever is wrong.
    const said = `${err.message} ${JSON.stringify(err.context)}`;
    expect(said).not.toContain(CARD);
    expect(said).not.toContain(CARD.slice(1));
    expect(said).not.toContain('731');
  });

  it('accepts the valid input unchanged', () => {
    expect(checkChargeInput(input)).toEqual(input);
  });
});
