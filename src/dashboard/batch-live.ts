/**
 * What the batch page polls while a batch is sent (`/batches/:id/live.json`): its state in words,
 * how many requests are final, each request's state (for batches of up to `LIVE_REQUESTS`
 * requests) and, once written, the counts and EGP totals per status. Amounts are EGP decimal strings.
 */
import type { Ledger } from '../ledger/index.js';
import type { BatchView } from '../results/batch-view.js';
import type { MessageKey, Translate } from './i18n/index.js';

/** Most requests whose states are listed one by one. */
export const LIVE_REQUESTS = 2000;

/** The polled answer. */
export interface BatchLive {
  readonly state: string;
  readonly stateText: string;
  /** True once nothing more will change by itself (finished, needs checking, cancelled, refused). */
  readonly final: boolean;
  readonly requestsDone: number;
  readonly requestsAll: number;
  /** Requests per ledger state, with the state in words. */
  readonly byState: readonly { readonly state: string; readonly text: string; readonly count: number }[];
  /** seq → { state, text }, for up to LIVE_REQUESTS requests. */
  readonly requests: Readonly<Record<string, { readonly state: string; readonly text: string }>>;
  readonly totals: Readonly<Record<string, { readonly rows: number; readonly amount: string }>> | undefined;
}

const FINAL = new Set(['finished', 'needs_reconciliation', 'cancelled', 'refused']);

/** Builds the polled answer of a batch. */
export async function batchLive(ledger: Ledger, view: BatchView, t: Translate): Promise<BatchLive> {
  const seqs = Array.from({ length: view.requestsAll }, (_, i) => i + 1);
  const counts = new Map<string, number>();
  const requests: Record<string, { state: string; text: string }> = {};
  for (let from = 0; from < seqs.length; from += 1000) {
    const part = seqs.slice(from, from + 1000);
    const states = await ledger.requestStates(view.batch.id, part);
    states.forEach((st, i) => {
      if (!st) return;
      counts.set(st, (counts.get(st) ?? 0) + 1);
      if (view.requestsAll > LIVE_REQUESTS) return;
      requests[String(part[i])] = { state: st, text: t(`status.${st}` as MessageKey) };
    });
  }
  return {
    state: view.state,
    stateText: t(`state.${view.state}` as MessageKey),
    final: FINAL.has(view.state),
    requestsDone: view.requestsDone,
    requestsAll: view.requestsAll,
    byState: [...counts].map(([state, count]) => ({ state, text: t(`status.${state}` as MessageKey), count })),
    requests,
    totals: view.summary?.byStatus,
  };
}
