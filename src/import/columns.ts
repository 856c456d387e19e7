/**
 * The payout CSV template: its columns, which channel uses each, and the header check.
 * Header names are case-insensitive and trimmed; column order is free (README "CSV template").
 */
import { closestName } from '../closest-name.js';
import { CashoutError } from '../errors.js';

/** Every column of the template, in the order the README documents them. */
export const COLUMNS = [
  'channel',
  'amount',
  'type',
  'holder_name',
  'mobile_number',
  'bank_name',
  'bank_address',
  'account_number',
  'description',
  'reference',
] as const;
export type ColumnName = (typeof COLUMNS)[number];

/** Columns only wallet rows fill (interface doc §2.4.1). */
export const WALLET_ONLY: readonly ColumnName[] = ['mobile_number'];
/** Columns only bank rows fill (interface doc §2.4.2). */
export const BANK_ONLY: readonly ColumnName[] = ['bank_name', 'bank_address', 'account_number'];
/** Columns that may be left out of the header. */
export const OPTIONAL_COLUMNS: readonly ColumnName[] = ['reference'];

/**
 * Columns a file may carry that are not read: `line` and `errors`, which the project's own
 * `rejected-rows.csv` adds before the input's columns, so that a person can fix that file and
 * upload it again as it is (README "All or nothing"). Any other unknown column stays an error.
 */
export const IGNORED_COLUMNS: readonly string[] = ['line', 'errors'];

/** Position of each known column in the file's records; -1 when an optional column is absent. */
export type HeaderIndex = Readonly<Record<ColumnName, number>>;

/** The closest known column name to `name`, if one is near enough to be a plausible typo. */
export function closestColumn(name: string): ColumnName | undefined {
  return closestName(name, COLUMNS, Math.max(2, Math.floor(name.length / 3)));
}

export function normaliseHeaderName(raw: string): string {
  return raw
    .replace(/^\uFEFF/, '')
    .trim()
    .toLowerCase();
}

/** Names of the delimiters `--delimiter` takes by name. */
const DELIMITER_NAMES: ReadonlyArray<readonly [string, string, string]> = [
  [';', 'semicolon', 'semicolons'],
  ['\t', 'tab', 'tabs'],
  ['|', 'pipe', 'pipes (|)'],
  [',', 'comma', 'commas'],
];

/**
 * When the header was split with the wrong delimiter, one cell holds several column names joined
 * by another one ("channel;amount;type…" read with commas). Returns that delimiter's entry when
 * splitting by it yields at least two known column names.
 */
export function delimiterHint(record: readonly string[]): readonly [string, string, string] | undefined {
  for (const entry of DELIMITER_NAMES) {
    const [d] = entry;
    const joined = record.filter((cell) => cell.includes(d));
    const known = joined
      .flatMap((cell) => cell.split(d))
      .filter((n) => (COLUMNS as readonly string[]).includes(normaliseHeaderName(n)));
    if (known.length >= 2) return entry;
  }
  return undefined;
}

/**
 * Excel writes `sep=,` (or `sep=;`) as a first line to name the separator; it is not a header.
 * Throws `header_missing` saying so: delete the line, and which `--delimiter` the file then needs.
 */
function refuseSeparatorLine(record: readonly string[]): void {
  const m = /^sep=(.?)[ \r]*$/i.exec((record[0] ?? '').replace(/^\uFEFF/, '').trimStart());
  if (!m || record.slice(1).some((n) => n.trim() !== '')) return;
  const sep = m[1] === '' ? ',' : m[1]!;
  const named = DELIMITER_NAMES.find(([d]) => d === sep);
  const then =
    sep === ','
      ? 'the file is comma-separated, as expected'
      : `the file is separated by ${named ? named[2] : `"${sep}"`}: then run again with --delimiter ${named ? named[1] : sep}`;
  throw new CashoutError(
    'header_missing',
    `line 1 is "sep=${sep}", the separator line Excel writes, not the header row; delete that line so that the header comes first (${then})`,
    { separator: sep },
  );
}

/**
 * Maps a header record to column positions. Throws a file-level `CashoutError` with code
 * `file_delimiter` when the header shows the file uses another delimiter (naming the
 * `--delimiter` value to use), `column_unknown` (naming it and the closest known name),
 * `column_missing` or `column_duplicated`.
 */
export function indexHeader(record: readonly string[]): HeaderIndex {
  const index: Record<string, number> = Object.fromEntries(COLUMNS.map((c) => [c, -1]));
  const names = record.map(normaliseHeaderName);
  refuseSeparatorLine(record);
  const unknown = (n: string) =>
    n !== '' && !(COLUMNS as readonly string[]).includes(n) && !IGNORED_COLUMNS.includes(n);
  const hint = names.some(unknown) ? delimiterHint(record) : undefined;
  if (hint) {
    const [d, name, plural] = hint;
    const shown = record.find((cell) => cell.includes(d)) ?? '';
    const visible = JSON.stringify(shown.length > 60 ? `${shown.slice(0, 57)}...` : shown);
    throw new CashoutError(
      'file_delimiter',
      `the header reads as the column ${visible}: the file seems to be separated by ${plural}; run again with --delimiter ${name}` +
        (name === 'comma' ? ' (or without --delimiter)' : ''),
      { delimiter: name },
    );
  }
  if (names.every((n) => n === '')) {
    throw new CashoutError(
      'header_missing',
      'line 1 must be a header row naming the columns (see the CSV template in the README)',
    );
  }
  let last = names.length;
  while (last > 0 && names[last - 1] === '') last--;
  names.slice(0, last).forEach((name, i) => {
    if (name === '') {
      throw new CashoutError(
        'column_unknown',
        `column ${i + 1} of the header has no name; name it or remove the column`,
        { position: i + 1 },
      );
    }
    if (IGNORED_COLUMNS.includes(name)) {
      if (names.indexOf(name) !== i) {
        throw new CashoutError('column_duplicated', `column "${name}" appears twice in the header`, { column: name });
      }
      return;
    }
    if (!(COLUMNS as readonly string[]).includes(name)) {
      const near = closestColumn(name);
      const looksLikeData = /^\d|^\+|^(wallet|bank)$/i.test(name);
      throw new CashoutError(
        looksLikeData ? 'header_missing' : 'column_unknown',
        looksLikeData
          ? `line 1 looks like data ("${record[i]}"), not a header row; add a header row naming the columns`
          : `unknown column "${record[i]}" in the header (column ${i + 1})` +
              (near ? `; did you mean "${near}"?` : `; known columns are ${COLUMNS.join(', ')}`),
        { column: record[i], position: i + 1, suggestion: near },
      );
    }
    if (index[name] !== -1) {
      throw new CashoutError(
        'column_duplicated',
        `column "${name}" appears twice in the header (columns ${index[name]! + 1} and ${i + 1})`,
        {
          column: name,
        },
      );
    }
    index[name] = i;
  });
  const missing = COLUMNS.filter((c) => index[c] === -1 && !OPTIONAL_COLUMNS.includes(c));
  if (missing.length > 0) {
    throw new CashoutError(
      'column_missing',
      `the header lacks the column${missing.length > 1 ? 's' : ''} ${missing.map((m) => `"${m}"`).join(', ')}; every payout file needs ${COLUMNS.filter((c) => !OPTIONAL_COLUMNS.includes(c)).join(', ')} (reference is optional)`,
      { columns: missing },
    );
  }
  return index as HeaderIndex;
}
