/** The .xlsx reader: cells as a person sees them, sheet row numbers kept as line numbers, the row limit. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { xlsxToCsv } from '../../src/uploads/xlsx-to-csv.js';
import { templateXlsx, TEMPLATE_ROWS } from '../../src/uploads/payout-template.js';
import { COLUMNS } from '../../src/import/columns.js';
import { scanFile } from '../../src/import/scan-file.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import type { InvalidRow } from '../../src/import/scan-file.js';

describe('xlsxToCsv', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cashout-xlsx-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const save = async (name: string, fill: (sheet: ExcelJS.Worksheet, book: ExcelJS.Workbook) => void) => {
    const book = new ExcelJS.Workbook();
    fill(book.addWorksheet('first'), book);
    const path = join(dir, name);
    await writeFile(path, Buffer.from(await book.xlsx.writeBuffer()));
    return path;
  };

  it('writes the text a person sees: formats applied, + and leading zeros kept, sheet rows as lines', async () => {
    const path = await save('shown.xlsx', (sheet, book) => {
      sheet.addRow([...COLUMNS]);
      sheet.addRow(['wallet', 1500, 'TRANSFER', 'Mona', '+201001234567', '', '', '', 'Bonus', 'R-1']);
      sheet.getCell('B2').numFmt = '0.00';
      const bank = ['National Bank of Egypt', 'Cairo', '0012345678', 'Pay', 'R-2'];
      sheet.getRow(4).values = ['bank', 250.5, 'TRANSFER', 'Ali', '', ...bank];
      sheet.getCell('B4').numFmt = '#,##0.00';
      const formula = { formula: '1+1', result: 2 };
      sheet.getRow(5).values = ['wallet', '99.99', 'REFUND', 'Laila', 201001234567, '', '', '', formula, 'R-3'];
      book.addWorksheet('second').addRow(['ignored']);
    });
    const csv = join(dir, 'shown.csv');
    expect(await xlsxToCsv(path, csv, 100)).toEqual({ rows: 3, sheet: 'first' });
    const lines = (await readFile(csv, 'utf8')).split('\n');
    expect(lines[0]).toBe(COLUMNS.join(','));
    expect(lines[1]).toBe('wallet,1500.00,TRANSFER,Mona,+201001234567,,,,Bonus,R-1');
    expect(lines[2]).toBe('');
    expect(lines[3]).toBe('bank,250.50,TRANSFER,Ali,,National Bank of Egypt,Cairo,0012345678,Pay,R-2');
    expect(lines[4]).toBe('wallet,99.99,REFUND,Laila,201001234567,,,,2,R-3');

    const invalid: InvalidRow[] = [];
    const rules = { banks: loadBankList(), walletCountries: ['EG'], maxFieldLength: 255 };
    const counts = await scanFile(csv, rules, { onInvalid: (r) => void invalid.push(r) });
    expect(counts).toEqual({ rows: 3, validRows: 2, invalidRows: 1 });
    expect(invalid.map((r) => [r.line, r.issues.map((i) => i.column)])).toEqual([[5, ['mobile_number']]]);
  });

  it('refuses a sheet over the row limit, and a file that is no workbook', async () => {
    const path = await save('big.xlsx', (sheet) => {
      sheet.addRow([...COLUMNS]);
      for (let i = 0; i < 3; i++) sheet.addRow(['wallet', '1.00']);
    });
    await expect(xlsxToCsv(path, join(dir, 'big.csv'), 2)).rejects.toMatchObject({ code: 'too_many_rows' });
    const junk = join(dir, 'junk.xlsx');
    await writeFile(junk, 'not a workbook');
    await expect(xlsxToCsv(junk, join(dir, 'junk.csv'), 2)).rejects.toMatchObject({ code: 'file_unreadable' });
  });

  it('reads its own Excel template back as the template rows', async () => {
    const path = join(dir, 'template.xlsx');
    await writeFile(path, await templateXlsx());
    await xlsxToCsv(path, join(dir, 'template.csv'), 10);
    const lines = (await readFile(join(dir, 'template.csv'), 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(1 + TEMPLATE_ROWS.length);
    expect(lines[1]).toContain('+201001234567');
    expect(lines[2]).toContain('12500.50');
  });
});
