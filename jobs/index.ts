/**
 * Every job of the project on one screen, and the function that starts the workers.
 *
 * | queue            | job name           | processor              | options                                    |
 * |------------------|--------------------|------------------------|--------------------------------------------|
 * | cashout-submit   | submit-withdrawal  | submit-withdrawal.ts   | attempts 1, maxStalledCount 0, concurrency  |
 * | cashout-inbox    | scan-inbox         | scan-inbox.ts          | job scheduler `inbox-scan`: CASHOUT_SCHEDULE in CASHOUT_TIMEZONE (schedule.ts) |
 */
import { hostname } from 'node:os';
import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { Logger } from 'pino';
import { SUBMIT_QUEUE, SUBMIT_WORKER_SAFETY, type SubmitJobData } from '../src/queue/queues.js';
import type { Ledger } from '../src/submit/ledger.js';
import type { PaymentClient } from '../src/submit/payment-client.js';
import { recoverStuckRequests } from '../src/submit/recover-stuck.js';
import { createSubmitProcessor } from './submit-withdrawal.js';
import type { MetricsRegistry } from '../src/metrics.js';

/** Settings of the submit workers. */
export interface WorkerSettings {
  readonly connection: ConnectionOptions;
  readonly prefix: string;
  readonly concurrency: number;
  /** Requests per second across all workers; 0 = none. */
  readonly rateLimitPerSecond: number;
  readonly connectRetries: number;
  readonly connectBackoffMs: number;
  /** Longest a request may take (ms); a `sending` mark older than this with no active job is an unknown outcome. */
  readonly requestTimeoutMs: number;
  /** BullMQ lock duration and stalled-check interval, in ms (default 30000). */
  readonly jobLockMs?: number;
  readonly makeDurable?: () => Promise<void>;
  /** Metrics of this process, fed with each submission. */
  readonly metrics?: MetricsRegistry;
}

/** A running submit worker. */
export interface RunningWorker {
  readonly worker: Worker;
  /** Stops taking jobs, lets in-flight submissions finish and be recorded, then closes. */
  close(): Promise<void>;
}

/** Starts a submit worker and its crash-recovery sweep. */
export function startSubmitWorker(
  settings: WorkerSettings,
  deps: { ledger: Ledger; client: PaymentClient; log: Logger; queue: Queue<SubmitJobData>; onBatchDone?: (batchId: string) => Promise<void> },
): RunningWorker {
  const workerId = `${hostname()}:${process.pid}`;
  let worker: Worker | undefined;
  const processor = createSubmitProcessor({
    ledger: deps.ledger,
    client: deps.client,
    log: deps.log,
    workerId,
    connectRetries: settings.connectRetries,
    connectBackoffMs: settings.connectBackoffMs,
    queue: deps.queue,
    worker: () => worker,
    ...(settings.makeDurable ? { makeDurable: settings.makeDurable } : {}),
    ...(settings.metrics ? { observe: settings.metrics.observeSubmission } : {}),
    ...(deps.onBatchDone ? { onBatchDone: deps.onBatchDone } : {}),
  });
  worker = new Worker(SUBMIT_QUEUE, processor, {
    connection: settings.connection,
    prefix: settings.prefix,
    concurrency: settings.concurrency,
    ...SUBMIT_WORKER_SAFETY,
    lockDuration: settings.jobLockMs ?? 30_000,
    stalledInterval: settings.jobLockMs ?? 30_000,
    limiter: settings.rateLimitPerSecond > 0 ? { max: settings.rateLimitPerSecond, duration: 1000 } : { max: 1_000_000, duration: 1000 },
  });
  worker.on('failed', (job, err) => {
    deps.log.warn({ jobId: job?.id, reason: err.message }, 'submission job failed');
  });
  worker.on('error', (err) => deps.log.error({ err: err.message }, 'worker error'));

  let first = true;
  const sweep = async () => {
    try {
      await recoverStuckRequests({ ledger: deps.ledger, queue: deps.queue, log: deps.log, graceMs: settings.requestTimeoutMs + (settings.jobLockMs ?? 30_000), onBatchDone: deps.onBatchDone, checkPending: first });
      first = false;
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'recovery sweep failed; will try again');
    }
  };
  void sweep();
  const timer = setInterval(() => void sweep(), Math.min(15_000, settings.jobLockMs ?? 30_000));
  timer.unref();
  return {
    worker,
    async close() {
      clearInterval(timer);
      await worker!.close();
    },
  };
}
