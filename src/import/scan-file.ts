/**
 * File → rows → items: streams a payout CSV, checks the header, validates each record and hands
 * each valid payout item or invalid row to the caller, in file order. Built on the parallel
 * reader (`./parallel-scan.ts`); memory stays flat whatever the file's size.
 * File-level problems throw a `CashoutError` (exit 2); row problems are reported, never thrown.
 */
import type { HeaderIndex } from './columns.js';
import { openScan, type ScanOptions } from './parallel-scan.js';
import { ROW_INVALID, ROW_WALLET } from './check-chunk.js';
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
    const { part } = s;
    const itemText = (j: number) =>
      Buffer.from(
        part.itemBytes.buffer,
        part.itemBytes.byteOffset + (j === 0 ? 0 : part.itemEnds[j - 1]!),
        part.itemEnds[j]! - (j === 0 ? 0 : part.itemEnds[j - 1]!),
      ).toString('utf8');
    let j = 0;
    let k = 0;
    for (let i = 0; i < part.kinds.length; i++) {
      rows++;
      const line = s.baseLine + part.rowLines[i]!;
      const kind = part.kinds[i];
      if (kind === ROW_INVALID) {
        invalidRows++;
        await handlers.onInvalid({ line, cells: part.invalid[k]!.cells, issues: s.invalidIssues[k]! });
        k++;
        continue;
      }
      const reference = s.references[j]!;
      const earlier = s.earlierReference[j]!;
      const cells = earlier !== 0 ? await s.cellsOfValid(j) : undefined;
      const at = j++;
      if (cells) {
        invalidRows++;
        await handlers.onInvalid({
          line,
          cells,
          issues: [
            { column: 'reference', code: 'reference_duplicate', found: reference, params: { firstLine: earlier } },
          ],
        });
        continue;
      }
      validRows++;
      if (!handlers.onItem) continue;
      const fields = JSON.parse(itemText(at)) as MobileWalletItem & BankAccountItem;
      await handlers.onItem(
        kind === ROW_WALLET
          ? { line, reference, channel: 'wallet', wallet: fields as MobileWalletItem }
          : { line, reference, channel: 'bank', bank: fields as BankAccountItem },
      );
    }
  }
  if (rows === 0) throw new CashoutError('no_data_rows', `${path} has a header but no payout rows`, { path });
  return { rows, validRows, invalidRows };
}
