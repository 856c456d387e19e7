/**
 * Reconciliation commands: `reconcile` lists a batch's unknown requests and writes
 * reconciliation.csv; `resolve` records a person's finding; `retry` queues a sendable request
 * again (after `resolve --not-created`, or a `not_sent` one). None of them sends anything by
 * itself: only a worker sends, and only what the ledger allows.
 */
import { CashoutError, EXIT } from '../errors.js';
import { writeReconciliation } from '../results/write-reconciliation.js';
import { writeReport } from '../results/write-report.js';
import { actorText, resolveRequest, retryRequest } from '../ledger/actions.js';
import { cliActor, type AppContext } from './context.js';
import { withBatch } from './batch-argument.js';
import { serviceAddress } from '../submit/service-address.js';

function requestNumber(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new CashoutError('usage', `"${value}" is not a request number (1, 2, …)`);
  return Number(value);
}

/** `cashout reconcile <batch-id>`: exit 0 when nothing is unknown, 1 when requests await a finding. */
export async function reconcileCommand(ctx: AppContext, batchId: string): Promise<number> {
  return withBatch(ctx, batchId, async (h, { reportDir }) => {
    const csv = { bom: ctx.config.csvBom };
    const { requests, text, path } = await writeReconciliation(h.ledger, batchId, reportDir, csv);
    if (requests.length === 0) {
      process.stdout.write(`Batch ${batchId}: no request has an unknown outcome.\n`);
      return EXIT.ok;
    }
    process.stdout.write(
      `Batch ${batchId}: ${requests.length} withdrawal request(s) were sent but their outcome is unknown.\n` +
        'They may or may not have been created. Do not pay these rows again before checking.\n\n' +
        `${text}\n\n` +
        "In the service's merchant dashboard, look for withdrawal requests created around the time sent,\n" +
        'with these holders and amounts. Then record what you found:\n' +
        `  cashout resolve ${batchId} <request> --created --note "found in dashboard, ref …"\n` +
        `  cashout resolve ${batchId} <request> --not-created --note "not in dashboard on <date>"  (then: cashout retry ${batchId} <request>)\n` +
        `Full list (owner-only, holds personal data): ${path}\n`,
    );
    return EXIT.notAllAccepted;
  });
}

/** `cashout resolve <batch-id> <request> --created|--not-created --note … [--as label]`. */
export async function resolveCommand(
  ctx: AppContext,
  batchId: string,
  request: string,
  opts: { created?: boolean; notCreated?: boolean; note?: string; as?: string },
): Promise<number> {
  if (opts.created === opts.notCreated)
    throw new CashoutError('usage', 'say what you found: exactly one of --created or --not-created');
  if (!opts.note || opts.note.trim() === '')
    throw new CashoutError('usage', '--note is required: say where you looked and what you found');
  const seq = requestNumber(request);
  const actor = cliActor(opts.as);
  const by = actorText(actor);
  return withBatch(ctx, batchId, async (h, { reportDir }) => {
    await resolveRequest(h.ledger, batchId, seq, opts.created ? 'created' : 'not_created', actor, opts.note!);
    ctx.log.info({ batchId, seq, finding: opts.created ? 'created' : 'not_created', by }, 'reconciliation recorded');
    await writeReport(h.ledger, batchId, { bom: ctx.config.csvBom });
    await writeReconciliation(h.ledger, batchId, reportDir, { bom: ctx.config.csvBom });
    process.stdout.write(
      opts.created
        ? `Request ${seq} of batch ${batchId} recorded as created by the service (by ${by}); its rows are accepted.\n`
        : `Request ${seq} of batch ${batchId} recorded as not created (by ${by}); it may be sent again: cashout retry ${batchId} ${seq}\n`,
    );
    return EXIT.ok;
  });
}

/**
 * `cashout retry <batch-id> <request> [--as label]`: queues the request's job again when the
 * lifecycle allows it (recorded with who asked); a worker sends it if the ledger's claim allows.
 */
export async function retryCommand(
  ctx: AppContext,
  batchId: string,
  request: string,
  opts: { as?: string } = {},
): Promise<number> {
  const seq = requestNumber(request);
  const actor = cliActor(opts.as);
  return withBatch(ctx, batchId, async (h) => {
    // The service address this setup sends to, when one is configured: a batch of another is refused.
    const serviceUrl = ctx.config.apiBaseUrl ? serviceAddress(ctx.config.apiBaseUrl) : undefined;
    await retryRequest(h.ledger, h.queue, batchId, seq, actor, { serviceUrl });
    ctx.log.info({ batchId, seq, by: actorText(actor) }, 'request queued again');
    process.stdout.write(
      `Request ${seq} of batch ${batchId} queued again by ${actorText(actor)}; a running "cashout worker" sends it.\n`,
    );
    return EXIT.ok;
  });
}
