/**
 * No secret or full number in the logs: whole batches run through the in-process pipeline (real
 * Redis, the sandbox over HTTP) with faults — HTTP 500s, a 422 for a bank the sandbox does not
 * know — and a submission with a wrong token (401). Afterwards no log line holds either token,
 * any full mobile number (in any of its spellings) or any full account number or IBAN of the
 * files, and no report file holds a token. Card charges the same way: every kind of outcome, a
 * refused input and a logged charge body; no log line, error or result holds a card number, a CVV,
 * the hash key, the merchant code or a token.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { loadBankList } from '../src/contract/supported-banks.js';
import { bankRow, memoryLog, openTestPipeline, walletRow, type TestPipeline } from './support/pipeline.js';
import { createChargeClient, type ChargeClientOptions, type ChargeInput } from '../src/charge/charge-client.js';
import { isCashoutError } from '../src/errors.js';

const TOKEN = 'leak-test-token-5b1e0c9d7a3f';
const WRONG_TOKEN = 'leak-test-wrong-token-88c2e4';
const UNKNOWN_BANK = 'Bank Of Nowhere Egypt';

/** An Egyptian IBAN with correct check digits, from a 25-digit bank/branch/account part. */
function iban(bban: string): string {
  const check = 98n - (BigInt(`${bban}141600`) % 97n);
  return `EG${String(check).padStart(2, '0')}${bban}`;
}

const IBANS = [iban('0019000500000000263180002'), iban('0003000100000000000456789'), iban('0030001200000000007654321')];
const ibanRow = (n: number, number: string, bank = 'Banque Misr') =>
  `bank,${n}.00,TRANSFER,Iban Holder ${n},,${bank},"7 Tahrir Sq, Cairo",${number},Invoice ${n},IBAN-${n}`;

/** Every spelling of the numbers in `rows` that would identify a person: the full value and its digits. */
function secretsOf(rows: readonly string[]): string[] {
  const out = new Set<string>();
  for (const row of rows) {
    for (const cell of row.split(',')) {
      if (/^\+20\d{10}$/.test(cell)) {
        out.add(cell); // +201001234567
        out.add(cell.slice(1)); // 201001234567
        out.add(`0${cell.slice(3)}`); // 01001234567
      }
      if (/^\d{10,30}$/.test(cell)) out.add(cell);
      if (/^EG\d{27}$/.test(cell)) {
        out.add(cell);
        out.add(cell.slice(4)); // the 25 digits after the check digits
      }
    }
  }
  return [...out];
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(path)));
    else out.push(path);
  }
  return out;
}

describe('logs and reports never hold the token or full numbers', () => {
  let sandbox: Sandbox;
  let p: TestPipeline;
  const allRows: string[] = [];
  const statuses: string[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    // Every line is kept, debug ones included (a created request is logged at debug level).
    p = await openTestPipeline('log-leak', [UNKNOWN_BANK], 'debug');

    // 1. Server errors on some requests: those rows end unknown, the others accepted.
    const faulty = [
      ...Array.from({ length: 12 }, (_, i) => walletRow(7100 + i)),
      ...Array.from({ length: 6 }, (_, i) => bankRow(7200 + i)),
      ibanRow(7300, IBANS[0]!),
    ];
    allRows.push(...faulty);
    sandbox.setFaults({ rates: { http500: 0.5 }, seed: 11 });
    const a = await p.importCsv(await p.writeCsv('faulty.csv', faulty), { itemsPerRequest: 2 });
    statuses.push(...(await p.submit(a.batchId, { baseUrl: sandbox.url, token: TOKEN })).rows.map((r) => r.status!));
    sandbox.setFaults({});

    // 2. A bank the service does not know: 422, that row rejected, the rest sent again.
    const unknownBank = [walletRow(7400), ibanRow(7401, IBANS[1]!, UNKNOWN_BANK), bankRow(7402)];
    allRows.push(...unknownBank);
    const b = await p.importCsv(await p.writeCsv('unknown-bank.csv', unknownBank), { itemsPerRequest: 5 });
    statuses.push(...(await p.submit(b.batchId, { baseUrl: sandbox.url, token: TOKEN })).rows.map((r) => r.status!));

    // 3. A wrong token: 401, the batch stops, nothing created.
    const refused = [walletRow(7500), ibanRow(7501, IBANS[2]!), bankRow(7502)];
    allRows.push(...refused);
    const c = await p.importCsv(await p.writeCsv('wrong-token.csv', refused), { itemsPerRequest: 1 });
    statuses.push(
      ...(await p.submit(c.batchId, { baseUrl: sandbox.url, token: WRONG_TOKEN })).rows.map((r) => r.status!),
    );
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
    await p?.close();
  });

  it('ran into every fault it is meant to: 500 (unknown), 422 (rejected), 401 (not sent), and successes', () => {
    expect(new Set(statuses)).toEqual(new Set(['accepted', 'unknown', 'rejected', 'not_sent']));
    const logged = p.logLines.join('');
    for (const status of [200, 422, 500, 401]) expect(logged).toContain(`"httpStatus":${status}`);
  });

  it('no log line holds either token', () => {
    expect(p.logLines.length).toBeGreaterThan(10);
    for (const line of p.logLines) {
      expect(line).not.toContain(TOKEN);
      expect(line).not.toContain(WRONG_TOKEN);
      expect(line).not.toMatch(/bearer/i);
    }
  });

  it('no log line holds a full mobile number, account number or IBAN of the files', () => {
    const secrets = secretsOf(allRows);
    // 14 mobile numbers in three spellings, 8 account numbers, 3 IBANs with their 25 digits.
    expect(secrets).toHaveLength(14 * 3 + 8 + 3 * 2);
    for (const line of p.logLines) {
      const leaked = secrets.filter((s) => line.includes(s));
      expect(leaked, line).toEqual([]);
    }
  });

  it('the batch copies of the input do hold the numbers (where they belong), so the search above finds them', async () => {
    const inputs = (await filesUnder(p.reportsDir)).filter((f) => f.endsWith('input.csv'));
    expect(inputs).toHaveLength(3);
    const text = (await Promise.all(inputs.map((f) => readFile(f, 'utf8')))).join('\n');
    const full = secretsOf(allRows).filter((s) => s.startsWith('+') || s.startsWith('EG') || /^1\d{11}$/.test(s));
    expect(full).toHaveLength(14 + 8 + 3);
    for (const s of full) expect(text).toContain(s);
  });

  it('no report file holds a token', async () => {
    const files = await filesUnder(p.reportsDir);
    expect(files.some((f) => f.endsWith('results.csv'))).toBe(true);
    expect(files.some((f) => f.endsWith('summary.json'))).toBe(true);
    for (const f of files) {
      const text = await readFile(f, 'utf8');
      expect(text, f).not.toContain(TOKEN);
      expect(text, f).not.toContain(WRONG_TOKEN);
    }
  });
});

describe('card charges: no card number, CVV, hash key, merchant code or token in logs, errors or results', () => {
  const MERCHANT_CODE = 'MC-leak-6d1f0a';
  const HASH_KEY = 'hk-leak-0e7b4c91d2';
  const WRONG_HASH_KEY = 'hk-leak-wrong-55a3';
  const CVV = '946';
  const CARDS = {
    direct: '9000000000000019',
    otp: '9000000000000035',
    declined: '9000000000000050',
    unknown: '4111111111111111',
  };
  let sandbox: Sandbox;
  const sink = memoryLog('debug');
  /** Messages and contexts of errors thrown, and every result returned, as text. */
  const said: string[] = [];
  const kinds: string[] = [];

  const input = (card: string, n: number, change: Partial<ChargeInput> = {}): ChargeInput => ({
    merchant_reference_id: `LEAK${n}`,
    customer_merchant_profile_id: 'cust-17',
    amount: '250.00',
    customer_name: 'Mona Said',
    customer_mobile: '+201001234567',
    customer_email: 'mona@example.com',
    card_number: card,
    cvv: CVV,
    expiry_year: '29',
    expiry_month: '05',
    description: 'Order',
    ...change,
  });

  /** Charges once with `change` to the client's settings, keeping what came back or was thrown. */
  const charge = async (i: ChargeInput, change: Partial<ChargeClientOptions> = {}) => {
    const client = createChargeClient({
      baseUrl: sandbox.url,
      token: TOKEN,
      merchantCode: MERCHANT_CODE,
      hashKey: HASH_KEY,
      requestTimeoutMs: 300,
      connectTimeoutMs: 500,
      connections: 1,
      log: sink.log,
      ...change,
    });
    try {
      const result = await client.charge(i);
      kinds.push(result.kind);
      said.push(JSON.stringify(result));
    } catch (err) {
      if (!isCashoutError(err)) throw err;
      kinds.push(err.code);
      said.push(`${err.message} ${JSON.stringify(err.context)} ${err.stack ?? ''}`);
      sink.log.error({ err }, 'charge refused');
    } finally {
      await client.close();
    }
  };

  beforeAll(async () => {
    const secrets = { merchantCode: MERCHANT_CODE, hashKey: HASH_KEY };
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList(), ...secrets });
    await charge(input(CARDS.direct, 1));
    await charge(input(CARDS.otp, 2));
    await charge(input(CARDS.declined, 3));
    await charge(input(CARDS.unknown, 4));
    await charge(input(CARDS.direct, 5), { hashKey: WRONG_HASH_KEY });
    await charge(input(CARDS.direct, 6), { token: WRONG_TOKEN });
    await charge(input(CARDS.direct, 7, { cvv: `${CVV}1`, card_number: `${CARDS.direct}0` }));
    sandbox.setFaults({ rates: { hang: 1 } });
    await charge(input(CARDS.direct, 8));
    sandbox.setFaults({});
    // A charge body logged whole (as a careless caller might): the logger itself keeps the secrets out.
    const body = { ...input(CARDS.otp, 9), hash_key: HASH_KEY, merchant_code: MERCHANT_CODE };
    sink.log.debug({ body }, 'charge body');
  }, 30_000);

  afterAll(async () => {
    await sandbox?.close();
  });

  it('went through every kind of outcome', () => {
    expect(kinds).toEqual([
      'charged',
      'otp_required',
      'unknown',
      'unknown',
      'rejected',
      'not_sent',
      'charge_invalid',
      'unknown',
    ]);
    expect(sink.lines.filter((l) => l.includes('"card charge"'))).toHaveLength(7);
  });

  it('no log line, error or result holds a card number, the CVV, a hash key, the merchant code or a token', () => {
    const cards = Object.values(CARDS).flatMap((c) => [c, `${c}0`, c.replace(/(\d{4})(?=\d)/g, '$1 ')]);
    const secrets = [...cards, HASH_KEY, WRONG_HASH_KEY, MERCHANT_CODE, TOKEN, WRONG_TOKEN];
    const texts = [...sink.lines, ...said];
    expect(texts.length).toBeGreaterThan(15);
    for (const text of texts) {
      expect(
        secrets.filter((s) => text.includes(s)),
        text,
      ).toEqual([]);
      expect(text, 'a CVV').not.toMatch(new RegExp(`(?<!\\d)${CVV}1?(?!\\d)`));
      expect(text).not.toMatch(/bearer/i);
    }
  });

  it('cards show as their last four digits at most', () => {
    const logged = sink.lines.join('');
    expect(logged).toContain('"card":"****0019"');
    expect(logged).toContain('"card_number":"****0035"');
    expect(logged).toContain('"cvv":"[redacted]"');
    expect(logged).toContain('"hash_key":"[redacted]"');
  });
});
