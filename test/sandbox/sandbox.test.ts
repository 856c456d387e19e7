import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startSandbox } from '../../src/sandbox/server.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import type { FaultConfig } from '../../src/sandbox/faults.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { ValidationFailure, WITHDRAWAL_PATH, WithdrawalCreated } from '../../src/contract/withdrawal-api.js';
import type { WithdrawalRequestBody } from '../../src/contract/withdrawal-api.js';

const TOKEN = 'sandbox-test-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json' };
const banks = loadBankList();

const wallet = {
  amount: '150.00',
  type: 'TRANSFER',
  holder_name: 'Mona Said',
  mobile_number: '+201001234567',
  description: 'March payout',
};
const bankAccount = {
  amount: '150.00',
  type: 'TRANSFER',
  holder_name: 'Omar Adel',
  bank_name: 'National Bank of Egypt',
  bank_address: 'Cairo, Egypt',
  number: '1234567890123',
  description: 'March payout',
};
const validBody: WithdrawalRequestBody = {
  mobile_wallets: [wallet],
  bank_accounts: [bankAccount],
} as WithdrawalRequestBody;

const CREATED = {
  success: true,
  status_code: 200,
  status_description: 'Withdrawal request created successfully',
  message: 'Withdrawal request created successfully',
};

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function post(
  sb: Sandbox,
  body: unknown,
  headers: Record<string, string> = AUTH,
  timeoutMs?: number,
): Promise<Answer> {
  const res = await request(sb.url + WITHDRAWAL_PATH, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(timeoutMs === undefined ? {} : { headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

async function admin(
  sb: Sandbox,
  method: 'GET' | 'PUT' | 'POST',
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await request(sb.url + path, {
    method,
    ...(body === undefined
      ? {}
      : {
          body: typeof body === 'string' ? body : JSON.stringify(body),
          headers: { 'content-type': 'application/json' },
        }),
  });
  return { status: res.statusCode, json: await res.body.json() };
}

async function rejection(p: Promise<unknown>): Promise<{ code?: string; name?: string; message?: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code?: string; name?: string };
  }
  throw new Error('expected the request to fail without a response');
}

describe('sandbox: authentication, validation, creation', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ token: TOKEN, banks });
  });
  afterAll(async () => {
    await sb.close();
  });
  beforeEach(async () => {
    expect((await admin(sb, 'POST', '/__sandbox/reset')).status).toBe(200);
  });

  it('listens on loopback by default', () => {
    expect(sb.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers 401 without a token and creates nothing', async () => {
    const { authorization: _a, ...noAuth } = AUTH;
    const r = await post(sb, validBody, noAuth);
    expect(r.status).toBe(401);
    expect(JSON.parse(r.text)).toEqual({
      success: false,
      status_code: 401,
      message: 'Unauthenticated.',
      status_description: 'Unauthenticated.',
    });
    expect(sb.ledger()).toHaveLength(0);
    expect(sb.received()).toBe(1);
  });

  it.each([
    ['a wrong token of the same length', `Bearer ${TOKEN.slice(0, -1)}X`],
    ['a wrong token of another length', 'Bearer nope'],
    ['the token without the Bearer scheme', TOKEN],
    ['another scheme', `Basic ${TOKEN}`],
    ['a lower-case scheme', `bearer ${TOKEN}`],
  ])('answers 401 with %s and creates nothing', async (_name, authorization) => {
    const r = await post(sb, validBody, { ...AUTH, authorization });
    expect(r.status).toBe(401);
    expect(JSON.parse(r.text)).toMatchObject({ success: false, status_code: 401, message: 'Unauthenticated.' });
    expect(sb.ledger()).toHaveLength(0);
  });

  it('answers 422 in the §7 layout with Laravel-style keys and creates nothing', async () => {
    const body = {
      mobile_wallets: [{ ...wallet, mobile_number: '01001234567' }, wallet],
      bank_accounts: [bankAccount, { ...bankAccount, bank_name: 'NBE' }],
    };
    const r = await post(sb, body);
    expect(r.status).toBe(422);
    const json = JSON.parse(r.text);
    expect(ValidationFailure.safeParse(json).success).toBe(true);
    expect(json).toMatchObject({
      success: false,
      message: 'The given data was invalid.',
      status_code: 422,
      status_description: 'The given data was invalid.',
    });
    expect(Object.keys(json.errors).sort()).toEqual(['bank_accounts.1.bank_name', 'mobile_wallets.0.mobile_number']);
    for (const v of Object.values(json.errors)) expect(typeof v).toBe('string');
    expect(sb.ledger()).toHaveLength(0);
    expect(sb.received()).toBe(1);
  });

  it('reports every field problem of every item under its own key', async () => {
    const { description: _d, ...noDescription } = wallet;
    const body = {
      mobile_wallets: [
        { ...wallet, amount: '150', type: 'PAYOUT', holder_name: '   ' },
        noDescription,
        { ...wallet, amount: '0.00', mobile_number: '+2010012' },
        'not an item',
      ],
      bank_accounts: [{ ...bankAccount, bank_name: 'national bank of egypt', number: 12345, bank_address: '' }],
    };
    const r = await post(sb, body);
    expect(r.status).toBe(422);
    expect(Object.keys(JSON.parse(r.text).errors).sort()).toEqual([
      'bank_accounts.0.bank_address',
      'bank_accounts.0.bank_name',
      'bank_accounts.0.number',
      'mobile_wallets.0.amount',
      'mobile_wallets.0.holder_name',
      'mobile_wallets.0.type',
      'mobile_wallets.1.description',
      'mobile_wallets.2.amount',
      'mobile_wallets.2.mobile_number',
      'mobile_wallets.3',
    ]);
    expect(sb.ledger()).toHaveLength(0);
  });

  it.each([
    ['an empty object', {}, ['bank_accounts', 'mobile_wallets']],
    ['two empty arrays', { mobile_wallets: [], bank_accounts: [] }, ['bank_accounts', 'mobile_wallets']],
    ['a non-array', { mobile_wallets: 'x', bank_accounts: [bankAccount] }, ['mobile_wallets']],
    ['a JSON array', [wallet], ['body']],
    ['a JSON string', 'null', ['body']],
  ])('answers 422 for %s', async (_name, body, keys) => {
    const r = await post(sb, body);
    expect(r.status).toBe(422);
    const json = JSON.parse(r.text);
    expect(ValidationFailure.safeParse(json).success).toBe(true);
    expect(Object.keys(json.errors).sort()).toEqual(keys);
    expect(sb.ledger()).toHaveLength(0);
  });

  it.each([
    ['a body that is not JSON', 'mobile_wallets=1', AUTH],
    ['an empty body', '', AUTH],
    ['another content type', JSON.stringify(validBody), { ...AUTH, 'content-type': 'text/plain' }],
    ['a malformed content type', JSON.stringify(validBody), { ...AUTH, 'content-type': 'json' }],
  ])('answers 422 with key body for %s', async (_name, body, headers) => {
    const r = await post(sb, body, headers);
    expect(r.status).toBe(422);
    const json = JSON.parse(r.text);
    expect(ValidationFailure.safeParse(json).success).toBe(true);
    expect(Object.keys(json.errors)).toEqual(['body']);
    expect(sb.ledger()).toHaveLength(0);
  });

  it('creates a valid mixed request: 200 with the §2.5 body and one ledger entry', async () => {
    const before = Date.now();
    const r = await post(sb, validBody);
    expect(r.status).toBe(200);
    const json = JSON.parse(r.text);
    expect(json).toEqual(CREATED);
    expect(WithdrawalCreated.safeParse(json).success).toBe(true);
    const ledger = sb.ledger();
    expect(ledger).toHaveLength(1);
    expect(ledger[0]?.id).toBe(1);
    expect(ledger[0]?.body).toEqual(validBody);
    const created = Date.parse(ledger[0]?.created_at ?? '');
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(created).toBeLessThanOrEqual(Date.now() + 1000);

    const second = await post(sb, { bank_accounts: [bankAccount], mobile_wallets: [] });
    expect(second.status).toBe(200);
    expect(sb.ledger().map((e) => e.id)).toEqual([1, 2]);
    expect(sb.received()).toBe(2);
  });

  it('accepts a content type with a charset parameter', async () => {
    const r = await post(
      sb,
      { mobile_wallets: [wallet] },
      { ...AUTH, 'content-type': 'application/json; charset=utf-8' },
    );
    expect(r.status).toBe(200);
    expect(sb.ledger()).toHaveLength(1);
  });
});

describe('sandbox: body limit', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ token: TOKEN, banks, bodyLimitBytes: 1024 });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('answers 413 JSON for a body over the limit and creates nothing', async () => {
    const body = { mobile_wallets: Array.from({ length: 20 }, () => wallet) };
    expect(JSON.stringify(body).length).toBeGreaterThan(1024);
    const r = await post(sb, body);
    expect(r.status).toBe(413);
    const json = JSON.parse(r.text);
    expect(json).toMatchObject({ success: false, status_code: 413 });
    expect(typeof json.message).toBe('string');
    expect(json.status_description).toBe(json.message);
    expect(Object.keys(json.errors)).toEqual(['body']);
    expect(sb.ledger()).toHaveLength(0);
  });

  it('still accepts a body under the limit', async () => {
    const r = await post(sb, { mobile_wallets: [wallet] });
    expect(r.status).toBe(200);
    expect(sb.ledger()).toHaveLength(1);
  });
});

describe('sandbox: faults', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ token: TOKEN, banks });
  });
  afterAll(async () => {
    await sb.close();
  });
  beforeEach(async () => {
    sb.setFaults({});
    await admin(sb, 'POST', '/__sandbox/reset');
  });

  const always = (kind: keyof NonNullable<FaultConfig['rates']>, extra: FaultConfig = {}): void =>
    sb.setFaults({ ...extra, rates: { [kind]: 1 } });

  it.each([
    ['http500', 500],
    ['http503', 503],
  ] as const)('%s answers %d JSON before validation and creates nothing', async (kind, status) => {
    always(kind);
    for (const body of [validBody, { mobile_wallets: [{ ...wallet, mobile_number: 'x' }] }]) {
      const r = await post(sb, body);
      expect(r.status).toBe(status);
      expect(JSON.parse(r.text)).toMatchObject({ success: false, status_code: status });
    }
    expect(sb.ledger()).toHaveLength(0);
    expect(sb.received()).toBe(2);
  });

  it('http429 answers 429 with Retry-After and creates nothing', async () => {
    always('http429', { retryAfterSeconds: 7 });
    const r = await post(sb, validBody);
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('7');
    expect(JSON.parse(r.text)).toMatchObject({ success: false, status_code: 429 });
    always('http429');
    const d = await post(sb, validBody);
    expect(d.headers['retry-after']).toBe('1');
    expect(sb.ledger()).toHaveLength(0);
  });

  it('faults apply only after the token check', async () => {
    always('http500');
    const r = await post(sb, validBody, { ...AUTH, authorization: 'Bearer wrong' });
    expect(r.status).toBe(401);
  });

  it('hang never answers: the client times out and nothing is created', async () => {
    always('hang');
    const started = Date.now();
    const err = await rejection(post(sb, validBody, AUTH, 300));
    expect(err.code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(sb.ledger()).toHaveLength(0);
    expect(sb.received()).toBe(1);
  });

  it('createThenReset creates the request, then drops the connection without an answer', async () => {
    always('createThenReset');
    const err = await rejection(post(sb, validBody));
    expect(['UND_ERR_SOCKET', 'ECONNRESET']).toContain(err.code);
    const ledger = sb.ledger();
    expect(ledger).toHaveLength(1);
    expect(ledger[0]?.body).toEqual(validBody);
  });

  it('createThenReset still answers 422 for an invalid body and creates nothing', async () => {
    always('createThenReset');
    const r = await post(sb, { bank_accounts: [{ ...bankAccount, bank_name: 'NBE' }] });
    expect(r.status).toBe(422);
    expect(Object.keys(JSON.parse(r.text).errors)).toEqual(['bank_accounts.0.bank_name']);
    expect(sb.ledger()).toHaveLength(0);
  });

  it('malformed200 creates the request and answers 200 with a body that is not §2.5', async () => {
    always('malformed200', { seed: 5 });
    const n = 12;
    let truncated = 0;
    let wrongShape = 0;
    for (let i = 0; i < n; i++) {
      const r = await post(sb, validBody);
      expect(r.status).toBe(200);
      let parsed: unknown;
      try {
        parsed = JSON.parse(r.text);
        wrongShape += 1;
      } catch {
        truncated += 1;
      }
      expect(WithdrawalCreated.safeParse(parsed).success, r.text).toBe(false);
    }
    expect(sb.ledger()).toHaveLength(n);
    // Both malformed variants occur: truncated JSON and JSON of another shape.
    expect(truncated).toBeGreaterThan(0);
    expect(wrongShape).toBeGreaterThan(0);
  });

  it('createThen500 creates the request and answers 500; an invalid body gets 422', async () => {
    always('createThen500');
    const r = await post(sb, validBody);
    expect(r.status).toBe(500);
    expect(JSON.parse(r.text)).toMatchObject({ success: false, status_code: 500 });
    expect(sb.ledger()).toHaveLength(1);
    const bad = await post(sb, { mobile_wallets: [{ ...wallet, amount: '1.5' }] });
    expect(bad.status).toBe(422);
    expect(sb.ledger()).toHaveLength(1);
  });

  it('latency delays the answer', async () => {
    sb.setFaults({ latencyMs: 200 });
    const started = Date.now();
    const r = await post(sb, validBody);
    expect(r.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(sb.ledger()).toHaveLength(1);
  });

  it('setFaults rejects a bad configuration and keeps the old one', async () => {
    always('http503');
    expect(() => sb.setFaults({ rates: { http500: 2 } })).toThrow(/fault/);
    expect((await post(sb, validBody)).status).toBe(503);
  });
});

describe('sandbox: close', () => {
  let sb: Sandbox | undefined;
  afterEach(async () => {
    await sb?.close();
  });

  it('ends hanging connections so close() returns promptly', async () => {
    sb = await startSandbox({ token: TOKEN, banks, faults: { rates: { hang: 1 } } });
    const pending = rejection(post(sb, validBody));
    const deadline = Date.now() + 2000;
    while (sb.received() === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(sb.received()).toBe(1);
    const started = Date.now();
    await sb.close();
    expect(Date.now() - started).toBeLessThan(2000);
    const err = await pending;
    expect(err.code).toBeDefined();
    expect(sb.ledger()).toHaveLength(0);
  });

  it('rejects an empty token', async () => {
    await expect(startSandbox({ token: '', banks })).rejects.toThrow(/token/);
  });
});

describe('sandbox: admin endpoints', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ token: TOKEN, banks });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('GET /__sandbox/ledger lists the created requests and the number received', async () => {
    await post(sb, validBody);
    await post(sb, { mobile_wallets: [] });
    await post(sb, { bank_accounts: [bankAccount] });
    const r = await admin(sb, 'GET', '/__sandbox/ledger');
    expect(r.status).toBe(200);
    expect(r.json.received).toBe(3);
    expect(r.json.requests).toHaveLength(2);
    expect(r.json.requests.map((e: { id: number }) => e.id)).toEqual([1, 2]);
    expect(r.json.requests[0].body).toEqual(validBody);
    expect(r.json.requests[1].body).toEqual({ bank_accounts: [bankAccount] });
    expect(r.json.requests).toEqual(JSON.parse(JSON.stringify(sb.ledger())));
  });

  it('PUT /__sandbox/faults replaces the fault configuration', async () => {
    const put = await admin(sb, 'PUT', '/__sandbox/faults', { rates: { http503: 1 } });
    expect(put.status).toBe(200);
    expect(put.json.faults).toEqual({ rates: { http503: 1 } });
    expect((await post(sb, validBody)).status).toBe(503);
    const clear = await admin(sb, 'PUT', '/__sandbox/faults', {});
    expect(clear.status).toBe(200);
    expect((await post(sb, validBody)).status).toBe(200);
  });

  it.each([
    ['rates above 1 in sum', { rates: { http500: 0.7, hang: 0.7 } }],
    ['an unknown kind', { rates: { teapot: 0.1 } }],
    ['a body that is not JSON', 'rates: none'],
  ])('PUT /__sandbox/faults answers 400 for %s and keeps the old configuration', async (_name, body) => {
    await admin(sb, 'PUT', '/__sandbox/faults', { rates: { http429: 1 } });
    const r = await admin(sb, 'PUT', '/__sandbox/faults', body);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ success: false, status_code: 400 });
    expect((await post(sb, validBody)).status).toBe(429);
    await admin(sb, 'PUT', '/__sandbox/faults', {});
  });

  it('POST /__sandbox/reset empties the ledger and the counters', async () => {
    await post(sb, validBody);
    expect(sb.ledger().length).toBeGreaterThan(0);
    const r = await admin(sb, 'POST', '/__sandbox/reset');
    expect(r.status).toBe(200);
    expect(sb.ledger()).toHaveLength(0);
    expect(sb.received()).toBe(0);
    const l = await admin(sb, 'GET', '/__sandbox/ledger');
    expect(l.json).toEqual({ requests: [], received: 0 });
    await post(sb, validBody);
    expect(sb.ledger().map((e) => e.id)).toEqual([1]);
  });
});
