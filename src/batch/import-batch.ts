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
import { hashFile, readRecords, sniffFile } from '../import/read-rows.js';
import { indexHeader } from '../import/columns.js';
import { scanFile } from '../import/scan-file.js';
import type { RowRules } from '../import/validate-row.js';
import type { Ledger } from '../submit/ledger.js';
import { enqueueRequests, seqRange } from '../queue/enqueue-requests.js';
import type { SubmitJobData } from '../queue/queues.js';
import { openCsvOut, type CsvOut } from '../results/csv-out.js';

/** Names of the files in a batch's report folder. */
export const BATCH_FILES = {
  input: 'input.csv',
  invalid: 'invalid-rows.jsonl',
  rejected: 'rejected-rows.csv',
  results: 'results.csv',
  summary: 'summary.json',
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
}

/** Options of one import. */
export interface ImportOptions {
  /** Queue the valid rows even when some rows are invalid. */
  readonly partial?: boolean;
  readonly delimiter?: string;
}

/** What an import did. */
export interface ImportResult {
  readonly batchId: string;
  readonly sha256: string;
  readonly state: 'queued' | 'refused' | 'finished';
  readonly rows: number;
  readonly validRows: number;
  readonly invalidRows: number;
  readonly requests: number;
  readonly reportDir: string;
}

/** Imports one payout file. Throws `CashoutError` for file-level problems and for content imported before (`batch_exists`). */
export async function importBatch(deps: ImportDeps, path: string, options: ImportOptions = {}): Promise<ImportResult> {
  await sniffFile(path);
  const { sha256 } = await hashFile(path);
  const batchId = batchIdFromSha256(sha256);
  const reportDir = join(deps.reportsDir, batchId);
  const log = deps.log.child({ batchId });
  await mkdir(reportDir, { recursive: true, mode: 0o700 });

  // Check the header before anything is recorded, so a file-level problem leaves no trace in Redis.
  await checkHeader(path, options.delimiter);

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
  });
  await copyFile(path, join(reportDir, BATCH_FILES.input));
  await chmod(join(reportDir, BATCH_FILES.input), 0o600);

  const invalidOut = createWriteStream(join(reportDir, BATCH_FILES.invalid), { mode: 0o600 });
  let rejectedOut: CsvOut | undefined;
  let header: readonly string[] = [];
  const grouper = createGrouper(deps.itemsPerRequest);
  let staged: WithdrawalRequest[] = [];
  let requests = 0;
  const stage = async (force: boolean) => {
    if (staged.length === 0 || (!force && staged.length < 50)) return;
    await deps.ledger.stageRequests(batchId, staged);
    staged = [];
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
        async onItem(item) {
          const req = grouper.add(item);
          if (req) {
            staged.push(req);
            requests++;
            await stage(false);
          }
        },
        async onInvalid(row) {
          if (!invalidOut.write(`${JSON.stringify({ line: row.line, issues: row.issues })}\n`)) await once(invalidOut, 'drain');
          rejectedOut ??= openCsvOut(join(reportDir, BATCH_FILES.rejected), header);
          await rejectedOut.write(row.cells);
        },
      },
      options.delimiter === undefined ? {} : { delimiter: options.delimiter },
    );
    const last = grouper.finish();
    if (last) {
      staged.push(last);
      requests++;
    }
    await stage(true);
  } catch (err) {
    invalidOut.destroy();
    await deps.ledger.refuseBatch(batchId, 0, 0, 0);
    throw err;
  }
  invalidOut.end();
  await once(invalidOut, 'close');
  await rejectedOut?.close();

  if (counts.invalidRows > 0 && !options.partial) {
    await deps.ledger.refuseBatch(batchId, counts.validRows, counts.invalidRows, counts.rows);
    log.warn({ invalidRows: counts.invalidRows }, 'batch refused: the file has invalid rows; nothing was queued');
    return { batchId, sha256, state: 'refused', ...counts, requests: 0, reportDir };
  }
  await deps.ledger.releaseBatch(batchId, requests, counts.validRows, counts.invalidRows, counts.rows);
  await enqueueRequests(deps.queue, batchId, seqRange(1, requests));
  log.info({ requests, validRows: counts.validRows, invalidRows: counts.invalidRows }, 'batch queued');
  return { batchId, sha256, state: requests === 0 ? 'finished' : 'queued', ...counts, requests, reportDir };
}

async function checkHeader(path: string, delimiter: string | undefined): Promise<void> {
  for await (const record of readRecords(path, delimiter === undefined ? {} : { delimiter })) {
    indexHeader(record.cells);
    return;
  }
}
