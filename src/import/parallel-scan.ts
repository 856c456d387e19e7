/**
 * File → checked rows, in file order, using every core: the file is cut on record boundaries
 * (`./split-chunks.ts`), import threads parse and check the pieces at once
 * (`./validate-thread.ts`, `./check-chunk.ts`), and this module hands their parts on in file
 * order, with each row's file line, after the checks that need the whole file so far: a
 * reference used twice (interface doc: a payer's reference names one payment) and the row limit
 * (CASHOUT_MAX_ROWS). Memory stays flat: a few pieces are in flight at a time, and references are
 * remembered as 12-byte fingerprints (`./fingerprint-table.ts`).
 *
 * Files in another encoding than UTF-8, and any piece that does not parse as cut, are read on
 * from there as one stream by one thread, which names the line of any defect exactly as the
 * single-threaded reader did. With `threads: 0` (small files, tests) the same checks run in this
 * thread.
 *
 * In reading order: `openScan` (file and header checked, the plan of the scan settled once),
 * `scanParts` (the checks across the file), `partsInOrder` (pieces cut and their parts taken in
 * file order), `openPieceWindow` (the pieces in flight).
 */
import { existsSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import pLimit from 'p-limit';
import { CashoutError, type ErrorCode } from '../errors.js';
import { PACKAGE_ROOT } from '../paths.js';
import { createFingerprintTable, type FingerprintTable } from './fingerprint-table.js';
import {
  createChunkChecker,
  eachRowOfPiece,
  fingerprintAt,
  FP_REFERENCE,
  partRows,
  ROW_INVALID,
  type ChunkPart,
  type ChunkSettings,
  type ChunkTask,
  type InvalidCells,
} from './check-chunk.js';
import { indexHeader, type HeaderIndex } from './columns.js';
import { fingerprintInto } from './fingerprint.js';
import { openCsv, type ReadOptions } from './read-rows.js';
import type { RowIssue } from './row-issues.js';
import type { RowRules } from './validate-row.js';
import { splitChunks } from './split-chunks.js';

/** Bytes per piece of a file read by threads. */
export const CHUNK_BYTES = 512 * 1024;

/**
 * Heap of an import thread, MiB. Its live data is one piece's rows (about 10 MiB), so a small heap
 * only makes it collect its garbage sooner, which keeps the process's memory flat.
 */
const THREAD_HEAP = { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 16 } as const;

/** How a file is read: the read options plus the number of import threads. */
export interface ScanOptions extends ReadOptions {
  /**
   * Import threads (CASHOUT_IMPORT_THREADS); 0 = check in this thread. Default
   * (`defaultThreads`): for files larger than one piece (`CHUNK_BYTES`), one per core (at most
   * 8), one core fewer with `busyCaller`; else 0.
   */
  readonly threads?: number;
  /**
   * The caller's own thread works on every row as well (the import: checks across rows, grouping
   * into requests, writes to Redis), so the default number of threads leaves it a core.
   */
  readonly busyCaller?: boolean;
}

/** One part of the file, checked, in file order. */
export interface ScannedPart {
  readonly part: ChunkPart;
  /** File line of the part's line 0: a row's file line is `baseLine + part.rowLines[i]`. */
  readonly baseLine: number;
  /** The reference of each valid row ('' when blank). */
  readonly references: readonly string[];
  /** Per valid row: the earlier file line with the same reference, 0 when none (the row is then invalid: `reference_duplicate`). */
  readonly earlierReference: Int32Array;
  /** Per invalid row: its issues, including `reference_duplicate` when its reference was used before. */
  readonly invalidIssues: readonly (readonly RowIssue[])[];
  /** The cells of the j-th valid row as read (for a row refused by a file-wide check). */
  cellsOfValid(j: number): Promise<readonly string[]>;
}

/** An open scan: the header and the parts, in file order. */
export interface Scan {
  readonly header: readonly string[];
  readonly index: HeaderIndex;
  /** File line of the header. */
  readonly headerLine: number;
  readonly parts: AsyncGenerator<ScannedPart>;
  /** About how many rows the file holds, from its size and its first piece (for sizing tables). */
  estimatedRows(): number;
  /** Bytes held so far by the table of the file's references (12 to 15 bytes a reference). */
  tableBytes(): number;
}

/**
 * The default number of import threads for a file of `bytes` on a machine of `cores` cores: 0 for
 * a file of one piece, else one per core, at most 8. With `busyCaller` one core is left to the
 * calling thread (at least one thread all the same): an import's main thread is busy with every
 * row too, and threads that take its core make the import slower, not faster (on two cores, a
 * 500,000-row import took a median 7.6 s with two threads and 7.1 s with one, over eleven runs).
 */
export function defaultThreads(bytes: number, busyCaller = false, cores = availableParallelism()): number {
  if (bytes <= CHUNK_BYTES) return 0;
  return Math.max(1, Math.min(8, busyCaller ? cores - 1 : cores));
}

function threadScript(): URL | undefined {
  const here = new URL('./validate-thread.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  // Running from the TypeScript sources (tests): the built copy, when there is one.
  const built = join(PACKAGE_ROOT, 'dist', 'src', 'import', 'validate-thread.js');
  return existsSync(built) ? new URL(`file://${built}`) : undefined;
}

interface Runner {
  run(task: ChunkTask, onPart: (part: ChunkPart) => void): void;
  ack(task: ChunkTask): void;
  close(): Promise<void>;
}

function inlineRunner(settings: ChunkSettings, onError: (err: unknown) => void): Runner {
  const checker = createChunkChecker(settings);
  const waiting = new Map<number, () => void>();
  const unacked = new Map<number, number>();
  return {
    run(task, onPart) {
      void checker
        .run(task, async (part) => {
          if (task.kind === 'stream') {
            while ((unacked.get(task.index) ?? 0) >= 4)
              await new Promise<void>((resolve) => waiting.set(task.index, resolve));
            unacked.set(task.index, (unacked.get(task.index) ?? 0) + 1);
          }
          onPart(part);
        })
        .catch(onError);
    },
    ack(task) {
      if (task.kind !== 'stream') return;
      unacked.set(task.index, (unacked.get(task.index) ?? 1) - 1);
      waiting.get(task.index)?.();
      waiting.delete(task.index);
    },
    async close() {},
  };
}

function threadRunner(script: URL, count: number, settings: ChunkSettings, onError: (err: unknown) => void): Runner {
  const threads = Array.from({ length: count }, () => {
    const worker = new Worker(script, { workerData: settings, resourceLimits: THREAD_HEAP });
    worker.on('error', onError);
    return { worker, load: 0 };
  });
  const handlers = new Map<number, { thread: (typeof threads)[number]; onPart: (part: ChunkPart) => void }>();
  for (const t of threads) {
    t.worker.on('message', (part: ChunkPart) => {
      const h = handlers.get(part.index);
      if (!h || h.thread !== t) return;
      if (part.last) t.load--;
      h.onPart(part);
    });
  }
  return {
    run(task, onPart) {
      const thread = threads.reduce((a, b) => (b.load < a.load ? b : a));
      thread.load++;
      handlers.set(task.index, { thread, onPart });
      const { bytes } = task as { bytes?: Uint8Array };
      thread.worker.postMessage(task, bytes ? [bytes.buffer as ArrayBuffer] : []);
    },
    ack(task) {
      if (task.kind === 'stream') handlers.get(task.index)?.thread.worker.postMessage({ ack: task.index });
    },
    async close() {
      await Promise.all(threads.map((t) => t.worker.terminate()));
    },
  };
}

/** How the parts of one file are read, settled once when its scan opens. */
interface ScanPlan {
  readonly settings: ChunkSettings;
  /** A UTF-8 file is cut into pieces; a file in another encoding is read as one stream. */
  readonly utf8: boolean;
  /** Most data rows accepted (CASHOUT_MAX_ROWS). */
  readonly maxRows: number;
  /** Import threads; 0 = check in this thread. */
  readonly threads: number;
}

/**
 * Opens a scan of `path`: checks the file and reads its header (`openCsv`), then checks the header
 * (`indexHeader`), which throw `CashoutError` before any row is read, and returns the header and
 * the parts. Iterating the parts throws `CashoutError` for file-level problems met later
 * (`csv_malformed`, `file_encoding`, `file_binary`, `too_many_rows`, …, with their line); the
 * threads start with the iteration and stop when it ends, also early.
 */
export async function openScan(path: string, rules: RowRules, options: ScanOptions = {}): Promise<Scan> {
  const read: ReadOptions = { maxFieldLength: rules.maxFieldLength, ...options };
  const csv = await openCsv(path, read);
  const index = indexHeader(csv.header.cells);
  const { size } = await stat(path);
  const { maxRecordBytes, maxLineBytes, maxRows } = csv.limits;
  const plan: ScanPlan = {
    settings: { path, header: index, rules, read, maxRecordBytes, maxLineBytes },
    utf8: csv.encoding?.kind === 'utf-8',
    maxRows,
    threads: Math.max(0, Math.min(16, options.threads ?? defaultThreads(size, options.busyCaller))),
  };
  let estimate = Math.ceil(size / 100);
  const onFirstPiece = (rows: number, bytes: number) => {
    if (bytes > 0) estimate = Math.ceil((size / bytes) * rows * 1.05) + 16;
  };
  const firstLineOfReference = createFingerprintTable(true, () => estimate);
  return {
    header: csv.header.cells,
    index,
    headerLine: csv.header.line,
    parts: scanParts(plan, firstLineOfReference, onFirstPiece),
    estimatedRows: () => estimate,
    tableBytes: () => firstLineOfReference.bytes,
  };
}

/**
 * The parts of the file in file order, checked across the file: the row limit (`too_many_rows`,
 * thrown with the line of the first row over it) and references used twice (`firstLineOfReference`
 * maps each reference's fingerprint to the file line that first used it). `onFirstPiece` is told
 * the rows and bytes of the first part (for the estimate of the file's rows).
 */
async function* scanParts(
  plan: ScanPlan,
  firstLineOfReference: FingerprintTable,
  onFirstPiece: (rows: number, bytes: number) => void,
): AsyncGenerator<ScannedPart> {
  let rowsSoFar = 0;
  for await (const { piece, part, baseLine } of partsInOrder(plan)) {
    const rows = part.kinds.length;
    checkRowLimit(plan, rowsSoFar, part, baseLine);
    if (rowsSoFar === 0) onFirstPiece(rows, piece.length);
    rowsSoFar += rows;
    const references = checkReferences(part, baseLine, plan.settings.header.reference, firstLineOfReference);
    yield { part, baseLine, ...references, cellsOfValid: validCellsReader(plan.settings, piece, part) };
  }
}

/** Throws `too_many_rows` when the rows of `part` take the file past `plan.maxRows` (`rowsSoFar` before it). */
function checkRowLimit(plan: ScanPlan, rowsSoFar: number, part: ChunkPart, baseLine: number): void {
  const { maxRows, settings } = plan;
  if (rowsSoFar + part.kinds.length <= maxRows) return;
  const line = baseLine + part.rowLines[maxRows - rowsSoFar]!;
  throw new CashoutError(
    'too_many_rows',
    `${settings.path} has more than ${maxRows} payout rows (line ${line} is row ${maxRows + 1}), the most accepted in one file (CASHOUT_MAX_ROWS); split it into smaller files`,
    { path: settings.path, line, maxRows },
  );
}

/**
 * The references of a part, checked against the file so far: each valid row's reference ('' when
 * blank) and the earlier file line with the same reference (0 when none), and each invalid row's
 * issues, with `reference_duplicate` added when its reference was used before. Every reference
 * not blank is added to `firstLineOfReference` with its line. `referenceColumn` is -1 when the
 * file has no reference column.
 */
function checkReferences(
  part: ChunkPart,
  baseLine: number,
  referenceColumn: number,
  firstLineOfReference: FingerprintTable,
): Pick<ScannedPart, 'references' | 'earlierReference' | 'invalidIssues'> {
  const valid = part.piasters.length;
  const references = valid === 0 ? [] : part.references.split('\n');
  const earlierReference = new Int32Array(valid);
  const invalidIssues: (readonly RowIssue[])[] = [];
  const fp = part.fingerprints;
  const scratch = new Uint32Array(2);
  for (const row of partRows(part, baseLine)) {
    if (row.kind === ROW_INVALID) {
      const inv = part.invalid[row.invalid]!;
      invalidIssues.push(invalidRowIssues(inv, row.line, referenceColumn, firstLineOfReference, scratch));
    } else if (references[row.valid] !== '') {
      const at = fingerprintAt(row.valid, FP_REFERENCE);
      earlierReference[row.valid] = firstLineOfReference.getOrAdd(fp[at]!, fp[at + 1]!, row.line);
    }
  }
  return { references, earlierReference, invalidIssues };
}

/**
 * An invalid row's issues, with `reference_duplicate` added when its reference (trimmed) was used
 * before; a reference not blank is added to `firstLineOfReference` (`scratch`: two words to work in).
 */
function invalidRowIssues(
  row: InvalidCells,
  line: number,
  referenceColumn: number,
  firstLineOfReference: FingerprintTable,
  scratch: Uint32Array,
): readonly RowIssue[] {
  const reference = referenceColumn < 0 ? '' : (row.cells[referenceColumn] ?? '').trim();
  if (reference === '') return row.issues;
  fingerprintInto(reference, scratch, 0);
  const first = firstLineOfReference.getOrAdd(scratch[0]!, scratch[1]!, line);
  if (first === 0) return row.issues;
  return [
    ...row.issues,
    { column: 'reference', code: 'reference_duplicate', found: reference, params: { firstLine: first } },
  ];
}

/**
 * The cells of the j-th valid row of `part` as read, for a row a file-wide check refuses (rare):
 * from the part when it kept them (stream tasks), else from the piece read and parsed again.
 */
function validCellsReader(
  settings: ChunkSettings,
  piece: Piece,
  part: ChunkPart,
): (j: number) => Promise<readonly string[]> {
  let cells: Promise<(readonly string[])[]> | undefined;
  const read = async (): Promise<(readonly string[])[]> => {
    if (part.validCells !== undefined) return JSON.parse(part.validCells) as string[][];
    const bytes = Buffer.alloc(piece.length);
    const handle = await open(settings.path, 'r');
    try {
      await handle.read(bytes, 0, piece.length, piece.start);
    } finally {
      await handle.close();
    }
    const out: (readonly string[])[] = [];
    let i = 0;
    eachRowOfPiece(bytes, piece.task.first, settings, (_line, rowCells) => {
      if (part.kinds[i++] !== ROW_INVALID) out.push(rowCells);
    });
    return out;
  };
  return async (j) => (await (cells ??= read()))[j] ?? [];
}

/**
 * The checked parts of the file in file order, each with its piece and the file line of its line
 * 0. A UTF-8 file is cut into pieces (`splitChunks`) as the window of pieces in flight has room;
 * a file in another encoding, and the file from a piece that did not parse as cut on, is read as
 * one stream. A piece keeps its place in the window until its last part was used (the caller asks
 * for the next part). Throws the `CashoutError` a stream meets (with its line) and a thread's
 * failure; the threads stop when the iteration ends, also early.
 */
async function* partsInOrder(plan: ScanPlan): AsyncGenerator<{ piece: Piece; part: ChunkPart; baseLine: number }> {
  const window = openPieceWindow(plan);
  const { path, maxLineBytes } = plan.settings;
  let cuts = plan.utf8 ? splitChunks(path, CHUNK_BYTES, CHUNK_BYTES + maxLineBytes) : undefined;
  let index = 0;
  let baseLine = 1;
  if (!cuts) window.start({ kind: 'stream', index: index++, start: 0, line: 1, first: true }, 0, 0);
  try {
    for (;;) {
      while (cuts && !window.full) {
        const next = await cuts.next();
        if (next.done) {
          cuts = undefined;
          break;
        }
        const { bytes, start } = next.value;
        window.start({ kind: 'bytes', index, bytes, first: index === 0 }, start, bytes.length);
        index++;
      }
      const taken = await window.next();
      if (!taken) return;
      const { piece, part } = taken;
      if (part.fallback) {
        // The piece did not parse as cut: read the file on from it in one stream.
        await cuts?.return(undefined);
        cuts = undefined;
        piece.release();
        window.dropAll();
        const { index: at, first } = piece.task;
        window.start({ kind: 'stream', index: at, start: piece.start, line: baseLine, first }, piece.start, 0);
        continue;
      }
      if (part.error) throw new CashoutError(part.error.code as ErrorCode, part.error.message, part.error.context);
      yield { piece, part, baseLine };
      if (!part.last) continue;
      baseLine += part.lines;
      piece.release();
    }
  } finally {
    await cuts?.return(undefined);
    await window.close();
  }
}

/** A piece handed to the import threads, and its parts as they come back. */
interface Piece {
  readonly task: ChunkTask;
  /** Byte offset of the piece in the file. */
  readonly start: number;
  /** Bytes of the piece (its bytes went to a thread with the task); 0 for a stream. */
  readonly length: number;
  /** Parts come back and not yet taken, in order. */
  readonly parts: ChunkPart[];
  /** Left out (the file is read on as one stream): parts still coming back are ignored. */
  dropped: boolean;
  /** Frees the piece's place in the window. */
  readonly release: () => void;
}

/** The pieces in flight of one scan, their parts taken in file order (`openPieceWindow`). */
interface PieceWindow {
  /** True while a piece waits for a place: cut no more until it has one. */
  readonly full: boolean;
  /** Hands a task to the runner once it has a place (`start`, `length`: where the piece lies in the file, bytes). */
  start(task: ChunkTask, start: number, length: number): void;
  /**
   * The next part in file order, with its piece, once it came back; undefined when no piece is in
   * flight. Throws the first failure of a thread. The caller releases a piece whose last part it took.
   */
  next(): Promise<{ piece: Piece; part: ChunkPart } | undefined>;
  /** Leaves out every piece in flight (their places freed, their parts ignored). */
  dropAll(): void;
  /** Stops the threads. */
  close(): Promise<void>;
}

/**
 * Opens the window of pieces in flight of a scan: at most `max(2, 3 × threads)` at once
 * (p-limit). A piece started while they are that many waits for a place, and the window is then
 * `full`. A piece holds its place from the moment it goes to the runner until it is released, so
 * the rows held, checked but not yet used, stay bounded.
 */
function openPieceWindow(plan: ScanPlan): PieceWindow {
  const limit = pLimit(Math.max(2, 3 * plan.threads));
  const pieces: Piece[] = [];
  const arrival = createWake();
  let failure: unknown;
  const onError = (err: unknown) => {
    failure ??= err;
    arrival.signal();
  };
  const runner = startRunner(plan, onError);
  const onPart = (piece: Piece) => (part: ChunkPart) => {
    if (piece.dropped) return;
    piece.parts.push(part);
    arrival.signal();
  };
  return {
    get full() {
      return limit.pendingCount > 0;
    },
    start(task, start, length) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const piece: Piece = { task, start, length, parts: [], dropped: false, release };
      pieces.push(piece);
      void limit(() => {
        try {
          if (!piece.dropped) runner.run(task, onPart(piece));
        } catch (err) {
          onError(err);
        }
        return released;
      });
    },
    async next() {
      for (;;) {
        if (failure) throw failure;
        const piece = pieces[0];
        if (!piece) return undefined;
        const part = piece.parts.shift();
        if (!part) {
          await arrival.wait();
          continue;
        }
        runner.ack(piece.task);
        if (part.last) pieces.shift();
        return { piece, part };
      }
    },
    dropAll() {
      limit.clearQueue();
      for (const piece of pieces.splice(0)) {
        piece.dropped = true;
        piece.release();
      }
    },
    async close() {
      limit.clearQueue();
      await runner.close();
    },
  };
}

/** One waiter, woken by `signal` (a signal with no waiter is not kept: look before waiting). */
function createWake(): { wait(): Promise<void>; signal(): void } {
  let wake: (() => void) | undefined;
  return {
    wait: () => new Promise<void>((resolve) => (wake = resolve)),
    signal() {
      wake?.();
      wake = undefined;
    },
  };
}

/** The runner of a scan: import threads when it has any and their script is found, else this thread. */
function startRunner(plan: ScanPlan, onError: (err: unknown) => void): Runner {
  const script = plan.threads > 0 ? threadScript() : undefined;
  return script ? threadRunner(script, plan.threads, plan.settings, onError) : inlineRunner(plan.settings, onError);
}
