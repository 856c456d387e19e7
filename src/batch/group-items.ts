/**
 * Payout items → withdrawal requests (interface doc §2.4). Valid rows, in file order, are grouped
 * into requests of at most `itemsPerRequest` items; a request carries `mobile_wallets`,
 * `bank_accounts` or both, and an empty array is left out. Each request remembers which file line
 * each of its items came from, so the service's answer can be traced back to rows.
 */
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import type { StagedRequest, WithdrawalRequest } from '../ledger/withdrawal-request.js';
import type { PayoutItem } from '../import/validate-row.js';
import { toPiasters } from '../money.js';
import { jsonString } from '../contract/item-json.js';

export type { StagedRequest, WithdrawalRequest } from '../ledger/withdrawal-request.js';

/** Builds one request from items (in file order). */
export function buildRequest(seq: number, items: readonly PayoutItem[]): WithdrawalRequest {
  const wallets: NonNullable<WithdrawalRequestBody['mobile_wallets']> = [];
  const banks: NonNullable<WithdrawalRequestBody['bank_accounts']> = [];
  const walletLines: number[] = [];
  const bankLines: number[] = [];
  const references: Record<string, string> = {};
  let total = 0n;
  for (const item of items) {
    if (item.reference !== '') references[item.line] = item.reference;
    if (item.channel === 'wallet') {
      wallets.push(item.wallet);
      walletLines.push(item.line);
      total += toPiasters(item.wallet.amount);
    } else {
      banks.push(item.bank);
      bankLines.push(item.line);
      total += toPiasters(item.bank.amount);
    }
  }
  const body: WithdrawalRequestBody = {};
  if (wallets.length > 0) body.mobile_wallets = wallets;
  if (banks.length > 0) body.bank_accounts = banks;
  return { seq, body, walletLines, bankLines, totalPiasters: total, references };
}

/**
 * A streaming grouper: `add` returns a finished request each time `itemsPerRequest` items have
 * gathered, `finish` returns the last partial one (or undefined). Holds at most one request's items.
 */
export function createGrouper(itemsPerRequest: number, firstSeq = 1) {
  if (!Number.isInteger(itemsPerRequest) || itemsPerRequest < 1)
    throw new RangeError('itemsPerRequest must be a positive integer');
  let pending: PayoutItem[] = [];
  let seq = firstSeq;
  return {
    add(item: PayoutItem): WithdrawalRequest | undefined {
      pending.push(item);
      if (pending.length < itemsPerRequest) return undefined;
      const req = buildRequest(seq++, pending);
      pending = [];
      return req;
    },
    finish(): WithdrawalRequest | undefined {
      if (pending.length === 0) return undefined;
      const req = buildRequest(seq++, pending);
      pending = [];
      return req;
    },
  };
}

/** Groups a whole list at once (tests and small inputs). */
export function groupItems(items: readonly PayoutItem[], itemsPerRequest: number): WithdrawalRequest[] {
  const g = createGrouper(itemsPerRequest);
  const out: WithdrawalRequest[] = [];
  for (const item of items) {
    const r = g.add(item);
    if (r) out.push(r);
  }
  const last = g.finish();
  if (last) out.push(last);
  return out;
}

const OPEN_WALLETS = Buffer.from('{"mobile_wallets":[');
const OPEN_BANKS = Buffer.from('{"bank_accounts":[');
const THEN_BANKS = Buffer.from('],"bank_accounts":[');
const CLOSE = Buffer.from(']}');
const COMMA = 0x2c;

/** A growing byte list of one channel's items, joined by commas, reused from request to request. */
function createItemList() {
  let bytes = Buffer.allocUnsafeSlow(64 * 1024);
  let length = 0;
  let count = 0;
  return {
    get count() {
      return count;
    },
    get length() {
      return length;
    },
    /** Appends `source[start, end)` (one item's JSON). */
    add(source: Uint8Array, start: number, end: number) {
      const need = length + (end - start) + 1;
      if (need > bytes.length) {
        const bigger = Buffer.allocUnsafeSlow(2 * need);
        bytes.copy(bigger, 0, 0, length);
        bytes = bigger;
      }
      if (count > 0) bytes[length++] = COMMA;
      bytes.set(source.subarray(start, end), length);
      length += end - start;
      count++;
    },
    copyTo(target: Buffer, at: number): number {
      bytes.copy(target, at, 0, length);
      return at + length;
    },
    clear() {
      length = 0;
      count = 0;
    },
  };
}

/**
 * The streaming grouper of the import, over items the import threads already turned into UTF-8
 * JSON: `add` takes one valid row (its channel, file line, the bytes holding its item JSON with
 * the item's start and end, its reference, amount in piasters and payee key) and returns a
 * finished request each time `itemsPerRequest` items have gathered; `finish` returns the last
 * partial one. Same grouping and body as `createGrouper` (interface doc §2.4): wallets first, an empty array left
 * out. Item bytes are copied into two reused lists, so a request costs one buffer, its body.
 */
export function createJsonGrouper(itemsPerRequest: number, firstSeq = 1) {
  if (!Number.isInteger(itemsPerRequest) || itemsPerRequest < 1)
    throw new RangeError('itemsPerRequest must be a positive integer');
  let seq = firstSeq;
  const wallets = createItemList();
  const banks = createItemList();
  let walletLines: number[] = [];
  let bankLines: number[] = [];
  let references = '';
  let payees = '';
  let total = 0n;
  const build = (): StagedRequest => {
    const w = wallets.count > 0;
    const b = banks.count > 0;
    const size =
      (w ? OPEN_WALLETS.length + wallets.length : 0) +
      (w && b ? THEN_BANKS.length : b ? OPEN_BANKS.length : 0) +
      banks.length +
      CLOSE.length;
    const body = Buffer.allocUnsafeSlow(size);
    let at = 0;
    if (w) {
      at += OPEN_WALLETS.copy(body, at);
      at = wallets.copyTo(body, at);
      if (b) at += THEN_BANKS.copy(body, at);
    } else at += OPEN_BANKS.copy(body, at);
    at = banks.copyTo(body, at);
    CLOSE.copy(body, at);
    const req: StagedRequest = {
      seq: seq++,
      bodyJson: body,
      walletLines,
      bankLines,
      totalPiasters: total,
      referencesJson: `{${references}}`,
      payees,
    };
    wallets.clear();
    banks.clear();
    walletLines = [];
    bankLines = [];
    references = '';
    payees = '';
    total = 0n;
    return req;
  };
  return {
    add(
      channel: 'wallet' | 'bank',
      line: number,
      source: Uint8Array,
      start: number,
      end: number,
      reference: string,
      piasters: bigint,
      payee = '',
    ): StagedRequest | undefined {
      if (channel === 'wallet') {
        wallets.add(source, start, end);
        walletLines.push(line);
      } else {
        banks.add(source, start, end);
        bankLines.push(line);
      }
      // Lines only grow, so the keys come in the order JSON.stringify gives integer keys.
      if (reference !== '') references += `${references === '' ? '' : ','}"${line}":${jsonString(reference)}`;
      if (payee !== '') payees += `${line}\t${payee}\n`;
      total += piasters;
      return wallets.count + banks.count >= itemsPerRequest ? build() : undefined;
    },
    finish(): StagedRequest | undefined {
      return wallets.count + banks.count > 0 ? build() : undefined;
    },
  };
}
