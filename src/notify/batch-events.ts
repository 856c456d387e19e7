/**
 * Where batch events become notifications: an import whose batch awaits approval
 * (`ImportDeps.onAwaitingApproval`), and a batch's end (`finished` or `needs_reconciliation`)
 * noticed by a worker (`onBatchDone`: its report is written) or by `cashout run` once its batch
 * is done.
 */
import type { Logger } from 'pino';
import type { ImportResult } from '../batch/import-batch.js';
import type { Ledger } from '../ledger/index.js';
import { formatPiasters } from '../money.js';
import { ROW_STATUSES, writeReport, type ReportSummary } from '../results/write-report.js';
import type { Notifier } from './notifier.js';
import type { BatchFigures } from './payload.js';

/** Figures of a batch from its report summary. */
export function figuresOfSummary(s: ReportSummary): BatchFigures {
  const counts: Record<string, number> = {};
  const totals: Record<string, string> = {};
  for (const status of ROW_STATUSES) {
    counts[status] = s.byStatus[status].rows;
    totals[status] = s.byStatus[status].amount;
  }
  const total = s.total.amount;
  return { batchId: s.batchId, state: s.batchState, fileName: s.fileName, rows: s.rows, counts, totals, total };
}

/** Figures of a batch just imported and awaiting approval: its rows to pay are `pending`. */
export function figuresOfImport(r: ImportResult, fileName: string): BatchFigures {
  const total = formatPiasters(r.totalPiasters);
  return {
    batchId: r.batchId,
    state: r.state,
    fileName,
    rows: r.rows,
    counts: { pending: r.validRows, invalid: r.invalidRows, duplicate: r.duplicateRows },
    totals: { pending: total },
    total,
  };
}

/**
 * Notifies a batch's end from its report summary: `batch.finished` or
 * `batch.needs_reconciliation`, with the batch's end time, so a second call for the same end
 * queues nothing new. Nothing for a batch that has not ended (any other state).
 */
export async function notifyBatchEnd(notifier: Notifier, s: ReportSummary): Promise<void> {
  if (s.batchState !== 'finished' && s.batchState !== 'needs_reconciliation') return;
  const at = s.finishedAt ? new Date(s.finishedAt) : new Date();
  const event = s.batchState === 'finished' ? 'batch.finished' : 'batch.needs_reconciliation';
  await notifier.notify(event, figuresOfSummary(s), at);
}

/**
 * The `onBatchDone` of a worker: writes the batch's report, logs its end and notifies it
 * (`notifyBatchEnd`). Returns the summary.
 */
export function reportAndNotifyDone(ledger: Ledger, notifier: Notifier, log: Logger, csv: { bom?: boolean } = {}) {
  return async (batchId: string): Promise<ReportSummary> => {
    const s = await writeReport(ledger, batchId, csv);
    const accepted = s.byStatus.accepted.rows;
    log.info({ batchId, state: s.batchState, accepted, rows: s.rows }, 'batch finished; report written');
    await notifyBatchEnd(notifier, s);
    return s;
  };
}

/** The `ImportDeps.onAwaitingApproval` hook: notifies `batch.awaiting_approval`. */
export function notifyAwaitingApproval(notifier: Notifier) {
  return async (r: ImportResult, fileName: string): Promise<void> =>
    notifier.notify('batch.awaiting_approval', figuresOfImport(r, fileName));
}
