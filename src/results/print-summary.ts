/** The short human summary of a batch, printed on stdout after `run`, `report` and `import`. */
import { join } from 'node:path';
import { ROW_STATUSES, type ReportSummary, type RowStatus, type Tally } from './report-summary.js';
import { groupDigits } from '../money.js';

const MEANING: Record<RowStatus, string> = {
  accepted: 'withdrawal request created by the service',
  rejected: 'refused by the service (HTTP 422); nothing was created',
  unknown: 'outcome unknown: check the service dashboard before paying again',
  not_sent: 'nothing was created: not sent, or refused before anything was created (results.csv says why)',
  invalid: 'row not valid; fix it and upload again',
  duplicate: 'not sent: its payee is paid, or to be paid, by another batch (results.csv names it)',
  pending: 'not final yet',
};

/** "; 2 rows with no valid amount are not in this total": the rows a tally counts apart; "" when none. */
function apart(t: Tally): string {
  const n = t.withoutAmount ?? 0;
  if (n === 0) return '';
  return n === 1
    ? '; 1 row with no valid amount is not in this total'
    : `; ${n} rows with no valid amount are not in this total`;
}

/** Renders the summary as text lines. */
export function formatSummary(s: ReportSummary, reportDir: string): string {
  const lines = [
    `Batch ${s.batchId}  ${s.fileName}  (${s.batchState})`,
    `Rows ${s.rows}, withdrawal requests ${s.requests}, service ${s.serviceUrl}`,
  ];
  for (const status of ROW_STATUSES) {
    const t = s.byStatus[status];
    if (t.rows === 0) continue;
    lines.push(
      `  ${status.padEnd(9)} ${String(t.rows).padStart(7)}   EGP ${groupDigits(t.amount).padStart(16)}   ${MEANING[status]}${apart(t)}`,
    );
  }
  lines.push(
    `  ${'total'.padEnd(9)} ${String(s.total.rows).padStart(7)}   EGP ${groupDigits(s.total.amount).padStart(16)}${apart(s.total)}`,
  );
  const warned = s.warningRows ?? 0;
  lines.push(
    `Warnings: ${warned === 0 ? 'none' : `${warned} ${warned === 1 ? 'row' : 'rows'} (see the warnings column of results.csv)`}`,
  );
  if (s.haltReason) lines.push(`Stopped: ${s.haltReason}`);
  if (s.refusalReason) lines.push(`Refused: ${s.refusalReason}`);
  if (s.follows) lines.push(`Follows batch ${s.follows}: the same file, refused as a whole before`);
  if (s.supersededBy) lines.push(`Imported again as batch ${s.supersededBy}: cashout report ${s.supersededBy}`);
  if (s.batchState === 'awaiting_approval')
    lines.push(
      `Awaiting approval by another person (another system or dashboard user than the importer): cashout approve ${s.batchId}`,
    );
  lines.push(`Report: ${join(reportDir, 'results.csv')}`);
  lines.push(`Summary: ${join(reportDir, 'summary.html')}`);
  return `${lines.join('\n')}\n`;
}
