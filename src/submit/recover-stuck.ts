/**
 * Crash recovery for the ledger. A worker that dies while a request is `sending` leaves no proof
 * of whether the POST reached the service: after the grace time, with no worker holding the job,
 * the request becomes `unknown` (parked for a person, never sent again by itself). A request still
 * `pending` whose job is gone or failed before sending is queued again: pending means never sent.
 * A batch still awaiting approval after its deadline is cancelled, and an import that stopped
 * mid-file (`staging` for longer than `STALE_STAGING_MS`) is refused.
 */
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { requestJobId } from '../batch-id.js';
import { enqueueRequests } from '../queue/enqueue-requests.js';
import type { SubmitJobData } from '../queue/queues.js';
import type { Ledger } from '../ledger/index.js';
import { STALE_STAGING_MS } from '../ledger/lifecycle.js';

/** What the sweep needs. `graceMs`: how old a `sending` mark must be before it is judged. */
export interface RecoverDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<SubmitJobData>;
  readonly log: Logger;
  readonly graceMs: number;
  readonly onBatchDone?: ((batchId: string) => Promise<void>) | undefined;
  /** Also look at every pending request (costly; done at start-up). */
  readonly checkPending?: boolean;
  /**
   * The service address of the worker running the sweep: batches imported for another address are
   * left to that service's workers (their jobs are not queued again here). Absent: every batch.
   */
  readonly serviceUrl?: string | undefined;
}

/** Requests whose ledger state is read in one round trip by the start-up pass. */
const PENDING_CHUNK = 500;

/** Job states in which a job will still run by itself: its pending request needs nothing. */
const LIVE_JOB_STATES = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;

/**
 * Runs one sweep over the open batches (the 1,000 newest). Returns how many requests it changed.
 * Reads the ledger and the queue only; a Redis error stops the sweep (the next one starts over).
 */
export async function recoverStuckRequests(deps: RecoverDeps): Promise<number> {
  const { ledger, queue, log } = deps;
  let changed = 0;
  // Failed jobs, and (start-up pass) the ids of jobs that will still run, are read once per sweep.
  let failedJobs: Awaited<ReturnType<typeof queue.getFailed>> | undefined;
  let liveJobIds: Set<string> | undefined;
  for (const batch of await ledger.listBatches(1000)) {
    if (
      batch.state === 'awaiting_approval' &&
      batch.expiresAt !== undefined &&
      Date.parse(batch.expiresAt) < Date.now()
    ) {
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
    if (batch.state === 'staging' && Date.now() - Date.parse(batch.createdAt) > STALE_STAGING_MS) {
      const reason = `the import stopped before it finished (still being imported ${Math.round(STALE_STAGING_MS / 3_600_000)} hours after it began); nothing of it was sent; import the file again`;
      if (await ledger.refuseBatch(batch.id, batch, reason)) {
        log.warn({ batchId: batch.id }, 'an import that stopped mid-file was refused; its payees are free again');
        changed++;
      }
      continue;
    }
    if (batch.state !== 'queued' && batch.state !== 'halted') continue;
    const ours = !deps.serviceUrl || !batch.serviceUrl || batch.serviceUrl === deps.serviceUrl;
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
    // Jobs that failed before their request was taken (e.g. Redis was away, or a worker of another
    // service refused them): still pending, never sent. Only a worker of the batch's service queues them.
    if (!ours) continue;
    failedJobs ??= await queue.getFailed(0, 999);
    for (const job of failedJobs) {
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
      for (let from = 1; from <= last; from += PENDING_CHUNK) {
        const seqs: number[] = [];
        for (let seq = from; seq <= Math.min(last, from + PENDING_CHUNK - 1); seq++) seqs.push(seq);
        const states = await ledger.requestStates(batch.id, seqs);
        const pending = seqs.filter((_, i) => states[i] === 'pending');
        if (pending.length === 0) continue;
        // A pending request whose job will still run needs nothing; only the others are looked at
        // one by one. A job that left those states since the snapshot is looked at one by one too.
        liveJobIds ??= new Set(await queue.getRanges([...LIVE_JOB_STATES], 0, -1));
        for (const seq of pending) {
          const jobId = requestJobId(batch.id, seq);
          if (liveJobIds.has(jobId)) continue;
          const state = await queue.getJobState(jobId);
          // Read the ledger again after the job: a job that ran meanwhile may have moved the request on.
          if ((await ledger.requestStates(batch.id, [seq]))[0] !== 'pending') continue;
          if (state === 'unknown') {
            await enqueueRequests(queue, batch.id, [seq]);
            changed++;
          } else if (state === 'failed' || state === 'completed') {
            const job = await queue.getJob(jobId);
            if (!job) continue; // removed meanwhile: the next sweep queues it again
            await job.retry(state);
            changed++;
          }
        }
      }
    }
  }
  return changed;
}
