/**
 * File → records. Streams a payout CSV through csv-parse (arrays, not objects: cheaper per row),
 * yields the header record first and then each data record with the line it starts on (header =
 * line 1, counting every physical line, also those inside quoted fields). Blank lines and lines of
 * empty cells are skipped. Malformed CSV becomes a file-level `CashoutError` naming the line.
 */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { parse, type CsvError } from 'csv-parse';
import { CashoutError } from '../errors.js';

/** One data record: its cells in file order and the line it starts on. */
export interface CsvRecord {
  readonly line: number;
  readonly cells: readonly string[];
}

/** Options for reading a payout file. */
export interface ReadOptions {
  /** Field delimiter; default ",". */
  readonly delimiter?: string;
  /** Text encoding of the file; default UTF-8 (e.g. "windows-1256" for Arabic exports of older Excel). */
  readonly encoding?: string;
}

function lineBreaks(cells: readonly string[]): number {
  let n = 0;
  for (const c of cells) {
    if (c.indexOf('\n') === -1 && c.indexOf('\r') === -1) continue;
    const m = c.match(/\r\n|\r|\n/g);
    if (m) n += m.length;
  }
  return n;
}

function isBlank(cells: readonly string[]): boolean {
  for (const c of cells) if (c.trim() !== '') return false;
  return true;
}

/**
 * Checks the start of the file for content that is not a UTF-8 text CSV. Throws `file_empty`,
 * `file_binary` or `file_encoding` with a message saying what to do.
 */
export async function sniffFile(path: string): Promise<void> {
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
    if (size === 0) throw new CashoutError('file_empty', `${path} is empty; expected a header row and at least one payout row`, { path });
    const buf = Buffer.alloc(Math.min(size, 64 * 1024));
    await handle.read(buf, 0, buf.length, 0);
    if ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff)) {
      throw new CashoutError('file_encoding', `${path} is saved as UTF-16; save it as "CSV UTF-8" and try again`, { path });
    }
    if (buf.includes(0)) {
      throw new CashoutError('file_binary', `${path} holds binary data (NUL bytes), not a CSV text file; export the sheet as "CSV UTF-8"`, { path });
    }
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(buf, { stream: buf.length < size });
    } catch {
      throw new CashoutError('file_encoding', `${path} is not valid UTF-8 (perhaps Windows-1256); save it as "CSV UTF-8" and try again`, { path });
    }
  } finally {
    await handle.close();
  }
}

/** Streams the file through SHA-256; returns the hex digest and the size in bytes. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Size of a file in bytes. */
export async function fileSize(path: string): Promise<number> {
  return (await stat(path)).size;
}

/**
 * Reads a payout CSV: yields the header record (line 1 or the first non-blank line) first, then
 * each data record. Throws `CashoutError('csv_malformed')` with the line for unterminated quotes
 * and similar defects, `file_empty` when there is no record at all. Call `sniffFile` first for a
 * clear answer on empty, binary or UTF-16 files.
 */
export async function* readRecords(path: string, options: ReadOptions = {}): AsyncGenerator<CsvRecord> {
  const parser = parse({
    bom: true,
    delimiter: options.delimiter ?? ',',
    relax_column_count: true,
    skip_empty_lines: false,
  });
  createReadStream(path).on('error', (e) => parser.destroy(e)).pipe(parser);
  let line = 1;
  let any = false;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      const start = line;
      line += 1 + lineBreaks(cells);
      if (isBlank(cells)) continue;
      any = true;
      yield { line: start, cells };
    }
  } catch (cause) {
    throw toCashoutError(cause, path);
  } finally {
    parser.destroy();
  }
  if (!any) throw new CashoutError('file_empty', `${path} has no header row and no payout rows`, { path });
}

function toCashoutError(cause: unknown, path: string): CashoutError {
  if (cause instanceof CashoutError) return cause;
  const csv = cause as CsvError & { lines?: number };
  if (typeof csv?.code === 'string' && csv.code.startsWith('CSV_')) {
    const where = csv.lines ? ` near line ${csv.lines}` : '';
    const what =
      csv.code === 'CSV_QUOTE_NOT_CLOSED'
        ? 'a quoted field is never closed (a " without its closing ")'
        : csv.code === 'CSV_INVALID_CLOSING_QUOTE'
          ? 'a quote is followed by other characters inside a field'
          : csv.message;
    return new CashoutError('csv_malformed', `${path} is not a well-formed CSV${where}: ${what}`, { path, csvCode: csv.code, line: csv.lines }, cause);
  }
  const code = (cause as NodeJS.ErrnoException)?.code;
  if (code === 'ENOENT') return new CashoutError('file_not_found', `file not found: ${path}`, { path }, cause);
  return new CashoutError('file_unreadable', `cannot read ${path}: ${code ?? (cause as Error)?.message ?? 'error'}`, { path }, cause);
}
