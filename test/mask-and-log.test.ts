/**
 * Personal data and secrets in logs (src/mask.ts, src/logger.ts): a log line may show enough of a
 * number to recognise it, never the whole number, and never the access token.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../src/logger.js';
import { maskDeep, maskNumber } from '../src/mask.js';

const MOBILE = '+201001234567';
const IBAN = 'EG380019000500000000263180002';
const TOKEN = 'tok-123';

describe('maskNumber', () => {
  it.each([
    ['123456789', '*******89'], // short values: all but the last two hidden
    ['1234', '**34'],
    ['12', '12'],
    ['', ''],
  ])('short value %j → %j', (value, masked) => {
    expect(maskNumber(value)).toBe(masked);
  });

  it.each([MOBILE, IBAN, '01001234567', '1234567890123456'])(
    '%s: same length, keeps only a short prefix and the last 3, the rest is stars',
    (value) => {
      const masked = maskNumber(value);
      const p = masked.indexOf('*');
      expect(p).toBeGreaterThanOrEqual(1);
      expect(p).toBeLessThanOrEqual(5);
      expect(masked).toBe(value.slice(0, p) + '*'.repeat(value.length - p - 3) + value.slice(-3));
      expect(masked).not.toContain(value);
    },
  );
});

describe('maskDeep', () => {
  const body = {
    mobile_wallets: [
      { amount: '150.00', type: 'TRANSFER', holder_name: 'Mona', mobile_number: MOBILE, description: 'May payout' },
    ],
    bank_accounts: [
      {
        amount: '1500.25',
        type: 'TRANSFER',
        holder_name: 'Omar',
        bank_name: 'National Bank of Egypt',
        bank_address: 'Cairo',
        number: IBAN,
        description: 'May payout',
      },
    ],
  };

  it.each([
    ['the wallet mobile_number', (b: typeof body) => b.mobile_wallets[0]!.mobile_number, maskNumber(MOBILE)],
    ['the bank number', (b: typeof body) => b.bank_accounts[0]!.number, maskNumber(IBAN)],
    ['the wallet amount (left alone)', (b: typeof body) => b.mobile_wallets[0]!.amount, '150.00'],
    ['the bank amount (left alone)', (b: typeof body) => b.bank_accounts[0]!.amount, '1500.25'],
    ['the holder name (left alone)', (b: typeof body) => b.bank_accounts[0]!.holder_name, 'Omar'],
  ])('in a nested request body: %s', (_label, pick, expected) => {
    expect(pick(maskDeep(body))).toBe(expected);
  });

  it('the masked copy contains neither full number; the original is untouched', () => {
    const before = structuredClone(body);
    const json = JSON.stringify(maskDeep({ job: { data: { body } } }));
    expect(json).not.toContain(MOBILE);
    expect(json).not.toContain(IBAN);
    expect(body).toEqual(before);
  });

  it.each([
    ['account_number', { row: { account_number: IBAN } }],
    ['iban', { row: { iban: IBAN } }],
  ])('also masks %s', (_key, value) => {
    expect(JSON.stringify(maskDeep(value))).not.toContain(IBAN);
  });

  it.each([
    ['a number value of a sensitive key', { number: 42 }],
    ['null', null],
    ['a string', MOBILE],
  ])('leaves %s as it is', (_label, value) => {
    expect(maskDeep(value)).toEqual(value);
  });
});

/** A logger writing into memory; returns the lines written so far. */
function memoryLogger() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  const log = createLogger({ level: 'info', stream });
  const output = async () => {
    await new Promise((r) => setImmediate(r));
    return chunks.join('');
  };
  return { log, output };
}

describe('createLogger', () => {
  const secretObject = {
    headers: { authorization: `Bearer ${TOKEN}` },
    token: TOKEN,
    item: { mobile_number: MOBILE, number: IBAN },
  };

  it.each([
    ['the token', TOKEN],
    ['the full mobile number', MOBILE],
    ['the full IBAN', IBAN],
  ])('a logged object with headers, token and an item does not reveal %s', async (_label, secret) => {
    const { log, output } = memoryLogger();
    log.info(secretObject, 'posting');
    const text = await output();
    expect(text).toContain('posting'); // the line was written
    expect(text).not.toContain(secret);
  });

  it('numbers inside arrays and deep inside job data are masked too', async () => {
    const { log, output } = memoryLogger();
    log.info(
      {
        body: { mobile_wallets: [{ mobile_number: MOBILE }] },
        job: { data: { item: { number: IBAN, nested: { token: TOKEN } } } },
      },
      'deep',
    );
    const text = await output();
    expect(text).toContain('deep');
    for (const secret of [MOBILE, IBAN, TOKEN]) expect(text).not.toContain(secret);
  });

  it('the line is JSON: secrets redacted, numbers masked, other fields kept', async () => {
    const { log, output } = memoryLogger();
    log.info({ ...secretObject, batchId: 'abc', amount: '150.00' }, 'posting');
    const line = JSON.parse((await output()).trim()) as Record<string, unknown>;
    expect(line).toMatchObject({
      msg: 'posting',
      batchId: 'abc',
      amount: '150.00',
      token: '[redacted]',
      headers: { authorization: '[redacted]' },
      item: { mobile_number: maskNumber(MOBILE), number: maskNumber(IBAN) },
    });
  });

  it.each([
    [
      'a child logger',
      (log: ReturnType<typeof createLogger>) => log.child({ batchId: 'abc' }).info(secretObject, 'posting'),
    ],
    ['warn level', (log: ReturnType<typeof createLogger>) => log.warn(secretObject, 'posting')],
    [
      'top-level fields',
      (log: ReturnType<typeof createLogger>) =>
        log.info({ token: TOKEN, mobile_number: MOBILE, number: IBAN }, 'posting'),
    ],
  ])('%s hides them too', async (_label, write) => {
    const { log, output } = memoryLogger();
    write(log);
    const text = await output();
    expect(text).toContain('posting');
    for (const secret of [TOKEN, MOBILE, IBAN]) expect(text).not.toContain(secret);
  });
});
