/**
 * Processor of the submit queue: one job = one withdrawal request of the ledger. Thin: validates
 * the job data, calls `submitRequest`, and maps what must never run again by itself to BullMQ's
 * `UnrecoverableError`. Retrying such a job (from the dashboard or anywhere) re-runs this
 * processor, whose ledger check refuses to send a request that may already have been created.
 */
import { UnrecoverableError, Worker, type Job, type Queue } from 'bullmq';
import { isCashoutError } from '../src/errors.js';
import { SubmitJobData } from '../src/queue/queues.js';
import { enqueueRequests } from '../src/queue/enqueue-requests.js';
import { submitRequest, type SubmitDeps } from '../src/submit/submit-request.js';

/** What the processor needs besides `SubmitDeps`. */
export interface SubmitProcessorDeps extends SubmitDeps {
  readonly queue: Queue<SubmitJobData>;
  /** The worker running this processor (for queue-wide slow-down after a 429). */
  readonly worker: () => Worker | undefined;
  /** Called once when the last open request of a batch reached a final state. */
  readonly onBatchDone?: (batchId: string) => Promise<void>;
}

/** Result stored on a completed job (no personal data). */
export interface SubmitJobResult {
  readonly state: string;
  readonly childSeq?: number;
}

/** Builds the processor function. */
export function createSubmitProcessor(deps: SubmitProcessorDeps) {
  return async (job: Job): Promise<SubmitJobResult> => {
    const parsed = SubmitJobData.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError('job data is not a submission ({ batchId, seq }); nothing was sent');
    const { batchId, seq } = parsed.data;
    let result;
    try {
      result = await submitRequest(deps, batchId, seq);
    } catch (err) {
      if (isCashoutError(err, 'state_conflict') || isCashoutError(err, 'request_not_found')) throw new UnrecoverableError(err.message);
      throw err;
    }
    if (result.kind === 'rate_limited') {
      const worker = deps.worker();
      if (worker) await worker.rateLimit(result.retryAfterMs);
      throw Worker.RateLimitError();
    }
    if (result.kind === 'split') {
      await enqueueRequests(deps.queue, batchId, [result.childSeq]);
      return { state: 'rejected', childSeq: result.childSeq };
    }
    if (result.open === 0) await deps.onBatchDone?.(batchId);
    // Rows that need a person fail the job, so they stand out on the dashboard. Retrying such a job
    // re-runs this processor, and the ledger decides again: an unknown request is refused until a
    // person resolved it as not created; a not_sent one is sent.
    if (result.state === 'unknown') {
      throw new UnrecoverableError(`request ${seq} of batch ${batchId}: outcome unknown, it may or may not have been created; reconcile it (cashout reconcile ${batchId})`);
    }
    if (result.state === 'not_sent') throw new UnrecoverableError(`request ${seq} of batch ${batchId} was not sent; it can be retried`);
    return { state: result.state };
  };
}
