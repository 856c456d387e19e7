/**
 * Maker-checker commands. `approve` lets someone other than the importer release a batch that
 * awaits approval (its requests are queued; workers send them); `cancel` stops such a batch for
 * good. Both are recorded with the person (the system user, `--as` as a label beside it) and
 * shown in the batch's reports.
 */
import { EXIT } from '../errors.js';
import { writeReport } from '../results/write-report.js';
import { actorText, approveBatch, cancelBatch } from '../ledger/actions.js';
import { cliActor, type AppContext } from './context.js';
import { withBatch } from './batch-argument.js';

/** `cashout approve <batch-id> [--as label]`: refused for the importer (by system user, whatever the label). */
export async function approveCommand(ctx: AppContext, batchId: string, opts: { as?: string }): Promise<number> {
  const actor = cliActor(opts.as);
  const by = actorText(actor);
  return withBatch(ctx, batchId, async (h) => {
    const n = await approveBatch(h.ledger, h.queue, batchId, actor);
    ctx.log.info({ batchId, by, requests: n }, 'batch approved');
    process.stdout.write(
      `Batch ${batchId} approved by ${by}: ${n} withdrawal requests queued; a running "cashout worker" sends them.\n`,
    );
    return EXIT.ok;
  });
}

/** `cashout cancel <batch-id> --note … [--as label]`. */
export async function cancelCommand(
  ctx: AppContext,
  batchId: string,
  opts: { as?: string; note: string },
): Promise<number> {
  const actor = cliActor(opts.as);
  const by = actorText(actor);
  return withBatch(ctx, batchId, async (h) => {
    await cancelBatch(h.ledger, batchId, actor, opts.note);
    await writeReport(h.ledger, batchId, { bom: ctx.config.csvBom });
    ctx.log.info({ batchId, by }, 'batch cancelled');
    process.stdout.write(`Batch ${batchId} cancelled by ${by}; nothing of it will be sent.\n`);
    return EXIT.ok;
  });
}
