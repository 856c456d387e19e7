/**
 * What a checker sees before approving a batch: its payments page by page (read from the ledger's
 * request bodies: exactly what will be sent, numbers masked) and its payees and EGP totals per
 * channel. A page holds the requests whose items make about `ITEMS_PER_PAGE` rows.
 */
import type { BatchRecord, Ledger } from '../ledger/index.js';
import { formatPiasters, toPiasters } from '../money.js';
import { requestItems, type ShownItem } from './request-items.js';

/** About how many payments one page shows. */
export const ITEMS_PER_PAGE = 50;

/** One page of a batch's payments, with the batch's totals. Amounts are EGP decimal strings. */
export interface BatchReview {
  readonly items: readonly ShownItem[];
  readonly page: number;
  readonly pages: number;
  readonly payees: number;
  readonly total: string;
  readonly byChannel: {
    readonly wallet: { rows: number; amount: string };
    readonly bank: { rows: number; amount: string };
  };
}

/**
 * Page `page` (from 1; out-of-range pages are brought within range) of `batch`'s payments. The
 * per-channel totals read every request of the batch (without the bodies for counts; the amounts
 * need them): meant for batches awaiting approval, which a person reviews once.
 */
export async function batchReview(ledger: Ledger, batch: BatchRecord, page: number): Promise<BatchReview> {
  const last = await ledger.lastSeq(batch.id);
  const perPage = Math.max(1, Math.floor(ITEMS_PER_PAGE / Math.max(1, batch.itemsPerRequest)));
  const pages = Math.max(1, Math.ceil(last / perPage));
  const p = Math.min(Math.max(1, Number.isInteger(page) ? page : 1), pages);
  const items: ShownItem[] = [];
  const sums = { wallet: { rows: 0, piasters: 0n }, bank: { rows: 0, piasters: 0n } };
  for (let seq = 1; seq <= last; seq++) {
    const request = await ledger.getRequest(batch.id, seq);
    if (!request) continue;
    const shown = requestItems(request);
    for (const item of shown) {
      sums[item.channel].rows++;
      sums[item.channel].piasters += toPiasters(item.amount);
    }
    if (seq > (p - 1) * perPage && seq <= p * perPage) items.push(...shown);
  }
  return {
    items,
    page: p,
    pages,
    payees: sums.wallet.rows + sums.bank.rows,
    total: formatPiasters(sums.wallet.piasters + sums.bank.piasters),
    byChannel: {
      wallet: { rows: sums.wallet.rows, amount: formatPiasters(sums.wallet.piasters) },
      bank: { rows: sums.bank.rows, amount: formatPiasters(sums.bank.piasters) },
    },
  };
}
