/**
 * CSV reports (src/results/csv-out.ts): cells a spreadsheet would run as a formula are defused,
 * numbers and phone numbers stay readable, and the file is owner-only, complete and parseable.
 * It starts with a UTF-8 byte-order mark (for Excel) unless told not to.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { neutraliseCell, openCsvOut } from '../../src/results/csv-out.js';

const tmpDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cashout-csv-'));
  tmpDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

describe('neutraliseCell', () => {
  it.each([
    ['=SUM(A1)', "'=SUM(A1)"],
    ['=1+1', "'=1+1"],
    ['@cmd', "'@cmd"],
    ['+cmd', "'+cmd"],
    ['-cmd', "'-cmd"],
    ['\t=cmd', "'\t=cmd"],
    ['\tplain', "'\tplain"],
    ['\r=cmd', "'\r=cmd"],
    ['-2+3+cmd|" /C calc"!A0', '\'-2+3+cmd|" /C calc"!A0'],
    ['+1-1', "'+1-1"],
  ])('a formula-like cell %j is prefixed with an apostrophe', (value, expected) => {
    expect(neutraliseCell(value)).toBe(expected);
  });

  it.each([
    ['an international mobile number', '+201001234567'],
    ['a negative amount', '-5.00'],
    ['an amount', '100.00'],
    ['a positive amount with a sign', '+5.00'],
    ['plain text', 'May payout'],
    ['Arabic text', 'محمد أحمد'],
    ['an IBAN', 'EG380019000500000000263180002'],
    ['an equals sign inside text', 'a=b'],
    ['an empty cell', ''],
  ])('%s (%j) is left unchanged', (_label, value) => {
    expect(neutraliseCell(value)).toBe(value);
  });
});

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

describe('openCsvOut', () => {
  const HEADER = ['line', 'holder_name', 'amount', 'mobile_number', 'reason'];
  const ROWS: (string | number | undefined)[][] = [
    [2, 'Mona, Ahmed', '150.00', '+201001234567', 'accepted'],
    [3, 'Omar "the boss"', '-5.00', '', 'bank_name: line one\nline two'],
    [4, 'محمد أحمد', '1500.25', undefined, 'قيمة غير صالحة'],
    [5, '=HYPERLINK("http://x")', '0.10', '@SUM(1)', '+cmd'],
    [6, ' padded ', '0.20', '01001234567', 'a\r\nb'],
  ];
  const EXPECTED = [
    HEADER,
    ['2', 'Mona, Ahmed', '150.00', '+201001234567', 'accepted'],
    ['3', 'Omar "the boss"', '-5.00', '', 'bank_name: line one\nline two'],
    ['4', 'محمد أحمد', '1500.25', '', 'قيمة غير صالحة'],
    ['5', '\'=HYPERLINK("http://x")', '0.10', "'@SUM(1)", "'+cmd"],
    ['6', ' padded ', '0.20', '01001234567', 'a\r\nb'],
  ];

  async function writeReport(): Promise<{ dir: string; path: string }> {
    const dir = tempDir();
    const path = join(dir, 'results.csv');
    const out = openCsvOut(path, HEADER);
    for (const row of ROWS) await out.write(row);
    await out.close();
    return { dir, path };
  }

  it.each(EXPECTED.map((row, i) => [i, row] as const))(
    'record %i reads back with the same values (commas, quotes, newlines, Arabic)',
    async (i, row) => {
      const { path } = await writeReport();
      const records = parse(readFileSync(path, 'utf8'), { relax_column_count: false, bom: true }) as string[][];
      expect(records).toHaveLength(EXPECTED.length);
      expect(records[i]).toEqual(row);
    },
  );

  it.each([
    ['is owner-only (mode 0600)', ({ path }: { path: string }) => expect(statSync(path).mode & 0o777).toBe(0o600)],
    ['leaves no .tmp file behind', ({ dir }: { dir: string }) => expect(readdirSync(dir)).toEqual(['results.csv'])],
    [
      'ends with a newline after the last record',
      ({ path }: { path: string }) => expect(readFileSync(path, 'utf8').endsWith('\n')).toBe(true),
    ],
  ])('the finished file %s', async (_label, check) => {
    check(await writeReport());
  });

  it('starts with a UTF-8 byte-order mark, once, then the header', async () => {
    const { path } = await writeReport();
    const bytes = readFileSync(path);
    expect(bytes.subarray(0, 3)).toEqual(BOM);
    expect(
      bytes
        .subarray(3)
        .toString('utf8')
        .startsWith(`${HEADER.join(',')}\n`),
    ).toBe(true);
    expect(bytes.indexOf(BOM, 3)).toBe(-1);
  });

  it('with bom: false, starts with the header itself and reads back the same', async () => {
    const dir = tempDir();
    const path = join(dir, 'plain.csv');
    const out = openCsvOut(path, HEADER, { bom: false });
    for (const row of ROWS) await out.write(row);
    await out.close();
    const text = readFileSync(path, 'utf8');
    expect(text.startsWith(`${HEADER.join(',')}\n`)).toBe(true);
    expect(parse(text)).toEqual(EXPECTED);
  });

  it('a header-only report is a valid CSV with just the header', async () => {
    const dir = tempDir();
    const path = join(dir, 'empty.csv');
    const out = openCsvOut(path, HEADER);
    await out.close();
    expect(parse(readFileSync(path, 'utf8'), { bom: true })).toEqual([HEADER]);
    expect(readFileSync(path).subarray(0, 3)).toEqual(BOM);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('the report does not exist under its final name before close()', async () => {
    const dir = tempDir();
    const path = join(dir, 'late.csv');
    const out = openCsvOut(path, HEADER);
    await out.write(ROWS[0]!);
    expect(readdirSync(dir)).not.toContain('late.csv');
    await out.close();
    expect(readdirSync(dir)).toEqual(['late.csv']);
  });

  it('many rows all arrive, in order (back-pressure does not drop any)', async () => {
    const dir = tempDir();
    const path = join(dir, 'big.csv');
    const out = openCsvOut(path, ['line', 'text']);
    const n = 5_000;
    for (let i = 0; i < n; i++) await out.write([i, `row ${i} ${'x'.repeat(200)}`]);
    await out.close();
    const records = parse(readFileSync(path, 'utf8'), { bom: true }) as string[][];
    expect(records).toHaveLength(n + 1);
    expect(records.slice(1).map((r) => Number(r[0]))).toEqual(Array.from({ length: n }, (_, i) => i));
  });
});

describe('openCsvOut where the file cannot be written', () => {
  it('fails the writes that wait and close with the reason, and never the process', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const path = join(tempDir(), 'no-such-folder', 'results.csv');
      const out = openCsvOut(path, ['line', 'status']);
      let failure: unknown;
      for (let i = 0; i < 100_000 && failure === undefined; i++) {
        const writing = out.write([String(i), 'accepted'.repeat(8)]);
        if (writing) await writing.catch((e: unknown) => (failure = e));
      }
      expect((failure as NodeJS.ErrnoException).code).toBe('ENOENT');
      await expect(out.close()).rejects.toMatchObject({ code: 'ENOENT' });
      // Opened and left without a write or a close: the failure stays with the file.
      openCsvOut(join(tempDir(), 'missing', 'other.csv'), ['line']);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
