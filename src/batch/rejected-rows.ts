/**
 * `rejected-rows.csv`: the invalid rows of a file, ready to fix and upload again. Its columns are
 * `line` (the row's line in the file, or its row number in an Excel sheet) and `errors` (every
 * problem, `column: reason` separated by `; `), then the input's own columns in the input's order.
 * The import ignores exactly these two columns (`IGNORED_COLUMNS` in ../import/columns.ts), so the
 * fixed file is accepted as it is; when the input already had them (a fixed rejected-rows file
 * uploaded again), they are written once, with the new values.
 */
import { IGNORED_COLUMNS } from '../import/columns.js';
import { normaliseHeaderName } from '../import/columns.js';
import { describeIssue } from '../import/reasons.js';
import type { RowIssue } from '../import/row-issues.js';
import { openCsvOut, type CsvOutOptions } from '../results/csv-out.js';

/** The invalid rows of one file being written. */
export interface RejectedRowsOut {
  /** Writes one invalid row: its line, its cells as read (in the input's columns) and its issues. */
  write(line: number, cells: readonly string[], issues: readonly RowIssue[]): Promise<void> | undefined;
  close(): Promise<void>;
}

/** The `errors` cell of a row: "column: reason" entries separated by "; ". */
export function errorsText(issues: readonly RowIssue[]): string {
  return issues.map((i) => `${i.column}: ${describeIssue(i)}`).join('; ');
}

/** Opens `path` (owner-only, written to a temporary name and renamed) for the rows of a file with `header`. */
export function openRejectedRows(
  path: string,
  header: readonly string[],
  options: CsvOutOptions = {},
): RejectedRowsOut {
  const kept = header.map((_, i) => i).filter((i) => !IGNORED_COLUMNS.includes(normaliseHeaderName(header[i] ?? '')));
  const out = openCsvOut(path, ['line', 'errors', ...kept.map((i) => header[i]!)], options);
  return {
    // Cells as read: a row with fewer or more fields than the header keeps them (its error says so).
    write: (line, cells, issues) =>
      out.write([
        line,
        errorsText(issues),
        ...kept.filter((i) => i < cells.length).map((i) => cells[i]!),
        ...cells.slice(header.length),
      ]),
    close: () => out.close(),
  };
}
