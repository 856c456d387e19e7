/**
 * `cashout import <file>`: validate and queue only; a `cashout worker` submits. Exit 0 queued or
 * awaiting approval, 1 refused or ended with nothing to send (every row invalid or held by another
 * batch), 2 file problem, 3 Redis.
 */
import { writeReport } from '../results/write-report.js';
import { formatSummary } from '../results/print-summary.js';
import { requireSafeRedis } from '../queue/redis-safety.js';
import { EXIT } from '../errors.js';
import { importOpenedFile, openImportFile, openQueues, serviceTarget, type AppContext } from './context.js';
import type { RunOptions } from './run.js';

/** Imports one file into the queue; returns the exit code. */
export async function importCommand(ctx: AppContext, file: string, opts: Omit<RunOptions, 'sandbox'>): Promise<number> {
  const target = serviceTarget(ctx.config);
  // The file is checked and its import threads start before Redis is opened: a bad file answers
  // at once, and the threads load while the connections are made.
  const opened = await openImportFile(ctx, file, opts);
  try {
    const handles = await openQueues(ctx);
    try {
      await requireSafeRedis(handles.redis, ctx.config.allowUnsafeRedis);
      const r = await importOpenedFile(ctx, handles, target, opened, opts);
      if (r.state === 'queued') {
        const left = [
          ...(r.invalidRows > 0 ? [`${r.invalidRows} invalid rows left out`] : []),
          ...(r.duplicateRows > 0
            ? [`${r.duplicateRows} rows not sent: their payee is paid or to be paid by another batch`]
            : []),
        ];
        process.stdout.write(
          `Batch ${r.batchId} queued: ${r.validRows} rows in ${r.requests} withdrawal requests` +
            (left.length > 0 ? `; ${left.join('; ')}\n` : '\n'),
        );
        return EXIT.ok;
      }
      // Refused, finished with nothing to send, or awaiting approval: the import wrote its report.
      const summary = r.summary ?? (await writeReport(handles.ledger, r.batchId, { bom: ctx.config.csvBom }));
      process.stdout.write(formatSummary(summary, r.reportDir));
      return r.state === 'awaiting_approval' ? EXIT.ok : EXIT.notAllAccepted;
    } finally {
      await handles.close();
    }
  } finally {
    await opened.close();
  }
}
