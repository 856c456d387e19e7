/**
 * A record whose number of fields differs from the header's: why, and which cells are its own.
 *
 * The common cause is a quote kept as written inside a value that does not start with one
 * (`Mohamed "Mo, Ali"`): the reader keeps the quote (README "The CSV template"), so the delimiter
 * after it splits the value in two and every later cell moves one column on. Such a split is
 * undone here by joining the cells from the one that opens a quote to the one that closes it; the
 * row stays invalid (`field_count`), but every report shows its cells under their own columns.
 * A record that cannot be realigned this way (a missing or extra delimiter) has no cell that can
 * be placed with certainty: reports leave its columns empty rather than show a shifted value.
 */
import type { RowIssue } from './row-issues.js';

function quotes(s: string): number {
  let n = 0;
  for (let i = s.indexOf('"'); i !== -1; i = s.indexOf('"', i + 1)) n++;
  return n;
}

/** A value split by a quote inside it: cells `from`..`to` (inclusive) are one value. */
interface QuoteSplit {
  readonly from: number;
  readonly to: number;
}

function quoteSplits(record: readonly string[], delimiter: string): QuoteSplit[] {
  const splits: QuoteSplit[] = [];
  for (let i = 0; i < record.length; i++) {
    if (quotes(record[i]!) % 2 === 0) continue;
    let joined = record[i]!;
    let j = i + 1;
    for (; j < record.length; j++) {
      joined += delimiter + record[j]!;
      if (quotes(record[j]!) % 2 === 1) break;
    }
    if (j >= record.length) break;
    splits.push({ from: i, to: j });
    i = j;
  }
  return splits;
}

function joinSplits(record: readonly string[], splits: readonly QuoteSplit[], delimiter: string): string[] {
  const out: string[] = [];
  let k = 0;
  for (let i = 0; i < record.length; i++) {
    const s = splits[k];
    if (s && s.from === i) {
      out.push(record.slice(s.from, s.to + 1).join(delimiter));
      i = s.to;
      k++;
    } else out.push(record[i]!);
  }
  return out;
}

/**
 * The cells of `record` under the header's `width` columns: the record itself when it has that
 * many (extra empty cells at the end allowed), the record with its quote-split values joined
 * again when that gives the right count, else undefined (no cell can be placed with certainty).
 */
export function alignCells(record: readonly string[], width: number, delimiter = ','): readonly string[] | undefined {
  const fits = (cells: readonly string[]) =>
    cells.length === width || (cells.length > width && cells.slice(width).every((v) => v.trim() === ''));
  if (fits(record)) return record;
  const splits = quoteSplits(record, delimiter);
  if (splits.length === 0) return undefined;
  const joined = joinSplits(record, splits, delimiter);
  return fits(joined) ? joined : undefined;
}

/** A value written again in CSV quotes, inner quotes doubled: `Mohamed "Mo, Ali"` → `"Mohamed ""Mo, Ali"""`. */
export function quoteCsvValue(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}

/**
 * The `field_count` issue of a record with `record.length` fields under a header of `width`.
 * When a quote inside an unquoted value explains the count, `found` is that value as split,
 * `params.value` the whole value and `suggestion` the value written in quotes, ready to paste.
 */
export function fieldCountIssue(record: readonly string[], width: number, delimiter = ','): RowIssue {
  const params = { found: record.length, expected: width };
  const splits = quoteSplits(record, delimiter);
  if (splits.length > 0 && alignCells(record, width, delimiter) !== undefined) {
    const first = splits[0]!;
    const value = record.slice(first.from, first.to + 1).join(delimiter);
    return {
      column: 'row',
      code: 'field_count',
      found: record[first.from]!,
      suggestion: quoteCsvValue(value.trim()),
      params: { ...params, value, quote: true },
    };
  }
  return { column: 'row', code: 'field_count', params };
}
