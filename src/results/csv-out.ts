/**
 * Writing CSV reports (csv-stringify). Every cell a spreadsheet would run as a formula (starting
 * with =, +, -, @, tab or carriage return) is neutralised with a leading apostrophe, except values
 * that are plainly numbers or phone numbers ("+201001234567", "-5.00"), which stay readable as they
 * are. Files are written owner-only (they hold personal data) to a temporary name and renamed
 * into place, so a reader never sees half a report. Every file starts with a UTF-8 byte-order mark
 * unless told otherwise (`CASHOUT_CSV_BOM`): without it Excel reads the file in the system's legacy
 * code page and Arabic names come out garbled. Whatever reads these files back must drop the mark
 * (csv-parse: `bom: true`) so that it never becomes part of the first column's name.
 */
import { createWriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { once } from 'node:events';
import { stringify } from 'csv-stringify';
import { randomBytes } from 'node:crypto';
import { CONFIG_DEFAULTS } from '../config.js';

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d[\d .]*$/;

/** Makes a cell safe to open in a spreadsheet (see module comment). */
export function neutraliseCell(value: string): string {
  return FORMULA_START.test(value) && !PLAIN_NUMBER.test(value) ? `'${value}` : value;
}

/** How a CSV file is written. */
export interface CsvOutOptions {
  /**
   * Start the file with a UTF-8 byte-order mark (the `CASHOUT_CSV_BOM` setting). Default
   * `CONFIG_DEFAULTS.csvBom` (true).
   */
  readonly bom?: boolean | undefined;
}

/** A CSV file being written row by row. */
export interface CsvOut {
  /**
   * Writes one row. Returns a promise when the file is catching up (wait for it before the next
   * row), else undefined: a report of a million rows does not wait a million times.
   */
  write(row: readonly (string | number | undefined)[]): Promise<void> | undefined;
  /** Finishes the file and moves it into place. */
  close(): Promise<void>;
}

/** Opens `path` for writing (owner-only) with the given header row; with a byte-order mark as `options.bom` says. */
export function openCsvOut(path: string, header: readonly string[], options: CsvOutOptions = {}): CsvOut {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const file = createWriteStream(tmp, { mode: 0o600 });
  const csv = stringify({ record_delimiter: 'unix', bom: options.bom ?? CONFIG_DEFAULTS.csvBom });
  csv.pipe(file);
  // A file that cannot be opened or written (a folder missing, a disk full) fails the writes
  // waiting and `close`, never the process (a stream error nobody listens to would end it).
  const failed = new Promise<never>((_, reject) => {
    file.once('error', (err) => {
      csv.unpipe(file);
      reject(err);
    });
  });
  failed.catch(() => undefined);
  /** Settles when the rows written so far have been taken; undefined when nothing waits. */
  let waiting: Promise<void> | undefined;
  const track = (p: Promise<void>): Promise<void> => {
    const t: Promise<void> = p.then(() => {
      if (waiting === t) waiting = undefined;
    });
    // A failure reaches whoever waits on it (a later write, `close`), never the process as unhandled.
    t.catch(() => undefined);
    waiting = t;
    return t;
  };
  const put = (row: readonly (string | number | undefined)[]): Promise<void> | undefined => {
    if (csv.write(row.map((c) => (c === undefined ? '' : typeof c === 'number' ? String(c) : neutraliseCell(c)))))
      return undefined;
    return track(Promise.race([once(csv, 'drain').then(() => undefined), failed]));
  };
  put(header);
  return {
    write(row) {
      // Rows keep their order: while the file catches up, a row waits its turn.
      if (waiting) return track(waiting.then(() => put(row)));
      return put(row);
    },
    async close() {
      while (waiting) await waiting;
      csv.end();
      await Promise.race([once(file, 'close'), failed]);
      await rename(tmp, path);
    },
  };
}
