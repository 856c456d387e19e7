/**
 * The payments of one withdrawal request as the dashboard shows them: line in the file, channel,
 * payee, mobile or account number masked (../mask.ts; the full numbers are only in the owner's
 * downloads), amount. Read from the request's body in the ledger: exactly what is (or was) sent.
 */
import type { LedgerRequest } from '../ledger/index.js';
import { maskNumber } from '../mask.js';

/** One payment of a request. `amount` is an EGP decimal string. */
export interface ShownItem {
  readonly line: number | undefined;
  readonly channel: 'wallet' | 'bank';
  readonly holder: string;
  /** Mobile number or account number, masked; for a bank, with the bank's name. */
  readonly destination: string;
  readonly amount: string;
}

/** The items of `request` (read with its body), wallets first, as the body lists them. */
export function requestItems(request: LedgerRequest): ShownItem[] {
  const body = request.body;
  const wallets = (body.mobile_wallets ?? []).map((w, i) => ({
    line: request.walletLines[i],
    channel: 'wallet' as const,
    holder: w.holder_name,
    destination: maskNumber(w.mobile_number),
    amount: w.amount,
  }));
  const banks = (body.bank_accounts ?? []).map((b, i) => ({
    line: request.bankLines[i],
    channel: 'bank' as const,
    holder: b.holder_name,
    destination: `${maskNumber(b.number)} · ${b.bank_name}`,
    amount: b.amount,
  }));
  return [...wallets, ...banks];
}
