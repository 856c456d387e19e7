/**
 * File → checked rows, in file order, using every core: the file is cut on record boundaries
 * (`./split-chunks.ts`), import threads parse and check the pieces at once
 * (`./validate-thread.ts`, `./check-chunk.ts`), and this module hands their parts on in file
 * order, with each row's file line, after the checks that need the whole file so far: a
 * reference used twice (interface doc: a payer's reference names one payment) and the row limit
 * (CASHOUT_MAX_ROWS). Memory stays flat: a few pieces are in flight at a time, and references are
 * remembered as 12-byte fingerprints (`../batch/fingerprint-table.ts`).
 *
 * Files in another encoding than UTF-8, and any piece that does not parse as cut, are read on
 * from there as one stream by one thread, which names the line of any defect exactly as the
 * single-threaded reader did. With `threads: 0` (small files, tests) the same checks run in this
 * thread.
 */
import { existsSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { CashoutError, type ErrorCode } from '../errors.js';
import { PACKAGE_ROOT } from '../paths.js';
import { createFingerprintTable, type FingerprintTable } from './fingerprint-table.js';
import {
  createChunkChecker,
  eachRowOfPiece,
  FP_WORDS,
  ROW_INVALID,
  type ChunkPart,
  type ChunkSettings,
  type ChunkTask,
} from './check-chunk.js';
import { indexHeader, type HeaderIndex } from './columns.js';
import { fingerprintInto } from './fingerprint.js';
import {
  READ_DEFAULTS,
  maxLineBytesFor,
  readRecords,
  recordLimitOf,
  sniffFile,
  type CsvRecord,
  type ReadOptions,
} from './read-rows.js';
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
   * Import threads (CASHOUT_IMPORT_THREADS); 0 = check in this thread. Default: one per core
   * (at most 8) for files larger than one piece (`CHUNK_BYTES`), else 0.
   */
  readonly threads?: number;
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

/** The default number of import threads for a file of `bytes`. */
export function defaultThreads(bytes: number): number {
  return bytes > CHUNK_BYTES ? Math.min(8, availableParallelism()) : 0;
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

/** Reads the header record (the first record that is not blank). */
async function readHeader(path: string, read: ReadOptions): Promise<CsvRecord> {
  for await (const record of readRecords(path, read)) return record;
  throw new CashoutError('file_empty', `${path} has no header row and no payout rows`, { path });
}

/**
 * Opens a scan of `path`: checks the file (`sniffFile`) and its header (`indexHeader`), which
 * throw `CashoutError` before any row is read, then returns the header and the parts. Iterating
 * the parts throws `CashoutError` for file-level problems met later (`csv_malformed`,
 * `file_encoding`, `file_binary`, `too_many_rows`, …, with their line); the threads stop when the
 * iteration ends, also early.
 */
export async function openScan(path: string, rules: RowRules, options: ScanOptions = {}): Promise<Scan> {
  const read: ReadOptions = { maxFieldLength: rules.maxFieldLength, ...options };
  const encoding = await sniffFile(path, read);
  const headerRecord = await readHeader(path, read);
  const index = indexHeader(headerRecord.cells);
  const maxRecordBytes = recordLimitOf(read);
  const settings: ChunkSettings = {
    path,
    header: index,
    rules,
    read,
    maxRecordBytes,
    maxLineBytes: maxLineBytesFor(maxRecordBytes),
  };
  const { size } = await stat(path);
  let estimate = Math.ceil(size / 100);
  const onFirstPiece = (rows: number, bytes: number) => {
    if (bytes > 0) estimate = Math.ceil((size / bytes) * rows * 1.05) + 16;
  };
  const firstLineOfReference = createFingerprintTable(true, () => estimate);
  return {
    header: headerRecord.cells,
    index,
    headerLine: headerRecord.line,
    parts: scanParts(path, size, settings, options, encoding?.kind === 'utf-8', onFirstPiece, firstLineOfReference),
    estimatedRows: () => estimate,
    tableBytes: () => firstLineOfReference.bytes,
  };
}

async function* scanParts(
  path: string,
  size: number,
  settings: ChunkSettings,
  options: ScanOptions,
  utf8: boolean,
  onFirstPiece: (rows: number, bytes: number) => void,
  firstLineOfReference: FingerprintTable,
): AsyncGenerator<ScannedPart> {
  const maxRows = settings.read.maxRows ?? READ_DEFAULTS.maxRows;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const signal = () => {
    wake?.();
    wake = undefined;
  };
  const onError = (err: unknown) => {
    failure ??= err;
    signal();
  };
  const threads = Math.max(0, Math.min(16, options.threads ?? defaultThreads(size)));
  const script = threads > 0 ? threadScript() : undefined;
  const runner = script ? threadRunner(script, threads, settings, onError) : inlineRunner(settings, onError);
  const inFlight = Math.max(2, 3 * threads);

  interface TaskState {
    task: ChunkTask;
    parts: ChunkPart[];
    done: boolean;
    start: number;
    /** Bytes of a piece (the piece itself went to its thread). */
    length: number;
  }
  const tasks = new Map<number, TaskState>();
  const dispatch = (task: ChunkTask, start: number, length = 0) => {
    const state: TaskState = { task, parts: [], done: false, start, length };
    tasks.set(task.index, state);
    runner.run(task, (part) => {
      if (tasks.get(task.index) !== state) return;
      state.parts.push(part);
      if (part.last) state.done = true;
      signal();
    });
  };

  const cuts = utf8 ? splitChunks(path, CHUNK_BYTES, CHUNK_BYTES + settings.maxLineBytes) : undefined;
  let cutting = cuts !== undefined;
  let nextIndex = 0;
  let nextOut = 0;
  let baseLine = 1;
  let rowsSoFar = 0;
  const scratch = new Uint32Array(2);
  const referenceColumn = settings.header.reference;

  if (!cuts) {
    dispatch({ kind: 'stream', index: 0, start: 0, line: 1, first: true }, 0);
    nextIndex = 1;
  }
  try {
    for (;;) {
      while (cutting && nextIndex - nextOut < inFlight) {
        const next = await cuts!.next();
        if (next.done) {
          cutting = false;
          break;
        }
        dispatch(
          { kind: 'bytes', index: nextIndex, bytes: next.value.bytes, first: nextIndex === 0 },
          next.value.start,
          next.value.bytes.length,
        );
        nextIndex++;
      }
      if (failure) throw failure;
      if (nextOut >= nextIndex && !cutting) return;
      const state = tasks.get(nextOut)!;
      if (state.parts.length === 0) {
        if (state.done) {
          tasks.delete(nextOut++);
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      const part = state.parts.shift()!;
      runner.ack(state.task);
      if (part.fallback) {
        // The piece did not parse as cut: read the file on from it in one stream.
        if (cutting) await cuts!.return(undefined);
        cutting = false;
        for (const i of [...tasks.keys()]) if (i > nextOut) tasks.delete(i);
        nextIndex = nextOut + 1;
        dispatch(
          { kind: 'stream', index: nextOut, start: state.start, line: baseLine, first: nextOut === 0 },
          state.start,
        );
        continue;
      }
      if (part.error) throw new CashoutError(part.error.code as ErrorCode, part.error.message, part.error.context);

      const rows = part.kinds.length;
      if (rowsSoFar + rows > maxRows) {
        const over = maxRows - rowsSoFar;
        const line = baseLine + part.rowLines[over]!;
        throw new CashoutError(
          'too_many_rows',
          `${path} has more than ${maxRows} payout rows (line ${line} is row ${maxRows + 1}), the most accepted in one file (CASHOUT_MAX_ROWS); split it into smaller files`,
          { path, line, maxRows },
        );
      }
      if (rowsSoFar === 0) onFirstPiece(rows, state.length);
      rowsSoFar += rows;
      const valid = part.piasters.length;
      const references = valid === 0 ? [] : part.references.split('\n');
      const earlierReference = new Int32Array(valid);
      const invalidIssues: (readonly RowIssue[])[] = [];
      let j = 0;
      let k = 0;
      for (let i = 0; i < rows; i++) {
        const line = baseLine + part.rowLines[i]!;
        if (part.kinds[i] === ROW_INVALID) {
          const inv = part.invalid[k++]!;
          const reference = referenceColumn < 0 ? '' : (inv.cells[referenceColumn] ?? '').trim();
          let issues = inv.issues;
          if (reference !== '') {
            fingerprintInto(reference, scratch, 0);
            const first = firstLineOfReference.getOrAdd(scratch[0]!, scratch[1]!, line);
            if (first !== 0)
              issues = [
                ...issues,
                { column: 'reference', code: 'reference_duplicate', found: reference, params: { firstLine: first } },
              ];
          }
          invalidIssues.push(issues);
          continue;
        }
        if (references[j] !== '') {
          const at = j * FP_WORDS;
          earlierReference[j] = firstLineOfReference.getOrAdd(part.fingerprints[at]!, part.fingerprints[at + 1]!, line);
        }
        j++;
      }
      let cellsCache: Promise<(readonly string[])[]> | undefined;
      const validCellsOf = async (): Promise<(readonly string[])[]> => {
        if (part.validCells !== undefined) return JSON.parse(part.validCells) as string[][];
        // Rare (a row refused by a file-wide check): the piece is read and parsed again.
        const bytes = Buffer.alloc(state.length);
        const handle = await open(path, 'r');
        try {
          await handle.read(bytes, 0, state.length, state.start);
        } finally {
          await handle.close();
        }
        const out: (readonly string[])[] = [];
        let i = 0;
        eachRowOfPiece(bytes, state.task.first, settings, (_line, cells) => {
          if (part.kinds[i++] !== ROW_INVALID) out.push(cells);
        });
        return out;
      };
      const cellsOfValid = async (n: number): Promise<readonly string[]> =>
        (await (cellsCache ??= validCellsOf()))[n] ?? [];
      yield { part, baseLine, references, earlierReference, invalidIssues, cellsOfValid };
      if (part.last) {
        baseLine += part.lines;
        tasks.delete(nextOut++);
      }
    }
  } finally {
    if (cutting) await cuts!.return(undefined);
    await runner.close();
  }
}
