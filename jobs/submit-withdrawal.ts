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
import { isSendRefusal, submitRequest, type SubmitDeps } from '../src/submit/submit-request.js';

/** What the processor needs besides `SubmitDeps`. */
export interface SubmitProcessorDeps extends SubmitDeps {
  readonly queue: Queue<SubmitJobData>;
  /** The worker running this processor (for queue-wide slow-down after a 429). */
  readonly worker: () => Worker | undefined;
  /** Called once when the last open request of a batch reached a final state. */
  readonly onBatchDone?: (batchId: string) => Promise<void>;
  /** Told when each job and each submission begins and ends (what a stopping worker waits for and leaves behind). */
  readonly tracker?: SubmissionTracker;
}

/** A withdrawal request of the ledger, named without personal data. */
export interface RequestRef {
  readonly batchId: string;
  readonly seq: number;
}

/**
 * The jobs and submissions this process is running, and, once its stop began, the submissions that
 * ended without the ledger confirming where the request stands: Redis failed part-way (the request
 * may be `pending` or `sending`), or the outcome could not be recorded before the stop's deadline.
 */
export class SubmissionTracker {
  private readonly running = new Map<string, RequestRef>();
  private readonly unconfirmed = new Map<string, RequestRef>();
  private stopping = false;
  private jobs = 0;
  private idleWaiters: (() => void)[] = [];

  /** A job's processor starts (a submission, then a split's new job or a batch's report). */
  jobStarted(): void {
    this.jobs++;
  }

  /** A job's processor ended. */
  jobEnded(): void {
    this.jobs--;
    if (this.jobs === 0) for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** True when no job's processor is running. */
  isIdle(): boolean {
    return this.jobs === 0;
  }

  /** Resolves once no job's processor is running. */
  idle(): Promise<void> {
    if (this.jobs === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** A submission of `ref` begins. */
  begin(ref: RequestRef): void {
    this.running.set(`${ref.batchId}:${ref.seq}`, ref);
  }

  /** The submission of `ref` ended; `confirmed`: the ledger answered (outcome recorded, or nothing sent). */
  end(ref: RequestRef, confirmed: boolean): void {
    const key = `${ref.batchId}:${ref.seq}`;
    this.running.delete(key);
    if (this.stopping && !confirmed) this.unconfirmed.set(key, ref);
  }

  /** The stop begins: from now on, submissions that end unconfirmed are kept for `leftForRecovery`. */
  beginStop(): void {
    this.stopping = true;
  }

  /** What the stop leaves for the recovery sweep: submissions still running, or ended unconfirmed since it began. */
  leftForRecovery(): RequestRef[] {
    const left = new Map([...this.unconfirmed, ...this.running]);
    return [...left.values()].sort((a, b) => a.batchId.localeCompare(b.batchId) || a.seq - b.seq);
  }
}

/** Result stored on a completed job (no personal data). */
export interface SubmitJobResult {
  readonly state: string;
  readonly childSeq?: number;
}

/** Builds the processor function. */
export function createSubmitProcessor(deps: SubmitProcessorDeps) {
  const run = async (job: Job): Promise<SubmitJobResult> => {
    const parsed = SubmitJobData.safeParse(job.data);
    if (!parsed.success)
      throw new UnrecoverableError('job data is not a submission ({ batchId, seq }); nothing was sent');
    const { batchId, seq } = parsed.data;
    let result;
    // Confirmed: the ledger answered. A typed refusal answers too; Redis errors and a give-up
    // (`redis_unreachable`) leave the request's state unconfirmed.
    let confirmed = false;
    deps.tracker?.begin({ batchId, seq });
    try {
      result = await submitRequest(deps, batchId, seq);
      confirmed = true;
    } catch (err) {
      confirmed = isCashoutError(err) && err.code !== 'redis_unreachable';
      if (isSendRefusal(err)) throw new UnrecoverableError(err.message);
      throw err;
    } finally {
      deps.tracker?.end({ batchId, seq }, confirmed);
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
      throw new UnrecoverableError(
        `request ${seq} of batch ${batchId}: outcome unknown, it may or may not have been created; reconcile it (cashout reconcile ${batchId})`,
      );
    }
    if (result.state === 'not_sent') {
      // Only for the message: a read that fails (Redis away) leaves the usual one.
      const stopped = (await deps.ledger.getBatch(batchId).catch(() => undefined))?.haltReason;
      const then = stopped
        ? `; the batch was stopped (${stopped}): nothing of it is sent again`
        : '; it can be retried';
      throw new UnrecoverableError(`request ${seq} of batch ${batchId} was not sent${then}`);
    }
    return { state: result.state };
  };
  return async (job: Job): Promise<SubmitJobResult> => {
    // Once a stop ran out of time no job starts: its request stays pending, queued again by the recovery sweep.
    if (deps.stop?.deadline.aborted) {
      throw new UnrecoverableError(`the worker was stopping: job ${job.id} did not start; nothing was sent`);
    }
    deps.tracker?.jobStarted();
    try {
      return await run(job);
    } finally {
      deps.tracker?.jobEnded();
    }
  };
}
