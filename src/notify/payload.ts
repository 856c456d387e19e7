/**
 * What a notification says: the event, the batch's id, state, file name, counts of rows and EGP
 * totals (decimal strings) by status, the dashboard link and the time, plus `text`, a one-line
 * summary that a Slack-compatible incoming webhook shows as it is. Never a mobile or account
 * number: only counts and totals leave, and digit runs in the file name are masked.
 */
import { maskNumber } from '../mask.js';
import { groupDigits } from '../money.js';

/** The events notified. */
export const NOTIFY_EVENTS = ['batch.awaiting_approval', 'batch.finished', 'batch.needs_reconciliation'] as const;
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];

/** A batch's figures at the event. Amounts are EGP decimal strings. */
export interface BatchFigures {
  readonly batchId: string;
  readonly state: string;
  readonly fileName: string;
  readonly rows: number;
  /** Rows by status (report statuses: accepted, rejected, unknown, not_sent, invalid, duplicate, pending). */
  readonly counts: Readonly<Record<string, number>>;
  /** EGP total by status. */
  readonly totals: Readonly<Record<string, string>>;
  /** EGP total of the rows to pay. */
  readonly total: string;
}

/** The JSON body of a notification. */
export interface NotificationPayload extends BatchFigures {
  /** Unique per notification (the same on every retry and address): receivers drop repeats by it. */
  readonly id: string;
  readonly event: NotifyEvent;
  /** The batch's page on the dashboard (CASHOUT_DASHBOARD_URL), or null. */
  readonly link: string | null;
  /** ISO time of the event. */
  readonly at: string;
  /** One line for a chat channel (Slack-compatible: `<link|label>`). */
  readonly text: string;
}

const WHAT: Record<NotifyEvent, string> = {
  'batch.awaiting_approval': 'awaits approval',
  'batch.finished': 'finished',
  'batch.needs_reconciliation': 'needs reconciliation',
};

/** `name` with runs of 6 digits or more masked (a file may be named after an account). */
function safeFileName(name: string): string {
  return name.replace(/\d{6,}/g, (run) => maskNumber(run)).slice(0, 200);
}

/** The counts worth a chat line, in report order, e.g. "8 accepted, 1 unknown". */
function countsText(counts: Readonly<Record<string, number>>): string {
  const parts = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${s.replace('_', ' ')}`);
  return parts.length > 0 ? parts.join(', ') : 'no rows';
}

/**
 * Builds the payload of `event` for a batch's figures; `at` is when the event happened (for a
 * batch's end, its `finishedAt`), which makes the notification's id: the same event gives the same id.
 */
export function buildPayload(
  event: NotifyEvent,
  figures: BatchFigures,
  dashboardUrl: string | undefined,
  at = new Date(),
): NotificationPayload {
  const link = dashboardUrl ? `${dashboardUrl}/batches/${figures.batchId}` : null;
  const fileName = safeFileName(figures.fileName);
  const head = `Batch ${figures.batchId} (${fileName}) ${WHAT[event]}`;
  const money = `EGP ${groupDigits(figures.total)}`;
  const open = link ? ` <${link}|Open in the dashboard>` : '';
  const text = `${head}: ${figures.rows} rows, ${money}; ${countsText(figures.counts)}.${open}`;
  return {
    id: `${event}.${figures.batchId}.${at.getTime()}`,
    event,
    ...figures,
    fileName,
    link,
    at: at.toISOString(),
    text,
  };
}
