/**
 * The payout file templates offered for download: the header of the CSV template (README "The CSV
 * template") and one example row per channel, as CSV (UTF-8 with a byte-order mark, for Excel) and
 * as an Excel workbook whose cells are formatted as text, so that Excel keeps `+20…`, leading
 * zeros and two decimals as typed.
 */
import ExcelJS from 'exceljs';
import { stringify } from 'csv-stringify/sync';
import { COLUMNS } from '../import/columns.js';

/** The example rows, one per channel, in the order of `COLUMNS`. */
export const TEMPLATE_ROWS: readonly (readonly string[])[] = [
  [
    'wallet',
    '1500.00',
    'TRANSFER',
    'محمد أحمد السيد',
    '+201001234567',
    '',
    '',
    '',
    'November commission',
    'PAY-2026-11-0001',
  ],
  [
    'bank',
    '12500.50',
    'TRANSFER',
    'Sara Hassan',
    '',
    'Commercial International Bank',
    '12 Talaat Harb St, Cairo',
    '100234567890',
    'November salary',
    'PAY-2026-11-0002',
  ],
];

/** The CSV template, with a UTF-8 byte-order mark. */
export function templateCsv(): Buffer {
  return Buffer.from(stringify([[...COLUMNS], ...TEMPLATE_ROWS], { record_delimiter: 'unix', bom: true }), 'utf8');
}

/** The Excel template: one sheet "payouts", every cell formatted as text. */
export async function templateXlsx(): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('payouts');
  const width = (c: string) => Math.max(14, c.length + 4);
  sheet.columns = COLUMNS.map((c) => ({ header: c, key: c, width: width(c), style: { numFmt: '@' } }));
  for (const row of TEMPLATE_ROWS) sheet.addRow([...row]);
  sheet.getRow(1).font = { bold: true };
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
