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

/** Words of `ChunkPart.fingerprints` per valid row: reference, number+amount, holder+amount, wallet. */
export const FP_WORDS = 8;

/** An invalid row as read: its cells and every issue of the row rules. */
export interface InvalidCells {
  readonly cells: readonly string[];
  readonly issues: readonly RowIssue[];
}

/**
 * The rows of a piece (a `stream` task sends several parts; `last` marks the final one).
 * Per row (in file order): `kinds[i]` and `rowLines[i]` (line counted from the task's first line,
 * 0). Per valid row (in order): `piasters[j]` (the amount), `fingerprints[8j..8j+7]` (reference —
 * 0,0 when blank —, mobile or account number with amount, lower-cased holder with amount, mobile
 * number — 0,0 for bank rows), the j-th item (as sent: JSON of the
 * `mobile_wallets`/`bank_accounts` entry, as UTF-8 bytes in `itemBytes`, so the request bodies are
 * encoded by the threads) and the j-th line of `references`. Per invalid row: `invalid[k]`.
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
  /** The valid rows' items as UTF-8 JSON, one after the other; item j ends at `itemEnds[j]`. */
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

/** Accumulates rows into a `ChunkPart`. */
function createPartBuilder(capacity: number, withCells: boolean) {
  let kinds = new Uint8Array(capacity);
  let rowLines = new Int32Array(capacity);
  let piasters = new BigInt64Array(capacity);
  let fingerprints = new Uint32Array(capacity * FP_WORDS);
  let itemBytes = Buffer.allocUnsafe(Math.max(1024, capacity * 192));
  let itemEnds = new Uint32Array(capacity);
  let itemLength = 0;
  const references: string[] = [];
  const invalid: InvalidCells[] = [];
  const validCells: (readonly string[])[] = [];
  let rows = 0;
  let valid = 0;
  const ensure = () => {
    if (rows < kinds.length) return;
    const grow = <T extends Uint8Array | Int32Array | BigInt64Array | Uint32Array>(a: T, n: number): T => {
      const b = new (a.constructor as new (n: number) => T)(n);
      b.set(a as never);
      return b;
    };
    const n = Math.max(16, kinds.length * 2);
    kinds = grow(kinds, n);
    rowLines = grow(rowLines, n);
    piasters = grow(piasters, n);
    fingerprints = grow(fingerprints, n * FP_WORDS);
    itemEnds = grow(itemEnds, n);
  };
  return {
    get rows() {
      return rows;
    },
    addInvalid(line: number, cells: readonly string[], issues: readonly RowIssue[]) {
      ensure();
      kinds[rows] = ROW_INVALID;
      rowLines[rows++] = line;
      invalid.push({ cells, issues });
    },
    addValid(
      kind: number,
      line: number,
      amount: bigint,
      item: string,
      reference: string,
      cells: readonly string[],
    ): Uint32Array {
      ensure();
      kinds[rows] = kind;
      rowLines[rows++] = line;
      piasters[valid] = amount;
      if (itemLength + 3 * item.length > itemBytes.length) {
        const bigger = Buffer.allocUnsafe(2 * (itemLength + 3 * item.length));
        itemBytes.copy(bigger, 0, 0, itemLength);
        itemBytes = bigger;
      }
      itemLength += itemBytes.write(item, itemLength, 'utf8');
      itemEnds[valid] = itemLength;
      references.push(reference);
      if (withCells) validCells.push(cells);
      valid++;
      return fingerprints;
    },
    get valid() {
      return valid;
    },
    finish(index: number, last: boolean, lines: number): ChunkPart {
      return {
        index,
        last,
        lines,
        kinds: kinds.slice(0, rows),
        rowLines: rowLines.slice(0, rows),
        piasters: piasters.slice(0, valid),
        fingerprints: fingerprints.slice(0, valid * FP_WORDS),
        itemBytes: new Uint8Array(itemBytes.subarray(0, itemLength)),
        itemEnds: itemEnds.slice(0, valid),
        references: references.join('\n'),
        invalid,
        ...(withCells ? { validCells: JSON.stringify(validCells) } : {}),
      };
    },
  };
}

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
 * (a bytes task sends one part; a stream task one part per 8,192 rows or 2 million characters). Never throws for the
 * file's problems: they come back in the part (`fallback` or `error`).
 */
export function createChunkChecker(settings: ChunkSettings) {
  const validate = createRowValidator(settings.header, settings.rules, {
    checkReferences: false,
    delimiter: settings.read.delimiter ?? ',',
  });

  const addRecord = (part: ReturnType<typeof createPartBuilder>, cells: readonly string[], relLine: number) => {
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
    const at = (part.valid - 1) * FP_WORDS;
    if (item.reference !== '') fingerprintInto(item.reference, fp, at);
    if (wallet) fingerprintKeyInto('m', item.wallet.mobile_number, fields.amount, fp, at + 2);
    else fingerprintKeyInto('a', item.bank.number, fields.amount, fp, at + 2);
    fingerprintKeyInto('h', fields.holder_name.toLowerCase(), fields.amount, fp, at + 4);
    if (wallet) fingerprintInto(item.wallet.mobile_number, fp, at + 6);
  };

  const runBytes = async (task: Extract<ChunkTask, { kind: 'bytes' }>): Promise<ChunkPart> => {
    const bytes = task.bytes;
    if (!isUtf8(bytes) || bytes.indexOf(0) !== -1 || hasLineOver(bytes, settings.maxLineBytes))
      return failedPart(task.index, { fallback: true });
    const part = createPartBuilder(Math.max(16, bytes.length >> 7), false);
    const lines = eachRowOfPiece(bytes, task.first, settings, (line, cells) => addRecord(part, cells, line));
    if (lines === undefined) return failedPart(task.index, { fallback: true });
    return part.finish(task.index, true, lines);
  };

  const runStream = async (
    task: Extract<ChunkTask, { kind: 'stream' }>,
    send: (part: ChunkPart) => void | Promise<void>,
  ): Promise<void> => {
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
        addRecord(part, record.cells, record.line - task.line);
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
  };

  return {
    async run(task: ChunkTask, send: (part: ChunkPart) => void | Promise<void>): Promise<void> {
      if (task.kind === 'bytes') await send(await runBytes(task));
      else await runStream(task, send);
    },
  };
}
