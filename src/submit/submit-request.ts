/**
 * One withdrawal request, start to final state: take it in the ledger (only the winner of the
 * atomic `pending → sending` move may send), make sure that mark is durable, POST it, classify
 * the result, and record the outcome. Sends again only what is proven not created: a request that
 * never reached the service (bounded retries with backoff), and after a 422 the items the service
 * did not name, as a new request.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import { CashoutError, isCashoutError, type ErrorCode } from '../errors.js';
import { toPiasters } from '../money.js';
import type { WithdrawalRequest } from '../ledger/withdrawal-request.js';
import { classifyOutcome, DEFAULT_RETRY_AFTER_MS, errorKeyTarget, type Classified } from './classify-outcome.js';
import type { ClaimResult, Ledger, LedgerRequest } from '../ledger/index.js';
import { describeRefusal, stateWords, transition } from '../ledger/lifecycle.js';
import { payeesOf } from '../ledger/payout-register.js';
import type { PaymentClient } from './payment-client.js';

/** What `submitRequest` needs. */
export interface SubmitDeps {
  readonly ledger: Ledger;
  readonly client: PaymentClient;
  readonly log: Logger;
  /**
   * The service address this worker sends to (normalised by `serviceAddress`); a batch imported
   * for another address is not sent. Absent: not checked (tests that build requests by hand).
   */
  readonly serviceUrl?: string;
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
  /** How a stopping worker bounds the recording of outcomes; none: recording is tried for about two minutes. */
  readonly stop?: StopControl;
}

/**
 * The stop of a worker, as the recording of an outcome sees it (`withLedgerRetries`). A request
 * whose outcome is not recorded by `deadline` stays in `sending`: the recovery sweep makes it
 * `unknown` later, it is never made sendable again.
 */
export interface StopControl {
  /** Aborted when the worker begins to stop: a failed outcome write is then tried again at short intervals. */
  readonly stopping: AbortSignal;
  /** Aborted when the stop's time is up (or the stop ended): an outcome write still failing or hanging is given up. */
  readonly deadline: AbortSignal;
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
export function mapRejection(
  request: Pick<LedgerRequest, 'walletLines' | 'bankLines'>,
  errors: Readonly<Record<string, readonly string[]>>,
): RejectionMap {
  const rowErrors: Record<string, string[]> = {};
  const general: string[] = [];
  for (const [key, reasons] of Object.entries(errors)) {
    const target = errorKeyTarget(key);
    const line = target
      ? (target.array === 'mobile_wallets' ? request.walletLines : request.bankLines)[target.index]
      : undefined;
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
export function remainderOf(
  request: LedgerRequest,
  named: ReadonlySet<number>,
): (Omit<WithdrawalRequest, 'seq'> & { readonly payees: string }) | undefined {
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
  // The payee keys move with their items (the new request holds them from now on).
  const payees = payeesOf(request.payees, [...walletLines, ...bankLines]);
  return { body, walletLines, bankLines, totalPiasters: total, references, payees };
}

/** Codes of `submitRequest`'s refusals to send: never tried again by themselves (a person acts). */
export const SEND_REFUSALS: readonly ErrorCode[] = [
  'request_state',
  'request_not_found',
  'batch_state',
  'service_mismatch',
  'payee_held',
];

/** True when `err` is a refusal of the ledger to send (see `SEND_REFUSALS`). */
export function isSendRefusal(err: unknown): err is CashoutError {
  return isCashoutError(err) && SEND_REFUSALS.includes(err.code);
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Submits request `seq` of `batchId`. Throws `CashoutError('request_state')` when the ledger does
 * not allow sending (the request may already have been created, or is final): the caller must not
 * run it again by itself.
 */
export async function submitRequest(deps: SubmitDeps, batchId: string, seq: number): Promise<SubmitResult> {
  const { ledger, log } = deps;
  const sleep = deps.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    const claim = await ledger.claim(batchId, seq, deps.workerId, deps.serviceUrl ?? '');
    if (!claim.claimed) {
      if (claim.reason === 'batch' && claim.batchState === 'halted') {
        const batch = await ledger.getBatch(batchId);
        const request = await ledger.getRequest(batchId, seq);
        if (request?.state === 'pending') {
          const open = await ledger.finishUnsent(
            batchId,
            seq,
            `not sent: the batch was stopped (${batch?.haltReason ?? 'halted'})`,
          );
          return { kind: 'final', state: 'not_sent', open };
        }
      }
      if (claim.reason === 'payee') {
        // Sent again after "resolved not created", but a later payout holds a payee now: this
        // request is not sent; it ends as not sent, naming the holder (a person may retry it later).
        const request = await ledger.getRequest(batchId, seq, { body: false });
        if (request?.state === 'reconciled_not_created') {
          const why = refusal(batchId, seq, claim, deps.serviceUrl ?? '').message;
          const open = await ledger.finishUnsent(batchId, seq, why, 'reconciled_not_created');
          return { kind: 'final', state: 'not_sent', open };
        }
      }
      throw refusal(batchId, seq, claim, deps.serviceUrl ?? '');
    }
    const request = claim.request;
    if (deps.makeDurable) {
      try {
        await deps.makeDurable();
      } catch (cause) {
        await ledger.release(batchId, seq);
        throw new CashoutError(
          'redis_unsafe',
          `the sending mark of request ${seq} of batch ${batchId} could not be made durable; nothing was sent`,
          { batchId, seq },
          cause,
        );
      }
    }
    const started = Date.now();
    // The ledger's own text of the body: what was checked at import is what is sent.
    const result = await deps.client.postWithdrawal(request.bodyJson ?? request.body);
    const outcome = classifyOutcome(result);
    deps.observe?.(
      outcome.kind === 'not_sent' ? `not_sent_${outcome.reason}` : outcome.kind,
      request.walletLines.length + request.bankLines.length,
      (Date.now() - started) / 1000,
    );
    // One line per request: at debug level when it was created (the common case, up to thousands a
    // second, kept in the ledger and the metrics anyway), at info level when a person may need it.
    log[outcome.kind === 'created' ? 'debug' : 'info'](
      {
        batchId,
        seq,
        outcome: outcome.kind,
        httpStatus: 'httpStatus' in outcome ? outcome.httpStatus : undefined,
        ms: Date.now() - started,
      },
      'withdrawal request submitted',
    );

    if (outcome.kind === 'not_sent' && outcome.reason === 'connect' && attempt < deps.connectRetries) {
      await ledger.release(batchId, seq);
      const wait = deps.connectBackoffMs * 2 ** attempt;
      log.warn(
        { batchId, seq, attempt: attempt + 1, waitMs: wait },
        'service not reachable; nothing was sent; trying again',
      );
      await sleep(wait);
      continue;
    }
    return withLedgerRetries(() => record(deps, request, outcome), deps, request);
  }
}

/** Pause between outcome writes once the worker is stopping, in ms. */
const STOPPING_RETRY_MS = 250;

/**
 * Records an outcome, trying again while Redis is unreachable (up to about two minutes): the
 * request was sent, and losing its outcome would leave it unknown. The ledger's writes are safe to
 * repeat (a second identical write is recognised as already done). Once the worker is stopping
 * (`deps.stop`) it tries every 250 ms, and when the stop's deadline passes it gives up, even on a
 * write Redis has not answered: `CashoutError('redis_unreachable')`, the request stays `sending`.
 */
async function withLedgerRetries<T>(
  write: () => Promise<T>,
  deps: SubmitDeps,
  ids: { readonly batchId: string; readonly seq: number },
): Promise<T> {
  const stop = deps.stop;
  const giveUp = (cause: unknown) =>
    new CashoutError(
      'redis_unreachable',
      `the outcome of request ${ids.seq} of batch ${ids.batchId} could not be recorded before the worker stopped; ` +
        'it stays in sending, and the recovery sweep makes it unknown',
      { batchId: ids.batchId, seq: ids.seq, state: 'sending' },
      cause,
    );
  let lastError: unknown;
  for (let attempt = 0; ; attempt++) {
    if (stop?.deadline.aborted) throw giveUp(lastError);
    try {
      return await untilAborted(write(), stop?.deadline);
    } catch (err) {
      if (err instanceof Aborted) throw giveUp(lastError);
      if (err instanceof CashoutError || attempt >= 40) throw err;
      lastError = err;
      deps.log.warn(
        { attempt: attempt + 1, err: (err as Error).message },
        'could not record the outcome in the ledger; trying again',
      );
      const stopping = stop?.stopping.aborted === true;
      const wait = stopping ? STOPPING_RETRY_MS : Math.min(5_000, 250 * 2 ** Math.min(attempt, 5));
      // A long pause ends early when the stop begins, any pause at the deadline (checked above).
      const wake = stop && AbortSignal.any(stopping ? [stop.deadline] : [stop.stopping, stop.deadline]);
      await pause(wait, wake, deps.sleep);
    }
  }
}

/** Waits `ms` (with `sleep` when given), or less when `signal` is aborted: then its timer is cleared. */
async function pause(ms: number, signal: AbortSignal | undefined, sleep: SubmitDeps['sleep']): Promise<void> {
  try {
    await (sleep ? untilAborted(sleep(ms), signal) : delay(ms, undefined, signal ? { signal } : {}));
  } catch (err) {
    if (!(err instanceof Aborted) && (err as Error).name !== 'AbortError') throw err;
  }
}

/** `untilAborted` stopped waiting because its signal was aborted. */
class Aborted extends Error {
  constructor() {
    super('stopped waiting: the signal was aborted');
    this.name = 'Aborted';
  }
}

/** `work`, or an `Aborted` rejection as soon as `signal` is aborted (`work` itself goes on). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(new Aborted());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

async function record(deps: SubmitDeps, request: LedgerRequest, outcome: Classified): Promise<SubmitResult> {
  const { ledger } = deps;
  const { batchId, seq } = request;
  switch (outcome.kind) {
    case 'created':
      return {
        kind: 'final',
        state: 'accepted',
        open: await ledger.finish(batchId, seq, { state: 'accepted', httpStatus: 200, message: outcome.message }),
      };
    case 'unknown':
      return {
        kind: 'final',
        state: 'unknown',
        open: await ledger.finish(batchId, seq, {
          state: 'unknown',
          message: outcome.message,
          ...(outcome.httpStatus ? { httpStatus: outcome.httpStatus } : {}),
        }),
      };
    case 'not_sent':
      if (outcome.reason === 'rate_limited') {
        await ledger.release(batchId, seq);
        return { kind: 'rate_limited', retryAfterMs: outcome.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS };
      }
      if (outcome.reason === 'auth') await ledger.halt(batchId, outcome.message);
      return {
        kind: 'final',
        state: 'not_sent',
        open: await ledger.finish(batchId, seq, {
          state: 'not_sent',
          message: outcome.message,
          ...(outcome.httpStatus ? { httpStatus: outcome.httpStatus } : {}),
        }),
      };
    case 'rejected': {
      const map = mapRejection(request, outcome.errors);
      const named = new Set(Object.keys(map.rowErrors).map(Number));
      const rest = map.general.length === 0 && named.size > 0 ? remainderOf(request, named) : undefined;
      if (rest) {
        const childSeq = await ledger.split(
          batchId,
          seq,
          { httpStatus: outcome.httpStatus, message: outcome.message, rowErrors: map.rowErrors },
          rest,
        );
        const batch = await ledger.getBatch(batchId);
        return { kind: 'split', childSeq, open: batch?.open ?? 1 };
      }
      const rowErrors: Record<string, string[]> = {};
      for (const line of [...request.walletLines, ...request.bankLines]) {
        const own = map.rowErrors[line] ?? [];
        const all = [...own, ...map.general];
        rowErrors[line] = all.length > 0 ? all : [outcome.message];
      }
      return {
        kind: 'final',
        state: 'rejected',
        open: await ledger.finish(batchId, seq, {
          state: 'rejected',
          httpStatus: outcome.httpStatus,
          message: outcome.message,
          rowErrors,
        }),
      };
    }
  }
}

function refusal(
  batchId: string,
  seq: number,
  claim: Exclude<ClaimResult, { claimed: true }>,
  serviceUrl: string,
): CashoutError {
  switch (claim.reason) {
    case 'missing':
      return new CashoutError(
        'request_not_found',
        `request ${seq} of batch ${batchId} is not in the ledger; nothing was sent`,
        { batchId, seq },
      );
    case 'batch':
      return new CashoutError(
        'batch_state',
        `batch ${batchId} is ${claim.batchState}, not queued; request ${seq} was not sent`,
        {
          batchId,
          seq,
          batchState: claim.batchState,
        },
      );
    case 'service':
      return new CashoutError(
        'service_mismatch',
        `batch ${batchId} was imported for the service at ${claim.batchServiceUrl}, but this worker sends to ${serviceUrl}; ` +
          `request ${seq} was not sent and stays pending (run a worker configured for ${claim.batchServiceUrl})`,
        { batchId, seq, batchServiceUrl: claim.batchServiceUrl, serviceUrl },
      );
    case 'payee': {
      const [holderBatch = '', holderSeq = '', line = ''] = claim.holder.split(':');
      return new CashoutError(
        'payee_held',
        `request ${seq} of batch ${batchId} was not sent again: one of its payees is held by request ${holderSeq} of batch ` +
          `${holderBatch} (line ${line}, ${stateWords(claim.holderState)}) since it was last tried; nothing was sent`,
        { batchId, seq, holder: claim.holder },
      );
    }
    case 'state': {
      const t = transition(claim.state, 'claim');
      return new CashoutError(
        'request_state',
        describeRefusal('refused' in t ? t.refused : 'already_final', batchId, seq, claim.state),
        {
          batchId,
          seq,
          state: claim.state,
        },
      );
    }
  }
}
