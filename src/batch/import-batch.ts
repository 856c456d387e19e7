/**
 * The import: file → rows → items → requests → jobs. Streams the file once: valid rows are
 * grouped into withdrawal requests and staged in the ledger as they come; invalid rows go to
 * `invalid-rows.jsonl` and `rejected-rows.csv` in the batch's report folder. At the end the batch
 * is either released (jobs added) or refused (staged requests deleted, nothing will be sent):
 * all-or-nothing by default, valid rows only with `partial`.
 */
import { chmod, copyFile, mkdir } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { basename, join } from 'node:path';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { batchIdFromSha256 } from './batch-id.js';
import { createGrouper, type WithdrawalRequest } from './group-items.js';
import { hashFile, readRecords, sniffFile, type ReadOptions } from '../import/read-rows.js';
import { indexHeader } from '../import/columns.js';
import type { RowIssue } from '../import/row-issues.js';
import type { PayoutItem } from '../import/validate-row.js';
import type { InvalidRow } from '../import/scan-file.js';
import { createHash } from 'node:crypto';
import { createDuplicateFinder, describeDuplicate } from './find-duplicates.js';
import { formatPiasters, toPiasters } from '../money.js';
import { scanFile } from '../import/scan-file.js';
import type { RowRules } from '../import/validate-row.js';
import type { Ledger } from '../submit/ledger.js';
import { enqueueRequests, seqRange } from '../queue/enqueue-requests.js';
import type { SubmitJobData } from '../queue/queues.js';
import { openCsvOut, type CsvOut } from '../results/csv-out.js';

/** Names of the files in a batch's report folder. */
export const BATCH_FILES = {
  input: 'input.csv',
  notes: 'row-notes.jsonl',
  rejected: 'rejected-rows.csv',
  results: 'results.csv',
  summary: 'summary.json',
  summaryHtml: 'summary.html',
} as const;

/** What an import needs. */
export interface ImportDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<SubmitJobData>;
  readonly rules: RowRules;
  readonly log: Logger;
  readonly reportsDir: string;
  readonly itemsPerRequest: number;
  /** Service base address recorded with the batch (never the token). */
  readonly serviceUrl: string;
  /** Approval and limit rules; all off when absent. */
  readonly policy?: BatchPolicy;
  /** File limits (CASHOUT_MAX_FILE_BYTES, CASHOUT_MAX_ROWS, CASHOUT_MAX_FIELD_LENGTH); the defaults when absent. */
  readonly limits?: Pick<ReadOptions, 'maxBytes' | 'maxRows' | 'maxFieldLength'>;
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
  /** Send rows whose reference was already paid in an earlier batch. */
  readonly allowDuplicateReferences?: boolean;
  /** Refuse rows that look like a duplicate of an earlier row of the file (else: a warning). */
  readonly strictDuplicates?: boolean;
  /** Who imports (recorded; an importer cannot approve their own batch). Default "unknown". */
  readonly importedBy?: string;
  /** Told the number of rows read so far, every few hundred rows (progress display). */
  readonly onRowsRead?: (rows: number) => void;
}

/**
 * One line of `row-notes.jsonl`, in file order: an invalid row with its issues, a row not sent
 * because its reference was paid before (`duplicate`), or a valid row with warnings.
 */
export interface RowNote {
  readonly line: number;
  readonly status?: 'invalid' | 'duplicate';
  readonly issues?: readonly RowIssue[];
  readonly message?: string;
  readonly warnings?: readonly string[];
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
  /** Rows not sent because their reference was paid in an earlier batch. */
  readonly duplicateRows: number;
  /** Rows flagged as possibly repeating an earlier row of the file. */
  readonly warnedRows: number;
  readonly requests: number;
  readonly reportDir: string;
}

/** Imports one payout file. Throws `CashoutError` for file-level problems and for content imported before (`batch_exists`). */
export async function importBatch(deps: ImportDeps, path: string, options: ImportOptions = {}): Promise<ImportResult> {
  const readOptions: ReadOptions = {
    ...deps.limits,
    ...(options.delimiter === undefined ? {} : { delimiter: options.delimiter }),
    ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
  };
  await sniffFile(path, readOptions);
  const { sha256 } = await hashFile(path);
  // The same content gives the same batch; --force makes a new batch of it.
  const batchId = options.force
    ? batchIdFromSha256(createHash('sha256').update(`${sha256}:forced:${Date.now()}:${Math.random()}`).digest('hex'))
    : batchIdFromSha256(sha256);
  const reportDir = join(deps.reportsDir, batchId);
  const log = deps.log.child({ batchId });

  // Check the header before anything is recorded, so a file-level problem leaves no trace in Redis.
  await checkHeader(path, readOptions);

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
  let rejectedOut: CsvOut | undefined;
  let header: readonly string[] = [];
  const grouper = createGrouper(deps.itemsPerRequest);
  const duplicates = createDuplicateFinder();
  let staged: WithdrawalRequest[] = [];
  let requests = 0;
  let invalidRows = 0;
  let duplicateRows = 0;
  let warnedRows = 0;
  let validRows = 0;
  let totalPiasters = 0n;
  const walletTotals = new Map<string, bigint>();
  const walletLimit = deps.policy?.walletDailyLimit === undefined ? undefined : toPiasters(deps.policy.walletDailyLimit);
  const stage = async (force: boolean) => {
    if (staged.length === 0 || (!force && staged.length < 50)) return;
    await deps.ledger.stageRequests(batchId, staged);
    staged = [];
  };

  // Rows wait in a short ordered buffer so that references can be looked up in bulk and notes
  // stay in file order.
  type Pending = { kind: 'item'; item: PayoutItem; cells: readonly string[] } | { kind: 'invalid'; row: InvalidRow };
  let buffer: Pending[] = [];
  const invalid = async (line: number, cells: readonly string[], issues: readonly RowIssue[]) => {
    invalidRows++;
    await writeNote({ line, status: 'invalid', issues });
    rejectedOut ??= openCsvOut(join(reportDir, BATCH_FILES.rejected), header);
    await rejectedOut.write(cells);
  };
  let rowsRead = 0;
  const flush = async () => {
    rowsRead += buffer.length;
    options.onRowsRead?.(rowsRead);
    const items = buffer.flatMap((p) => (p.kind === 'item' && p.item.reference !== '' ? [p.item.reference] : []));
    const paid = options.allowDuplicateReferences ? [] : await deps.ledger.paidReferences(items);
    const paidBy = new Map<string, string>();
    items.forEach((ref, i) => {
      const where = paid[i];
      if (where) paidBy.set(ref, where);
    });
    for (const p of buffer) {
      if (p.kind === 'invalid') {
        await invalid(p.row.line, p.row.cells, p.row.issues);
        continue;
      }
      const item = p.item;
      const earlier = item.reference === '' ? undefined : paidBy.get(item.reference);
      if (earlier) {
        const [b, line] = earlier.split(':');
        duplicateRows++;
        await writeNote({ line: item.line, status: 'duplicate', message: `not sent: reference ${item.reference} was already paid in batch ${b} (line ${line}); use --allow-duplicate-references to pay it again` });
        continue;
      }
      const dup = duplicates.check(item);
      if (dup && options.strictDuplicates) {
        await invalid(item.line, p.cells, [{ column: 'row', code: 'possible_duplicate', params: { firstLine: dup.firstLine, same: dup.same } }]);
        continue;
      }
      const warnings: string[] = [];
      if (dup) warnings.push(describeDuplicate(dup));
      const amount = toPiasters(item.channel === 'wallet' ? item.wallet.amount : item.bank.amount);
      if (item.channel === 'wallet' && walletLimit !== undefined) {
        const sum = (walletTotals.get(item.wallet.mobile_number) ?? 0n) + amount;
        walletTotals.set(item.wallet.mobile_number, sum);
        if (sum > walletLimit) {
          warnings.push(`this wallet receives EGP ${formatPiasters(sum)} in this batch up to this row, over the Central Bank of Egypt's daily wallet limit of EGP ${formatPiasters(walletLimit)}`);
        }
      }
      if (warnings.length > 0) {
        warnedRows++;
        await writeNote({ line: item.line, warnings });
      }
      validRows++;
      totalPiasters += amount;
      const req = grouper.add(item);
      if (req) {
        staged.push(req);
        requests++;
        await stage(false);
      }
    }
    buffer = [];
  };

  let counts;
  try {
    counts = await scanFile(
      path,
      deps.rules,
      {
        onHeader(h) {
          header = h;
        },
        async onItem(item, cells) {
          buffer.push({ kind: 'item', item, cells });
          if (buffer.length >= 500) await flush();
        },
        async onInvalid(row) {
          buffer.push({ kind: 'invalid', row });
          if (buffer.length >= 500) await flush();
        },
      },
      readOptions,
    );
    await flush();
    const last = grouper.finish();
    if (last) {
      staged.push(last);
      requests++;
    }
    await stage(true);
  } catch (err) {
    notesOut.destroy();
    await deps.ledger.refuseBatch(batchId, { rows: 0, validRows: 0, invalidRows: 0, totalPiasters: 0n }, (err as Error).message);
    throw err;
  }
  notesOut.end();
  await once(notesOut, 'close');
  await rejectedOut?.close();

  const result = { batchId, sha256, rows: counts.rows, validRows, invalidRows, duplicateRows, warnedRows, reportDir, totalPiasters };
  const batchCounts = { rows: counts.rows, validRows, invalidRows, totalPiasters };
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
    log.warn({ total: formatPiasters(totalPiasters), limit: policy.maxBatchTotal }, 'batch refused: over the batch total limit');
    return { ...result, state: 'refused', requests: 0, refusalReason: reason };
  }
  const needsApproval =
    policy.requireApproval === true && requests > 0 && (policy.approvalThreshold === undefined || totalPiasters > toPiasters(policy.approvalThreshold));
  if (needsApproval) {
    const until = new Date(Date.now() + (policy.approvalExpiryHours ?? 72) * 3_600_000).toISOString();
    await deps.ledger.releaseBatch(batchId, { ...batchCounts, requests }, until);
    log.info({ requests, total: formatPiasters(totalPiasters), until }, 'batch awaits approval; nothing is sent before it');
    return { ...result, state: 'awaiting_approval', requests };
  }
  await deps.ledger.releaseBatch(batchId, { ...batchCounts, requests });
  await enqueueRequests(deps.queue, batchId, seqRange(1, requests));
  log.info({ requests, validRows, invalidRows, duplicateRows, warnedRows }, 'batch queued');
  return { ...result, state: requests === 0 ? 'finished' : 'queued', requests };
}

async function checkHeader(path: string, readOptions: ReadOptions): Promise<void> {
  for await (const record of readRecords(path, readOptions)) {
    indexHeader(record.cells);
    return;
  }
}
