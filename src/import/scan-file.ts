/**
 * File → rows → items: streams a payout CSV, checks the header, validates each record and hands
 * each valid payout item or invalid row to the caller, in file order. Holds one record at a time.
 * File-level problems throw a `CashoutError` (exit 2); row problems are reported, never thrown.
 */
import { indexHeader, type HeaderIndex } from './columns.js';
import { readRecords, sniffFile, type ReadOptions } from './read-rows.js';
import { createRowValidator, type PayoutItem, type RowRules } from './validate-row.js';
import type { RowIssue } from './row-issues.js';
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
  /** A valid row: the payout item and the cells it was read from. */
  onItem(item: PayoutItem, cells: readonly string[]): void | Promise<void>;
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
export async function scanFile(path: string, rules: RowRules, handlers: ScanHandlers, options: ReadOptions = {}): Promise<ScanCounts> {
  const read: ReadOptions = { maxFieldLength: rules.maxFieldLength, ...options };
  await sniffFile(path, read);
  let validate: ((cells: readonly string[], line: number) => ReturnType<ReturnType<typeof createRowValidator>>) | undefined;
  let rows = 0;
  let validRows = 0;
  let invalidRows = 0;
  for await (const record of readRecords(path, read)) {
    if (!validate) {
      const index = indexHeader(record.cells);
      validate = createRowValidator(index, rules);
      await handlers.onHeader?.(record.cells, index);
      continue;
    }
    rows++;
    const outcome = validate(record.cells, record.line);
    if (outcome.ok) {
      validRows++;
      await handlers.onItem(outcome.item, record.cells);
    } else {
      invalidRows++;
      await handlers.onInvalid({ line: outcome.line, cells: record.cells, issues: outcome.issues });
    }
  }
  if (rows === 0) throw new CashoutError('no_data_rows', `${path} has a header but no payout rows`, { path });
  return { rows, validRows, invalidRows };
}
