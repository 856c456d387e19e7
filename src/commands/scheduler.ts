/**
 * `cashout scheduler [--once]`: the scheduled inbox.
 *
 * Without `--once`: registers the job scheduler of the `cashout-inbox` queue (CASHOUT_SCHEDULE
 * cron in CASHOUT_TIMEZONE, idempotent) and runs a worker whose job is one scan of
 * CASHOUT_INBOX_DIR, until SIGTERM/SIGINT: the scan in hand finishes the file it is importing,
 * then the process exits 0. Daylight-saving behaviour: see jobs/schedule.ts.
 *
 * Needs the service address (CASHOUT_API_BASE_URL), not the token: a batch records the address,
 * and the token's fingerprint only when the token is set. With CASHOUT_HEALTH_PORT, serves GET
 * /healthz (200 while its Redis connections answer and its scan worker runs).
 *
 * With `--once`: one scan now, in this process. Exit 0 when every file taken was imported (or
 * nothing was there), 1 when some file was not (it is in `failed/` with a note, or left in
 * `processing/` for a later scan after an error that was not the file's fault).
 */
import { relative } from 'node:path';
import { Queue } from 'bullmq';
import { createScanInboxProcessor } from '../../jobs/scan-inbox.js';
import { INBOX_QUEUE, checkInboxSchedule, registerInboxSchedule, startInboxWorker } from '../../jobs/schedule.js';
import { createInboxImporter } from '../inbox/inbox-import.js';
import { scanInbox, type ScanDeps, type ScanReport } from '../inbox/scan-inbox.js';
import { requireSafeRedis } from '../queue/redis-safety.js';
import { EXIT } from '../errors.js';
import { serveProcessHealth } from '../health.js';
import { importDeps, importTarget, openQueues, type AppContext } from './context.js';
import { logQueueErrors } from '../queue/connection.js';

/** Runs the scheduler; returns the exit code. */
export async function schedulerCommand(ctx: AppContext, opts: { once?: boolean }): Promise<number> {
  const target = importTarget(ctx.config);
  const schedule = opts.once
    ? undefined
    : checkInboxSchedule({ pattern: ctx.config.schedule, tz: ctx.config.timezone });
  const handles = await openQueues(ctx);
  let stopping = false;
  let wake: (() => void) | undefined;
  // The first SIGTERM/SIGINT stops the scan in hand after its current file, and the scheduler.
  const onSignal = () => {
    stopping = true;
    wake?.();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await requireSafeRedis(handles.redis, ctx.config.allowUnsafeRedis);
    const importer = createInboxImporter(importDeps(ctx, handles, target.baseUrl, target.token), {
      importedBy: 'scheduler',
      importedByUser: 'scheduler',
    });
    const scanDeps: ScanDeps = {
      inboxDir: ctx.config.inboxDir,
      settleSeconds: ctx.config.inboxSettleSeconds,
      log: ctx.log,
      importFile: importer.importFile,
      existingBatch: importer.existingBatch,
      shouldStop: () => stopping,
    };

    if (!schedule) {
      const report = await scanInbox(scanDeps);
      process.stdout.write(formatScan(report, ctx.config.inboxDir));
      return report.taken.every((t) => t.result === 'done') ? EXIT.ok : EXIT.notAllAccepted;
    }

    const inboxQueue = new Queue(INBOX_QUEUE, { connection: handles.workerRedis, prefix: handles.prefix });
    logQueueErrors(inboxQueue, ctx.log, 'inbox queue');
    try {
      const next = await registerInboxSchedule(inboxQueue, schedule);
      const worker = startInboxWorker(
        { connection: handles.workerRedis, prefix: handles.prefix },
        createScanInboxProcessor(scanDeps),
        ctx.log,
      );
      const health = await serveProcessHealth(
        ctx.config,
        handles,
        'scheduler',
        () => !stopping && worker.isRunning(),
      ).catch(async (err: unknown) => {
        await worker.close();
        throw err;
      });
      ctx.log.info(
        {
          inbox: ctx.config.inboxDir,
          schedule: schedule.pattern,
          tz: schedule.tz,
          next: next === undefined ? undefined : new Date(next).toISOString(),
        },
        'scheduler started',
      );
      if (!stopping) await new Promise<void>((resolve) => (wake = resolve));
      ctx.log.info('stopping: the scan in hand finishes its current file');
      await health?.close();
      await worker.close();
    } finally {
      await inboxQueue.close();
    }
    return EXIT.ok;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await handles.close();
  }
}

/** What `--once` prints: one line per file taken, then what was left. */
export function formatScan(report: ScanReport, inboxDir: string): string {
  const out: string[] = [];
  for (const t of report.taken) {
    const where =
      t.result === 'retry'
        ? `(left at ${relative(inboxDir, t.path)}; a later scan takes it again)`
        : `→ ${relative(inboxDir, t.path)}`;
    out.push(`${t.result.padEnd(6)} ${t.name}: ${t.outcome}${t.batchId ? ` (batch ${t.batchId})` : ''} ${where}`);
  }
  for (const r of report.refused) out.push(`left   ${r.name}: ${r.reason}`);
  const settling = report.waiting.filter((name) => !report.unfinished.includes(name));
  if (settling.length > 0) out.push(`waiting (not complete yet): ${settling.join(', ')}`);
  if (report.unfinished.length > 0) out.push(`waiting (no line break at the end yet): ${report.unfinished.join(', ')}`);
  if (report.stopped) out.push('stopped early; the remaining files are taken by the next scan');
  if (out.length === 0) out.push(`inbox ${inboxDir}: nothing to take`);
  return `${out.join('\n')}\n`;
}
