/**
 * One piece of a payout file → its rows, validated, in a compact form that crosses threads
 * cheaply. This is the work of an import thread (`./validate-thread.ts`); with no threads the
 * reader (`./parallel-scan.ts`) calls it directly. Each row is checked by the row rules alone
 * (`./validate-row.ts`); the checks that span the file (a reference used twice, possible
 * duplicates, wallet totals) happen afterwards in file order, over the fingerprints given here.
 *
 * A piece is either bytes of a UTF-8 file cut on record boundaries (`bytes` task: any defect,
 * even one caused by a wrong cut, answers `fallback`, and the reader reads the file on from that
 * piece with `stream`), or the file read on from a byte offset to its end (`stream` task, for
 * other encodings and malformed files: its errors are the file's errors, with their lines).
 */
import { isUtf8 } from 'node:buffer';
import { CashoutError } from '../errors.js';
import type { HeaderIndex } from './columns.js';
import { fingerprintInto, fingerprintKeyInto } from './fingerprint.js';
import { bankItemJson, walletItemJson } from '../contract/item-json.js';
import { parse as parseSync } from 'csv-parse/sync';
import { csvOptions, isBlank, lineBreaks, readRecords, type ReadOptions } from './read-rows.js';
import type { RowIssue } from './row-issues.js';
import { createRowValidator, type RowRules } from './validate-row.js';
import { toPiasters } from '../money.js';

/** What every piece of one file is checked with. */
export interface ChunkSettings {
  readonly path: string;
  readonly header: HeaderIndex;
  readonly rules: RowRules;
  readonly read: ReadOptions;
  readonly maxRecordBytes: number;
  /** Longest physical line, in bytes (the streaming reader's limit: refused there with its line). */
  readonly maxLineBytes: number;
}

function gapOver(bytes: Uint8Array, byte: number, from: number, to: number, max: number): boolean {
  let prev = from;
  for (let i = bytes.indexOf(byte, from); ; i = bytes.indexOf(byte, i + 1)) {
    const end = i === -1 || i > to ? to : i;
    if (end - prev > max) return true;
    if (end === to) return false;
    prev = i + 1;
  }
}

/** True when a line of `bytes` (split at LF, or at CR within a longer stretch) is longer than `max` bytes. */
function hasLineOver(bytes: Uint8Array, max: number): boolean {
  let prev = 0;
  for (let i = bytes.indexOf(0x0a); ; i = bytes.indexOf(0x0a, i + 1)) {
    const end = i === -1 ? bytes.length : i;
    if (end - prev > max && gapOver(bytes, 0x0d, prev, end, max)) return true;
    if (i === -1) return false;
    prev = i + 1;
  }
}

/** A piece of work: bytes cut on record boundaries, or the file from an offset to its end. */
export type ChunkTask =
  | { readonly kind: 'bytes'; readonly index: number; readonly bytes: Uint8Array; readonly first: boolean }
  | {
      readonly kind: 'stream';
      readonly index: number;
      readonly start: number;
      readonly line: number;
      readonly first: boolean;
    };

/** Row kinds in `ChunkPart.kinds`. */
export const ROW_WALLET = 0;
export const ROW_BANK = 1;
export const ROW_INVALID = 2;

/** Words of `ChunkPart.fingerprints` per valid row: four fingerprints of two words each. */
export const FP_WORDS = 8;
/**
 * Where each fingerprint of a valid row starts within its `FP_WORDS` words (see `ChunkPart`).
 * Destination and holder are next to each other: a payee key is made of those four words
 * (`fingerprintKey` in ../ledger/payout-register.ts).
 */
export const FP_REFERENCE = 0;
export const FP_DESTINATION = 2;
export const FP_HOLDER = 4;
export const FP_WALLET = 6;

/** An invalid row as read: its cells and every issue of the row rules. */
export interface InvalidCells {
  readonly cells: readonly string[];
  readonly issues: readonly RowIssue[];
}

/**
 * The rows of a piece, packed so that they cross threads cheaply (a `stream` task sends several
 * parts; `last` marks the final one). For a part of R rows, V of them valid, all in file order,
 * with i counting the rows, j the valid rows and k the invalid rows (`partRows` gives each row its
 * j or k):
 *
 *     kinds[i]          i < R      ROW_WALLET, ROW_BANK or ROW_INVALID
 *     rowLines[i]       i < R      the row's line, counted from the task's first line (0)
 *     piasters[j]       j < V      the amount, in piasters
 *     fingerprints      j < V      FP_WORDS words from j * FP_WORDS, two per fingerprint:
 *                                    + FP_REFERENCE    the reference (0,0 when blank)
 *                                    + FP_DESTINATION  mobile or account number with amount
 *                                    + FP_HOLDER       lower-cased holder name with amount
 *                                    + FP_WALLET       mobile number (0,0 for bank rows)
 *     itemBytes         j < V      the item as sent, UTF-8 JSON of its `mobile_wallets` or
 *                                  `bank_accounts` entry, from `itemStart(part, j)` to
 *                                  `itemEnds[j]` (so the threads encode the request bodies)
 *     references        j < V      the j-th line is the reference ('' when blank)
 *     invalid[k]        k < R − V  the row's cells and issues
 *
 * `validCells` (stream tasks only) is JSON of the valid rows' cells, for rows the file-wide checks
 * refuse; for bytes tasks the reader parses the piece again in that rare case.
 */
export interface ChunkPart {
  readonly index: number;
  readonly last: boolean;
  /** Physical lines the task spans (bytes tasks; the line of the next piece is the sum). */
  readonly lines: number;
  readonly kinds: Uint8Array;
  readonly rowLines: Int32Array;
  readonly piasters: BigInt64Array;
  readonly fingerprints: Uint32Array;
  readonly itemBytes: Uint8Array;
  readonly itemEnds: Uint32Array;
  readonly references: string;
  readonly invalid: readonly InvalidCells[];
  readonly validCells?: string;
  /** The piece could not be read as cut: read the file on from it (bytes tasks). */
  readonly fallback?: boolean;
  /** The file's error (stream tasks): code, message and context of a `CashoutError`. */
  readonly error?: { readonly code: string; readonly message: string; readonly context: Record<string, unknown> };
}

/** One row of a part, as `partRows` gives it. */
export interface PartRow {
  /** ROW_WALLET, ROW_BANK or ROW_INVALID. */
  readonly kind: number;
  /** The row's file line: the part's base line plus `rowLines[i]`. */
  readonly line: number;
  /** A valid row's j (its amount, fingerprints, item and reference); -1 for an invalid row. */
  readonly valid: number;
  /** An invalid row's k (`invalid[k]`); -1 for a valid row. */
  readonly invalid: number;
}

/**
 * The rows of `part` in file order, each with its kind, its file line (`baseLine`, the file line of
 * the part's line 0, plus its line in the part) and its j or k (see `ChunkPart`).
 */
export function* partRows(part: ChunkPart, baseLine: number): Generator<PartRow> {
  let valid = 0;
  let invalid = 0;
  for (let i = 0; i < part.kinds.length; i++) {
    const kind = part.kinds[i]!;
    const line = baseLine + part.rowLines[i]!;
    yield kind === ROW_INVALID
      ? { kind, line, valid: -1, invalid: invalid++ }
      : { kind, line, valid: valid++, invalid: -1 };
  }
}

/** Where the j-th valid row's item starts in `part.itemBytes` (it ends at `part.itemEnds[j]`). */
export function itemStart(part: ChunkPart, j: number): number {
  return j === 0 ? 0 : part.itemEnds[j - 1]!;
}

/** The j-th valid row's item, as JSON text. */
export function itemText(part: ChunkPart, j: number): string {
  const start = itemStart(part, j);
  return Buffer.from(part.itemBytes.buffer, part.itemBytes.byteOffset + start, part.itemEnds[j]! - start).toString(
    'utf8',
  );
}

/** Where a fingerprint (`FP_REFERENCE`, `FP_DESTINATION`, …) of the j-th valid row starts in `part.fingerprints`. */
export function fingerprintAt(j: number, which: number): number {
  return j * FP_WORDS + which;
}

const STREAM_PART_ROWS = 8192;
const STREAM_PART_CHARS = 2_000_000;

/** Bytes parsed at once within a piece: few enough records stay alive that they die young. */
const SUB_PIECE_BYTES = 64 * 1024;

/**
 * The end of the sub-piece of `buf` that starts at `from`: just after the first LF at least
 * `size` bytes on at which the count of quote characters since `from` is even (outside quotes in
 * a well-formed file, as `./split-chunks.ts` cuts pieces), or the end of `buf`. A wrong cut (a
 * quote kept as written inside an unquoted value) leaves a quoted value open at the end of a
 * sub-piece, which csv-parse refuses: the piece then falls back, as for a wrong piece cut.
 */
function subPieceEnd(buf: Buffer, from: number, size: number): number {
  let counted = from;
  let quotes = 0;
  for (let lf = buf.indexOf(0x0a, from + size); lf !== -1; lf = buf.indexOf(0x0a, lf + 1)) {
    for (let q = buf.indexOf(0x22, counted); q !== -1 && q <= lf; q = buf.indexOf(0x22, q + 1)) quotes++;
    counted = lf + 1;
    if (quotes % 2 === 0) return lf + 1;
  }
  return buf.length;
}

/**
 * Parses one piece (bytes of a UTF-8 file cut on record boundaries) and calls `onRow` with each
 * row that is not blank (the header left out when `first`), with its line counted from the
 * piece's first line (0). The piece is parsed a sub-piece at a time with csv-parse's synchronous
 * API (no stream event per record, and no record outlives its sub-piece by long). A byte-order
 * mark is taken off only at the start of the file. Where a sub-piece has no CR and as many LF as
 * records, no record spans lines and lines are counted without looking into the cells. Returns
 * the physical lines the piece spans, or undefined when csv-parse refuses any part of the piece
 * (rows already handed on are then to be dropped by the caller).
 */
export function eachRowOfPiece(
  bytes: Uint8Array,
  first: boolean,
  settings: Pick<ChunkSettings, 'read' | 'maxRecordBytes'>,
  onRow: (line: number, cells: string[]) => void,
): number | undefined {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const noCr = buf.indexOf(0x0d) === -1;
  const base = csvOptions(settings.read, settings.maxRecordBytes);
  // Without a CR anywhere in the piece, LF is the only line end: the same records, found faster.
  const options = { ...base, ...(noCr ? { record_delimiter: '\n' } : {}), bom: false };
  let skipHeader = first;
  let line = 0;
  for (let from = 0; from < buf.length;) {
    const end = subPieceEnd(buf, from, SUB_PIECE_BYTES);
    const sub = buf.subarray(from, end);
    let records: string[][];
    try {
      records = parseSync(sub, from === 0 && first ? { ...options, bom: base.bom } : options) as string[][];
    } catch {
      return undefined;
    }
    let lf = 0;
    for (let i = sub.indexOf(0x0a); i !== -1; i = sub.indexOf(0x0a, i + 1)) lf++;
    const endsOpen = sub.length > 0 && sub[sub.length - 1] !== 0x0a;
    const oneLineEach = noCr && lf + (endsOpen ? 1 : 0) === records.length;
    for (let r = 0; r < records.length; r++) {
      const cells = records[r]!;
      const start = line;
      line += oneLineEach ? 1 : 1 + lineBreaks(cells);
      if (isBlank(cells)) continue;
      if (skipHeader) {
        skipHeader = false;
        continue;
      }
      onRow(start, cells);
    }
    from = end;
  }
  return line;
}

/** The typed arrays of a part being built, `capacity` rows long (see `ChunkPart`). */
function columnsFor(capacity: number) {
  return {
    kinds: new Uint8Array(capacity),
    rowLines: new Int32Array(capacity),
    piasters: new BigInt64Array(capacity),
    fingerprints: new Uint32Array(capacity * FP_WORDS),
    itemEnds: new Uint32Array(capacity),
  };
}

type Columns = ReturnType<typeof columnsFor>;

/** The columns `c` grown to twice their rows (at least 16), holding what they held. */
function grownColumns(c: Columns): Columns {
  const g = columnsFor(Math.max(16, c.kinds.length * 2));
  g.kinds.set(c.kinds);
  g.rowLines.set(c.rowLines);
  g.piasters.set(c.piasters);
  g.fingerprints.set(c.fingerprints);
  g.itemEnds.set(c.itemEnds);
  return g;
}

/** Accumulates rows into a `ChunkPart`; `withCells` keeps the valid rows' cells (`validCells`). */
function createPartBuilder(capacity: number, withCells: boolean) {
  let c = columnsFor(capacity);
  let itemBytes = Buffer.allocUnsafe(Math.max(1024, capacity * 192));
  let itemLength = 0;
  const references: string[] = [];
  const invalid: InvalidCells[] = [];
  const validCells: (readonly string[])[] = [];
  let rows = 0;
  let valid = 0;
  const addRow = (kind: number, line: number) => {
    if (rows >= c.kinds.length) c = grownColumns(c);
    c.kinds[rows] = kind;
    c.rowLines[rows++] = line;
  };
  return {
    get rows() {
      return rows;
    },
    addInvalid(line: number, cells: readonly string[], issues: readonly RowIssue[]) {
      addRow(ROW_INVALID, line);
      invalid.push({ cells, issues });
    },
    /** Adds a valid row; returns the fingerprints, to be written at `fingerprintAt(valid - 1, …)`. */
    addValid(kind: number, line: number, amount: bigint, item: string, reference: string, cells: readonly string[]) {
      addRow(kind, line);
      c.piasters[valid] = amount;
      if (itemLength + 3 * item.length > itemBytes.length) {
        const bigger = Buffer.allocUnsafe(2 * (itemLength + 3 * item.length));
        itemBytes.copy(bigger, 0, 0, itemLength);
        itemBytes = bigger;
      }
      itemLength += itemBytes.write(item, itemLength, 'utf8');
      c.itemEnds[valid] = itemLength;
      references.push(reference);
      if (withCells) validCells.push(cells);
      valid++;
      return c.fingerprints;
    },
    get valid() {
      return valid;
    },
    finish(index: number, last: boolean, lines: number): ChunkPart {
      return {
        index,
        last,
        lines,
        kinds: c.kinds.slice(0, rows),
        rowLines: c.rowLines.slice(0, rows),
        piasters: c.piasters.slice(0, valid),
        fingerprints: c.fingerprints.slice(0, valid * FP_WORDS),
        itemBytes: new Uint8Array(itemBytes.subarray(0, itemLength)),
        itemEnds: c.itemEnds.slice(0, valid),
        references: references.join('\n'),
        invalid,
        ...(withCells ? { validCells: JSON.stringify(validCells) } : {}),
      };
    },
  };
}

type PartBuilder = ReturnType<typeof createPartBuilder>;

/** The empty part of a task that failed. */
function failedPart(index: number, extra: Pick<ChunkPart, 'fallback' | 'error'>): ChunkPart {
  return {
    index,
    last: true,
    lines: 0,
    kinds: new Uint8Array(0),
    rowLines: new Int32Array(0),
    piasters: new BigInt64Array(0),
    fingerprints: new Uint32Array(0),
    itemBytes: new Uint8Array(0),
    itemEnds: new Uint32Array(0),
    references: '',
    invalid: [],
    ...extra,
  };
}

/**
 * Makes the checker of one file: `run(task, send)` checks a task and hands each part to `send`
 * (a bytes task sends one part; a stream task one part per 8,192 rows or 2 million characters).
 * Never throws for the file's problems: they come back in the part (`fallback` or `error`).
 */
export function createChunkChecker(settings: ChunkSettings) {
  const add = recordAdder(settings);
  return {
    async run(task: ChunkTask, send: (part: ChunkPart) => void | Promise<void>): Promise<void> {
      if (task.kind === 'bytes') await send(checkBytes(task, settings, add));
      else await checkStream(task, settings, add, send);
    },
  };
}

/** Adds one record (its cells, its line counted from the task's first line) to a part. */
type AddRecord = (part: PartBuilder, cells: readonly string[], relLine: number) => void;

/**
 * The `AddRecord` of a file: checks the record by the row rules alone and adds it to the part, as
 * an invalid row with its issues, or as a valid row with its amount in piasters, its item JSON, its
 * reference and its fingerprints (see `ChunkPart`).
 */
function recordAdder(settings: ChunkSettings): AddRecord {
  const validate = createRowValidator(settings.header, settings.rules, {
    checkReferences: false,
    delimiter: settings.read.delimiter ?? ',',
  });
  return (part, cells, relLine) => {
    const outcome = validate(cells, relLine);
    if (!outcome.ok) {
      part.addInvalid(relLine, cells, outcome.issues);
      return;
    }
    const item = outcome.item;
    const wallet = item.channel === 'wallet';
    const fields = wallet ? item.wallet : item.bank;
    const fp = part.addValid(
      wallet ? ROW_WALLET : ROW_BANK,
      relLine,
      toPiasters(fields.amount),
      wallet ? walletItemJson(item.wallet) : bankItemJson(item.bank),
      item.reference,
      cells,
    );
    const at = fingerprintAt(part.valid - 1, 0);
    if (item.reference !== '') fingerprintInto(item.reference, fp, at + FP_REFERENCE);
    if (wallet) fingerprintKeyInto('m', item.wallet.mobile_number, fields.amount, fp, at + FP_DESTINATION);
    else fingerprintKeyInto('a', item.bank.number, fields.amount, fp, at + FP_DESTINATION);
    fingerprintKeyInto('h', fields.holder_name.toLowerCase(), fields.amount, fp, at + FP_HOLDER);
    if (wallet) fingerprintInto(item.wallet.mobile_number, fp, at + FP_WALLET);
  };
}

/**
 * A bytes task → its one part, or a `fallback` part when the piece is not valid UTF-8, holds a NUL
 * byte or a line over the limit, or does not parse as cut.
 */
function checkBytes(task: Extract<ChunkTask, { kind: 'bytes' }>, settings: ChunkSettings, add: AddRecord): ChunkPart {
  const bytes = task.bytes;
  if (!isUtf8(bytes) || bytes.indexOf(0) !== -1 || hasLineOver(bytes, settings.maxLineBytes))
    return failedPart(task.index, { fallback: true });
  const part = createPartBuilder(Math.max(16, bytes.length >> 7), false);
  const lines = eachRowOfPiece(bytes, task.first, settings, (line, cells) => add(part, cells, line));
  if (lines === undefined) return failedPart(task.index, { fallback: true });
  return part.finish(task.index, true, lines);
}

/**
 * A stream task → its parts, handed to `send` one at a time (waiting on it) as they fill, the last
 * marked `last`. A file error ends the stream: the rows read so far, then an `error` part.
 */
async function checkStream(
  task: Extract<ChunkTask, { kind: 'stream' }>,
  settings: ChunkSettings,
  add: AddRecord,
  send: (part: ChunkPart) => void | Promise<void>,
): Promise<void> {
  let part = createPartBuilder(STREAM_PART_ROWS, true);
  // Characters of the cells the part keeps: a part also ends at 2 million, so rows of long
  // values (a garbage file) never make a thread hold more than a few megabytes.
  let chars = 0;
  let skipHeader = task.first;
  try {
    const from = task.start === 0 && task.first ? undefined : { start: task.start, line: task.line };
    // Row counts are kept by the reader, in file order; the limit here only stops runaway files.
    for await (const record of readRecords(
      settings.path,
      { ...settings.read, maxRows: Number.MAX_SAFE_INTEGER },
      from,
    )) {
      if (skipHeader) {
        skipHeader = false;
        continue;
      }
      add(part, record.cells, record.line - task.line);
      for (const cell of record.cells) chars += cell.length;
      if (part.rows >= STREAM_PART_ROWS || chars >= STREAM_PART_CHARS) {
        await send(part.finish(task.index, false, 0));
        part = createPartBuilder(STREAM_PART_ROWS, true);
        chars = 0;
      }
    }
  } catch (err) {
    await send(part.finish(task.index, false, 0));
    const e =
      err instanceof CashoutError
        ? err
        : new CashoutError('file_unreadable', `cannot read ${settings.path}: ${(err as Error).message}`, {
            path: settings.path,
          });
    await send(failedPart(task.index, { error: { code: e.code, message: e.message, context: e.context } }));
    return;
  }
  await send(part.finish(task.index, true, 0));
}
