/**
 * Maker-checker commands. `approve` lets someone other than the importer release a batch that
 * awaits approval (its requests are queued; workers send them); `cancel` stops such a batch for
 * good. Both are recorded with the person's name and shown in the batch's reports.
 */
import { CashoutError, EXIT } from '../errors.js';
import { isBatchId } from '../batch/batch-id.js';
import { enqueueRequests, seqRange } from '../queue/enqueue-requests.js';
import { writeReport } from '../results/write-report.js';
import type { Ledger } from '../submit/ledger.js';
import type { Queue } from 'bullmq';
import type { SubmitJobData } from '../queue/queues.js';
import { actorName, openQueues, type AppContext } from './context.js';

/** Approves a batch as `by` and queues its requests; returns how many were queued. Throws `state_conflict` as `Ledger.approveBatch` does. */
export async function approveBatch(ledger: Ledger, queue: Queue<SubmitJobData>, batchId: string, by: string): Promise<number> {
  const requests = await ledger.approveBatch(batchId, by);
  await enqueueRequests(queue, batchId, seqRange(1, requests));
  return requests;
}

function checkId(batchId: string): void {
  if (!isBatchId(batchId)) throw new CashoutError('usage', `"${batchId}" is not a batch id (16 hexadecimal digits, as printed by run and import)`);
}

/** `cashout approve <batch-id> [--as name]`. */
export async function approveCommand(ctx: AppContext, batchId: string, opts: { as?: string }): Promise<number> {
  checkId(batchId);
  const by = actorName(opts.as);
  const h = await openQueues(ctx);
  try {
    const n = await approveBatch(h.ledger, h.queue, batchId, by);
    ctx.log.info({ batchId, by, requests: n }, 'batch approved');
    process.stdout.write(`Batch ${batchId} approved by ${by}: ${n} withdrawal requests queued; a running "cashout worker" sends them.\n`);
    return EXIT.ok;
  } finally {
    await h.close();
  }
}

/** `cashout cancel <batch-id> --note … [--as name]`. */
export async function cancelCommand(ctx: AppContext, batchId: string, opts: { as?: string; note: string }): Promise<number> {
  checkId(batchId);
  const by = actorName(opts.as);
  const h = await openQueues(ctx);
  try {
    await h.ledger.cancelBatch(batchId, by, opts.note);
    await writeReport(h.ledger, batchId);
    ctx.log.info({ batchId, by }, 'batch cancelled');
    process.stdout.write(`Batch ${batchId} cancelled by ${by}; nothing of it will be sent.\n`);
    return EXIT.ok;
  } finally {
    await h.close();
  }
}
