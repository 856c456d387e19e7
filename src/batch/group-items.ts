/**
 * Payout items → withdrawal requests (interface doc §2.4). Valid rows, in file order, are grouped
 * into requests of at most `itemsPerRequest` items; a request carries `mobile_wallets`,
 * `bank_accounts` or both, and an empty array is left out. Each request remembers which file line
 * each of its items came from, so the service's answer can be traced back to rows.
 */
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import type { PayoutItem } from '../import/validate-row.js';
import { toPiasters } from '../money.js';

/** A withdrawal request before it is sent: body plus the file line of each item, array by array. */
export interface WithdrawalRequest {
  /** 1-based sequence number within the batch. */
  readonly seq: number;
  readonly body: WithdrawalRequestBody;
  /** `walletLines[i]` is the file line of `body.mobile_wallets[i]`. */
  readonly walletLines: readonly number[];
  /** `bankLines[i]` is the file line of `body.bank_accounts[i]`. */
  readonly bankLines: readonly number[];
  /** Sum of the items' amounts, in piasters. */
  readonly totalPiasters: bigint;
  /** The payer's `reference` of each item that has one, by file line (never sent to the service). */
  readonly references: Readonly<Record<string, string>>;
}

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
  if (!Number.isInteger(itemsPerRequest) || itemsPerRequest < 1) throw new RangeError('itemsPerRequest must be a positive integer');
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

/**
 * A withdrawal request ready for the ledger, its body already JSON (`bodyJson`, the same text
 * `JSON.stringify(body)` gives; UTF-8 bytes from the import): what the import stages. Other
 * fields as in `WithdrawalRequest`.
 */
export interface StagedRequest extends Omit<WithdrawalRequest, 'body'> {
  readonly bodyJson: string | Buffer;
}

const OPEN_WALLETS = Buffer.from('{"mobile_wallets":[');
const OPEN_BANKS = Buffer.from('{"bank_accounts":[');
const THEN_BANKS = Buffer.from('],"bank_accounts":[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

/**
 * The streaming grouper of the import, over items the import threads already turned into UTF-8
 * JSON: `add` takes one valid row (its channel, file line, item bytes, reference and amount in
 * piasters) and returns a finished request each time `itemsPerRequest` items have gathered;
 * `finish` returns the last partial one. Same grouping and body as `createGrouper` (interface
 * doc §2.4): wallets first, an empty array left out.
 */
export function createJsonGrouper(itemsPerRequest: number, firstSeq = 1) {
  if (!Number.isInteger(itemsPerRequest) || itemsPerRequest < 1) throw new RangeError('itemsPerRequest must be a positive integer');
  let seq = firstSeq;
  let wallets: Uint8Array[] = [];
  let banks: Uint8Array[] = [];
  let walletLines: number[] = [];
  let bankLines: number[] = [];
  let references: Record<string, string> = {};
  let total = 0n;
  const joinTo = (out: Uint8Array[], items: readonly Uint8Array[]) => {
    items.forEach((item, i) => {
      if (i > 0) out.push(COMMA);
      out.push(item);
    });
  };
  const build = (): StagedRequest => {
    const parts: Uint8Array[] = [];
    if (wallets.length > 0) {
      parts.push(OPEN_WALLETS);
      joinTo(parts, wallets);
      if (banks.length > 0) parts.push(THEN_BANKS);
    } else parts.push(OPEN_BANKS);
    joinTo(parts, banks);
    parts.push(CLOSE);
    const req: StagedRequest = { seq: seq++, bodyJson: Buffer.concat(parts), walletLines, bankLines, totalPiasters: total, references };
    wallets = [];
    banks = [];
    walletLines = [];
    bankLines = [];
    references = {};
    total = 0n;
    return req;
  };
  return {
    add(channel: 'wallet' | 'bank', line: number, item: Uint8Array, reference: string, piasters: bigint): StagedRequest | undefined {
      if (channel === 'wallet') {
        wallets.push(item);
        walletLines.push(line);
      } else {
        banks.push(item);
        bankLines.push(line);
      }
      if (reference !== '') references[line] = reference;
      total += piasters;
      return wallets.length + banks.length >= itemsPerRequest ? build() : undefined;
    },
    finish(): StagedRequest | undefined {
      return wallets.length + banks.length > 0 ? build() : undefined;
    },
  };
}
