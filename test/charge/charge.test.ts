/**
 * Card charges against the sandbox over HTTP (interface doc §2.1-2.3, §4, §5, §7): the client gets
 * §2.2 for a direct card and §2.3 for a 3-D Secure one; a missing field, a bad field and a wrong
 * signature each get the §7 layout and create nothing; the sandbox's answers to what the document
 * does not show come from its assumptions table; a timeout after sending is an unknown outcome and
 * the charge is not sent again; `cashout charge` prints the card as its last four digits only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createChargeClient } from '../../src/charge/charge-client.js';
import type { ChargeClient, ChargeClientOptions, ChargeInput } from '../../src/charge/charge-client.js';
import { chargeSignature } from '../../src/charge/signature.js';
import { CHARGE_PATH, ChargedDirectly, OTP_PLUGIN_PATH, ThreeDSecureRequired } from '../../src/contract/charge-api.js';
import { ValidationFailure } from '../../src/contract/withdrawal-api.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { SANDBOX_ASSUMPTIONS as A } from '../../src/sandbox/assumptions.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { runCli, runCliOnTerminal } from '../support/cli.js';

const TOKEN = 'charge-test-token-3c9a';
const MERCHANT = { code: 'MERCHANT42', hashKey: 'hk_5f2d9c' };
const DIRECT = '9000000000000019';
const THREE_DS = '9000000000000035';
const DECLINED = '9000000000000050';
const HEADERS = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json' };

let n = 0;
/** A valid charge input with a new reference. */
const input = (card: string, change: Partial<ChargeInput> = {}): ChargeInput => ({
  merchant_reference_id: `ORDER${Date.now()}${(n += 1)}`,
  customer_merchant_profile_id: 'cust-17',
  amount: '250.00',
  customer_name: 'Mona Said',
  customer_mobile: '+201001234567',
  customer_email: 'mona@example.com',
  card_number: card,
  cvv: '731',
  expiry_year: '29',
  expiry_month: '05',
  description: 'Order 1001',
  ...change,
});

/** A signed §2.1 body as JSON, to post by hand. */
const signedBody = (i: ChargeInput, merchant = MERCHANT): Record<string, string> => ({
  ...i,
  signature: chargeSignature({
    merchantCode: merchant.code,
    merchantReferenceId: i.merchant_reference_id,
    customerMerchantProfileId: i.customer_merchant_profile_id,
    amount: i.amount,
    hashKey: merchant.hashKey,
  }),
});

/** POSTs `body` (JSON text as given, else serialised) to the charge endpoint; the answer's status and JSON. */
async function post(sb: Sandbox, body: unknown, headers = HEADERS): Promise<{ status: number; json: any }> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await request(sb.url + CHARGE_PATH, { method: 'POST', headers, body: text });
  return { status: res.statusCode, json: await res.body.json() };
}

describe('card charges against the sandbox', () => {
  let sb: Sandbox;
  let client: ChargeClient;
  /** A charge client of the sandbox, with `change` to its settings. */
  const clientWith = (change: Partial<ChargeClientOptions> = {}): ChargeClient =>
    createChargeClient({
      baseUrl: sb.url,
      token: TOKEN,
      merchantCode: MERCHANT.code,
      hashKey: MERCHANT.hashKey,
      requestTimeoutMs: 2_000,
      connectTimeoutMs: 1_000,
      connections: 1,
      ...change,
    });

  beforeAll(async () => {
    const secrets = { merchantCode: MERCHANT.code, hashKey: MERCHANT.hashKey };
    sb = await startSandbox({ token: TOKEN, banks: loadBankList(), ...secrets });
    client = clientWith({ connections: 2 });
  });
  afterAll(async () => {
    await client?.close();
    await sb?.close();
  });
  beforeEach(async () => {
    sb.setFaults({});
    expect((await request(`${sb.url}/__sandbox/reset`, { method: 'POST' })).statusCode).toBe(200);
  });

  it('a direct card is charged in the request: §2.2 with a payment_gateway_reference_id, recorded PAID', async () => {
    const i = input(DIRECT);
    const result = await client.charge(i);
    expect(result).toMatchObject({
      kind: 'charged',
      httpStatus: 200,
      merchantReferenceId: i.merchant_reference_id,
      type: A.chargeType.text,
    });
    const charged = result.kind === 'charged' ? result : undefined;
    expect(charged?.paymentGatewayReferenceId).toMatch(/^\d+$/);
    expect(sb.charges()).toEqual([
      expect.objectContaining({
        service_reference_id: charged?.serviceReferenceId,
        merchant_reference_id: i.merchant_reference_id,
        amount: '250.00',
        card_last_four: '0019',
        status: 'PAID',
        three_d_secured: false,
        payment_gateway_reference_id: charged?.paymentGatewayReferenceId,
      }),
    ]);
    // The sandbox keeps the last four digits only.
    expect(JSON.stringify(sb.charges())).not.toContain(DIRECT);
  });

  it('the raw answers are exactly the §2.2 and §2.3 bodies', async () => {
    const direct = await post(sb, signedBody(input(DIRECT)));
    expect(direct.status).toBe(200);
    expect(ChargedDirectly.strict().safeParse(direct.json).success).toBe(true);
    const otp = await post(sb, signedBody(input(THREE_DS)));
    expect(otp.status).toBe(200);
    expect(ThreeDSecureRequired.strict().safeParse(otp.json).success).toBe(true);
    expect(otp.json).not.toHaveProperty('payment_gateway_reference_id');
  });

  it('a 3-D Secure card answers §2.3 and waits for the OTP', async () => {
    const result = await client.charge(input(THREE_DS));
    expect(result).toMatchObject({ kind: 'otp_required', httpStatus: 200, statusDescription: A.otpRequiredText.text });
    expect(sb.charges()[0]).toMatchObject({ status: 'AWAITING_OTP', three_d_secured: true, card_last_four: '0035' });
    expect(sb.charges()[0]).not.toHaveProperty('payment_gateway_reference_id');
  });

  it.each([
    ['a missing field', { cvv: undefined }, 'cvv', 'The cvv field is required.'],
    ['a bad card number', { card_number: '12345' }, 'card_number', 'The card_number field must be 16 digits.'],
    ['a bad amount', { amount: '250' }, 'amount', 'The amount field must be a decimal with two places (NN.NN).'],
    ['month 13', { expiry_month: '13' }, 'expiry_month', 'The expiry_month field must be 2 digits (MM, 01 to 12).'],
    ['a short mobile number', { customer_mobile: '+2010012' }, 'customer_mobile', expect.stringContaining('valid')],
    ['a zero amount (assumption zeroAmount)', { amount: '0.00' }, 'amount', 'The amount field must be greater than 0.'],
    ['a wrong signature (assumption)', { signature: 'a'.repeat(64) }, 'signature', A.signatureMismatch.text],
    ['a signature over another amount string', { amount: '250.01' }, 'signature', A.signatureMismatch.text],
  ])('%s gets the §7 layout and creates nothing', async (_label, change, key, reason) => {
    const r = await post(sb, { ...signedBody(input(DIRECT)), ...change });
    expect(r.status).toBe(422);
    expect(ValidationFailure.safeParse(r.json).success).toBe(true);
    const text = A.invalidText.text;
    expect(r.json).toMatchObject({ success: false, status_code: 422, message: text, status_description: text });
    expect(r.json.errors).toEqual({ [key]: reason });
    expect(sb.charges()).toEqual([]);
  });

  it('a body that is not JSON, or empty, gets the §7 layout under key body', async () => {
    for (const body of ['', 'card=1']) {
      const r = await post(sb, body);
      expect(r.status).toBe(422);
      expect(r.json.errors).toEqual({ body: A.emptyOrBadJson.text });
    }
    expect(sb.charges()).toEqual([]);
  });

  it('the client with a wrong hash key is refused: rejected, nothing created', async () => {
    const wrong = clientWith({ hashKey: 'not-the-key' });
    try {
      const result = await wrong.charge(input(DIRECT));
      expect(result).toEqual({
        kind: 'rejected',
        httpStatus: 422,
        message: A.invalidText.text,
        errors: { signature: [A.signatureMismatch.text] },
      });
    } finally {
      await wrong.close();
    }
    expect(sb.charges()).toEqual([]);
  });

  it('a repeated merchant_reference_id is refused in the §7 layout (assumption duplicateReference)', async () => {
    const i = input(DIRECT);
    expect((await client.charge(i)).kind).toBe('charged');
    const again = await client.charge(i);
    expect(again).toEqual({
      kind: 'rejected',
      httpStatus: 422,
      message: A.invalidText.text,
      errors: { merchant_reference_id: [A.duplicateReference.text] },
    });
    expect(sb.charges()).toHaveLength(1);
  });

  it('a declined card gets the assumed 400, which the client reports as an unknown outcome', async () => {
    for (const card of [DECLINED, '4111111111111111']) {
      const r = await post(sb, signedBody(input(card)));
      expect(r.status).toBe(A.declinedCard.status);
      const text = A.declinedCard.text;
      expect(r.json).toEqual({ success: false, status_code: 400, message: text, status_description: text });
    }
    const result = await client.charge(input(DECLINED));
    expect(result).toMatchObject({ kind: 'unknown', httpStatus: 400 });
    expect(result.kind === 'unknown' && result.message).toContain(A.declinedCard.text);
    expect(sb.charges().map((c) => c.status)).toEqual(['FAILED', 'FAILED', 'FAILED']);
  });

  it('the same token check as the withdrawal endpoint: 401 with the assumed body, nothing created', async () => {
    const r = await post(sb, signedBody(input(DIRECT)), { ...HEADERS, authorization: 'Bearer nope' });
    expect(r.status).toBe(401);
    const text = A.unauthenticated.text;
    expect(r.json).toEqual({ success: false, status_code: 401, message: text, status_description: text });
    const refused = clientWith({ token: 'nope' });
    try {
      expect(await refused.charge(input(DIRECT))).toMatchObject({ kind: 'not_sent', reason: 'auth', httpStatus: 401 });
    } finally {
      await refused.close();
    }
    expect(sb.charges()).toEqual([]);
    expect(sb.chargesReceived()).toBe(2);
  });

  it('a timeout after sending is an unknown outcome, and the charge is not sent again', async () => {
    sb.setFaults({ rates: { hang: 1 } });
    const impatient = clientWith({ requestTimeoutMs: 300 });
    try {
      const result = await impatient.charge(input(DIRECT));
      expect(result).toMatchObject({ kind: 'unknown' });
      const message = result.kind === 'unknown' ? result.message : '';
      expect(message).toMatch(/UND_ERR_HEADERS_TIMEOUT.*may or may not have been charged/);
      await new Promise((r) => setTimeout(r, 700));
      expect(sb.chargesReceived()).toBe(1);
    } finally {
      await impatient.close();
    }
  });

  it('a charge created, then cut off (reset) is unknown: recorded by the sandbox, not sent again', async () => {
    sb.setFaults({ rates: { createThenReset: 1 } });
    const result = await client.charge(input(DIRECT));
    expect(result.kind).toBe('unknown');
    expect(sb.charges()).toHaveLength(1);
    expect(sb.chargesReceived()).toBe(1);
  });

  it('a fault that creates nothing (503) is unknown to the client, and nothing is recorded', async () => {
    sb.setFaults({ rates: { http503: 1 } });
    expect(await client.charge(input(DIRECT))).toMatchObject({ kind: 'unknown', httpStatus: 503 });
    expect(sb.charges()).toEqual([]);
  });

  it('an invalid charge is refused by the client before anything is sent', async () => {
    await expect(client.charge(input(DIRECT, { cvv: '12' }))).rejects.toMatchObject({ code: 'charge_invalid' });
    expect(sb.chargesReceived()).toBe(0);
  });

  it('serves the OTP dialog script (§4) to anyone, as JavaScript', async () => {
    const res = await request(sb.url + OTP_PLUGIN_PATH);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/javascript/);
    expect(await res.body.text()).toContain('window.SERVICEOTPDIALOG');
  });

  describe('cashout charge', () => {
    const env = () => ({
      CASHOUT_API_BASE_URL: sb.url,
      CASHOUT_API_TOKEN: TOKEN,
      CASHOUT_MERCHANT_CODE: MERCHANT.code,
      CASHOUT_HASH_KEY: MERCHANT.hashKey,
      CASHOUT_LOG_LEVEL: 'info',
    });
    const args = (card: string) => [
      'charge',
      '--amount',
      '99.50',
      '--card-number',
      card,
      '--cvv',
      '731',
      '--expiry',
      '05/29',
      '--name',
      'Mona Said',
      '--mobile',
      '+201001234567',
      '--email',
      'mona@example.com',
      '--description',
      'Order 7',
      '--customer',
      'cust-17',
    ];

    it('on a terminal asks for the card number and CVV without showing them as they are typed', async () => {
      const withoutSecrets = args(DIRECT).filter(
        (a, i, all) =>
          !['--card-number', '--cvv'].includes(all[i - 1] ?? '') && !['--card-number', '--cvv'].includes(a),
      );
      const r = await runCliOnTerminal(withoutSecrets, env(), [
        { prompt: 'card number: ', text: DIRECT },
        { prompt: 'CVV: ', text: '731' },
      ]);
      expect(r.code, r.screen).toBe(0);
      expect(r.screen).toContain('EGP 99.50 on card ****0019');
      expect(r.screen).not.toContain(DIRECT);
      // What the terminal shows after the CVV prompt, up to the end of that line.
      expect(r.screen.slice(r.screen.indexOf('CVV: ')).split('\n')[0]).not.toContain('731');
    });

    it('charges a direct card and prints the outcome with the card as its last four digits', async () => {
      const r = await runCli(args(DIRECT), env());
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('EGP 99.50 on card ****0019');
      expect(r.stdout).toContain('Charged (interface doc §2.2).');
      expect(r.stdout).toMatch(/payment_gateway_reference_id: \d+/);
      for (const out of [r.stdout, r.stderr]) {
        expect(out).not.toContain(DIRECT);
        expect(out).not.toContain(TOKEN);
        expect(out).not.toContain(MERCHANT.hashKey);
      }
      expect(sb.charges()).toEqual([expect.objectContaining({ amount: '99.50', status: 'PAID' })]);
    });

    it('prints how to open the OTP dialog for a 3-D Secure card (JSON with --json)', async () => {
      const r = await runCli([...args(THREE_DS), '--json'], env());
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({
        amount: '99.50',
        card: '****0035',
        result: { kind: 'otp_required', serviceReferenceId: 1 },
      });
    });

    it('refuses without the merchant secrets, naming the setting, before anything is sent', async () => {
      const { CASHOUT_HASH_KEY: _k, ...noKey } = env();
      const r = await runCli(args(DIRECT), noKey);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('CASHOUT_HASH_KEY');
      expect(sb.chargesReceived()).toBe(0);
    });
  });
});
