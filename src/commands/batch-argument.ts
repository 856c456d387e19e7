/**
 * The `<batch-id>` argument of the commands that act on one batch (approve, cancel, report,
 * reconcile, resolve, retry): checked before Redis is opened, then looked up in the ledger.
 */
import { CashoutError } from '../errors.js';
import { isBatchId } from '../batch-id.js';
import type { BatchRecord } from '../ledger/index.js';
import { openQueues, type AppContext, type QueueHandles } from './context.js';

/** Throws `CashoutError('usage')` unless `batchId` is a batch id (16 hexadecimal digits). */
export function checkBatchId(batchId: string): void {
  if (!isBatchId(batchId))
    throw new CashoutError(
      'usage',
      `"${batchId}" is not a batch id (16 hexadecimal digits, as printed by run and import)`,
    );
}

/**
 * Checks `batchId`, opens the queues, and calls `fn` with them and the batch's ledger record; the
 * queues are closed afterwards. Throws `usage` for a malformed id and `batch_not_found` for a batch
 * the ledger at this Redis and prefix does not hold.
 */
export async function withBatch<T>(
  ctx: AppContext,
  batchId: string,
  fn: (handles: QueueHandles, batch: BatchRecord) => Promise<T>,
): Promise<T> {
  checkBatchId(batchId);
  const handles = await openQueues(ctx);
  try {
    const batch = await handles.ledger.getBatch(batchId);
    if (!batch) throw new CashoutError('batch_not_found', `no batch ${batchId} in the ledger at this Redis and prefix`);
    return await fn(handles, batch);
  } finally {
    await handles.close();
  }
}
