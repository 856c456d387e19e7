/**
 * rejected-rows.csv starts with `line` and `errors`; the import ignores exactly those two columns,
 * so the fixed file is accepted as it is, while any other unknown column stays a file-level error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { indexHeader } from '../../src/import/columns.js';
import { scanFile } from '../../src/import/scan-file.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { openRejectedRows } from '../../src/batch/rejected-rows.js';
import { HEADER, walletRow } from '../support/pipeline.js';

const rules = { banks: loadBankList(), walletCountries: ['EG'], maxFieldLength: 255 };

describe('line and errors columns', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cashout-rejected-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('the header accepts line and errors and no other unknown column', () => {
    const index = indexHeader(['line', 'errors', ...HEADER.split(',')]);
    expect(index.channel).toBe(2);
    expect(() => indexHeader(['lines', ...HEADER.split(',')])).toThrow(/unknown column "lines"/);
    expect(() => indexHeader(['line', 'line', ...HEADER.split(',')])).toThrow(/appears twice/);
  });

  it('writes the invalid rows with line and errors first, and the fixed file reads back as valid', async () => {
    const input = join(dir, 'input.csv');
    await writeFile(input, `${HEADER}\n${walletRow(1)}\nwallet,"1,500.00",TRANSFER,Ali,+201001234567,,,,Bonus,R-2\n`);
    const rejectedPath = join(dir, 'rejected-rows.csv');
    const out = openRejectedRows(rejectedPath, HEADER.split(','));
    const counts = await scanFile(input, rules, { onInvalid: (r) => out.write(r.line, r.cells, r.issues) });
    await out.close();
    expect(counts.invalidRows).toBe(1);
    const rows = parse(await readFile(rejectedPath), { bom: true }) as string[][];
    expect(rows[0]).toEqual(['line', 'errors', ...HEADER.split(',')]);
    expect(rows[1]!.slice(0, 2)).toEqual(['3', expect.stringMatching(/^amount: found "1,500.00"/)]);

    rows[1]![3] = '1500.00';
    const fixed = join(dir, 'fixed.csv');
    await writeFile(fixed, stringify(rows));
    const counts2 = await scanFile(fixed, rules, { onInvalid: () => undefined });
    expect(counts2).toEqual({ rows: 1, validRows: 1, invalidRows: 0 });

    // The rejected rows of a fixed file hold line and errors once, with the new values.
    rows[1]![3] = '15OO.00';
    await writeFile(fixed, stringify(rows));
    const again = openRejectedRows(join(dir, 'again.csv'), rows[0]!);
    await scanFile(fixed, rules, { onInvalid: (r) => again.write(r.line, r.cells, r.issues) });
    await again.close();
    const written = parse(await readFile(join(dir, 'again.csv')), { bom: true }) as string[][];
    expect(written[0]).toEqual(['line', 'errors', ...HEADER.split(',')]);
    expect(written[1]!.slice(0, 4)).toEqual(['2', expect.stringMatching(/^amount: /), 'wallet', '15OO.00']);
  });
});
