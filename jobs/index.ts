/**
 * Every job of the project on one screen, and the function that starts the workers.
 *
 * | queue            | job name           | processor              | options                                    |
 * |------------------|--------------------|------------------------|--------------------------------------------|
 * | cashout-submit   | submit-withdrawal  | submit-withdrawal.ts   | attempts 1, maxStalledCount 0, concurrency  |
 * | cashout-inbox    | scan-inbox         | scan-inbox.ts          | job scheduler `inbox-scan`: CASHOUT_SCHEDULE in CASHOUT_TIMEZONE (schedule.ts) |
 * | cashout-notify   | deliver-notification | deliver-notification.ts | attempts CASHOUT_WEBHOOK_ATTEMPTS, exponential backoff from CASHOUT_WEBHOOK_BACKOFF_MS; one job per address |
 */
export { startNotifyWorker, type NotifyWorker } from './deliver-notification.js';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { Queue, Worker, type ConnectionOptions } from 'bullmq';
import type { Logger } from 'pino';
import { SUBMIT_QUEUE, SUBMIT_WORKER_SAFETY, type SubmitJobData } from '../src/queue/queues.js';
import type { Ledger } from '../src/ledger/index.js';
import type { PaymentClient } from '../src/submit/payment-client.js';
import { recoverStuckRequests } from '../src/submit/recover-stuck.js';
import { createSubmitProcessor, SubmissionTracker, type RequestRef } from './submit-withdrawal.js';
import type { MetricsRegistry } from '../src/metrics.js';
import { CONFIG_DEFAULTS } from '../src/config.js';
import { redisErrorText } from '../src/queue/connection.js';

/** Settings of the submit workers. */
export interface WorkerSettings {
  readonly connection: ConnectionOptions;
  readonly prefix: string;
  /** The service address this worker sends to (`serviceAddress`); a batch imported for another is not sent. */
  readonly serviceUrl?: string;
  readonly concurrency: number;
  /** Requests per second across all workers; 0 = none. */
  readonly rateLimitPerSecond: number;
  readonly connectRetries: number;
  readonly connectBackoffMs: number;
  /** Longest a request may take (ms); a `sending` mark older than this with no active job is an unknown outcome. */
  readonly requestTimeoutMs: number;
  /** BullMQ lock duration and stalled-check interval, in ms (default `CONFIG_DEFAULTS.jobLockMs`). */
  readonly jobLockMs?: number;
  readonly makeDurable?: () => Promise<void>;
  /** Metrics of this process, fed with each submission. */
  readonly metrics?: MetricsRegistry;
  /**
   * False: connect and get ready, but take no job (and run no recovery sweep) until `start()`.
   * Default true.
   */
  readonly autorun?: boolean;
}

/** A running submit worker. */
export interface RunningWorker {
  /** The BullMQ workers that share its concurrency (see `concurrencyShares`). */
  readonly workers: readonly Worker[];
  /** Resolves once its Redis connections are ready (rejects when they cannot be made). */
  ready(): Promise<void>;
  /** Starts taking jobs and the recovery sweep, for a worker made with `autorun: false`; else nothing. */
  start(): void;
  /** Stops taking jobs, lets in-flight submissions finish and be recorded, then closes. */
  close(): Promise<void>;
  /**
   * Stops taking jobs and lets the running ones finish (their outcomes recorded), until `deadline`
   * (ms since the epoch) at the latest, whatever Redis does: then outcome writes are given up.
   * Closes the BullMQ workers without waiting for Redis; the caller closes the shared connections.
   * Never rejects.
   */
  stop(deadline: number): Promise<StopReport>;
}

/** What a stop left behind. */
export interface StopReport {
  /**
   * Requests whose state the ledger did not confirm when the stop ended: a `sending` one becomes
   * `unknown` through the recovery sweep, a `pending` one is queued again. Empty: all recorded.
   */
  readonly leftForRecovery: readonly RequestRef[];
  /** The deadline passed with jobs still running: the caller drops its Redis connections rather than wait. */
  readonly forced: boolean;
}

/** Longest wait for a stopping worker's BullMQ workers to close, in ms. */
const FORCED_CLOSE_MS = 1_000;

/** Time from a worker's start to its first recovery sweep, in ms. */
const FIRST_SWEEP_DELAY_MS = 500;

/** Most jobs one BullMQ worker of the process runs at once. */
const JOBS_PER_BULLMQ_WORKER = 10;

/**
 * How `concurrency` jobs in flight are shared among the process's BullMQ workers: shares of at
 * most 10 (sum = `concurrency`). A BullMQ worker takes its first jobs one after another before it
 * starts any; several of them take theirs side by side, so all requests are sent sooner at start.
 */
export function concurrencyShares(concurrency: number): number[] {
  const count = Math.max(1, Math.ceil(concurrency / JOBS_PER_BULLMQ_WORKER));
  return Array.from({ length: count }, (_, i) => Math.floor(concurrency / count) + (i < concurrency % count ? 1 : 0));
}

/**
 * Starts a submit worker (BullMQ; `settings.concurrency` jobs at once in this process, shared by
 * `concurrencyShares`; the queue-wide rate limit) and its crash-recovery sweep: at once, or at
 * `start()` with `autorun: false`.
 */
export function startSubmitWorker(
  settings: WorkerSettings,
  deps: {
    ledger: Ledger;
    client: PaymentClient;
    log: Logger;
    queue: Queue<SubmitJobData>;
    onBatchDone?: (batchId: string) => Promise<void>;
  },
): RunningWorker {
  const workerId = `${hostname()}:${process.pid}`;
  const jobLockMs = settings.jobLockMs ?? CONFIG_DEFAULTS.jobLockMs;
  const workers: Worker[] = [];
  const tracker = new SubmissionTracker();
  const stopping = new AbortController();
  const deadline = new AbortController();
  // Every outcome write and pause in flight listens on them: as many as the concurrency.
  setMaxListeners(0, stopping.signal, deadline.signal);
  const processor = createSubmitProcessor({
    ledger: deps.ledger,
    client: deps.client,
    log: deps.log,
    workerId,
    ...(settings.serviceUrl === undefined ? {} : { serviceUrl: settings.serviceUrl }),
    connectRetries: settings.connectRetries,
    connectBackoffMs: settings.connectBackoffMs,
    queue: deps.queue,
    // A slow-down after a 429 is queue-wide: any of the workers may set it.
    worker: () => workers[0],
    ...(settings.makeDurable ? { makeDurable: settings.makeDurable } : {}),
    ...(settings.metrics ? { observe: settings.metrics.observeSubmission } : {}),
    ...(deps.onBatchDone ? { onBatchDone: deps.onBatchDone } : {}),
    tracker,
    stop: { stopping: stopping.signal, deadline: deadline.signal },
  });
  for (const share of concurrencyShares(settings.concurrency)) {
    const worker = new Worker(SUBMIT_QUEUE, processor, {
      connection: settings.connection,
      prefix: settings.prefix,
      concurrency: share,
      ...SUBMIT_WORKER_SAFETY,
      lockDuration: jobLockMs,
      stalledInterval: jobLockMs,
      limiter:
        settings.rateLimitPerSecond > 0
          ? { max: settings.rateLimitPerSecond, duration: 1000 }
          : { max: 1_000_000, duration: 1000 },
      autorun: false,
    });
    worker.on('failed', (job, err) => {
      deps.log.warn({ jobId: job?.id, reason: err.message }, 'submission job failed');
    });
    worker.on('error', (err) => deps.log.error({ err: redisErrorText(err) }, 'worker error'));
    workers.push(worker);
  }

  let first = true;
  const sweep = async () => {
    try {
      await recoverStuckRequests({
        ledger: deps.ledger,
        queue: deps.queue,
        log: deps.log,
        graceMs: settings.requestTimeoutMs + jobLockMs,
        onBatchDone: deps.onBatchDone,
        checkPending: first,
        serviceUrl: settings.serviceUrl,
      });
      first = false;
    } catch (err) {
      deps.log.warn({ err: (err as Error).message }, 'recovery sweep failed; will try again');
    }
  };
  let firstSweep: NodeJS.Timeout | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  const start = () => {
    if (running) return;
    running = Promise.all(
      workers.map((w) => w.run().catch((err: Error) => deps.log.error({ err: err.message }, 'worker error'))),
    );
    // Recovery is not urgent: the first sweep waits until the first requests are on their way.
    firstSweep = setTimeout(() => void sweep(), FIRST_SWEEP_DELAY_MS);
    firstSweep.unref();
    timer = setInterval(() => void sweep(), Math.min(15_000, jobLockMs));
    timer.unref();
  };
  if (settings.autorun !== false) start();
  return {
    workers,
    ready: () => Promise.all(workers.map((w) => w.waitUntilReady())).then(() => undefined),
    start,
    async close() {
      clearTimeout(firstSweep);
      clearInterval(timer);
      await Promise.all(workers.map((w) => w.close()));
      await running;
    },
    async stop(deadlineAt) {
      clearTimeout(firstSweep);
      clearInterval(timer);
      tracker.beginStop();
      stopping.abort();
      // No new job: BullMQ stops fetching, without waiting for Redis or for the running jobs.
      await Promise.all(workers.map((w) => w.pause(true).catch(() => undefined)));
      const untilDeadline = setTimeout(() => deadline.abort(), Math.max(0, deadlineAt - Date.now()));
      const timeUp = new Promise<false>((resolve) => {
        if (deadline.signal.aborted) resolve(false);
        deadline.signal.addEventListener('abort', () => resolve(false), { once: true });
      });
      const inTime = await Promise.race([tracker.idle().then(() => true as const), timeUp]);
      clearTimeout(untilDeadline);
      // By the next turn BullMQ has sent the last jobs' completions on the shared connection,
      // which the caller closes after them. Then no job starts and unrecorded outcomes are given up.
      await new Promise((resolve) => setImmediate(resolve));
      deadline.abort();
      // close(true) waits neither for jobs nor for Redis: lock renewal and stalled checks stop,
      // the blocking connection is dropped.
      let closeTimer: NodeJS.Timeout | undefined;
      const closed = Promise.all(workers.map((w) => w.close(true).catch(() => undefined)));
      await Promise.race([closed, new Promise((resolve) => (closeTimer = setTimeout(resolve, FORCED_CLOSE_MS)))]);
      clearTimeout(closeTimer);
      return { leftForRecovery: tracker.leftForRecovery(), forced: !inTime };
    },
  };
}
