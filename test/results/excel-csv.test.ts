/**
 * Excel-safe reports: a real batch with Arabic names, run by the `cashout` command against the real
 * Redis and a sandbox over HTTP, with a rejected row and requests whose outcome is unknown, so that
 * every CSV of a report folder is written (results.csv, rejected-rows.csv, reconciliation.csv).
 * Each starts with a UTF-8 byte-order mark and reads back with its Arabic names intact; with
 * CASHOUT_CSV_BOM=false none has the mark. input.csv stays a byte-for-byte copy of the input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { HEADER } from '../support/pipeline.js';
import { runCli } from '../support/cli.js';
import { TEST_REDIS_URL, deleteKeys, testPrefix } from '../support/redis.js';

const TOKEN = 'excel-csv-test-token';
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** Holders of the valid rows, and of the one invalid row (its amount has a thousands separator). */
const HOLDERS = ['محمد أحمد السيد', 'فاطمة الزهراء علي', 'عمرو خالد', 'نور الهدى حسن'];
const INVALID_HOLDER = 'يوسف إبراهيم';
const ROWS = [
  `wallet,1500.00,TRANSFER,${HOLDERS[0]},+201001234567,,,,عمولة نوفمبر,AR-1`,
  `bank,2500.50,TRANSFER,${HOLDERS[1]},,National Bank of Egypt,"12 شارع طلعت حرب, القاهرة",100234567890,راتب,AR-2`,
  `wallet,"1,000.00",TRANSFER,${INVALID_HOLDER},+201112345678,,,,عمولة نوفمبر,AR-3`,
  `wallet,320.00,REFUND,${HOLDERS[2]},+201512345678,,,,استرداد طلب 18342,AR-4`,
  `wallet,99.99,TRANSFER,${HOLDERS[3]},+201212345678,,,,مكافأة,AR-5`,
];
/** The CSV files the program writes into a report folder: their first column and holders, sorted. */
const WRITTEN: Record<string, { firstColumn: string; holders: readonly string[] }> = {
  'results.csv': { firstColumn: 'line', holders: [...HOLDERS, INVALID_HOLDER].sort() },
  'rejected-rows.csv': { firstColumn: 'line', holders: [INVALID_HOLDER] },
  'reconciliation.csv': { firstColumn: 'request', holders: [...HOLDERS].sort() },
};

describe('CSV files open in Excel with their Arabic names', () => {
  const prefix = testPrefix('excel-csv');
  let root: string;
  let input: string;
  let sandbox: Sandbox;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'cashout-excel-csv-'));
    input = join(root, 'arabic-names.csv');
    await writeFile(input, `${[HEADER, ...ROWS].join('\n')}\n`);
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    // Every request is created but answered with a 500: its rows are unknown and go to reconciliation.csv.
    sandbox.setFaults({ rates: { createThen500: 1 } });
  });
  afterAll(async () => {
    await sandbox?.close();
    await deleteKeys(prefix);
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** Runs the batch with `--partial`, then `cashout reconcile`; returns its report folder. */
  async function runBatch(name: string, extraEnv: Record<string, string>): Promise<string> {
    const reports = join(root, name);
    const env = {
      REDIS_URL: TEST_REDIS_URL,
      CASHOUT_REDIS_PREFIX: `${prefix}:${name}`,
      CASHOUT_REPORTS_DIR: reports,
      CASHOUT_LOG_LEVEL: 'warn',
      CASHOUT_API_BASE_URL: sandbox.url,
      CASHOUT_API_TOKEN: TOKEN,
      CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
      CASHOUT_ITEMS_PER_REQUEST: '2',
      ...extraEnv,
    };
    const run = await runCli(['run', input, '--partial'], env);
    expect(run.stderr).not.toContain('cashout:');
    expect(run.code).toBe(1);
    const [batchId, ...others] = await readdir(reports);
    expect(others).toEqual([]);
    const reconcile = await runCli(['reconcile', batchId!], env);
    expect(reconcile.stderr).not.toContain('cashout:');
    expect(reconcile.code).toBe(1);
    return join(reports, batchId!);
  }

  /** The records of a CSV the program wrote, read by column name without the byte-order mark. */
  const records = (bytes: Buffer) => parse(bytes, { columns: true, bom: true }) as Record<string, string>[];

  it('every CSV written starts with a UTF-8 byte-order mark and keeps its Arabic names (default)', async () => {
    const dir = await runBatch('default', {});
    const csvFiles = (await readdir(dir)).filter((f) => f.endsWith('.csv')).sort();
    expect(csvFiles).toEqual(['input.csv', ...Object.keys(WRITTEN)].sort());
    expect(await readFile(join(dir, 'input.csv'))).toEqual(await readFile(input));

    for (const [file, { firstColumn, holders }] of Object.entries(WRITTEN)) {
      const bytes = await readFile(join(dir, file));
      expect(bytes.subarray(0, 3), file).toEqual(BOM);
      expect(bytes.subarray(3).toString('utf8').startsWith(`${firstColumn},`), file).toBe(true);
      expect(bytes.indexOf(BOM, 3), `${file}: one mark only`).toBe(-1);
      const rows = records(bytes);
      expect(Object.keys(rows[0]!)[0], `${file}: first column name`).toBe(firstColumn);
      expect(rows.map((r) => r.holder_name).sort(), file).toEqual(holders);
    }
    const results = records(await readFile(join(dir, 'results.csv')));
    expect(results.map((r) => [r.line, r.holder_name, r.status])).toEqual([
      ['2', HOLDERS[0], 'unknown'],
      ['3', HOLDERS[1], 'unknown'],
      ['4', INVALID_HOLDER, 'invalid'],
      ['5', HOLDERS[2], 'unknown'],
      ['6', HOLDERS[3], 'unknown'],
    ]);
  });

  it('with CASHOUT_CSV_BOM=false no CSV written has the mark, and each still reads back', async () => {
    const dir = await runBatch('no-bom', { CASHOUT_CSV_BOM: 'false' });
    expect(await readFile(join(dir, 'input.csv'))).toEqual(await readFile(input));
    for (const [file, { firstColumn, holders }] of Object.entries(WRITTEN)) {
      const bytes = await readFile(join(dir, file));
      expect(bytes.indexOf(BOM), file).toBe(-1);
      expect(bytes.toString('utf8').startsWith(`${firstColumn},`), file).toBe(true);
      const rows = parse(bytes, { columns: true }) as Record<string, string>[];
      expect(rows.map((r) => r.holder_name).sort(), file).toEqual(holders);
    }
  });
});
