/**
 * The payout register: the ledger's idempotency key per payee, across batches. The withdrawal
 * endpoint has none (interface doc §2.4, §5), so the ledger keeps one: each payout item takes a
 * key when its batch is staged, and a later row with a key that is still held is not sent.
 *
 * Keys (one Redis hash, `P:payouts`, key → "<batch id>:<request seq>", the request that took it):
 * - `r:<reference>` for a row with a `reference` (the payer's own id for the payout);
 * - `f:<32 hex digits>#<n>` otherwise: a 128-bit fingerprint of channel, destination (mobile or
 *   account number), holder (case-insensitive) and amount, with `n` counting the rows of the same
 *   file that share it (so two identical rows of one file are two payouts, and the same two rows
 *   uploaded again are the same two payouts).
 *
 * Whether a key is held is decided when it is read, from the state of the request that took it
 * (`holdsPayee` in `lifecycle.ts`): nothing has to be released by hand. An accepted payout holds a
 * fingerprint key only for `CASHOUT_DUPLICATE_WINDOW_HOURS`; a reference key for ever.
 */
import type { LedgerRedis } from './scripts.js';
import { STOPPED_IMPORT_ENDS, stateWords } from './lifecycle.js';

/** The register's hash key under `prefix`. */
export function registerKey(prefix: string): string {
  return `${prefix}:payouts`;
}

/** The payee key of a row with a reference. */
export function referenceKey(reference: string): string {
  return `r:${reference}`;
}

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

/**
 * The payee key of a row without reference, from its fingerprints: `words[at..at+3]` are the
 * destination+amount and holder+amount fingerprints of `check-chunk.ts` (`ChunkPart.fingerprints`
 * words 2 to 5), `occurrence` the row's count among the file's rows with the same words (1-based).
 */
export function fingerprintKey(words: Uint32Array, at: number, occurrence: number): string {
  return `f:${hex8(words[at]!)}${hex8(words[at + 1]!)}${hex8(words[at + 2]!)}${hex8(words[at + 3]!)}#${occurrence}`;
}

/** Where a held key is held: the payout that holds it, and its state. */
export interface PayeeHolder {
  readonly batchId: string;
  readonly seq: number;
  readonly line: number;
  /** The holding request's state. */
  readonly state: string;
  /** The holding batch's state. */
  readonly batchState: string;
  /** When the holding request got its outcome (ISO time), or '' while it has none. */
  readonly finishedAt: string;
}

/** Parses a register entry ("<batch>:<seq>:<line>") with the states the scripts read. */
export function parseHolder(entry: string, state: string, batchState: string, finishedAt: string): PayeeHolder {
  const [batchId = '', seq = '0', line = '0'] = entry.split(':');
  return { batchId, seq: Number(seq), line: Number(line), state, batchState, finishedAt };
}

/**
 * Why a row is not sent, in words a person can act on: where the payee is held, in what state,
 * and what to do. `what` names the payee ("reference PAY-12", "this payee").
 */
export function describeHeld(what: string, h: PayeeHolder): string {
  const where = `batch ${h.batchId} line ${h.line}`;
  switch (h.state) {
    case 'accepted':
    case 'reconciled_created':
      return `not sent: ${what} was already paid in ${where} on ${h.finishedAt.slice(0, 10) || 'an earlier date'}`;
    case 'unknown':
      return `not sent: ${what} may already be paid: request ${h.seq} of batch ${h.batchId} (line ${h.line}) is unknown; reconcile it first (cashout reconcile ${h.batchId})`;
    case 'sending':
      return `not sent: ${what} is being paid right now by request ${h.seq} of batch ${h.batchId} (line ${h.line})`;
    default:
      if (h.batchState === 'staging')
        return `not sent: ${what} is held by ${where}, whose import has not finished (or its process stopped: ${STOPPED_IMPORT_ENDS} and frees its payees; import this row again then, not with --pay-again, which would pay it twice if that import finishes)`;
      return `not sent: ${what} is already to be paid by ${where} (batch ${stateWords(h.batchState)}, request ${stateWords(h.state)})`;
  }
}

/**
 * Suffix of `describeHeld` naming the way to pay such rows on purpose, on each way in (the HTTP
 * API's query parameter; the upload page has none: such a file is imported with the command).
 */
export const PAY_AGAIN_HINT = 'to pay it again on purpose, import with --pay-again "<why>" (HTTP API: pay_again=<why>)';

/** Whether `describeHeld`'s words for `h` may be followed by `PAY_AGAIN_HINT`: not while the holder's import is unfinished. */
export function payAgainAdvised(h: PayeeHolder): boolean {
  return h.batchState !== 'staging';
}

/** Settings of the register. */
export interface RegisterSettings {
  /**
   * Hours an accepted payout without reference holds its fingerprint key
   * (CASHOUT_DUPLICATE_WINDOW_HOURS; default `CONFIG_DEFAULTS.duplicateWindowHours`, three days).
   */
  readonly duplicateWindowHours: number;
}

/** The ISO time before which an accepted fingerprint holder no longer holds its key. */
export function windowCutoff(settings: RegisterSettings, now = Date.now()): string {
  return new Date(now - settings.duplicateWindowHours * 3_600_000).toISOString();
}

/**
 * Reads which of `keys` are held by a payout of another batch than `ownBatchId`. Returns the
 * holder for each held key's index. One script call per 1,000 keys.
 */
export async function checkPayees(
  redis: LedgerRedis,
  prefix: string,
  settings: RegisterSettings,
  ownBatchId: string,
  keys: readonly string[],
): Promise<Map<number, PayeeHolder>> {
  const held = new Map<number, PayeeHolder>();
  const cutoff = windowCutoff(settings);
  // Keys are joined by line breaks (none holds one: references with control characters are
  // refused); empty keys (rows refused anyway) are not looked up.
  const positions: number[] = [];
  const wanted: string[] = [];
  keys.forEach((key, i) => {
    if (key !== '') {
      positions.push(i);
      wanted.push(key);
    }
  });
  // One script call per 1,000 keys, the keys joined in one argument: it answers only the keys
  // another batch's payout still holds (a re-upload), judged by the holder's state.
  for (let from = 0; from < wanted.length; from += 1000) {
    const slice = wanted.slice(from, from + 1000);
    const out = await redis.cashoutCheckPayees(registerKey(prefix), prefix, cutoff, ownBatchId, slice.join('\n'));
    for (let i = 0; i + 4 < out.length; i += 5) {
      const index = positions[from + Number(out[i]) - 1]!;
      held.set(index, parseHolder(String(out[i + 1]), String(out[i + 2]), String(out[i + 3]), String(out[i + 4])));
    }
  }
  return held;
}

/** The payee text of a request ("<line>\t<key>\n" per item) as a map from line to key. */
export function parsePayees(text: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const entry of text.split('\n')) {
    const tab = entry.indexOf('\t');
    if (tab > 0) out.set(Number(entry.slice(0, tab)), entry.slice(tab + 1));
  }
  return out;
}

/** The payee text of the items on `lines` (in that order) out of a request's payee text. */
export function payeesOf(text: string, lines: readonly number[]): string {
  const map = parsePayees(text);
  let out = '';
  for (const line of lines) {
    const key = map.get(line);
    if (key !== undefined) out += `${line}\t${key}\n`;
  }
  return out;
}
