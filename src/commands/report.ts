/** `cashout report <batch-id>`: (re)writes a batch's report from the ledger and prints its summary. */
import { writeReport } from '../results/write-report.js';
import { formatSummary } from '../results/print-summary.js';
import { CashoutError, EXIT } from '../errors.js';
import { isBatchId } from '../batch-id.js';
import { openQueues, type AppContext } from './context.js';
import { exitCodeForSummary } from './run.js';

/** Returns the exit code: as `run` would for the batch's current state. */
export async function reportCommand(ctx: AppContext, batchId: string): Promise<number> {
  if (!isBatchId(batchId))
    throw new CashoutError(
      'usage',
      `"${batchId}" is not a batch id (16 hexadecimal digits, as printed by run and import)`,
    );
  const handles = await openQueues(ctx);
  try {
    const batch = await handles.ledger.getBatch(batchId);
    if (!batch) throw new CashoutError('batch_not_found', `no batch ${batchId} in the ledger at this Redis and prefix`);
    const summary = await writeReport(handles.ledger, batchId, { bom: ctx.config.csvBom });
    process.stdout.write(formatSummary(summary, batch.reportDir));
    return summary.byStatus.pending.rows > 0 ? EXIT.notAllAccepted : exitCodeForSummary(summary, batch.validRows);
  } finally {
    await handles.close();
  }
}
