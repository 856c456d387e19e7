/**
 * The parallel reader against the plain one: for the same file, reading with import threads (the
 * file cut in pieces) gives exactly the rows, lines, items and issues of one stream read by one
 * thread, also when a quote kept inside an unquoted value fools the cutter, when rows span
 * lines, with CRLF line ends, and when the file is malformed halfway (same error, same line).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRowMaker } from '../../scripts/generate-payouts.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { indexHeader } from '../../src/import/columns.js';
import { readRecords } from '../../src/import/read-rows.js';
import { scanFile } from '../../src/import/scan-file.js';
import { createRowValidator, type RowRules } from '../../src/import/validate-row.js';
import { CashoutError } from '../../src/errors.js';
import { CHUNK_BYTES, defaultThreads } from '../../src/import/parallel-scan.js';

const RULES: RowRules = { banks: loadBankList(), walletCountries: ['EG'], maxFieldLength: 255 };
const HEADER =
  'channel,amount,type,holder_name,mobile_number,bank_name,bank_address,account_number,description,reference';

type Seen = { line: number; ok: boolean; what: string };

/** The single-threaded reading: one stream, one validator, references checked as rows come. Invalid rows keep their cells. */
async function reference(path: string): Promise<Seen[]> {
  const out: Seen[] = [];
  let validate: ReturnType<typeof createRowValidator> | undefined;
  for await (const r of readRecords(path)) {
    if (!validate) {
      validate = createRowValidator(indexHeader(r.cells), RULES);
      continue;
    }
    const o = validate(r.cells, r.line);
    out.push(
      o.ok
        ? { line: o.item.line, ok: true, what: JSON.stringify(o.item) }
        : { line: o.line, ok: false, what: JSON.stringify([o.issues, r.cells]) },
    );
  }
  return out;
}

async function parallel(path: string, threads: number): Promise<Seen[]> {
  const out: Seen[] = [];
  await scanFile(
    path,
    RULES,
    {
      onItem: (item) => void out.push({ line: item.line, ok: true, what: JSON.stringify(item) }),
      onInvalid: (row) => void out.push({ line: row.line, ok: false, what: JSON.stringify([row.issues, row.cells]) }),
    },
    { threads },
  );
  return out;
}

async function errorOf(run: () => Promise<unknown>): Promise<CashoutError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(CashoutError);
    return err as CashoutError;
  }
  throw new Error('expected a CashoutError');
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cashout-parallel-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A file of `rows` generated rows (several pieces), with `extra(i)` lines slipped in before row i. */
function makeFile(rows: number, extra: (i: number) => string | undefined, eol = '\n'): string {
  const maker = createRowMaker({ rows, seed: 7 });
  const lines = [HEADER];
  for (let i = 0; i < rows; i++) {
    const e = extra(i);
    if (e !== undefined) lines.push(e);
    lines.push(maker.next().replace(/\n$/, ''));
  }
  return lines.join(eol) + eol;
}

describe('reading with import threads', () => {
  it('gives the same rows as one stream, with multi-line rows, blank lines, bad rows and references used twice', async () => {
    const text = makeFile(30_000, (i) =>
      i % 997 === 0
        ? `wallet,10.00,REFUND,"Multi\nLine Holder",+201001234567,,,,"two\nlines",PAY-ML-${i}`
        : i % 1499 === 0
          ? ''
          : i % 2003 === 0
            ? `wallet,abc,REFUND,Bad Amount,+201001234567,,,,bad,PAY-7-${String(i - 3).padStart(8, '0')}`
            : i % 2500 === 1
              ? `wallet,12.00,REFUND,Same Reference,+201001234567,,,,again,PAY-7-${String(i - 100).padStart(8, '0')}`
              : undefined,
    );
    const path = join(dir, 'mixed.csv');
    await writeFile(path, text);
    expect(text.length).toBeGreaterThan(4 * CHUNK_BYTES);
    const expected = await reference(path);
    expect(expected.some((s) => !s.ok && s.what.includes('reference_duplicate'))).toBe(true);
    expect(await parallel(path, 2)).toEqual(expected);
    expect(await parallel(path, 0)).toEqual(expected);
  });

  it('keeps a byte-order mark that starts a row inside the file, wherever the file is cut', async () => {
    // Every row starts with U+FEFF: some start a piece or a part of one, where a reader that took
    // the mark off as a file's byte-order mark would see a valid row.
    const maker = createRowMaker({ rows: 20_000, seed: 11 });
    const lines = [HEADER];
    for (let i = 0; i < 20_000; i++) lines.push(`\uFEFF${maker.next().replace(/\n$/, '')}`);
    const path = join(dir, 'bom-rows.csv');
    await writeFile(path, `${lines.join('\n')}\n`);
    const expected = await reference(path);
    expect(expected.length).toBe(20_000);
    expect(expected.every((s) => !s.ok)).toBe(true);
    expect(await parallel(path, 2)).toEqual(expected);
  });

  it('gives the same rows with CRLF line ends', async () => {
    const path = join(dir, 'crlf.csv');
    await writeFile(
      path,
      makeFile(
        12_000,
        (i) =>
          i % 500 === 0
            ? `bank,20.00,TRANSFER,"Crlf\r\nHolder",,Bank of Alexandria,"1 St\r\nCairo",1805020175018,x,PAY-CR-${i}`
            : undefined,
        '\r\n',
      ),
    );
    expect(await parallel(path, 2)).toEqual(await reference(path));
  });

  it('reads on as one stream when a quote inside an unquoted value makes a cut fall inside a quoted value', async () => {
    // The odd quote makes every later quote count wrong, so cuts land inside the quoted descriptions.
    const path = join(dir, 'odd-quote.csv');
    await writeFile(
      path,
      makeFile(20_000, (i) =>
        i === 10
          ? 'wallet,5.00,REFUND,Screen 5" wide,+201001234567,,,,odd quote,PAY-ODD'
          : i > 10 && i % 7 === 0
            ? `wallet,7.00,REFUND,Quoted,+201001234567,,,,"a\n${'b'.repeat(60)}\nc",PAY-Q-${i}`
            : undefined,
      ),
    );
    expect(await parallel(path, 2)).toEqual(await reference(path));
  });

  it('stops at the same error, on the same line, when the file is malformed halfway', async () => {
    const path = join(dir, 'broken.csv');
    const text = makeFile(20_000, (i) =>
      i === 12_345 ? 'wallet,1.00,REFUND,Caf\u0000,+201001234567,,,,x,PAY-NUL' : undefined,
    );
    await writeFile(path, text);
    const want = await errorOf(() => reference(path));
    expect(want.code).toBe('file_binary');
    const got = await errorOf(() => parallel(path, 2));
    expect(got.code).toBe(want.code);
    expect(got.message).toBe(want.message);
  });

  it('ends the same way as one stream when a quote is never closed halfway', async () => {
    const path = join(dir, 'unclosed.csv');
    await writeFile(
      path,
      makeFile(20_000, (i) =>
        i === 12_345 ? 'wallet,1.00,REFUND,"never closed,+201001234567,,,,x,PAY-OPEN' : undefined,
      ),
    );
    const settle = (p: Promise<Seen[]>) =>
      p.then(
        (rows) => ({ rows }),
        (err: CashoutError) => ({ code: err.code, message: err.message }),
      );
    expect(await settle(parallel(path, 2))).toEqual(await settle(reference(path)));
  });

  it('refuses rows past CASHOUT_MAX_ROWS naming the first row over the limit', async () => {
    const path = join(dir, 'many.csv');
    await writeFile(
      path,
      makeFile(9_000, () => undefined),
    );
    const err = await errorOf(() =>
      scanFile(path, RULES, { onItem() {}, onInvalid() {} }, { threads: 2, maxRows: 8_000 }),
    );
    expect(err.code).toBe('too_many_rows');
    expect(err.message).toContain('line 8002 is row 8001');
  });
});

describe('the default number of import threads', () => {
  it('reads a file of one piece in the calling thread', () => {
    expect(defaultThreads(CHUNK_BYTES, false, 8)).toBe(0);
    expect(defaultThreads(CHUNK_BYTES, true, 8)).toBe(0);
  });

  it('takes one thread per core, at most 8, and leaves the import a core of its own', () => {
    const big = CHUNK_BYTES + 1;
    expect([1, 2, 4, 16].map((cores) => defaultThreads(big, false, cores))).toEqual([1, 2, 4, 8]);
    // The import's main thread works on every row as well: one core is left to it, never no thread at all.
    expect([1, 2, 4, 16].map((cores) => defaultThreads(big, true, cores))).toEqual([1, 1, 3, 8]);
  });
});
