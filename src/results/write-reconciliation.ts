/**
 * Reconciliation: the `unknown` withdrawal requests of a batch — sent, but with no proof of
 * whether the service created them — item by item, for a person to look up in the service's
 * merchant dashboard. Written to `reconciliation.csv` in the batch's report folder (full values:
 * the file is owner-only, like every report); the console listing masks numbers.
 */
import { join } from 'node:path';
import type { Ledger, LedgerRequest } from '../ledger/index.js';
import { formatPiasters, groupDigits } from '../money.js';
import { maskNumber } from '../mask.js';
import { openCsvOut, type CsvOutOptions } from './csv-out.js';

/** File name of the reconciliation list. */
export const RECONCILIATION_FILE = 'reconciliation.csv';

/** Columns of reconciliation.csv: one row per item of each unknown request. */
export const RECONCILIATION_COLUMNS = [
  'request',
  'sent_at',
  'http_status',
  'message',
  'line',
  'channel',
  'holder_name',
  'amount',
  'mobile_number',
  'bank_name',
  'account_number',
  'description',
] as const;

/** Requests read at once by `requestsInState` (one pipelined round trip to Redis). */
const READ_AT_ONCE = 200;

/**
 * All requests of a batch in the given states, in sequence order (original requests and resends).
 * States are read first, `READ_AT_ONCE` requests a round trip, and bodies only of the requests in
 * `states`; `body: false` leaves every body unread (`Ledger.getRequest`), for callers that show
 * states and counts only.
 */
export async function requestsInState(
  ledger: Ledger,
  batchId: string,
  states: readonly string[],
  options: { readonly body?: boolean } = {},
): Promise<LedgerRequest[]> {
  const out: LedgerRequest[] = [];
  const last = await ledger.lastSeq(batchId);
  const wanted = (r: LedgerRequest | undefined): r is LedgerRequest => r !== undefined && states.includes(r.state);
  for (let from = 1; from <= last; from += READ_AT_ONCE) {
    const seqs = Array.from({ length: Math.min(READ_AT_ONCE, last - from + 1) }, (_, i) => from + i);
    const heads = (await Promise.all(seqs.map((seq) => ledger.getRequest(batchId, seq, { body: false })))).filter(
      wanted,
    );
    if (options.body === false) out.push(...heads);
    // A request may have moved on between the two reads: it is kept only when still in `states`.
    else out.push(...(await Promise.all(heads.map((h) => ledger.getRequest(batchId, h.seq)))).filter(wanted));
  }
  return out;
}

/**
 * Writes reconciliation.csv for the batch's unknown requests; returns them and a masked text listing.
 * `csv` says how the file is written (its byte-order mark: `Config.csvBom`).
 */
export async function writeReconciliation(
  ledger: Ledger,
  batchId: string,
  reportDir: string,
  csv: CsvOutOptions = {},
): Promise<{ requests: LedgerRequest[]; text: string; path: string }> {
  const requests = await requestsInState(ledger, batchId, ['unknown']);
  const path = join(reportDir, RECONCILIATION_FILE);
  const out = openCsvOut(path, RECONCILIATION_COLUMNS, csv);
  const lines: string[] = [];
  for (const r of requests) {
    lines.push(
      `request ${r.seq}: sent ${r.sendingAt ?? '?'}, ${r.walletLines.length + r.bankLines.length} items, EGP ${groupDigits(formatPiasters(r.totalPiasters))} — ${r.message ?? 'outcome unknown'}`,
    );
    const wallets = r.body.mobile_wallets ?? [];
    const banks = r.body.bank_accounts ?? [];
    for (const [i, w] of wallets.entries()) {
      await out.write([
        r.seq,
        r.sendingAt,
        r.httpStatus,
        r.message,
        r.walletLines[i],
        'wallet',
        w.holder_name,
        w.amount,
        w.mobile_number,
        '',
        '',
        w.description,
      ]);
      lines.push(`    line ${r.walletLines[i]}  wallet  ${w.holder_name}  ${w.amount}  ${maskNumber(w.mobile_number)}`);
    }
    for (const [i, b] of banks.entries()) {
      await out.write([
        r.seq,
        r.sendingAt,
        r.httpStatus,
        r.message,
        r.bankLines[i],
        'bank',
        b.holder_name,
        b.amount,
        '',
        b.bank_name,
        b.number,
        b.description,
      ]);
      lines.push(
        `    line ${r.bankLines[i]}  bank    ${b.holder_name}  ${b.amount}  ${b.bank_name}  ${maskNumber(b.number)}`,
      );
    }
  }
  await out.close();
  return { requests, text: lines.join('\n'), path };
}
