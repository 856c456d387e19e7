/** `cashout report <batch-id>`: (re)writes a batch's report from the ledger and prints its summary. */
import { writeReport } from '../results/write-report.js';
import { formatSummary } from '../results/print-summary.js';
import { EXIT } from '../errors.js';
import type { AppContext } from './context.js';
import { withBatch } from './batch-argument.js';
import { exitCodeForSummary } from './run.js';

/** Returns the exit code: as `run` would for the batch's current state. */
export async function reportCommand(ctx: AppContext, batchId: string): Promise<number> {
  return withBatch(ctx, batchId, async (handles, batch) => {
    const summary = await writeReport(handles.ledger, batchId, { bom: ctx.config.csvBom });
    process.stdout.write(formatSummary(summary, batch.reportDir));
    return summary.byStatus.pending.rows > 0 ? EXIT.notAllAccepted : exitCodeForSummary(summary, batch.validRows);
  });
}
