/**
 * Each bundled sample, run end to end by the `cashout` command against the real Redis and a
 * sandbox over HTTP, and its report compared with what the sample's expectations say.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { toPiasters, formatPiasters } from '../../src/money.js';
import { SANDBOX_REPORTS } from '../../src/commands/context.js';
import { runCli, ROOT } from '../support/cli.js';
import { TEST_REDIS_URL, deleteKeys, keysUnder, testPrefix } from '../support/redis.js';

const VALID = join(ROOT, 'samples', 'payouts.csv');
const ERRORS = join(ROOT, 'samples', 'payouts-with-errors.csv');
const TOKEN = 'sandbox-token-for-tests';

type Row = Record<string, string>;
const readCsv = async (path: string): Promise<Row[]> =>
  parse(await readFile(path), { columns: true, bom: true, relax_column_count: true }) as Row[];

/** (line → record) of a sample, with line numbers as the report gives them (header = 1; samples have no multi-line fields). */
async function sampleRows(path: string): Promise<Map<number, Row>> {
  const rows = await readCsv(path);
  return new Map(rows.map((r, i) => [i + 2, r]));
}

async function expectedIssueLines(): Promise<Set<number>> {
  const sidecar = await readCsv(join(ROOT, 'samples', 'payouts-with-errors.expected.csv'));
  return new Set(sidecar.map((r) => Number(r.line)));
}

async function onlyBatchDir(reportsDir: string): Promise<string> {
  const dirs = await readdir(reportsDir);
  expect(dirs).toHaveLength(1);
  return join(reportsDir, dirs[0]!);
}

describe('samples run end to end', () => {
  const prefix = testPrefix('samples');
  let reportsRoot: string;
  let sandbox: Sandbox;

  beforeAll(async () => {
    reportsRoot = await mkdtemp(join(tmpdir(), 'cashout-reports-'));
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(reportsRoot, { recursive: true, force: true });
    await deleteKeys(prefix);
  });

  const envFor = async (name: string, service: 'in-process' | 'shared') => {
    const reports = join(reportsRoot, name);
    const env: Record<string, string> = {
      REDIS_URL: TEST_REDIS_URL,
      CASHOUT_REDIS_PREFIX: `${prefix}:${name}`,
      CASHOUT_REPORTS_DIR: reports,
      CASHOUT_LOG_LEVEL: 'warn',
    };
    if (service === 'shared') {
      Object.assign(env, {
        CASHOUT_API_BASE_URL: sandbox.url,
        CASHOUT_API_TOKEN: TOKEN,
        CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
      });
    }
    return { env, reports };
  };

  it('pays every row of samples/payouts.csv: exit 0, one accepted row per input row, totals equal the file', async () => {
    const { env, reports } = await envFor('valid', 'in-process');
    const res = await runCli(['run', VALID, '--sandbox'], env);
    expect(res.stderr).not.toContain('cashout:');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/accepted\s+200/);

    // A sandbox run's report goes to the reports folder's sandbox/ folder, nowhere else.
    expect(await readdir(reports)).toEqual([SANDBOX_REPORTS]);
    const dir = await onlyBatchDir(join(reports, SANDBOX_REPORTS));
    expect(res.stdout).toContain(join(dir, 'results.csv'));
    const results = await readCsv(join(dir, 'results.csv'));
    const input = await sampleRows(VALID);
    expect(results).toHaveLength(input.size);
    for (const r of results) {
      expect(r.status).toBe('accepted');
      const source = input.get(Number(r.line))!;
      expect(r.amount).toBe(source.amount);
      expect(r.reference).toBe(source.reference);
      expect(r.request).not.toBe('');
    }
    const fileTotal = formatPiasters([...input.values()].reduce((s, r) => s + toPiasters(r.amount!), 0n));
    const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8'));
    expect(summary.rows).toBe(200);
    expect(summary.byStatus.accepted).toEqual({ rows: 200, amount: fileTotal });
    expect(summary.total.amount).toBe(fileTotal);
    expect(JSON.stringify(summary)).not.toContain(TOKEN);
    // A sandbox run leaves nothing in Redis that stays: its queue, ledger and payout register are
    // removed (the queue's rate-limit key expires by itself).
    expect(await keysUnder(env.CASHOUT_REDIS_PREFIX!, { lasting: true })).toEqual([]);
  });

  it('validate names each mistake of the error sample with its line and exits 1', async () => {
    const res = await runCli(['validate', ERRORS], { CASHOUT_LOG_LEVEL: 'warn' });
    expect(res.code).toBe(1);
    for (const line of await expectedIssueLines()) expect(res.stdout).toContain(`line ${line}, `);
  });

  it('validate --errors-file gives the one name or value of every "did you mean" as the suggestion to paste', async () => {
    const errorsFile = join(reportsRoot, 'errors-file.csv');
    const res = await runCli(['validate', ERRORS, '--errors-file', errorsFile], { CASHOUT_LOG_LEVEL: 'warn' });
    expect(res.code).toBe(1);
    const rows = await readCsv(errorsFile);
    const meant = rows
      .map((r) => ({ r, m: /\(did you mean "((?:[^"]|"")*)"\?\)$/.exec(r.message!) }))
      .filter((x) => x.m !== null);
    expect(meant.length).toBeGreaterThanOrEqual(14);
    for (const { r, m } of meant)
      expect({ line: r.line, suggestion: r.suggestion }).toEqual({
        line: r.line,
        suggestion: m![1]!.replace(/""/g, '"'),
      });
    // Bank names among them: a misspelled name and names that differ in spacing or dashes only.
    expect(meant.filter(({ r }) => r.column === 'bank_name').length).toBeGreaterThanOrEqual(3);
  });

  it('run on the error sample sends nothing and reports every row (all-or-nothing)', async () => {
    const before = sandbox.received();
    const { env, reports } = await envFor('errors', 'shared');
    const res = await runCli(['run', ERRORS], env);
    expect(res.code).toBe(1);
    expect(sandbox.received()).toBe(before);

    const dir = await onlyBatchDir(reports);
    const results = await readCsv(join(dir, 'results.csv'));
    const issues = await expectedIssueLines();
    const input = await sampleRows(ERRORS);
    expect(results.map((r) => Number(r.line))).toEqual([...input.keys()]);
    for (const r of results) {
      expect(r.status).toBe(issues.has(Number(r.line)) ? 'invalid' : 'not_sent');
      if (r.status === 'invalid') expect(r.errors).not.toBe('');
    }
  });

  it('run --partial pays exactly the valid rows and writes rejected-rows.csv with exactly the invalid ones', async () => {
    await fetch(`${sandbox.url}/__sandbox/reset`, { method: 'POST' });
    const { env, reports } = await envFor('partial', 'shared');
    const res = await runCli(['run', ERRORS, '--partial'], env);
    expect(res.code).toBe(1);

    const dir = await onlyBatchDir(reports);
    const issues = await expectedIssueLines();
    const input = await sampleRows(ERRORS);
    const results = await readCsv(join(dir, 'results.csv'));
    const validLines = [...input.keys()].filter((l) => !issues.has(l));
    expect(results.filter((r) => r.status === 'accepted').map((r) => Number(r.line))).toEqual(validLines);
    expect(results.filter((r) => r.status === 'invalid').map((r) => Number(r.line))).toEqual(
      [...issues].sort((a, b) => a - b),
    );

    // What the service created is exactly the valid rows, by content.
    const created = sandbox
      .ledger()
      .flatMap((e) => [...(e.body.mobile_wallets ?? []), ...(e.body.bank_accounts ?? [])]);
    const expected = validLines.map((l) => input.get(l)!);
    expect(created.map((i) => `${i.holder_name}|${i.amount}`).sort()).toEqual(
      expected.map((r) => `${r.holder_name}|${r.amount}`).sort(),
    );

    // rejected-rows.csv: line and errors, then the input's own columns: exactly the invalid rows, ready to fix
    // and upload again.
    const rejectedText = await readFile(join(dir, 'rejected-rows.csv'), 'utf8');
    const rejected = parse(rejectedText, { relax_column_count: true, bom: true }) as string[][];
    const inputRecords = parse(await readFile(ERRORS), { relax_column_count: true, bom: true }) as string[][];
    expect(rejected[0]).toEqual(['line', 'errors', ...inputRecords[0]!]);
    const invalidRecords = inputRecords.slice(1).filter((_, i) => issues.has(i + 2));
    expect(rejected.slice(1).map((r) => r.slice(2))).toEqual(invalidRecords);
    expect(rejected.slice(1).map((r) => Number(r[0]))).toEqual([...issues].sort((a, b) => a - b));
    expect(rejected.slice(1).every((r) => /^\w+: /.test(r[1]!))).toBe(true);
  });

  it('a sandbox run does not wait for an approval it could never get (its ledger is removed at its end)', async () => {
    const { env, reports } = await envFor('approval', 'in-process');
    const res = await runCli(['run', VALID, '--sandbox'], {
      ...env,
      CASHOUT_REQUIRE_APPROVAL: 'true',
      CASHOUT_LOG_LEVEL: 'info',
    });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.stdout).toMatch(/accepted\s+200/);
    expect(res.stderr).toContain('CASHOUT_REQUIRE_APPROVAL does not apply to a sandbox run');
    expect(await readdir(join(reports, SANDBOX_REPORTS))).toHaveLength(1);
  });

  it('a sandbox rehearsal of a file leaves the report folder of the real batch of the same file as it was', async () => {
    // The same file gives the same batch id: imported for real (queued, nothing sent yet), then
    // rehearsed with --sandbox in the same reports folder.
    const { env, reports } = await envFor('rehearsal', 'shared');
    const imported = await runCli(['import', VALID], env);
    expect(imported.code).toBe(0);
    const batchId = /Batch ([0-9a-f]{16}) queued/.exec(imported.stdout)![1]!;
    const realDir = join(reports, batchId);
    const before = new Map<string, string>();
    for (const name of await readdir(realDir)) before.set(name, await readFile(join(realDir, name), 'utf8'));
    expect([...before.keys()]).not.toContain('results.csv');

    const rehearsal = await runCli(['run', VALID, '--sandbox'], env);
    expect(rehearsal.code).toBe(0);
    expect(rehearsal.stdout).toMatch(/accepted\s+200/);
    const rehearsalDir = join(reports, SANDBOX_REPORTS, batchId);
    expect(rehearsal.stdout).toContain(join(rehearsalDir, 'results.csv'));
    expect(await readdir(rehearsalDir)).toContain('results.csv');

    // The real batch's folder: the same files with the same content, and no results from the rehearsal.
    const after = new Map<string, string>();
    for (const name of await readdir(realDir)) after.set(name, await readFile(join(realDir, name), 'utf8'));
    expect(after).toEqual(before);
  });
});
