/**
 * File → rows → items: streams a payout CSV, checks the header, validates each record and hands
 * each valid payout item or invalid row to the caller, in file order. Built on the parallel
 * reader (`./parallel-scan.ts`); memory stays flat whatever the file's size.
 * File-level problems throw a `CashoutError` (exit 2); row problems are reported, never thrown.
 */
import type { HeaderIndex } from './columns.js';
import { openScan, type ScannedPart, type ScanOptions } from './parallel-scan.js';
import { itemText, partRows, ROW_INVALID, ROW_WALLET, type PartRow } from './check-chunk.js';
import type { PayoutItem, RowRules } from './validate-row.js';
import type { RowIssue } from './row-issues.js';
import type { BankAccountItem, MobileWalletItem } from '../contract/withdrawal-api.js';
import { CashoutError } from '../errors.js';

/** An invalid row: its line, its cells as read, and every issue found. */
export interface InvalidRow {
  readonly line: number;
  readonly cells: readonly string[];
  readonly issues: readonly RowIssue[];
}

/** Receivers of the scan's output. Returning a promise applies back-pressure. */
export interface ScanHandlers {
  /** Called once with the header, before any row. */
  onHeader?(header: readonly string[], index: HeaderIndex): void | Promise<void>;
  /** A valid row: the payout item (left out: valid rows are only counted, which is cheaper). */
  onItem?(item: PayoutItem): void | Promise<void>;
  onInvalid(row: InvalidRow): void | Promise<void>;
  /** Called with each part of the file before its rows (what checks across a part's rows read). */
  onPart?(part: ScannedPart): void | Promise<void>;
}

/** Counts of one scan. */
export interface ScanCounts {
  readonly rows: number;
  readonly validRows: number;
  readonly invalidRows: number;
}

/**
 * Scans `path` with the given rules. Throws `CashoutError` for file-level problems (including a
 * file with no data rows); the limits of `options` (build them with `readOptionsFrom`) apply, and
 * the longest record follows `rules.maxFieldLength` unless `options` says otherwise.
 */
export async function scanFile(
  path: string,
  rules: RowRules,
  handlers: ScanHandlers,
  options: ScanOptions = {},
): Promise<ScanCounts> {
  const scan = await openScan(path, rules, options);
  await handlers.onHeader?.(scan.header, scan.index);
  let rows = 0;
  let validRows = 0;
  let invalidRows = 0;
  for await (const s of scan.parts) {
    await handlers.onPart?.(s);
    for (const row of partRows(s.part, s.baseLine)) {
      rows++;
      if (row.kind === ROW_INVALID || s.earlierReference[row.valid] !== 0) {
        invalidRows++;
        await handlers.onInvalid(await invalidRowOf(s, row));
        continue;
      }
      validRows++;
      if (handlers.onItem) await handlers.onItem(payoutItemOf(s, row));
    }
  }
  if (rows === 0) throw new CashoutError('no_data_rows', `${path} has a header but no payout rows`, { path });
  return { rows, validRows, invalidRows };
}

/**
 * A row refused: an invalid row with its cells and issues, or a valid row whose reference an
 * earlier row of the file used (`reference_duplicate`), with its cells as read.
 */
async function invalidRowOf(s: ScannedPart, row: PartRow): Promise<InvalidRow> {
  const { line } = row;
  if (row.kind === ROW_INVALID)
    return { line, cells: s.part.invalid[row.invalid]!.cells, issues: s.invalidIssues[row.invalid]! };
  const issue: RowIssue = {
    column: 'reference',
    code: 'reference_duplicate',
    found: s.references[row.valid]!,
    params: { firstLine: s.earlierReference[row.valid]! },
  };
  return { line, cells: await s.cellsOfValid(row.valid), issues: [issue] };
}

/** The payout item of a valid row, from the JSON its import thread made of it. */
function payoutItemOf(s: ScannedPart, row: PartRow): PayoutItem {
  const { line } = row;
  const reference = s.references[row.valid]!;
  const fields = JSON.parse(itemText(s.part, row.valid)) as MobileWalletItem & BankAccountItem;
  return row.kind === ROW_WALLET
    ? { line, reference, channel: 'wallet', wallet: fields as MobileWalletItem }
    : { line, reference, channel: 'bank', bank: fields as BankAccountItem };
}
