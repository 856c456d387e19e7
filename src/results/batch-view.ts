/**
 * What the dashboard shows of batches: their facts from the ledger, and counts and EGP totals
 * per status from the batch's summary.json (written when the batch finished or was refused), left
 * out while it describes an earlier state of the batch.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BatchRecord, Ledger } from '../ledger/index.js';
import type { ReportSummary } from './write-report.js';
import { formatPiasters } from '../money.js';

/** Files of a batch the dashboard offers for download (nothing else under the report folder is served). */
export const DOWNLOADABLE = [
  'results.csv',
  'rejected-rows.csv',
  'reconciliation.csv',
  'summary.html',
  'summary.json',
] as const;
export type Downloadable = (typeof DOWNLOADABLE)[number];

/** One batch as listed. Amounts are EGP decimal strings. */
export interface BatchView {
  readonly batch: BatchRecord;
  /** awaiting_approval | queued | submitting | finished | needs_reconciliation | cancelled | refused | halted */
  readonly state: string;
  readonly total: string;
  readonly requestsDone: number;
  readonly requestsAll: number;
  readonly summary: ReportSummary | undefined;
  readonly files: readonly Downloadable[];
  readonly age: string;
}

function age(fromIso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(fromIso)) / 1000));
  if (s < 90) return `${s} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} days`;
}

/**
 * Whether summary `s` may still describe `batch`: written in the batch's present state and end
 * (a batch sent again after a retry, or ended again, has another state or end time than the
 * summary of its earlier end until its report is written again).
 */
export function summaryMatches(batch: BatchRecord, s: ReportSummary): boolean {
  return s.batchState === batch.state && s.finishedAt === (batch.finishedAt ?? null);
}

/** Builds the view of one batch; its summary only when it matches the batch (`summaryMatches`). */
export async function batchView(ledger: Ledger, batch: BatchRecord): Promise<BatchView> {
  const last = await ledger.lastSeq(batch.id);
  // A batch still staging (its import has not finished, or its process stopped) has sent nothing:
  // its requests are counted open only when it is released.
  const done = batch.state === 'staging' ? 0 : Math.max(0, last - batch.open);
  const state =
    batch.state === 'queued' || batch.state === 'halted' ? (done > 0 ? 'submitting' : batch.state) : batch.state;
  let summary: ReportSummary | undefined;
  try {
    summary = JSON.parse(await readFile(join(batch.reportDir, 'summary.json'), 'utf8')) as ReportSummary;
    if (!summaryMatches(batch, summary)) summary = undefined;
  } catch {
    summary = undefined;
  }
  const files: Downloadable[] = [];
  for (const f of DOWNLOADABLE) {
    try {
      if ((await stat(join(batch.reportDir, f))).isFile()) files.push(f);
    } catch {
      // not written (yet)
    }
  }
  return {
    batch,
    state,
    total: formatPiasters(batch.totalPiasters),
    requestsDone: done,
    requestsAll: last,
    summary,
    files,
    age: age(batch.createdAt),
  };
}

/** The most recent batches, newest first. */
export async function listBatchViews(ledger: Ledger, limit = 200): Promise<BatchView[]> {
  const out: BatchView[] = [];
  for (const b of await ledger.listBatches(limit)) out.push(await batchView(ledger, b));
  return out;
}
