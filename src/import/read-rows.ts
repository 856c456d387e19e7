/**
 * File → records. Streams a payout CSV through csv-parse (arrays, not objects: cheaper per row),
 * yields the header record first and then each data record with the line it starts on (header =
 * line 1, counting every physical line, also those inside quoted fields). Blank lines and lines of
 * empty cells are skipped. Malformed CSV becomes a file-level `CashoutError` naming the line.
 *
 * Bad input is refused early and with bounded memory (limits come from configuration through
 * `readOptionsFrom`):
 * - a file over `maxBytes` is refused from its size, before anything is parsed (`file_too_large`);
 * - more than `maxRows` data rows: `too_many_rows` as soon as the next row is read, the rest of the
 *   file is not read;
 * - one record longer than `maxRecordBytes` (by default 64 times the longest accepted value, at
 *   least 64 KiB, so a value of 10,000 characters is still a row-level `text_too_long`), or one
 *   physical line longer than twice that, is refused as `csv_malformed` naming the line: an
 *   unclosed quote or a value of megabytes never makes the parser hold the rest of the file;
 * - bytes are checked on the way in by `InputChecker` (`./encoding.ts`): UTF-8 (byte-order mark
 *   allowed), UTF-16 with a byte-order mark decoded, any other encoding only on request, NUL
 *   characters refused as binary, each with the line.
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { createHash } from 'node:crypto';
import { Transform, pipeline } from 'node:stream';
import { parse, type CsvError, type Options as CsvOptions } from 'csv-parse';
import { CashoutError } from '../errors.js';
import type { Config } from '../config.js';
import { InputChecker, formatBytes, type TextEncoding } from './encoding.js';
import { CONFIG_DEFAULTS } from '../config-defaults.js';

/** One data record: its cells in file order and the line it starts on. */
export interface CsvRecord {
  readonly line: number;
  readonly cells: readonly string[];
}

/** Options for reading a payout file. Limits left out take the configuration's defaults (`READ_DEFAULTS`). */
export interface ReadOptions {
  /** Field delimiter; default ",". */
  readonly delimiter?: string;
  /** Text encoding of the file; default UTF-8, or UTF-16 when the file starts with its byte-order mark (e.g. "windows-1256" for Arabic exports of older Excel). */
  readonly encoding?: string;
  /** Largest file accepted, in bytes (CASHOUT_MAX_FILE_BYTES); checked before parsing. */
  readonly maxBytes?: number;
  /** Most data rows accepted (CASHOUT_MAX_ROWS); reading stops at the first row over it. */
  readonly maxRows?: number;
  /** Longest accepted text value, in characters (CASHOUT_MAX_FIELD_LENGTH); sets the record limit. */
  readonly maxFieldLength?: number;
  /** Longest record, in bytes; default `maxRecordBytesFor(maxFieldLength)`. */
  readonly maxRecordBytes?: number;
}

/** The limits used when `ReadOptions` leaves them out: the configuration's defaults. */
export const READ_DEFAULTS = {
  maxBytes: CONFIG_DEFAULTS.maxFileBytes,
  maxRows: CONFIG_DEFAULTS.maxRows,
  maxFieldLength: CONFIG_DEFAULTS.maxFieldLength,
} as const;

/**
 * The longest record accepted for a given longest value: a row has ten columns of at most
 * `maxFieldLength` characters of up to four UTF-8 bytes each, plus quotes; 64 times the value
 * length covers that with room to spare, and the 64 KiB floor keeps an over-long value a row-level
 * problem (`text_too_long`, with its line and column) instead of refusing the whole file.
 */
export function maxRecordBytesFor(maxFieldLength: number): number {
  return Math.max(64 * 1024, 64 * maxFieldLength);
}

/** Builds the read options of a command from the configuration and its `--delimiter`/`--encoding` flags. */
export function readOptionsFrom(
  config: Pick<Config, 'maxFileBytes' | 'maxRows' | 'maxFieldLength'> & Partial<Pick<Config, 'importThreads'>>,
  flags: { readonly delimiter?: string | undefined; readonly encoding?: string | undefined } = {},
): ReadOptions & { readonly threads?: number } {
  return {
    ...(config.importThreads === undefined ? {} : { threads: config.importThreads }),
    ...(flags.delimiter === undefined ? {} : { delimiter: flags.delimiter }),
    ...(flags.encoding === undefined ? {} : { encoding: flags.encoding }),
    maxBytes: config.maxFileBytes,
    maxRows: config.maxRows,
    maxFieldLength: config.maxFieldLength,
  };
}

/** The limits of a read, each one given (`ReadOptions`) or the default. Sizes in bytes. */
export interface ReadLimits {
  readonly maxBytes: number;
  readonly maxRows: number;
  readonly maxFieldLength: number;
  readonly maxRecordBytes: number;
  /** Longest physical line: twice the record limit plus 4 KiB. */
  readonly maxLineBytes: number;
}

/** The limits of a read with `options`, the defaults (`READ_DEFAULTS`) filling in what it leaves out. */
export function readLimitsOf(options: ReadOptions): ReadLimits {
  const maxFieldLength = options.maxFieldLength ?? READ_DEFAULTS.maxFieldLength;
  const maxRecordBytes = options.maxRecordBytes ?? maxRecordBytesFor(maxFieldLength);
  return {
    maxBytes: options.maxBytes ?? READ_DEFAULTS.maxBytes,
    maxRows: options.maxRows ?? READ_DEFAULTS.maxRows,
    maxFieldLength,
    maxRecordBytes,
    maxLineBytes: 2 * maxRecordBytes + 4096,
  };
}

function checkerFor(path: string, options: ReadOptions, limits: ReadLimits, from?: ReadFrom): InputChecker {
  return new InputChecker({
    path,
    ...(from ? { continueAt: from } : {}),
    encoding: options.encoding,
    maxBytes: limits.maxBytes,
    maxLineBytes: limits.maxLineBytes,
    describeLineLimit: () => overLongAdvice(limits),
  });
}

function overLongAdvice(limits: ReadLimits): string {
  return (
    `a payout value is at most ${limits.maxFieldLength} characters (CASHOUT_MAX_FIELD_LENGTH); ` +
    'check that the file is a payout CSV and that every quoted value has its closing quote (")'
  );
}

/** Physical line breaks (CRLF, CR or LF, each once) inside the cells of one record. */
export function lineBreaks(cells: readonly string[]): number {
  let n = 0;
  for (const c of cells) {
    if (c.indexOf('\n') === -1 && c.indexOf('\r') === -1) continue;
    const m = c.match(/\r\n|\r|\n/g);
    if (m) n += m.length;
  }
  return n;
}

/** True for a blank line or a line of empty cells (skipped, never a row). */
export function isBlank(cells: readonly string[]): boolean {
  for (const c of cells) if (c.trim() !== '') return false;
  return true;
}

/**
 * Checks the file and its first 64 KiB before anything is parsed: missing, not a regular file,
 * empty (`file_empty`), over `maxBytes` (`file_too_large`), binary (`file_binary`), an encoding
 * that is not UTF-8 or UTF-16 with a byte-order mark, or contradicts `encoding` (`file_encoding`).
 * Each refusal says what to do. `readRecords` checks the rest of the file as it reads it.
 * Returns the encoding the file will be read with.
 */
export async function sniffFile(path: string, options: ReadOptions = {}): Promise<TextEncoding | undefined> {
  const limits = readLimitsOf(options);
  // Looked at before it is opened: opening a named pipe waits for a writer, and a device or a
  // folder is no payout file either.
  await refuseNonRegular(path);
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CashoutError('file_not_found', `file not found: ${path}`, { path }, cause);
    throw new CashoutError('file_unreadable', `cannot read ${path}: ${code ?? 'error'}`, { path }, cause);
  }
  try {
    const info = await handle.stat();
    const size = info.size;
    if (!info.isFile()) throw new CashoutError('file_unreadable', `${path} is not a regular file`, { path });
    if (size === 0)
      throw new CashoutError('file_empty', `${path} is empty; expected a header row and at least one payout row`, {
        path,
      });
    if (size > limits.maxBytes) {
      throw new CashoutError(
        'file_too_large',
        `${path} is ${formatBytes(size)}, larger than ${formatBytes(limits.maxBytes)}, the largest payout file accepted (CASHOUT_MAX_FILE_BYTES); split it into smaller files`,
        { path, bytes: size, maxBytes: limits.maxBytes },
      );
    }
    const buf = Buffer.alloc(Math.min(size, 64 * 1024));
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const checker = checkerFor(path, options, limits);
    checker.push(buf.subarray(0, bytesRead));
    if (bytesRead >= size) checker.end();
    return checker.chosen;
  } finally {
    await handle.close();
  }
}

/** What a path that is not a regular file is, in words. */
function kindOf(info: Stats): string {
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isDirectory()) return 'a folder';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Throws `file_unreadable` at once, without opening it, when `path` is not a regular file (a
 * named pipe, a device, a folder, a socket; symbolic links are followed), or `file_not_found`.
 */
export async function refuseNonRegular(path: string): Promise<void> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new CashoutError('file_not_found', `file not found: ${path}`, { path }, cause);
    throw new CashoutError('file_unreadable', `cannot read ${path}: ${code ?? 'error'}`, { path }, cause);
  }
  if (!info.isFile()) {
    throw new CashoutError(
      'file_unreadable',
      `${path} is ${kindOf(info)}, not a regular file; save the payout CSV as a file and give its path`,
      { path },
    );
  }
}

/** Streams the file through SHA-256; returns the hex digest and the size in bytes. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** The csv-parse options of a payout file, shared by the streaming and the chunk readers. */
export function csvOptions(options: Pick<ReadOptions, 'delimiter'>, maxRecordBytes: number): CsvOptions {
  return {
    bom: true,
    delimiter: options.delimiter ?? ',',
    // Every usual line end, also mixed in one file (rows appended by another program).
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    // A quote inside a value that does not start with one is kept as written (Mohamed "Mo" Ali),
    // as spreadsheets read it; a value that starts with a quote must still close it.
    relax_quotes: true,
    skip_empty_lines: false,
    max_record_size: maxRecordBytes,
  };
}

/** Where `readRecords` starts when it reads on from the middle of a UTF-8 file. */
export interface ReadFrom {
  /** Byte offset of a record boundary. */
  readonly start: number;
  /** File line at that offset. */
  readonly line: number;
}

/**
 * Reads a payout CSV: yields the header record (line 1 or the first non-blank line) first, then
 * each data record. Throws `CashoutError('csv_malformed')` with the line for unterminated quotes,
 * over-long records and similar defects, `too_many_rows` past `maxRows` data rows, the encoding
 * and binary refusals of `InputChecker`, and `file_empty` when there is no record at all. Call
 * `sniffFile` first for a clear answer before the first record.
 */
export async function* readRecords(
  path: string,
  options: ReadOptions = {},
  from?: ReadFrom,
): AsyncGenerator<CsvRecord> {
  const limits = readLimitsOf(options);
  const checker = checkerFor(path, options, limits, from);
  const parser = parse(csvOptions(options, limits.maxRecordBytes));
  const check = new Transform({
    transform(chunk: Buffer, _enc, done) {
      try {
        const out = checker.push(chunk);
        done(null, out.length > 0 ? out : undefined);
      } catch (err) {
        done(err as Error);
      }
    },
    flush(done) {
      try {
        const out = checker.end();
        done(null, out.length > 0 ? out : undefined);
      } catch (err) {
        done(err as Error);
      }
    },
  });
  // The parser is destroyed with the first error of any stage, which ends the loop below with it.
  pipeline(createReadStream(path, from ? { start: from.start } : {}), check, parser, () => undefined);
  let line = from?.line ?? 1;
  // Reading on from the middle of a file: the header was read before and the caller counts rows.
  let any = from !== undefined;
  let dataRows = 0;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      const start = line;
      line += 1 + lineBreaks(cells);
      if (isBlank(cells)) continue;
      if (any && from === undefined && ++dataRows > limits.maxRows) {
        throw new CashoutError(
          'too_many_rows',
          `${path} has more than ${limits.maxRows} payout rows (line ${start} is row ${dataRows}), the most accepted in one file (CASHOUT_MAX_ROWS); split it into smaller files`,
          { path, line: start, maxRows: limits.maxRows },
        );
      }
      any = true;
      yield { line: start, cells };
    }
  } catch (cause) {
    throw toCashoutError(cause, path, line, limits);
  } finally {
    parser.destroy();
  }
  if (!any && from === undefined)
    throw new CashoutError('file_empty', `${path} has no header row and no payout rows`, { path });
}

/** A payout file checked before its rows are read: its encoding, header record and limits. */
export interface OpenedCsv {
  /** The encoding it is read with (`sniffFile`). */
  readonly encoding: TextEncoding | undefined;
  /** The header: the first record that is not blank. */
  readonly header: CsvRecord;
  readonly limits: ReadLimits;
}

/**
 * Checks `path` (`sniffFile`) and reads its header record, so that a reader of its rows starts
 * from one answer: the file, its header and the limits of `options`. Throws `CashoutError` as
 * `sniffFile` does, then as `readRecords` does for the header (`file_empty` when it has no record).
 */
export async function openCsv(path: string, options: ReadOptions): Promise<OpenedCsv> {
  const encoding = await sniffFile(path, options);
  for await (const header of readRecords(path, options)) return { encoding, header, limits: readLimitsOf(options) };
  throw new CashoutError('file_empty', `${path} has no header row and no payout rows`, { path });
}

function toCashoutError(cause: unknown, path: string, recordLine: number, limits: ReadLimits): CashoutError {
  if (cause instanceof CashoutError) return cause;
  const csv = cause as CsvError & { lines?: number };
  if (typeof csv?.code === 'string' && (csv.code.startsWith('CSV_') || csv.code === 'INVALID_OPENING_QUOTE')) {
    if (csv.code === 'CSV_MAX_RECORD_SIZE') {
      return new CashoutError(
        'csv_malformed',
        `${path}, line ${recordLine}: the row starting on this line is longer than ${formatBytes(limits.maxRecordBytes)}; ${overLongAdvice(limits)}`,
        { path, csvCode: csv.code, line: recordLine, maxRecordBytes: limits.maxRecordBytes },
        cause,
      );
    }
    const where = csv.lines ? ` near line ${csv.lines}` : '';
    const what =
      csv.code === 'CSV_QUOTE_NOT_CLOSED'
        ? 'a quoted field is never closed (a " without its closing ")'
        : csv.code === 'CSV_INVALID_CLOSING_QUOTE'
          ? 'a quote is followed by other characters inside a field'
          : csv.code === 'INVALID_OPENING_QUOTE'
            ? 'a quote (") appears inside a value that does not start with one; put the whole value in quotes and write the inner quote twice ("")'
            : csv.message;
    return new CashoutError(
      'csv_malformed',
      `${path} is not a well-formed CSV${where}: ${what}`,
      { path, csvCode: csv.code, line: csv.lines },
      cause,
    );
  }
  const code = (cause as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') return new CashoutError('file_not_found', `file not found: ${path}`, { path }, cause);
  return new CashoutError(
    'file_unreadable',
    `cannot read ${path}: ${code ?? (cause as Error)?.message ?? 'error'}`,
    { path },
    cause,
  );
}
