/**
 * The shapes of a batch's report summary (summary.json): the final status of a row, counts and
 * EGP totals per status and channel, and which statuses need a person's attention.
 */
import type { ApprovalEvent } from '../ledger/index.js';

/** Final status of one input row. `pending` only appears while a batch is still being submitted. */
export type RowStatus = 'invalid' | 'duplicate' | 'accepted' | 'rejected' | 'unknown' | 'not_sent' | 'pending';

/** Statuses in the order reports list them. */
export const ROW_STATUSES: readonly RowStatus[] = [
  'accepted',
  'rejected',
  'unknown',
  'not_sent',
  'invalid',
  'duplicate',
  'pending',
];

/** The `byChannel` key of rows whose channel is neither `wallet` nor `bank` (empty or invalid). */
export const NO_CHANNEL = '(no valid channel)';

/**
 * Count and EGP total (decimal string) of a group of rows. Every row is counted in `rows`; a row
 * whose amount is not a valid EGP amount (an invalid row's) adds nothing to `amount` and is
 * counted in `withoutAmount` instead, so a total never leaves rows out silently.
 */
export interface Tally {
  rows: number;
  amount: string;
  /** Rows of `rows` whose amount is not a valid EGP amount (not in `amount`); absent when none. */
  withoutAmount?: number;
}

/** Content of summary.json. */
export interface ReportSummary {
  readonly batchId: string;
  readonly fileName: string;
  readonly sha256: string;
  readonly batchState: string;
  readonly rows: number;
  readonly requests: number;
  readonly byStatus: Record<RowStatus, Tally>;
  readonly byChannel: Record<string, Tally>;
  readonly total: Tally;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  readonly reportWrittenAt: string;
  readonly serviceUrl: string;
  readonly haltReason?: string;
  /** Why the batch was refused, when it was. */
  readonly refusalReason?: string;
  /** The batch of the same content refused as a whole before this one (this batch imported it again). */
  readonly follows?: string;
  /** The batch that imported this refused batch's content again. */
  readonly supersededBy?: string;
  /** Who imported, approved or cancelled the batch, and when. */
  readonly approvals: readonly ApprovalEvent[];
  /** Every finding a person recorded on an unknown request (reconciliation). */
  readonly resolutions: readonly { request: number; finding: string; by: string; at: string; note: string }[];
  /** Rows with at least one warning (results.csv's `warnings` column). */
  readonly warningRows?: number;
}

/** Most rows listed in the page's attention table; the rest are counted and left to results.csv. */
export const ATTENTION_LIMIT = 1000;

/** Statuses whose rows need a person's attention, in report order. */
export const ATTENTION_STATUSES: readonly RowStatus[] = ['rejected', 'unknown', 'not_sent', 'invalid', 'duplicate'];
