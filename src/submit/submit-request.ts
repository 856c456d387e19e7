/**
 * One withdrawal request, start to final state: take it in the ledger (only the winner of the
 * atomic `pending → sending` move may send), make sure that mark is durable, POST it, classify
 * the result, and record the outcome. Sends again only what is proven not created: a request that
 * never reached the service (bounded retries with backoff), and after a 422 the items the service
 * did not name, as a new request.
 */
import type { Logger } from 'pino';
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import { CashoutError } from '../errors.js';
import { toPiasters } from '../money.js';
import type { WithdrawalRequest } from '../batch/group-items.js';
import { classifyOutcome, errorKeyTarget, type Classified } from './classify-outcome.js';
import type { Ledger, LedgerRequest } from './ledger.js';
import type { PaymentClient } from './payment-client.js';

/** What `submitRequest` needs. */
export interface SubmitDeps {
  readonly ledger: Ledger;
  readonly client: PaymentClient;
  readonly log: Logger;
  /** Who sends (host:pid:worker), recorded on the `sending` mark. */
  readonly workerId: string;
  /** Further tries for a request that provably never reached the service. */
  readonly connectRetries: number;
  /** First backoff in ms; doubles with each try. */
  readonly connectBackoffMs: number;
  /** Resolves once the `sending` mark is on disk; rejects when it cannot be made durable. */
  readonly makeDurable?: () => Promise<void>;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Told of each POST: its classified outcome, the rows it carried and its duration in seconds (metrics). */
  readonly observe?: (outcome: string, rows: number, seconds: number) => void;
}

/** How a submission ended for the caller (the job processor). */
export type SubmitResult =
  | { readonly kind: 'final'; readonly state: 'accepted' | 'rejected' | 'unknown' | 'not_sent'; readonly open: number }
  | { readonly kind: 'split'; readonly childSeq: number; readonly open: number }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number };

/** Service field names → the CSV column a clerk knows them by. */
const FIELD_TO_COLUMN: Readonly<Record<string, string>> = { number: 'account_number' };

/** How a 422's `errors` map falls on a request's rows (interface doc §7: keys are "not shown"; Laravel-style keys are recognised). */
export interface RejectionMap {
  /** Reasons per file line for the rows an error key names. */
  readonly rowErrors: Record<string, string[]>;
  /** Reasons that name no row: they apply to every row of the request. */
  readonly general: string[];
}

/** Attaches each §7 error to the row its key names (`bank_accounts.2.bank_name` → that item's line), else to every row. */
export function mapRejection(request: Pick<LedgerRequest, 'walletLines' | 'bankLines'>, errors: Readonly<Record<string, readonly string[]>>): RejectionMap {
  const rowErrors: Record<string, string[]> = {};
  const general: string[] = [];
  for (const [key, reasons] of Object.entries(errors)) {
    const target = errorKeyTarget(key);
    const line = target ? (target.array === 'mobile_wallets' ? request.walletLines : request.bankLines)[target.index] : undefined;
    if (target && line !== undefined) {
      const column = FIELD_TO_COLUMN[target.field] ?? (target.field || target.array);
      (rowErrors[line] ??= []).push(...reasons.map((r) => `${column}: ${r}`));
    } else {
      general.push(...reasons.map((r) => `${key}: ${r}`));
    }
  }
  return { rowErrors, general };
}

/** The items of `request` whose lines are not in `named`, as a new request body (file order kept within each array). */
export function remainderOf(request: LedgerRequest, named: ReadonlySet<number>): Omit<WithdrawalRequest, 'seq'> | undefined {
  const wallets = request.body.mobile_wallets ?? [];
  const banks = request.body.bank_accounts ?? [];
  const body: WithdrawalRequestBody = {};
  const walletLines: number[] = [];
  const bankLines: number[] = [];
  let total = 0n;
  wallets.forEach((item, i) => {
    const line = request.walletLines[i]!;
    if (named.has(line)) return;
    (body.mobile_wallets ??= []).push(item);
    walletLines.push(line);
    total += toPiasters(item.amount);
  });
  banks.forEach((item, i) => {
    const line = request.bankLines[i]!;
    if (named.has(line)) return;
    (body.bank_accounts ??= []).push(item);
    bankLines.push(line);
    total += toPiasters(item.amount);
  });
  if (walletLines.length + bankLines.length === 0) return undefined;
  const references: Record<string, string> = {};
  for (const line of [...walletLines, ...bankLines]) {
    const ref = request.references[line];
    if (ref !== undefined) references[line] = ref;
  }
  return { body, walletLines, bankLines, totalPiasters: total, references };
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Submits request `seq` of `batchId`. Throws `CashoutError('state_conflict')` when the ledger does
 * not allow sending (the request may already have been created, or is final): the caller must not
 * run it again by itself.
 */
export async function submitRequest(deps: SubmitDeps, batchId: string, seq: number): Promise<SubmitResult> {
  const { ledger, log } = deps;
  const sleep = deps.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    const claim = await ledger.claim(batchId, seq, deps.workerId);
    if (!claim.claimed) {
      if (claim.reason === 'batch' && claim.batchState === 'halted') {
        const batch = await ledger.getBatch(batchId);
        const request = await ledger.getRequest(batchId, seq);
        if (request?.state === 'pending') {
          const open = await ledger.finishUnsent(batchId, seq, `not sent: the batch was stopped (${batch?.haltReason ?? 'halted'})`);
          return { kind: 'final', state: 'not_sent', open };
        }
      }
      throw refusal(batchId, seq, claim);
    }
    const request = claim.request;
    if (deps.makeDurable) {
      try {
        await deps.makeDurable();
      } catch (cause) {
        await ledger.release(batchId, seq);
        throw new CashoutError('redis_unsafe', `the sending mark of request ${seq} of batch ${batchId} could not be made durable; nothing was sent`, { batchId, seq }, cause);
      }
    }
    const started = Date.now();
    // The ledger's own text of the body: what was checked at import is what is sent.
    const result = await deps.client.postWithdrawal(request.bodyJson ?? request.body);
    const outcome = classifyOutcome(result);
    deps.observe?.(outcome.kind === 'not_sent' ? `not_sent_${outcome.reason}` : outcome.kind, request.walletLines.length + request.bankLines.length, (Date.now() - started) / 1000);
    // One line per request: at debug level when it was created (the common case, up to thousands a
    // second, kept in the ledger and the metrics anyway), at info level when a person may need it.
    log[outcome.kind === 'created' ? 'debug' : 'info'](
      { batchId, seq, outcome: outcome.kind, httpStatus: 'httpStatus' in outcome ? outcome.httpStatus : undefined, ms: Date.now() - started },
      'withdrawal request submitted',
    );

    if (outcome.kind === 'not_sent' && outcome.reason === 'connect' && attempt < deps.connectRetries) {
      await ledger.release(batchId, seq);
      const wait = deps.connectBackoffMs * 2 ** attempt;
      log.warn({ batchId, seq, attempt: attempt + 1, waitMs: wait }, 'service not reachable; nothing was sent; trying again');
      await sleep(wait);
      continue;
    }
    return withLedgerRetries(() => record(deps, request, outcome), deps);
  }
}

/**
 * Records an outcome, trying again while Redis is unreachable (up to about two minutes): the
 * request was sent, and losing its outcome would leave it unknown. The ledger's writes are safe to
 * repeat (a second identical write is recognised as already done).
 */
async function withLedgerRetries<T>(write: () => Promise<T>, deps: SubmitDeps): Promise<T> {
  const sleep = deps.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (err instanceof CashoutError || attempt >= 40) throw err;
      deps.log.warn({ attempt: attempt + 1, err: (err as Error).message }, 'could not record the outcome in the ledger; trying again');
      await sleep(Math.min(5_000, 250 * 2 ** Math.min(attempt, 5)));
    }
  }
}

async function record(deps: SubmitDeps, request: LedgerRequest, outcome: Classified): Promise<SubmitResult> {
  const { ledger } = deps;
  const { batchId, seq } = request;
  switch (outcome.kind) {
    case 'created':
      return { kind: 'final', state: 'accepted', open: await ledger.finish(batchId, seq, { state: 'accepted', httpStatus: 200, message: outcome.message }) };
    case 'unknown':
      return {
        kind: 'final',
        state: 'unknown',
        open: await ledger.finish(batchId, seq, { state: 'unknown', message: outcome.message, ...(outcome.httpStatus ? { httpStatus: outcome.httpStatus } : {}) }),
      };
    case 'not_sent':
      if (outcome.reason === 'rate_limited') {
        await ledger.release(batchId, seq);
        return { kind: 'rate_limited', retryAfterMs: outcome.retryAfterMs ?? 1000 };
      }
      if (outcome.reason === 'auth') await ledger.halt(batchId, outcome.message);
      return {
        kind: 'final',
        state: 'not_sent',
        open: await ledger.finish(batchId, seq, { state: 'not_sent', message: outcome.message, ...(outcome.httpStatus ? { httpStatus: outcome.httpStatus } : {}) }),
      };
    case 'rejected': {
      const map = mapRejection(request, outcome.errors);
      const named = new Set(Object.keys(map.rowErrors).map(Number));
      const rest = map.general.length === 0 && named.size > 0 ? remainderOf(request, named) : undefined;
      if (rest) {
        const childSeq = await ledger.split(batchId, seq, { httpStatus: 422, message: outcome.message, rowErrors: map.rowErrors }, rest);
        const batch = await ledger.getBatch(batchId);
        return { kind: 'split', childSeq, open: batch?.open ?? 1 };
      }
      const rowErrors: Record<string, string[]> = {};
      for (const line of [...request.walletLines, ...request.bankLines]) {
        const own = map.rowErrors[line] ?? [];
        const all = [...own, ...map.general];
        rowErrors[line] = all.length > 0 ? all : [outcome.message];
      }
      return { kind: 'final', state: 'rejected', open: await ledger.finish(batchId, seq, { state: 'rejected', httpStatus: 422, message: outcome.message, rowErrors }) };
    }
  }
}

function refusal(batchId: string, seq: number, claim: Exclude<Awaited<ReturnType<Ledger['claim']>>, { claimed: true }>): CashoutError {
  if (claim.reason === 'missing') return new CashoutError('request_not_found', `request ${seq} of batch ${batchId} is not in the ledger; nothing was sent`, { batchId, seq });
  if (claim.reason === 'batch') {
    return new CashoutError('state_conflict', `batch ${batchId} is ${claim.batchState}, not queued; request ${seq} was not sent`, { batchId, seq, batchState: claim.batchState });
  }
  const why =
    claim.state === 'sending' || claim.state === 'unknown'
      ? `may already have been created (ledger state ${claim.state}); reconcile it first`
      : `is already ${claim.state.replace('_', ' ')}; it is not sent again`;
  return new CashoutError('state_conflict', `request ${seq} of batch ${batchId} ${why}`, { batchId, seq, state: claim.state });
}
