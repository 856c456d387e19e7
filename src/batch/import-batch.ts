/**
 * The import: file → rows → items → requests → jobs. Streams the file once: valid rows are
 * grouped into withdrawal requests and staged in the ledger as they come; invalid rows go to
 * `row-notes.jsonl` and `rejected-rows.csv` in the batch's report folder. At the end the batch
 * is either released (jobs added) or refused (staged requests deleted, nothing will be sent):
 * all-or-nothing by default, valid rows only with `partial`.
 */
import { chmod, copyFile, mkdir } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { basename, join } from 'node:path';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { batchIdFromSha256 } from '../batch-id.js';
import { createJsonGrouper, type StagedRequest } from './group-items.js';
import { hashFile } from '../import/read-rows.js';
import type { RowIssue } from '../import/row-issues.js';
import { createHash } from 'node:crypto';
import { describeDuplicate, type PossibleDuplicate } from './find-duplicates.js';
import { createFingerprintTable, type FingerprintTable } from '../import/fingerprint-table.js';
import { describeHeld, fingerprintKey, PAY_AGAIN_HINT, referenceKey } from '../ledger/payout-register.js';
import { formatPiasters, toPiasters } from '../money.js';
import { openScan, type Scan, type ScannedPart, type ScanOptions } from '../import/parallel-scan.js';
import { FP_WORDS, ROW_INVALID, ROW_WALLET } from '../import/check-chunk.js';
import { CashoutError, isCashoutError } from '../errors.js';
import type { RowRules } from '../import/validate-row.js';
import type { Ledger } from '../ledger/index.js';
import { enqueueRequests, seqRange } from '../queue/enqueue-requests.js';
import type { SubmitJobData } from '../queue/queues.js';
import { openRejectedRows, type RejectedRowsOut } from './rejected-rows.js';
import { alignCells } from '../import/field-count.js';
import { BATCH_FILES, type RowNote } from '../results/batch-files.js';

export { BATCH_FILES, type RowNote } from '../results/batch-files.js';

/** Largest wallet total kept exactly, in piasters (2^32 − 1). */
const MAX_TOTAL = 0xffffffffn;
/** Requests staged in one write, and writes in flight while rows are read. */
const STAGE_GROUP = 10;
const STAGE_IN_FLIGHT = 2;

/** What an import needs. */
export interface ImportDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<SubmitJobData>;
  readonly rules: RowRules;
  readonly log: Logger;
  readonly reportsDir: string;
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

/** The read options of an import: the file limits of `deps` with the file's delimiter and encoding. */
export function importReadOptions(
  deps: Pick<ImportDeps, 'limits'>,
  options: Pick<ImportOptions, 'delimiter' | 'encoding'>,
): ScanOptions {
  return {
    ...deps.limits,
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
    return await importOpened(deps, file, options);
  } finally {
    // Stops the threads when the import ends early (harmless once every row was read).
    await file.close();
  }
}

/** `importBatch` once the file is open; the caller closes it. */
async function importOpened(deps: ImportDeps, file: OpenedPayoutFile, options: ImportOptions): Promise<ImportResult> {
  const { path, scan, first } = file;
  const parts = scan.parts;
  const { sha256 } = await hashFile(path);
  // The same content gives the same batch; --force makes a new batch of it.
  const batchId = options.force
    ? batchIdFromSha256(createHash('sha256').update(`${sha256}:forced:${Date.now()}:${Math.random()}`).digest('hex'))
    : batchIdFromSha256(sha256);
  const reportDir = join(deps.reportsDir, batchId);
  const log = deps.log.child({ batchId });

  await deps.ledger.createBatch({
    id: batchId,
    fileName: basename(path),
    sha256,
    createdAt: new Date().toISOString(),
    rows: 0,
    validRows: 0,
    invalidRows: 0,
    itemsPerRequest: deps.itemsPerRequest,
    serviceUrl: deps.serviceUrl,
    reportDir,
    partial: options.partial === true,
    importedBy: options.importedBy ?? 'unknown',
    ...(options.importedByUser ? { importedByUser: options.importedByUser } : {}),
    ...(deps.tokenFingerprint ? { tokenFingerprint: deps.tokenFingerprint } : {}),
    ...(options.force ? { forced: true } : {}),
    ...(options.payAgain ? { payAgain: { by: options.importedBy ?? 'unknown', note: options.payAgain.note } } : {}),
    ...(options.delimiter === undefined ? {} : { delimiter: options.delimiter }),
    ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
  });
  await mkdir(reportDir, { recursive: true, mode: 0o700 });
  await copyFile(path, join(reportDir, BATCH_FILES.input));
  await chmod(join(reportDir, BATCH_FILES.input), 0o600);

  const notesOut = createWriteStream(join(reportDir, BATCH_FILES.notes), { mode: 0o600 });
  const writeNote = async (note: RowNote) => {
    if (!notesOut.write(`${JSON.stringify(note)}\n`)) await once(notesOut, 'drain');
  };
  let rejectedOut: RejectedRowsOut | undefined;
  const rowWidth = Math.max(...Object.values(scan.index)) + 1;
  const grouper = createJsonGrouper(deps.itemsPerRequest);
  // Cross-row checks keep 12 to 16 bytes per row (fingerprint tables), never the rows.
  const sameNumber = createFingerprintTable(false, scan.estimatedRows);
  const sameHolder = createFingerprintTable(false, scan.estimatedRows);
  const walletTotals = createFingerprintTable(false, scan.estimatedRows);
  // Rows without reference: how many rows of the file so far share a payee fingerprint (its key's #n).
  let payeeCounts: FingerprintTable | undefined;
  let rows = 0;
  let requests = 0;
  let invalidRows = 0;
  let duplicateRows = 0;
  let warnedRows = 0;
  let validRows = 0;
  let totalPiasters = 0n;
  const walletLimit =
    deps.policy?.walletDailyLimit === undefined ? undefined : toPiasters(deps.policy.walletDailyLimit);
  let staged: StagedRequest[] = [];
  const staging: Promise<void>[] = [];
  // Staged requests are written a few at a time, with a write or two in flight while rows are read.
  const stage = async (force: boolean) => {
    if (staged.length === 0 || (!force && staged.length < STAGE_GROUP)) return;
    staging.push(deps.ledger.stageRequests(batchId, staged, { payAgain: options.payAgain !== undefined }));
    staged = [];
    if (staging.length >= STAGE_IN_FLIGHT) await staging.shift();
  };
  const invalid = async (line: number, cells: readonly string[], issues: readonly RowIssue[]) => {
    invalidRows++;
    await writeNote({ line, status: 'invalid', issues });
    rejectedOut ??= openRejectedRows(join(reportDir, BATCH_FILES.rejected), scan.header, { bom: deps.csvBom });
    // A row with the wrong number of fields keeps its own cells (a quote-split value joined again).
    await rejectedOut.write(line, alignCells(cells, rowWidth, options.delimiter ?? ',') ?? cells, issues);
  };

  try {
    for (let next = await first; !next.done; next = await parts.next()) {
      const s = next.value;
      const { part } = s;
      // The payout register: each valid row's payee key, and which are held by another batch.
      const keys = payeeKeys(s, () => (payeeCounts ??= createFingerprintTable(true, scan.estimatedRows)));
      const held = await deps.ledger.checkPayees(batchId, keys);
      let j = 0;
      let k = 0;
      for (let i = 0; i < part.kinds.length; i++) {
        rows++;
        const line = s.baseLine + part.rowLines[i]!;
        const kind = part.kinds[i];
        if (kind === ROW_INVALID) {
          await invalid(line, part.invalid[k]!.cells, s.invalidIssues[k]!);
          k++;
          continue;
        }
        const v = j++;
        const reference = s.references[v]!;
        const earlierRef = s.earlierReference[v]!;
        if (earlierRef !== 0) {
          await invalid(line, await s.cellsOfValid(v), [
            { column: 'reference', code: 'reference_duplicate', found: reference, params: { firstLine: earlierRef } },
          ]);
          continue;
        }
        const holder = held.get(v);
        const payee = reference === '' ? 'this payee (same destination, holder and amount)' : `reference ${reference}`;
        if (holder && !options.payAgain) {
          duplicateRows++;
          await writeNote({ line, status: 'duplicate', message: `${describeHeld(payee, holder)}; ${PAY_AGAIN_HINT}` });
          continue;
        }
        const fp = part.fingerprints;
        const at = v * FP_WORDS;
        const byNumber = sameNumber.getOrAdd(fp[at + 2]!, fp[at + 3]!, line);
        const byHolder = sameHolder.getOrAdd(fp[at + 4]!, fp[at + 5]!, line);
        const dup: PossibleDuplicate | undefined =
          byNumber !== 0
            ? { firstLine: byNumber, same: kind === ROW_WALLET ? 'mobile_number' : 'account_number' }
            : byHolder !== 0
              ? { firstLine: byHolder, same: 'holder' }
              : undefined;
        if (dup && options.strictDuplicates) {
          await invalid(line, await s.cellsOfValid(v), [
            { column: 'row', code: 'possible_duplicate', params: { firstLine: dup.firstLine, same: dup.same } },
          ]);
          continue;
        }
        const amount = part.piasters[v]!;
        let warnings: string[] | undefined;
        if (dup) warnings = [describeDuplicate(dup)];
        if (holder) {
          const why = describeHeld(payee, holder).replace(/^not sent: /, '');
          (warnings ??= []).push(
            `paid again on purpose (${options.importedBy ?? 'unknown'}: ${options.payAgain!.note}): ${why}`,
          );
        }
        if (kind === ROW_WALLET && walletLimit !== undefined) {
          // Totals are kept in 32 bits of piasters: exact up to EGP 42,949,672.95, then "more than".
          const sum = walletTotals.addTo(fp[at + 6]!, fp[at + 7]!, Number(amount > MAX_TOTAL ? MAX_TOTAL : amount));
          if (BigInt(sum) > walletLimit) {
            const what =
              sum === Number(MAX_TOTAL)
                ? `more than EGP ${formatPiasters(MAX_TOTAL)}`
                : `EGP ${formatPiasters(BigInt(sum))}`;
            (warnings ??= []).push(
              `this wallet receives ${what} in this batch up to this row, over the Central Bank of Egypt's daily wallet limit of EGP ${formatPiasters(walletLimit)}`,
            );
          }
        }
        if (warnings) {
          warnedRows++;
          await writeNote({ line, warnings });
        }
        validRows++;
        totalPiasters += amount;
        const req = grouper.add(
          kind === ROW_WALLET ? 'wallet' : 'bank',
          line,
          part.itemBytes,
          v === 0 ? 0 : part.itemEnds[v - 1]!,
          part.itemEnds[v]!,
          reference,
          amount,
          keys[v]!,
        );
        if (req) {
          staged.push(req);
          requests++;
          await stage(false);
        }
      }
      options.onRowsRead?.(rows);
    }
    if (rows === 0) throw new CashoutError('no_data_rows', `${path} has a header but no payout rows`, { path });
    const last = grouper.finish();
    if (last) {
      staged.push(last);
      requests++;
    }
    await stage(true);
    await Promise.all(staging);
  } catch (err) {
    notesOut.destroy();
    await Promise.allSettled(staging);
    await deps.ledger.refuseBatch(
      batchId,
      { rows: 0, validRows: 0, invalidRows: 0, totalPiasters: 0n },
      (err as Error).message,
    );
    throw err;
  }
  // What the checks across rows held (they grow with the file: memory an import cannot stream).
  const crossRowTableBytes =
    scan.tableBytes() + sameNumber.bytes + sameHolder.bytes + walletTotals.bytes + (payeeCounts?.bytes ?? 0);
  notesOut.end();
  await once(notesOut, 'close');
  await rejectedOut?.close();

  const result = { batchId, sha256, rows, validRows, invalidRows, duplicateRows, warnedRows, reportDir, totalPiasters };
  const batchCounts = { rows, validRows, invalidRows, totalPiasters };
  if (invalidRows > 0 && !options.partial) {
    const reason = `${invalidRows} row${invalidRows > 1 ? 's are' : ' is'} invalid and nothing is sent unless all rows are valid (use --partial to send the valid rows)`;
    await deps.ledger.refuseBatch(batchId, batchCounts, reason);
    log.warn({ invalidRows }, 'batch refused: the file has invalid rows; nothing was queued');
    return { ...result, state: 'refused', requests: 0, refusalReason: reason };
  }
  const policy = deps.policy ?? {};
  if (policy.maxBatchTotal !== undefined && totalPiasters > toPiasters(policy.maxBatchTotal)) {
    const reason = `the batch total EGP ${formatPiasters(totalPiasters)} is over the limit of EGP ${policy.maxBatchTotal} per batch (CASHOUT_MAX_BATCH_TOTAL); nothing was sent`;
    await deps.ledger.refuseBatch(batchId, batchCounts, reason);
    log.warn(
      { total: formatPiasters(totalPiasters), limit: policy.maxBatchTotal },
      'batch refused: over the batch total limit',
    );
    return { ...result, state: 'refused', requests: 0, refusalReason: reason };
  }
  if (options.beforeRelease) {
    try {
      await options.beforeRelease();
    } catch (err) {
      await deps.ledger.refuseBatch(batchId, batchCounts, `not released: ${(err as Error)?.message ?? String(err)}`);
      log.warn({ reason: (err as Error)?.message }, 'batch refused at its release; nothing was queued');
      if (isCashoutError(err)) throw new CashoutError(err.code, err.message, { ...err.context, batchId }, err.cause);
      throw err;
    }
  }
  const needsApproval =
    policy.requireApproval === true &&
    requests > 0 &&
    (policy.approvalThreshold === undefined || totalPiasters > toPiasters(policy.approvalThreshold));
  if (needsApproval) {
    const until = new Date(Date.now() + (policy.approvalExpiryHours ?? 72) * 3_600_000).toISOString();
    await deps.ledger.releaseBatch(batchId, { ...batchCounts, requests }, until);
    log.info(
      { requests, total: formatPiasters(totalPiasters), until },
      'batch awaits approval; nothing is sent before it',
    );
    const awaiting: ImportResult = { ...result, state: 'awaiting_approval', requests };
    await deps.onAwaitingApproval?.(awaiting, basename(path));
    return awaiting;
  }
  await deps.ledger.releaseBatch(batchId, { ...batchCounts, requests });
  await enqueueRequests(deps.queue, batchId, seqRange(1, requests));
  log.info({ requests, validRows, invalidRows, duplicateRows, warnedRows, crossRowTableBytes }, 'batch queued');
  return { ...result, state: requests === 0 ? 'finished' : 'queued', requests };
}

/**
 * The payee key of each valid row of a part (payout-register.ts), in the order of its valid rows:
 * `r:<reference>`, or for a row without reference `f:<fingerprint>#<n>`, n counting the file's
 * rows with the same fingerprint so far (`counts`, shared across the parts of a file). A row whose
 * reference repeats an earlier row of the file gets '' (it is refused as invalid).
 */
function payeeKeys(s: ScannedPart, counts: () => FingerprintTable): string[] {
  const valid = s.part.piasters.length;
  const fp = s.part.fingerprints;
  const keys = new Array<string>(valid);
  for (let j = 0; j < valid; j++) {
    const reference = s.references[j]!;
    if (s.earlierReference[j] !== 0) keys[j] = '';
    else if (reference !== '') keys[j] = referenceKey(reference);
    else {
      // Destination+amount (words 2, 3) and holder+amount (words 4, 5), folded to 64 bits to count.
      const at = j * FP_WORDS;
      const hi = (fp[at + 2]! ^ Math.imul(fp[at + 4]!, 0x9e3779b1)) >>> 0;
      const lo = (fp[at + 3]! ^ Math.imul(fp[at + 5]!, 0x85ebca6b)) >>> 0;
      keys[j] = fingerprintKey(fp, at + 2, counts().addTo(hi, lo, 1));
    }
  }
  return keys;
}
