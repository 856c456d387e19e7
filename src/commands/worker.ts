/**
 * `cashout worker`: long-running submitter. Takes withdrawal requests from the queue, writes each
 * batch's report when its last request is final. SIGTERM/SIGINT: no new submission starts; the
 * in-flight ones finish and their outcomes are recorded, within the request timeout plus
 * `STOP_RECORD_GRACE_MS`, whatever Redis does. Exit 0 when every one was recorded; else
 * `EXIT_LEFT_FOR_RECOVERY`, with a log line naming the requests left for the recovery sweep.
 */
import { startNotifyWorker, startSubmitWorker, type RunningWorker } from '../../jobs/index.js';
import { requireSafeRedis } from '../queue/redis-safety.js';
import { reportAndNotifyDone } from '../notify/batch-events.js';
import { EXIT } from '../errors.js';
import { stopAsked, watchStopSignals } from '../stop-signals.js';
import { createMetrics, serveMetrics } from '../metrics.js';
import { serveProcessHealth } from '../health.js';
import { listenFailure } from '../listen-failure.js';
import { openQueues, paymentClientFor, serviceTarget, workerSettingsFor, type AppContext } from './context.js';

/**
 * Exit code of `cashout worker` stopped before every in-flight outcome was recorded (Redis away,
 * say): the requests named in its last log line are left in the ledger for the recovery sweep.
 */
export const EXIT_LEFT_FOR_RECOVERY = EXIT.leftForRecovery;

/** Time a stopping worker gives in-flight submissions after the request timeout to be recorded, in ms. */
export const STOP_RECORD_GRACE_MS = 2_000;

/** Longest wait for one of the worker's connections to close once it stopped, in ms; then it is dropped. */
const CLOSE_WAIT_MS = 1_000;

/** Runs until a stop signal; returns the exit code. */
export async function workerCommand(ctx: AppContext): Promise<number> {
  // A stop asked for while the worker is still starting is kept and honoured once it is up.
  watchStopSignals();
  const target = serviceTarget(ctx.config);
  const handles = await openQueues(ctx);
  let makeDurable;
  try {
    makeDurable = await requireSafeRedis(handles.redis, ctx.config.allowUnsafeRedis);
  } catch (err) {
    await handles.close();
    throw err;
  }
  const metrics = createMetrics({ queues: [handles.queue], ledger: handles.ledger });
  const metricsServer =
    ctx.config.metricsPort > 0
      ? await serveMetrics(metrics, ctx.config.dashboardHost, ctx.config.metricsPort).catch(async (err: unknown) => {
          await handles.close();
          throw listenFailure(err, ctx.config.dashboardHost, ctx.config.metricsPort, {
            port: 'CASHOUT_METRICS_PORT',
            host: 'CASHOUT_DASHBOARD_HOST',
          });
        })
      : undefined;
  // GET /healthz: 200 while both Redis connections answer and the queue worker runs (and is not stopping).
  let worker: RunningWorker | undefined;
  let stopping = false;
  const healthServer = await serveProcessHealth(
    ctx.config,
    handles,
    'worker',
    () => !stopping && worker !== undefined && worker.workers.every((w) => w.isRunning()),
  ).catch(async (err: unknown) => {
    await Promise.all([metricsServer?.close(), handles.close()]);
    throw err;
  });
  const client = paymentClientFor(ctx, target);
  // A batch's end: its report, then its notification (queued; delivered below, off the batch's path).
  const reportAndNotify = reportAndNotifyDone(handles.ledger, handles.notifier, ctx.log, { bom: ctx.config.csvBom });
  const secret = ctx.config.webhookSecret;
  const notifyWorker =
    ctx.config.webhookUrls.length > 0 && secret
      ? startNotifyWorker(
          { connection: handles.workerRedis, prefix: handles.prefix },
          {
            secret,
            timeoutMs: ctx.config.webhookTimeoutMs,
            redis: handles.redis,
            prefix: handles.prefix,
            log: ctx.log,
          },
        )
      : undefined;
  worker = startSubmitWorker(workerSettingsFor(ctx, handles, target.baseUrl, { makeDurable, metrics }), {
    ledger: handles.ledger,
    client,
    log: ctx.log,
    queue: handles.queue,
    onBatchDone: async (batchId) => {
      await reportAndNotify(batchId);
    },
  });
  ctx.log.info({ concurrency: ctx.config.concurrency, service: target.baseUrl }, 'worker started');
  await stopAsked();
  stopping = true;
  const budgetMs = ctx.config.requestTimeoutMs + STOP_RECORD_GRACE_MS;
  ctx.log.info({ withinMs: budgetMs }, 'stopping: no new submission starts; in-flight ones finish and are recorded');
  const stopped = await worker.stop(Date.now() + budgetMs);
  // A delivery in flight is not waited for: it is tried again by the next worker.
  await closeWithin(() => notifyWorker?.close());
  const dropRedis = () => {
    handles.workerRedis.disconnect();
    handles.redis.disconnect();
  };
  if (stopped.forced) dropRedis();
  await Promise.all([
    closeWithin(() => metricsServer?.close()),
    closeWithin(() => healthServer?.close()),
    closeWithin(() => client.close()),
    stopped.forced ? undefined : closeWithin(() => handles.close(), dropRedis),
  ]);
  const left = stopped.leftForRecovery;
  if (left.length === 0) {
    ctx.log.info('worker stopped; every in-flight submission was recorded');
    return EXIT.ok;
  }
  const byBatch = new Map<string, number[]>();
  for (const r of left) byBatch.set(r.batchId, [...(byBatch.get(r.batchId) ?? []), r.seq]);
  const named = [...byBatch].map(([batchId, seqs]) => `batch ${batchId} request ${seqs.join(', ')}`);
  ctx.log.error(
    { left: left.map((r) => ({ batchId: r.batchId, seq: r.seq })), exitCode: EXIT_LEFT_FOR_RECOVERY },
    `worker stopped before recording ${left.length} in-flight submission(s): ${named.join('; ')}. ` +
      'They stay in the ledger for the recovery sweep of a running worker ' +
      '(a sending request becomes unknown, to reconcile; a pending one is queued again)',
  );
  return EXIT_LEFT_FOR_RECOVERY;
}

/** Runs `close`, waiting for it at most `CLOSE_WAIT_MS`; then (or when it fails) runs `drop`, if any. */
async function closeWithin(close: () => Promise<void> | undefined, drop?: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    Promise.resolve()
      .then(close)
      .then(
        () => true,
        () => false,
      ),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), CLOSE_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (!closed) drop?.();
}
