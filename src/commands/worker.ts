/**
 * `cashout worker`: long-running submitter. Takes withdrawal requests from the queue, writes each
 * batch's report when its last request is final. SIGTERM/SIGINT: no new submission starts,
 * in-flight ones finish (bounded by the request timeout) and are recorded, then exit 0.
 */
import { startSubmitWorker } from '../../jobs/index.js';
import { requireSafeRedis } from '../queue/redis-safety.js';
import { writeReport } from '../results/write-report.js';
import { EXIT } from '../errors.js';
import { createMetrics, serveMetrics } from '../metrics.js';
import { openQueues, paymentClientFor, serviceTarget, workerSettingsFor, type AppContext } from './context.js';

/** Runs until a stop signal; returns the exit code. */
export async function workerCommand(ctx: AppContext): Promise<number> {
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
  const metricsServer = ctx.config.metricsPort > 0 ? await serveMetrics(metrics, ctx.config.dashboardHost, ctx.config.metricsPort) : undefined;
  const client = paymentClientFor(ctx, target);
  const worker = startSubmitWorker(
    workerSettingsFor(ctx, handles, { makeDurable, metrics }),
    {
      ledger: handles.ledger,
      client,
      log: ctx.log,
      queue: handles.queue,
      onBatchDone: async (batchId) => {
        const s = await writeReport(handles.ledger, batchId);
        ctx.log.info({ batchId, state: s.batchState, accepted: s.byStatus.accepted.rows, rows: s.rows }, 'batch finished; report written');
      },
    },
  );
  ctx.log.info({ concurrency: ctx.config.concurrency, service: target.baseUrl }, 'worker started');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  ctx.log.info('stopping: in-flight submissions finish and are recorded');
  await worker.close();
  await metricsServer?.close();
  await client.close();
  await handles.close();
  return EXIT.ok;
}
