/**
 * An Excel workbook (.xlsx) → the payout CSV the import reads. Only the first sheet is read, row
 * by row (exceljs's streaming reader: the workbook is never held whole), and each cell is written
 * as the text a person sees in Excel: text as typed (leading zeros and a leading `+` kept), numbers
 * and dates through the cell's number format (numfmt), formulas as their last computed value.
 * Nothing is corrected: a phone number stored as a number shows without its `+`, and the import
 * then says so, as it would for a CSV.
 *
 * Line numbers: sheet row n becomes line n of the CSV (empty rows are written as blank lines, which
 * the import skips), so every message names the sheet's row, unless a cell holds a line break
 * (then the rows after it are one line further down per break, as in a CSV saved from Excel).
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import { format as formatNumber } from 'numfmt';
import { stringify } from 'csv-stringify/sync';
import { CashoutError } from '../errors.js';

/** What a conversion gives. */
export interface XlsxConversion {
  /** Data rows written (non-empty rows after the header). */
  readonly rows: number;
  /** Name of the sheet read. */
  readonly sheet: string;
}

/** Days between Excel's day 0 (1899-12-30) and 1970-01-01: dates are serial day numbers. */
const EXCEL_EPOCH_DAYS = 25_569;

/** Excel's serial number of a date read by exceljs (which reads serials as UTC times). */
function serialOf(date: Date): number {
  return date.getTime() / 86_400_000 + EXCEL_EPOCH_DAYS;
}

/** The text Excel shows for a number in format `numFmt` ("General": the number as typed). */
function shownNumber(value: number, numFmt: string | undefined): string {
  if (!numFmt || numFmt === 'General') return String(value);
  try {
    return formatNumber(numFmt, value);
  } catch {
    return String(value);
  }
}

/** The text a person sees in a cell: see the module comment. */
export function shownText(value: unknown, numFmt: string | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return shownNumber(value, numFmt);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) {
    return shownNumber(serialOf(value), numFmt && numFmt !== 'General' ? numFmt : 'yyyy-mm-dd');
  }
  if (typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if (Array.isArray(v.richText)) return (v.richText as { text: string }[]).map((t) => t.text).join('');
    if ('result' in v || 'formula' in v || 'sharedFormula' in v) return shownText(v.result, numFmt);
    if (typeof v.text === 'string') return v.text;
    if (typeof v.error === 'string') return v.error;
  }
  return String(value);
}

/**
 * Converts the first sheet of `xlsxPath` into `csvPath` (UTF-8, no byte-order mark, LF line ends).
 * Refuses (`CashoutError` `too_many_rows`) a sheet with more than `maxRows` data rows, and
 * (`file_unreadable`) a file that is not a readable workbook or whose first sheet is empty.
 */
export async function xlsxToCsv(xlsxPath: string, csvPath: string, maxRows: number): Promise<XlsxConversion> {
  const out = createWriteStream(csvPath, { mode: 0o600 });
  let writeError: Error | undefined;
  out.on('error', (err) => (writeError ??= err));
  const put = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  let written = 0; // sheet rows written so far (as lines)
  let rows = 0;
  let width = 0;
  let sheet = '';
  const readFirstSheet = async () => {
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(xlsxPath, {
      sharedStrings: 'cache',
      styles: 'cache',
      hyperlinks: 'ignore',
      worksheets: 'emit',
      entries: 'emit',
    });
    for await (const worksheet of reader) {
      sheet = (worksheet as unknown as { name?: string }).name ?? 'sheet 1';
      for await (const row of worksheet as AsyncIterable<ExcelJS.Row>) {
        const cells: string[] = [];
        row.eachCell({ includeEmpty: true }, (cell, col) => {
          cells[col - 1] = shownText(cell.value, cell.numFmt);
        });
        for (let i = 0; i < cells.length; i++) cells[i] ??= '';
        if (cells.every((c) => c.trim() === '')) continue;
        if (width === 0) width = cells.length;
        else rows++;
        if (rows > maxRows) {
          const text = `the sheet has more than ${maxRows} rows (CASHOUT_MAX_ROWS)`;
          throw new CashoutError('too_many_rows', text, { maxRows });
        }
        while (cells.length < width) cells.push('');
        await put('\n'.repeat(Math.max(0, row.number - 1 - written)));
        await put(stringify([cells], { record_delimiter: 'unix' }));
        written = row.number;
      }
      break; // the first sheet only
    }
  };
  try {
    try {
      await readFirstSheet();
    } catch (err) {
      // exceljs's streaming reader now and then misses the workbook part when it is the zip's
      // last entry (as exceljs itself writes it), and fails before the first row with "Cannot read
      // properties of undefined (reading 'sheets')". Nothing was written yet: read it once more.
      if (err instanceof CashoutError || width !== 0) throw err;
      await readFirstSheet();
    }
  } catch (err) {
    out.end();
    await once(out, 'close').catch(() => undefined);
    await rm(csvPath, { force: true });
    if (err instanceof CashoutError) throw err;
    const text = `the file cannot be read as an Excel workbook (.xlsx): ${(err as Error).message}`;
    throw new CashoutError('file_unreadable', text, {}, err);
  }
  out.end();
  await once(out, 'close');
  if (writeError) throw writeError;
  if (width === 0) throw new CashoutError('file_empty', 'the first sheet of the workbook is empty');
  return { rows, sheet };
}
