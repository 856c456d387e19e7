/**
 * The bad-input corpus through the `cashout` command's `main`, in this process (the same commands,
 * messages and exit codes as the built command; `exit-codes.test.ts` runs the real process for each
 * exit code):
 * - `cashout validate <file>` exits as expected, prints each expected problem with its line and
 *   column (or the refusal on stderr), and never a stack trace;
 * - `cashout run <file>` on every file that is refused or has an invalid row, each against a
 *   sandbox of its own started here (real Redis, a key prefix of this test's own): the same exit
 *   code, and the sandbox received no request at all;
 * - every row of `results.csv` and `rejected-rows.csv` of those runs shows its own cells under
 *   their columns (a row with the wrong number of fields too: its own cells, or none).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import type { CliResult } from '../support/cli.js';
import { runCliInProcess } from '../support/cli-in-process.js';
import { TEST_REDIS_URL, deleteKeys } from '../support/redis.js';
import { committedCases, flagsFrom, generatedCases, type CorpusCase } from '../fixtures/corpus/corpus.js';
import { readRecords } from '../../src/import/read-rows.js';
import { neutraliseCell } from '../../src/results/csv-out.js';

const generated = generatedCases();
const cases: CorpusCase[] = [...committedCases(), ...generated.cases];
const refused = cases.filter((c) => c.expected.exit !== 0);
const TOKEN = `corpus-${randomBytes(8).toString('hex')}`;
const PREFIX = `{cashout-test-corpus-${randomBytes(4).toString('hex')}}`;
/** A stack trace line as Node prints it. */
const STACK_LINE = /^\s{4}at /m;

describe('cashout validate and run on the bad-input corpus', () => {
  let reportsDir: string;
  const validated = new Map<string, CliResult>();
  const ran = new Map<string, { result: CliResult; received: number }>();

  beforeAll(async () => {
    reportsDir = mkdtempSync(join(tmpdir(), 'cashout-corpus-reports-'));
    const validateTasks = cases.map((c) => async () => {
      validated.set(
        c.name,
        await runCliInProcess(['validate', c.path, ...(c.expected.args ?? [])], { ...(c.expected.env ?? {}) }),
      );
    });
    // Each file runs against a sandbox of its own, so that any request is counted against it alone.
    const runTasks = refused.map((c) => async () => {
      const own = await startSandbox({ token: TOKEN, banks: loadBankList() });
      try {
        const result = await runCliInProcess(['run', c.path, ...(c.expected.args ?? [])], {
          ...(c.expected.env ?? {}),
          CASHOUT_API_BASE_URL: own.url,
          CASHOUT_API_TOKEN: TOKEN,
          REDIS_URL: TEST_REDIS_URL,
          CASHOUT_REDIS_PREFIX: PREFIX,
          CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
          CASHOUT_REPORTS_DIR: reportsDir,
          CASHOUT_CONNECT_RETRIES: '0',
          CASHOUT_LOG_LEVEL: 'error',
        });
        ran.set(c.name, { result, received: own.received() });
      } finally {
        await own.close();
      }
    });
    for (const task of [...validateTasks, ...runTasks]) await task();
  }, 300_000);

  afterAll(async () => {
    await deleteKeys(PREFIX);
    rmSync(reportsDir, { recursive: true, force: true });
    rmSync(generated.dir, { recursive: true, force: true });
  });

  it('runs every corpus file, and run on every refused or invalid one', () => {
    expect(validated.size).toBe(cases.length);
    expect(ran.size).toBe(refused.length);
    expect(refused.length).toBeGreaterThanOrEqual(40);
  });

  it.each(cases.map((c) => [c.name, c] as const))('validate %s', (_name, c) => {
    const r = validated.get(c.name)!;
    const e = c.expected;
    const shown = `exit ${r.code}\nstdout:\n${r.stdout.slice(0, 2000)}\nstderr:\n${r.stderr.slice(0, 2000)}`;
    expect(r.code, shown).toBe(e.exit);
    expect(r.stdout, shown).not.toMatch(STACK_LINE);
    expect(r.stderr, shown).not.toMatch(STACK_LINE);
    expect(r.stderr, shown).not.toContain('internal error');
    if (e.exit === 2) {
      expect(r.stderr, shown).toContain(`cashout: `);
      expect(r.stderr, shown).toContain(e.message!);
      return;
    }
    const lines = r.stdout.split('\n');
    for (const issue of e.issues ?? []) {
      const line = lines.find(
        (l) =>
          l.startsWith(`line ${issue.line}, ${issue.column}: `) && (issue.text === undefined || l.includes(issue.text)),
      );
      expect(line, `${JSON.stringify(issue)}\n${shown}`).toBeDefined();
    }
    expect(lines.filter((l) => /^line \d+, /.test(l))).toHaveLength(e.issues?.length ?? 0);
  });

  it.each(refused.filter((c) => c.expected.exit === 1).map((c) => [c.name, c] as const))(
    'run %s: every row of every report keeps its own cells',
    async (_name, c) => {
      const { result: r } = ran.get(c.name)!;
      const dir = /^Report: (.+)\/results\.csv$/m.exec(r.stdout)?.[1];
      expect(dir, r.stdout).toBeDefined();
      // What each line of the input holds, column by column, read independently of the reports.
      const own = new Map<number, Record<string, string>>();
      let header: string[] | undefined;
      for await (const rec of readRecords(c.path, flagsFrom(c.expected.args))) {
        if (!header) {
          header = rec.cells.map((h) => h.trim().toLowerCase());
          continue;
        }
        const fits = rec.cells.length >= header.length && rec.cells.slice(header.length).every((v) => v.trim() === '');
        const given = c.expected.reportCells?.[String(rec.line)];
        own.set(rec.line, fits ? Object.fromEntries(header.map((h, i) => [h, rec.cells[i] ?? ''])) : { ...given });
      }
      const read = (file: string) =>
        parse(readFileSync(join(dir!, file)), { bom: true, columns: true, relax_column_count: true }) as Record<
          string,
          string
        >[];
      const results = read('results.csv');
      expect(results.map((row) => Number(row.line))).toEqual([...own.keys()]);
      for (const row of results) {
        const want = own.get(Number(row.line))!;
        for (const col of ['channel', 'reference', 'holder_name', 'amount']) {
          expect(row[col], `results.csv line ${row.line}, ${col}`).toBe(neutraliseCell(want[col] ?? ''));
        }
      }
      const rejected = read('rejected-rows.csv');
      expect(rejected.length).toBeGreaterThan(0);
      for (const row of rejected) {
        const want = own.get(Number(row.line))!;
        if (Object.keys(want).length === 0) continue; // its cells cannot be placed: written as read
        for (const col of header!) {
          expect(row[col], `rejected-rows.csv line ${row.line}, ${col}`).toBe(neutraliseCell(want[col] ?? ''));
        }
      }
    },
  );

  it.each(refused.map((c) => [c.name, c] as const))('run %s: same exit, nothing sent', (_name, c) => {
    const { result: r, received } = ran.get(c.name)!;
    const shown = `exit ${r.code}\nstdout:\n${r.stdout.slice(0, 2000)}\nstderr:\n${r.stderr.slice(0, 2000)}`;
    expect(received, shown).toBe(0);
    expect(r.code, shown).toBe(c.expected.exit);
    expect(r.stdout, shown).not.toMatch(STACK_LINE);
    expect(r.stderr, shown).not.toMatch(STACK_LINE);
  });
});
