/**
 * The bad-input corpus through `scanFile`, in-process: every file of `test/fixtures/corpus/` (and
 * the binary, encoded and large ones built at test time) gives exactly its expected outcome —
 * refused as a whole with its code and message, or each invalid row with its line, column and
 * code — and nothing but a `CashoutError` is ever thrown. A second table checks that our reader
 * parses each csv-spectrum file into the records of its JSON.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scanFile } from '../../src/import/scan-file.js';
import { readOptionsFrom, readRecords } from '../../src/import/read-rows.js';
import { describeIssue } from '../../src/import/reasons.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { parseConfig } from '../../src/config.js';
import { CashoutError, exitCodeFor } from '../../src/errors.js';
import type { PayoutItem } from '../../src/import/validate-row.js';
import type { RowIssue } from '../../src/import/row-issues.js';
import { committedCases, flagsFrom, generatedCases, type CorpusCase } from '../fixtures/corpus/corpus.js';

const committed = committedCases();
const generated = generatedCases();
const cases: CorpusCase[] = [...committed, ...generated.cases];
const banks = loadBankList();

afterAll(() => rmSync(generated.dir, { recursive: true, force: true }));

interface Outcome {
  readonly rows: number;
  readonly items: PayoutItem[];
  readonly issues: Array<{ line: number; issue: RowIssue }>;
}

/** Scans one corpus file with the settings and flags its expectation names. */
async function scan(c: CorpusCase): Promise<Outcome> {
  const config = parseConfig({ ...(c.expected.env ?? {}) });
  const rules = { banks, walletCountries: config.walletCountries, maxFieldLength: config.maxFieldLength };
  const items: PayoutItem[] = [];
  const issues: Array<{ line: number; issue: RowIssue }> = [];
  const counts = await scanFile(
    c.path,
    rules,
    {
      onItem: (item) => void items.push(item),
      onInvalid: (row) => void issues.push(...row.issues.map((issue) => ({ line: row.line, issue }))),
    },
    readOptionsFrom(config, flagsFrom(c.expected.args)),
  );
  expect(counts.validRows + counts.invalidRows).toBe(counts.rows);
  expect(counts.validRows).toBe(items.length);
  return { rows: counts.rows, items, issues };
}

describe('bad-input corpus', () => {
  it('holds at least 40 committed files, each with its expectation, and the generated ones', () => {
    expect(committed.length).toBeGreaterThanOrEqual(40);
    expect(generated.cases.length).toBeGreaterThanOrEqual(15);
    const names = readdirSync(dirname(committed[0]!.path));
    for (const c of committed) expect(names).toContain(`${c.name}.expected.json`);
    for (const exit of [0, 1, 2]) expect(cases.some((c) => c.expected.exit === exit)).toBe(true);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const e = c.expected;
    let outcome: Outcome | undefined;
    let thrown: unknown;
    try {
      outcome = await scan(c);
    } catch (err) {
      thrown = err;
    }
    if (thrown !== undefined) {
      // Only ever a CashoutError, and only for a file expected to be refused.
      expect(thrown, String((thrown as Error)?.stack ?? thrown)).toBeInstanceOf(CashoutError);
      const err = thrown as CashoutError;
      expect({ exit: exitCodeFor(err), code: err.code }, err.message).toEqual({ exit: e.exit, code: e.code });
      expect(err.message).toContain(e.message!);
      return;
    }
    expect(e.exit, `${c.name} was expected to be refused with ${e.code}`).not.toBe(2);
    const o = outcome!;
    if (e.exit === 0) {
      expect(o.issues.map((i) => `line ${i.line}, ${i.issue.column}: ${describeIssue(i.issue)}`)).toEqual([]);
      expect(o.rows).toBeGreaterThan(0);
      if (e.holders)
        expect(o.items.map((i) => (i.channel === 'wallet' ? i.wallet.holder_name : i.bank.holder_name))).toEqual(
          e.holders,
        );
      return;
    }
    expect(o.issues.map((i) => ({ line: i.line, column: i.issue.column, code: i.issue.code }))).toEqual(
      e.issues!.map(({ line, column, code }) => ({ line, column, code })),
    );
    e.issues!.forEach((want, k) => {
      const said = describeIssue(o.issues[k]!.issue);
      if (want.text) expect(said).toContain(want.text);
      // Every message says what was found or how long it is, and what is expected.
      expect(said.length).toBeGreaterThan(20);
    });
  });
});

describe('csv-spectrum: readRecords parses each file into the records of its JSON', () => {
  const spectrum = dirname(createRequire(import.meta.url).resolve('csv-spectrum/package.json'));
  const names = readdirSync(join(spectrum, 'csvs'))
    .filter((f) => f.endsWith('.csv'))
    .map((f) => f.slice(0, -4))
    .sort();
  const work = mkdtempSync(join(tmpdir(), 'cashout-spectrum-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('covers every csv-spectrum case', () => {
    expect(names.length).toBeGreaterThanOrEqual(12);
  });

  /**
   * Where csv-spectrum's JSON disagrees with its own CSV: location_coordinates.json gives the phone
   * number 1234567890 while the CSV holds 2095257564 (and is one object, not an array).
   */
  const ERRATA: Record<string, Record<string, string>> = {
    location_coordinates: { 'Contact Phone Number': '2095257564' },
  };

  it.each(names)('%s', async (name) => {
    const path = join(spectrum, 'csvs', `${name}.csv`);
    const json = JSON.parse(readFileSync(join(spectrum, 'json', `${name}.json`), 'utf8')) as
      Record<string, string> | Array<Record<string, string>>;
    const want = (Array.isArray(json) ? json : [json]).map((r) => ({ ...r, ...ERRATA[name] }));
    const records: string[][] = [];
    for await (const r of readRecords(path)) records.push([...r.cells]);
    const [header, ...rows] = records;
    const got = rows.map((cells) => Object.fromEntries(header!.map((h, i) => [h, cells[i] ?? ''])));
    expect(got).toEqual(want);
  });

  it('gives the same records when the file ends without a line break and when every line ends in CRLF', async () => {
    const text = 'key,val\n1,"a\nb"\n2,"c,d"';
    const lf = join(work, 'lf.csv');
    const crlf = join(work, 'crlf.csv');
    writeFileSync(lf, text);
    writeFileSync(crlf, `${text.replace(/\n/g, '\r\n')}\r\n`);
    const read = async (p: string) => {
      const out: Array<{ line: number; cells: readonly string[] }> = [];
      for await (const r of readRecords(p)) out.push(r);
      return out;
    };
    expect((await read(lf)).map((r) => [r.line, r.cells[1]])).toEqual([
      [1, 'val'],
      [2, 'a\nb'],
      [4, 'c,d'],
    ]);
    expect((await read(crlf)).map((r) => [r.line, r.cells[1]])).toEqual([
      [1, 'val'],
      [2, 'a\r\nb'],
      [4, 'c,d'],
    ]);
  });
});
