/**
 * The import: file → rows → items → requests → jobs, in one pass over the file.
 *
 * 1. `openPayoutFile`: the file and its header are checked (`openScan`), and the import threads
 *    start on the first pieces, before anything touches Redis.
 * 2. `recordBatch`: the file is hashed, which names the batch; the batch is recorded as staging,
 *    with its report folder and a copy of the file.
 * 3. `readRows`: the checked rows come in file order (`../import/parallel-scan.ts`). Invalid rows
 *    go to `row-notes.jsonl` and `rejected-rows.csv` in the report folder; valid rows are checked
 *    across the file (`./row-checks.ts`), grouped into withdrawal requests and staged in the
 *    ledger as they come (`./stage-requests.ts`).
 * 4. `finishBatch`: the batch is either released (jobs added) or refused (staged requests deleted,
 *    nothing will be sent): all-or-nothing by default, valid rows only with `partial`.
 *
 * Amounts are EGP decimal strings in files and settings, bigint piasters in counts and totals.
 */
import { chmod, copyFile, mkdir, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { basename, join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { batchIdFromSha256 } from '../batch-id.js';
import { hashFile } from '../import/read-rows.js';
import type { RowIssue } from '../import/row-issues.js';
import { describeDuplicate, type PossibleDuplicate } from './find-duplicates.js';
import { describeHeld, PAY_AGAIN_HINT, payAgainAdvised, type PayeeHolder } from '../ledger/payout-register.js';
import { formatPiasters, toPiasters } from '../money.js';
import { openScan, type Scan, type ScannedPart, type ScanOptions } from '../import/parallel-scan.js';
import { itemStart, partRows, ROW_INVALID, ROW_WALLET, type ChunkPart, type PartRow } from '../import/check-chunk.js';
import { CashoutError, isCashoutError } from '../errors.js';
import type { RowRules } from '../import/validate-row.js';
import type { Ledger } from '../ledger/index.js';
import { enqueueRequests, seqRange } from '../queue/enqueue-requests.js';
import type { SubmitJobData } from '../queue/queues.js';
import { openRejectedRows, type RejectedRowsOut } from './rejected-rows.js';
import { alignCells } from '../import/field-count.js';
import { BATCH_FILES, type RowNote } from '../results/batch-files.js';
import { writeReport, type ReportSummary } from '../results/write-report.js';
import { createRowChecks, type RowChecks } from './row-checks.js';
import { createRequestStager, type RequestStager } from './stage-requests.js';
import { ensureReportsFolder } from './reports-folder.js';
import { CONFIG_DEFAULTS } from '../config-defaults.js';

export { BATCH_FILES, type RowNote } from '../results/batch-files.js';

/** What an import needs. */
export interface ImportDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<SubmitJobData>;
  readonly rules: RowRules;
  readonly log: Logger;
  readonly reportsDir: string;
  /**
   * Replace a report folder that a batch this ledger does not hold left in `reportsDir` (a
   * sandbox run's earlier rehearsal, whose ledger was removed). Otherwise such a folder refuses
   * the import: another ledger writes its reports there, or this ledger lost its data.
   */
  readonly replaceReports?: boolean;
  readonly itemsPerRequest: number;
  /** Start rejected-rows.csv with a UTF-8 byte-order mark (`Config.csvBom`). Default true. */
  readonly csvBom?: boolean;
  /** Service base address recorded with the batch (`serviceAddress`); workers for another address do not send it. */
  readonly serviceUrl: string;
  /** Fingerprint of the access token recorded with the batch (`tokenFingerprint`; never the token). */
  readonly tokenFingerprint?: string;
  /** Approval and limit rules; all off when absent. */
  readonly policy?: BatchPolicy;
  /**
   * File limits (CASHOUT_MAX_FILE_BYTES, CASHOUT_MAX_ROWS, CASHOUT_MAX_FIELD_LENGTH) and import
   * threads (CASHOUT_IMPORT_THREADS); the defaults when absent (`readOptionsFrom` builds them).
   */
  readonly limits?: Pick<ScanOptions, 'maxBytes' | 'maxRows' | 'maxFieldLength' | 'threads'>;
  /**
   * Told of a batch that awaits approval, with the file's name, once it is recorded so (the
   * notification `batch.awaiting_approval`, src/notify/batch-events.ts). Must not throw.
   */
  readonly onAwaitingApproval?: (result: ImportResult, fileName: string) => Promise<void>;
}

/** Limits and maker-checker rules applied to a whole batch. Amounts are EGP decimal strings. */
export interface BatchPolicy {
  /** Refuse the batch when its total exceeds this (CASHOUT_MAX_BATCH_TOTAL). */
  readonly maxBatchTotal?: string | undefined;
  /** Nothing is sent before someone other than the importer approves (CASHOUT_REQUIRE_APPROVAL). */
  readonly requireApproval?: boolean;
  /** With approval on: only batches whose total exceeds this need it (CASHOUT_APPROVAL_THRESHOLD). */
  readonly approvalThreshold?: string | undefined;
  /** Hours an approval stays possible (CASHOUT_APPROVAL_EXPIRY_HOURS). */
  readonly approvalExpiryHours?: number;
  /** Warn when one wallet would receive more than this in the batch (CBE daily limit, default 60000.00). */
  readonly walletDailyLimit?: string | undefined;
}

/** Options of one import. */
export interface ImportOptions {
  /** Queue the valid rows even when some rows are invalid. */
  readonly partial?: boolean;
  readonly delimiter?: string;
  /** Text encoding of the file (see `ReadOptions.encoding`). */
  readonly encoding?: string;
  /** Import content that was imported before, as a new batch. */
  readonly force?: boolean;
  /**
   * Send rows whose payee is held by another payout (paid, or still to be paid, in an earlier
   * batch): a person's explicit choice, recorded with the batch (`by`: the importer) and shown in
   * the report. `note` says why; it is required.
   */
  readonly payAgain?: { readonly note: string };
  /** Refuse rows that look like a duplicate of an earlier row of the file (else: a warning). */
  readonly strictDuplicates?: boolean;
  /** Who imports (recorded; an importer cannot approve their own batch). Default "unknown". */
  readonly importedBy?: string;
  /** The person behind `importedBy` (operating-system or dashboard user; `Actor.user`): may not approve the batch. */
  readonly importedByUser?: string;
  /** Told the number of rows read so far, every few hundred rows (progress display). */
  readonly onRowsRead?: (rows: number) => void;
  /**
   * Runs at the last moment before the batch is released (made sendable). When it throws, the
   * batch is refused instead (nothing of it is queued or sent) and the error goes on to the caller
   * with the batch id in its context. The inbox checks here that the file is still the one it took.
   */
  readonly beforeRelease?: () => Promise<void>;
}

/** What an import did. */
export interface ImportResult {
  readonly batchId: string;
  readonly sha256: string;
  readonly state: 'queued' | 'refused' | 'finished' | 'awaiting_approval';
  /** Why the batch was refused (state `refused`). */
  readonly refusalReason?: string;
  /** Total of the rows queued, in piasters. */
  readonly totalPiasters: bigint;
  readonly rows: number;
  readonly validRows: number;
  readonly invalidRows: number;
  /** Rows not sent because another payout holds their payee (the payout register). */
  readonly duplicateRows: number;
  /** Rows flagged as possibly repeating an earlier row of the file. */
  readonly warnedRows: number;
  readonly requests: number;
  readonly reportDir: string;
  /**
   * The batch's report, written by the import when the batch is not queued (refused, finished with
   * nothing to send, awaiting approval): no worker ends such a batch, so no worker writes it.
   * Undefined for a queued batch, or when the report could not be written (logged; `cashout
   * report` writes it again).
   */
  readonly summary?: ReportSummary;
}

/**
 * A payout file opened for import: checked (`openScan`: existence, size, encoding, header), its
 * import threads started on the first pieces. `close` stops the threads (harmless once the rows
 * were read to the end). Nothing of it is in Redis.
 */
export interface OpenedPayoutFile {
  readonly path: string;
  readonly scan: Scan;
  /** The first part of the rows, already asked for. */
  readonly first: Promise<IteratorResult<ScannedPart>>;
  close(): Promise<void>;
}

/**
 * Opens `path` for `importBatch` and starts reading its rows, so that the import threads load and
 * check the first pieces while the caller connects to Redis. `read` is what `importBatch` would
 * use: the file limits and threads (`ImportDeps.limits`) with `--delimiter`/`--encoding`. Throws
 * `CashoutError` for file-level problems, before anything touches Redis.
 */
export async function openPayoutFile(path: string, rules: RowRules, read: ScanOptions): Promise<OpenedPayoutFile> {
  const scan = await openScan(path, rules, read);
  const first = scan.parts.next();
  first.catch(() => undefined);
  return {
    path,
    scan,
    first,
    close: async () => {
      await scan.parts.return(undefined).catch(() => undefined);
    },
  };
}

/**
 * The read options of an import: the file limits of `deps` with the file's delimiter and
 * encoding; the default number of threads leaves a core to the import's own thread (`busyCaller`).
 */
export function importReadOptions(
  deps: Pick<ImportDeps, 'limits'>,
  options: Pick<ImportOptions, 'delimiter' | 'encoding'>,
): ScanOptions {
  return {
    ...deps.limits,
    busyCaller: true,
    ...(options.delimiter === undefined ? {} : { delimiter: options.delimiter }),
    ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
  };
}

/**
 * Imports one payout file. Throws `CashoutError` for file-level problems and for content imported
 * before (`batch_exists`). `opened` is the file already opened by `openPayoutFile` with
 * `importReadOptions(deps, options)` (else it is opened here); it is closed either way.
 */
export async function importBatch(
  deps: ImportDeps,
  path: string,
  options: ImportOptions = {},
  opened?: OpenedPayoutFile,
): Promise<ImportResult> {
  // Check the file and its header before anything is recorded, so a file-level problem leaves no
  // trace in Redis. Rows are read from there on: the import threads start and check the first
  // pieces while the file is hashed and the batch recorded.
  const file = opened ?? (await openPayoutFile(path, deps.rules, importReadOptions(deps, options)));
  try {
    if (file.path !== path) throw new RangeError(`importBatch was given ${file.path} opened, not ${path}`);
    await ensureReportsFolder(deps.reportsDir);
    const batch = await recordBatch(deps, path, options);
    const read = await readRows(deps, file, options, batch);
    const result = await finishBatch(deps, batch, read, options);
    return result.state === 'queued' ? result : { ...result, ...(await reportAtImport(deps, batch)) };
  } finally {
    // Stops the threads when the import ends early (harmless once every row was read).
    await file.close();
  }
}

/**
 * Writes the report of a batch that the import ended or left waiting (not queued): every way in
 * (command, inbox, dashboard, HTTP API) gets it alike. A report that cannot be written does not
 * undo the import: it is logged, and `cashout report` writes it again.
 */
async function reportAtImport(deps: ImportDeps, batch: RecordedBatch): Promise<{ summary?: ReportSummary }> {
  try {
    return { summary: await writeReport(deps.ledger, batch.batchId, { bom: deps.csvBom }) };
  } catch (err) {
    batch.log.warn({ err: (err as Error).message }, 'the report could not be written; run cashout report for it');
    return {};
  }
}

/** A batch id of its own for content `sha256` (a forced import, or one after a refusal). */
function newBatchId(sha256: string, why: string): string {
  return batchIdFromSha256(
    createHash('sha256').update(`${sha256}:${why}:${Date.now()}:${Math.random()}`).digest('hex'),
  );
}

/** A batch recorded in the ledger (staging), its report folder made. */
interface RecordedBatch {
  readonly batchId: string;
  readonly sha256: string;
  /** The payout file. */
  readonly path: string;
  readonly reportDir: string;
  readonly log: Logger;
}

/**
 * Step 2: names the batch from the file's SHA-256 (the same content gives the same batch;
 * `force` makes a new batch of it), records it in the ledger as staging, with who imports it and
 * how, and makes its report folder (owner-only) with a copy of the file. Throws `batch_exists`
 * for content imported before, and what the ledger or the file system throws.
 */
async function recordBatch(deps: ImportDeps, path: string, options: ImportOptions): Promise<RecordedBatch> {
  const { sha256 } = await hashFile(path);
  const importedBy = options.importedBy ?? 'unknown';
  const record = (id: string, follows: string | undefined) =>
    deps.ledger.createBatch({
      id,
      fileName: basename(path),
      sha256,
      createdAt: new Date().toISOString(),
      rows: 0,
      validRows: 0,
      invalidRows: 0,
      itemsPerRequest: deps.itemsPerRequest,
      serviceUrl: deps.serviceUrl,
      reportDir: join(deps.reportsDir, id),
      partial: options.partial === true,
      importedBy,
      ...(options.importedByUser ? { importedByUser: options.importedByUser } : {}),
      ...(deps.tokenFingerprint ? { tokenFingerprint: deps.tokenFingerprint } : {}),
      ...(options.force ? { forced: true } : {}),
      ...(follows ? { follows } : {}),
      ...(options.payAgain ? { payAgain: { by: importedBy, note: options.payAgain.note } } : {}),
      ...(options.delimiter === undefined ? {} : { delimiter: options.delimiter }),
      ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
    });
  let batchId = options.force ? newBatchId(sha256, 'forced') : batchIdFromSha256(sha256);
  let follows: string | undefined;
  // Content whose batch was refused as a whole is imported as a new batch that follows it (the
  // refused batch, its events and its rows stay as they were); content of any other
  // batch is refused (`batch_exists`). Each refusal adds one link, so the walk ends.
  for (;;) {
    await refuseReportsOfAnotherLedger(deps, batchId);
    try {
      await record(batchId, follows);
      break;
    } catch (err) {
      if (!isCashoutError(err, 'batch_exists') || err.context.state !== 'refused') throw err;
      follows = batchId;
      batchId = await deps.ledger.supersedeRefused(batchId, newBatchId(sha256, `after:${batchId}`));
    }
  }
  if (follows) {
    // The refused batch's report names the batch that imported its file again (its rows and
    // counts are as they were).
    const refused = follows;
    await writeReport(deps.ledger, refused, { bom: deps.csvBom }).catch((err: unknown) =>
      deps.log.warn(
        { batchId: refused, err: isCashoutError(err) ? err.message : String(err) },
        `the report of refused batch ${refused} could not name the batch that follows it; "cashout report ${refused}" writes it again`,
      ),
    );
  }
  const reportDir = join(deps.reportsDir, batchId);
  const log = deps.log.child({ batchId });
  try {
    await mkdir(reportDir, { recursive: true, mode: 0o700 });
    await copyFile(path, join(reportDir, BATCH_FILES.input));
    await chmod(join(reportDir, BATCH_FILES.input), 0o600);
  } catch (err) {
    // The batch is refused at once (not left staging, which would hold its file for hours).
    const why = `its report folder ${reportDir} could not be written (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
    const none = { rows: 0, validRows: 0, invalidRows: 0, totalPiasters: 0n };
    await deps.ledger.refuseBatch(batchId, none, `${why}; nothing of it was sent`);
    throw new CashoutError(
      'config_invalid',
      `batch ${batchId}: ${why}; nothing of it was queued; check CASHOUT_REPORTS_DIR`,
      { key: 'CASHOUT_REPORTS_DIR', batchId },
      err,
    );
  }
  return { batchId, sha256, path, reportDir, log };
}

/**
 * Throws `CashoutError('config_invalid')` when `reportsDir` holds a report of batch `batchId` but
 * the ledger holds no such batch (unless `deps.replaceReports`): the folder is shared with another
 * ledger (another Redis or CASHOUT_REDIS_PREFIX), whose report would be overwritten, or this
 * ledger lost its data, and importing the file again could pay its payees a second time.
 */
async function refuseReportsOfAnotherLedger(deps: ImportDeps, batchId: string): Promise<void> {
  if (deps.replaceReports) return;
  const copy = join(deps.reportsDir, batchId, BATCH_FILES.input);
  if (!(await stat(copy).catch(() => undefined))) return;
  if (await deps.ledger.getBatch(batchId)) return;
  throw new CashoutError(
    'config_invalid',
    `the reports folder already holds batch ${batchId} of this file (${join(deps.reportsDir, batchId)}), but this ledger has no such batch: ` +
      'either another ledger (another Redis or CASHOUT_REDIS_PREFIX) writes its reports there, so give each its own CASHOUT_REPORTS_DIR, ' +
      "or this ledger lost its data, so check that batch's results.csv before paying anyone again; nothing was imported",
    { key: 'CASHOUT_REPORTS_DIR', batchId },
  );
}

/** What reading the rows gave. Amounts in piasters. */
interface RowCounts {
  rows: number;
  validRows: number;
  invalidRows: number;
  /** Rows not sent because another payout holds their payee. */
  duplicateRows: number;
  /** Rows sent with a warning. */
  warnedRows: number;
  totalPiasters: bigint;
}

/** The rows of a batch read: the counts, the requests staged and the bytes the checks across rows held. */
interface ReadRows {
  readonly counts: Readonly<RowCounts>;
  readonly requests: number;
  readonly crossRowTableBytes: number;
}

/** An import while its rows are read: what each step of a row uses. */
interface RowReading {
  readonly ledger: Ledger;
  readonly batchId: string;
  readonly options: ImportOptions;
  readonly counts: RowCounts;
  readonly report: RowReport;
  readonly checks: RowChecks;
  readonly stager: RequestStager;
}

/**
 * Step 3: reads the rows of `file` into the batch, part by part in file order (`readPart`), and
 * stages the last requests. Throws a file-level `CashoutError` (also `no_data_rows` for a file
 * with no rows), a failed ledger write or `onRowsRead`'s error, after refusing the batch (nothing
 * of it will be sent).
 */
async function readRows(
  deps: ImportDeps,
  file: OpenedPayoutFile,
  options: ImportOptions,
  batch: RecordedBatch,
): Promise<ReadRows> {
  const { scan } = file;
  const { batchId } = batch;
  const report = openRowReport(batch.reportDir, scan, deps.csvBom, options.delimiter ?? ',');
  const r: RowReading = {
    ledger: deps.ledger,
    batchId,
    options,
    counts: { rows: 0, validRows: 0, invalidRows: 0, duplicateRows: 0, warnedRows: 0, totalPiasters: 0n },
    report,
    stager: createRequestStager(deps.ledger, batchId, deps.itemsPerRequest, options.payAgain !== undefined),
    // Cross-row checks keep 12 to 16 bytes per row (fingerprint tables), never the rows.
    checks: createRowChecks(scan.estimatedRows, deps.policy?.walletDailyLimit),
  };
  try {
    for (let next = await file.first; !next.done; next = await scan.parts.next()) await readPart(r, next.value);
    if (r.counts.rows === 0)
      throw new CashoutError('no_data_rows', `${file.path} has a header but no payout rows`, { path: file.path });
    await r.stager.finish();
  } catch (err) {
    report.destroy();
    await r.stager.settle();
    const none = { rows: 0, validRows: 0, invalidRows: 0, totalPiasters: 0n };
    await deps.ledger.refuseBatch(batchId, none, (err as Error).message);
    throw err;
  }
  // What the checks across rows held (they grow with the file: memory an import cannot stream).
  const crossRowTableBytes = scan.tableBytes() + r.checks.bytes;
  await report.close();
  return { counts: r.counts, requests: r.stager.requests, crossRowTableBytes };
}

/**
 * The rows of one checked part, in file order: asks the payout register which of its payees
 * another batch holds, then refuses each invalid row and takes each valid one (`takeValidRow`).
 */
async function readPart(r: RowReading, s: ScannedPart): Promise<void> {
  const keys = r.checks.payeeKeys(s);
  const held = await r.ledger.checkPayees(r.batchId, keys);
  for (const row of partRows(s.part, s.baseLine)) {
    r.counts.rows++;
    const writing =
      row.kind === ROW_INVALID
        ? refuseRow(r, row.line, s.part.invalid[row.invalid]!.cells, s.invalidIssues[row.invalid]!)
        : takeValidRow(r, s, row, keys[row.valid]!, held.get(row.valid));
    // Most rows write nothing at once: wait only for those that do, before the next row.
    if (writing) await writing;
  }
  r.options.onRowsRead?.(r.counts.rows);
}

/**
 * A valid row (`key`: its payee key; `holder`: the payout of another batch holding it, if any):
 * refused when its reference was used before, or when it looks like an earlier row with
 * `strictDuplicates`; not sent when its payee is held, unless `payAgain`; else noted with its
 * warnings (`rowWarnings`) and sent (`sendRow`). Returns a promise when the row is being written
 * (a note, a refused row, staged requests), to be awaited before the next row.
 */
function takeValidRow(
  r: RowReading,
  s: ScannedPart,
  row: PartRow,
  key: string,
  holder: PayeeHolder | undefined,
): Promise<void> | undefined {
  const { line, valid: j } = row;
  const reference = s.references[j]!;
  const earlier = s.earlierReference[j]!;
  if (earlier !== 0)
    return refuseValidRow(r, s, row, {
      column: 'reference',
      code: 'reference_duplicate',
      found: reference,
      params: { firstLine: earlier },
    });
  const payee = reference === '' ? 'this payee (same destination, holder and amount)' : `reference ${reference}`;
  if (holder && !r.options.payAgain) {
    r.counts.duplicateRows++;
    const message = describeHeld(payee, holder) + (payAgainAdvised(holder) ? `; ${PAY_AGAIN_HINT}` : '');
    return r.report.note({ line, status: 'duplicate', message });
  }
  const dup = r.checks.possibleDuplicate(s.part, row);
  if (dup && r.options.strictDuplicates)
    return refuseValidRow(r, s, row, {
      column: 'row',
      code: 'possible_duplicate',
      params: { firstLine: dup.firstLine, same: dup.same },
    });
  const warnings = rowWarnings(r, s.part, row, dup, holder && describeHeld(payee, holder));
  if (!warnings) return sendRow(r, s, row, key);
  r.counts.warnedRows++;
  return r.report.note({ line, warnings }).then(() => sendRow(r, s, row, key));
}

/**
 * Sends a valid row: counts it in the batch and its amount (piasters) in the total, and adds it
 * to the requests. Returns a promise when requests are being staged, to be awaited.
 */
function sendRow(r: RowReading, s: ScannedPart, row: PartRow, key: string): Promise<void> | undefined {
  const { part } = s;
  const j = row.valid;
  const amount = part.piasters[j]!;
  r.counts.validRows++;
  r.counts.totalPiasters += amount;
  const channel = row.kind === ROW_WALLET ? 'wallet' : 'bank';
  return r.stager.add(
    channel,
    row.line,
    part.itemBytes,
    itemStart(part, j),
    part.itemEnds[j]!,
    s.references[j]!,
    amount,
    key,
  );
}

/** Refuses a valid row for `issue`, with its cells as read. */
async function refuseValidRow(r: RowReading, s: ScannedPart, row: PartRow, issue: RowIssue): Promise<void> {
  await refuseRow(r, row.line, await s.cellsOfValid(row.valid), [issue]);
}

/**
 * The warnings of a valid row that is sent, in this order: a possible duplicate of an earlier row,
 * paid again on purpose (`held`: how its payee is held by another payout), its wallet's total
 * over the daily wallet limit. Undefined when there is none.
 */
function rowWarnings(
  r: RowReading,
  part: ChunkPart,
  row: PartRow,
  dup: PossibleDuplicate | undefined,
  held: string | undefined,
): string[] | undefined {
  let warnings: string[] | undefined;
  if (dup) warnings = [describeDuplicate(dup)];
  if (held) {
    const by = `${r.options.importedBy ?? 'unknown'}: ${r.options.payAgain!.note}`;
    (warnings ??= []).push(`paid again on purpose (${by}): ${held.replace(/^not sent: /, '')}`);
  }
  const overLimit = r.checks.walletWarning(part, row);
  if (overLimit) (warnings ??= []).push(overLimit);
  return warnings;
}

/** Refuses a row: counts it invalid and writes it, with its cells as read and its issues, to the report. */
function refuseRow(r: RowReading, line: number, cells: readonly string[], issues: readonly RowIssue[]): Promise<void> {
  r.counts.invalidRows++;
  return r.report.rejected(line, cells, issues);
}

/** `row-notes.jsonl` and `rejected-rows.csv` of a batch, written as its rows are read. */
interface RowReport {
  /** Adds a line to the notes. */
  note(note: RowNote): Promise<void>;
  /** A refused row: a note with its issues, and the row with its cells in the rejected rows. */
  rejected(line: number, cells: readonly string[], issues: readonly RowIssue[]): Promise<void>;
  close(): Promise<void>;
  /** Stops writing the notes (the import failed). */
  destroy(): void;
}

/**
 * Opens the row report of a batch in `reportDir` (the rejected rows only at the first refused
 * row), for a file read with `scan` and `delimiter`; `bom` starts the rejected rows with a UTF-8
 * byte-order mark (default true).
 */
function openRowReport(reportDir: string, scan: Scan, bom: boolean | undefined, delimiter: string): RowReport {
  const notesOut = createWriteStream(join(reportDir, BATCH_FILES.notes), { mode: 0o600 });
  let rejectedOut: RejectedRowsOut | undefined;
  const rowWidth = Math.max(...Object.values(scan.index)) + 1;
  const note = async (note: RowNote) => {
    if (!notesOut.write(`${JSON.stringify(note)}\n`)) await once(notesOut, 'drain');
  };
  return {
    note,
    async rejected(line, cells, issues) {
      await note({ line, status: 'invalid', issues });
      rejectedOut ??= openRejectedRows(join(reportDir, BATCH_FILES.rejected), scan.header, { bom });
      // A row with the wrong number of fields keeps its own cells (a quote-split value joined again).
      await rejectedOut.write(line, alignCells(cells, rowWidth, delimiter) ?? cells, issues);
    },
    async close() {
      notesOut.end();
      await once(notesOut, 'close');
      await rejectedOut?.close();
    },
    destroy: () => notesOut.destroy(),
  };
}

/**
 * Step 4, once the rows are read and staged: refuses the batch when it may not be sent
 * (`refusalOf`), or when `beforeRelease` throws (the error goes on, with the batch id); else
 * records it as awaiting approval when the policy asks for one (`needsApproval`), or releases it
 * and adds its jobs.
 */
async function finishBatch(
  deps: ImportDeps,
  batch: RecordedBatch,
  read: ReadRows,
  options: ImportOptions,
): Promise<ImportResult> {
  const { batchId, log } = batch;
  const { requests } = read;
  const { rows, validRows, invalidRows, duplicateRows, warnedRows, totalPiasters } = read.counts;
  const result = {
    batchId,
    sha256: batch.sha256,
    rows,
    validRows,
    invalidRows,
    duplicateRows,
    warnedRows,
    reportDir: batch.reportDir,
    totalPiasters,
  };
  const batchCounts = { rows, validRows, invalidRows, totalPiasters };
  const refusal = refusalOf(deps.policy ?? {}, read.counts, options.partial === true);
  if (refusal) {
    await deps.ledger.refuseBatch(batchId, batchCounts, refusal.reason);
    log.warn(refusal.logFields, refusal.logMessage);
    return { ...result, state: 'refused', requests: 0, refusalReason: refusal.reason };
  }
  if (options.beforeRelease) await checkBeforeRelease(deps.ledger, batch, batchCounts, options.beforeRelease);
  if (needsApproval(deps.policy ?? {}, requests, totalPiasters)) {
    const until = new Date(
      Date.now() + (deps.policy?.approvalExpiryHours ?? CONFIG_DEFAULTS.approvalExpiryHours) * 3_600_000,
    ).toISOString();
    await deps.ledger.releaseBatch(batchId, { ...batchCounts, requests }, until);
    log.info(
      { requests, total: formatPiasters(totalPiasters), until },
      'batch awaits approval; nothing is sent before it',
    );
    const awaiting: ImportResult = { ...result, state: 'awaiting_approval', requests };
    await deps.onAwaitingApproval?.(awaiting, basename(batch.path));
    return awaiting;
  }
  await deps.ledger.releaseBatch(batchId, { ...batchCounts, requests });
  await enqueueRequests(deps.queue, batchId, seqRange(1, requests));
  const { crossRowTableBytes } = read;
  log.info(
    { requests, validRows, invalidRows, duplicateRows, warnedRows, crossRowTableBytes },
    requests === 0 ? 'batch finished at its import: no row to send' : 'batch queued',
  );
  return { ...result, state: requests === 0 ? 'finished' : 'queued', requests };
}

/**
 * Why a batch whose rows were read may not be sent, if so: rows are invalid and `partial` is off,
 * or its total is over CASHOUT_MAX_BATCH_TOTAL (an EGP amount); with what to log.
 */
function refusalOf(
  policy: BatchPolicy,
  counts: Readonly<RowCounts>,
  partial: boolean,
): { reason: string; logFields: Record<string, unknown>; logMessage: string } | undefined {
  const { invalidRows, totalPiasters } = counts;
  if (invalidRows > 0 && !partial)
    return {
      reason: `${invalidRows} row${invalidRows > 1 ? 's are' : ' is'} invalid and nothing is sent unless all rows are valid (to send the valid rows alone: --partial; HTTP API: partial=true; the dashboard's upload offers it)`,
      logFields: { invalidRows },
      logMessage: 'batch refused: the file has invalid rows; nothing was queued',
    };
  if (policy.maxBatchTotal !== undefined && totalPiasters > toPiasters(policy.maxBatchTotal))
    return {
      reason: `the batch total EGP ${formatPiasters(totalPiasters)} is over the limit of EGP ${policy.maxBatchTotal} per batch (CASHOUT_MAX_BATCH_TOTAL); nothing was sent`,
      logFields: { total: formatPiasters(totalPiasters), limit: policy.maxBatchTotal },
      logMessage: 'batch refused: over the batch total limit',
    };
  return undefined;
}

/**
 * Runs `beforeRelease`; when it throws, refuses the batch (nothing of it is queued or sent) and
 * throws its error on, a `CashoutError` with the batch id added to its context.
 */
async function checkBeforeRelease(
  ledger: Ledger,
  batch: RecordedBatch,
  counts: Parameters<Ledger['refuseBatch']>[1],
  beforeRelease: () => Promise<void>,
): Promise<void> {
  try {
    await beforeRelease();
  } catch (err) {
    await ledger.refuseBatch(batch.batchId, counts, `not released: ${(err as Error)?.message ?? String(err)}`);
    batch.log.warn({ reason: (err as Error)?.message }, 'batch refused at its release; nothing was queued');
    if (isCashoutError(err))
      throw new CashoutError(err.code, err.message, { ...err.context, batchId: batch.batchId }, err.cause);
    throw err;
  }
}

/**
 * Whether a batch of `requests` requests and `totalPiasters` needs approval before anything is
 * sent: approval is required (CASHOUT_REQUIRE_APPROVAL), the batch has requests, and its total is
 * over the approval threshold (an EGP amount; every batch when none).
 */
function needsApproval(policy: BatchPolicy, requests: number, totalPiasters: bigint): boolean {
  return (
    policy.requireApproval === true &&
    requests > 0 &&
    (policy.approvalThreshold === undefined || totalPiasters > toPiasters(policy.approvalThreshold))
  );
}
