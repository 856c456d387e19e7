/**
 * Crash recovery for the ledger. A worker that dies while a request is `sending` leaves no proof
 * of whether the POST reached the service: after the grace time, with no worker holding the job,
 * the request becomes `unknown` (parked for a person, never sent again by itself). A request still
 * `pending` whose job is gone or failed before sending is queued again: pending means never sent.
 * A batch still awaiting approval after its deadline is cancelled.
 */
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { requestJobId } from '../batch/batch-id.js';
import { enqueueRequests } from '../queue/enqueue-requests.js';
import type { SubmitJobData } from '../queue/queues.js';
import type { Ledger } from './ledger.js';

/** What the sweep needs. `graceMs`: how old a `sending` mark must be before it is judged. */
export interface RecoverDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<SubmitJobData>;
  readonly log: Logger;
  readonly graceMs: number;
  readonly onBatchDone?: ((batchId: string) => Promise<void>) | undefined;
  /** Also look at every pending request (costly; done at start-up). */
  readonly checkPending?: boolean;
}

/** Runs one sweep over the open batches. Returns how many requests it changed. */
export async function recoverStuckRequests(deps: RecoverDeps): Promise<number> {
  const { ledger, queue, log } = deps;
  let changed = 0;
  for (const batch of await ledger.listBatches(1000)) {
    if (batch.state === 'awaiting_approval' && batch.expiresAt !== undefined && Date.parse(batch.expiresAt) < Date.now()) {
      try {
        await ledger.cancelBatch(batch.id, 'bulk-cashout', `not approved before ${batch.expiresAt}`, true);
        log.warn({ batchId: batch.id }, 'batch not approved in time: cancelled');
        changed++;
        await deps.onBatchDone?.(batch.id);
      } catch {
        // approved or cancelled meanwhile
      }
      continue;
    }
    if (batch.state !== 'queued' && batch.state !== 'halted') continue;
    for (const seq of await ledger.sendingSeqs(batch.id)) {
      const request = await ledger.getRequest(batch.id, seq);
      if (request?.state !== 'sending' || !request.sendingAt) continue;
      if (Date.now() - Date.parse(request.sendingAt) < deps.graceMs) continue;
      const job = await queue.getJob(requestJobId(batch.id, seq));
      const state = job ? await job.getState() : 'missing';
      if (state === 'active') continue;
      const open = await ledger.finish(batch.id, seq, {
        state: 'unknown',
        message: 'the worker stopped while this request was being sent; it may or may not have been created',
      });
      changed++;
      log.warn({ batchId: batch.id, seq }, 'request left in sending by a stopped worker is now unknown; reconcile it');
      if (open === 0) await deps.onBatchDone?.(batch.id);
    }
    // Jobs that failed before their request was taken (e.g. Redis was away): still pending, never sent.
    for (const job of await queue.getFailed(0, 999)) {
      const data = job.data as Partial<SubmitJobData>;
      if (data.batchId !== batch.id || typeof data.seq !== 'number') continue;
      const request = await ledger.getRequest(batch.id, data.seq);
      if (request?.state === 'pending') {
        await job.retry('failed');
        changed++;
      }
    }
    if (deps.checkPending) {
      const last = await ledger.lastSeq(batch.id);
      for (let seq = 1; seq <= last; seq++) {
        if ((await ledger.getRequest(batch.id, seq))?.state !== 'pending') continue;
        const job = await queue.getJob(requestJobId(batch.id, seq));
        const state = job ? await job.getState() : 'missing';
        // Read the ledger again after the job: a job that ran meanwhile may have moved the request on.
        if ((await ledger.getRequest(batch.id, seq))?.state !== 'pending') continue;
        if (state === 'missing') {
          await enqueueRequests(queue, batch.id, [seq]);
          changed++;
        } else if (state === 'failed' || state === 'completed') {
          await job!.retry(state);
          changed++;
        }
      }
    }
  }
  return changed;
}
