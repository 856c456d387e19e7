/**
 * The submission ledger: one Redis record per batch and per withdrawal request, the payout
 * register, and the only code that writes a request's state. The withdrawal endpoint has no
 * idempotency key (interface doc §2.4, §5), so this ledger is what stands between a re-delivered
 * job, a re-uploaded file or a retry button and a second payment.
 *
 * - lifecycle.ts: the state × action table every guard comes from;
 * - lua/*.lua: the scripts that move states atomically (scripts.ts loads them);
 * - batches.ts, requests.ts, payout-register.ts: the operations, by what they act on;
 * - codec.ts: records ↔ Redis hash fields; keys.ts: the key names;
 * - actions.ts: a person's actions (approve, cancel, resolve, retry), recorded with who and why.
 */
import type { Redis } from 'ioredis';
import { CONFIG_DEFAULTS } from '../config.js';
import type { WithdrawalRequest } from './withdrawal-request.js';
import type {
  ApprovalEvent,
  BatchCounts,
  BatchRecord,
  ClaimResult,
  LedgerRequest,
  Outcome,
  RequestState,
} from './codec.js';
import { batchOps, type NewBatch } from './batches.js';
import { ledgerContext } from './keys.js';
import type { PayeeHolder, RegisterSettings } from './payout-register.js';
import { requestOps, type RequestToStage } from './requests.js';
import { defineLedgerScripts, type LedgerRedis } from './scripts.js';

export * from './codec.js';
export type { NewBatch } from './batches.js';
export type { RequestToStage } from './requests.js';
export type { PayeeHolder, RegisterSettings } from './payout-register.js';

/** Ledger access bound to one Redis connection and key prefix. */
export interface Ledger {
  readonly prefix: string;
  /**
   * Records a new batch in `staging`. Throws `CashoutError('batch_exists')` when the same id was
   * imported before, with the existing batch's `state` in its context: a refused batch is never
   * replaced (see `supersedeRefused`).
   */
  createBatch(batch: NewBatch): Promise<void>;
  /**
   * Names `nextId` as the batch that imports the content of refused batch `batchId` again, unless
   * another import named one first; returns the id named (the caller imports under it). Throws
   * `CashoutError('batch_state')` when `batchId` is not refused.
   */
  supersedeRefused(batchId: string, nextId: string): Promise<string>;
  getBatch(batchId: string): Promise<BatchRecord | undefined>;
  listBatches(limit?: number): Promise<BatchRecord[]>;
  /**
   * Writes requests `pending` and takes their payee keys in the register. Throws
   * `CashoutError('payee_held')` when a key was taken by another batch since `checkPayees` (two
   * imports at once): the caller refuses the batch. `payAgain` takes keys held elsewhere (a
   * person's recorded choice).
   */
  stageRequests(
    batchId: string,
    requests: readonly RequestToStage[],
    options?: { readonly payAgain?: boolean },
  ): Promise<void>;
  /** For each of `keys` (payee keys) held by a payout of another batch: its index → the holder. */
  checkPayees(batchId: string, keys: readonly string[]): Promise<Map<number, PayeeHolder>>;
  /**
   * staging → queued (the staged requests become sendable; the caller adds their jobs), or
   * staging → awaiting_approval when `approvalUntil` (ISO time) is given: nothing is sendable
   * until `approveBatch`. Throws `CashoutError('batch_state')` when the batch is no longer staging
   * (refused meanwhile).
   */
  releaseBatch(batchId: string, counts: BatchCounts, approvalUntil?: string): Promise<void>;
  /**
   * staging → refused: staged requests are deleted (their payee keys freed); nothing will be sent.
   * False (and nothing changed) when the batch is no longer staging.
   */
  refuseBatch(batchId: string, counts: Omit<BatchCounts, 'requests'>, reason: string): Promise<boolean>;
  /**
   * awaiting_approval → queued by someone other than the importer (`user`, the person behind `by`;
   * default `by`, compared with the importer's person). Returns the number of requests
   * to enqueue. Throws `CashoutError` `batch_state` (not awaiting approval), `self_approval` (by
   * the importer) or `approval_expired` (after the deadline; the batch is then cancelled).
   */
  approveBatch(batchId: string, by: string, user?: string): Promise<number>;
  /** awaiting_approval → cancelled; nothing of the batch will be sent. Throws `batch_state` otherwise. */
  cancelBatch(batchId: string, by: string, note: string, expired?: boolean): Promise<void>;
  listApprovals(batchId: string): Promise<ApprovalEvent[]>;
  /** Adds a step to the batch's story (a retry, say). */
  recordEvent(batchId: string, event: ApprovalEvent): Promise<void>;
  /**
   * A request's record, or undefined. With `{ body: false }` the body and payee keys are not read
   * (reports need only the outcome: a request's body is most of its bytes); `bodyJson` is then "{}".
   */
  getRequest(batchId: string, seq: number, options?: { readonly body?: boolean }): Promise<LedgerRequest | undefined>;
  /**
   * Takes a request for sending (→ `sending`), only from a state that proves nothing was created,
   * only in a batch that may send, only when `serviceUrl` (the worker's service address; '' = not
   * checked) is the batch's, and, for a request sent again, only when its payee keys are free.
   */
  claim(batchId: string, seq: number, by: string, serviceUrl?: string): Promise<ClaimResult>;
  /** sending → final state. Returns the number of requests of the batch still open (0 = batch done). */
  finish(batchId: string, seq: number, outcome: Outcome): Promise<number>;
  /**
   * pending → not_sent, for a request that will never be sent (batch halted); or, with `from`
   * `reconciled_not_created`, a request that may not be sent again because a later payout holds
   * one of its payees.
   */
  finishUnsent(batchId: string, seq: number, message: string, from?: RequestState): Promise<number>;
  /** sending → pending, only when it is proven nothing reached the service. */
  release(batchId: string, seq: number): Promise<void>;
  /** sending → rejected with named rows, plus a new pending request with the other items. Returns the new seq. */
  split(
    batchId: string,
    seq: number,
    rejected: Omit<Outcome, 'state'>,
    child: Omit<WithdrawalRequest, 'seq'> & { payees?: string },
  ): Promise<number>;
  /**
   * Records a person's finding on an `unknown` request: `created` makes its rows accepted
   * (reconciled); `not_created` makes it sendable again (a retry of its job then sends it).
   * Throws `CashoutError('request_state')` unless the request is `unknown`.
   */
  resolve(batchId: string, seq: number, finding: 'created' | 'not_created', by: string, note: string): Promise<void>;
  /** Every finding recorded on the batch, oldest first. */
  listResolutions(
    batchId: string,
  ): Promise<{ request: number; finding: string; by: string; at: string; note: string }[]>;
  /** Stops a batch: requests not yet sent end as not_sent. */
  halt(batchId: string, reason: string): Promise<void>;
  /** Seqs of requests currently in `sending`. */
  sendingSeqs(batchId: string): Promise<number[]>;
  /**
   * The state of each request of `seqs` (undefined where there is none), in one round trip; reads
   * nothing else of the requests (cheap enough for a sweep over a whole batch).
   */
  requestStates(batchId: string, seqs: readonly number[]): Promise<(RequestState | undefined)[]>;
  /** Largest seq in use (original requests plus resends). */
  lastSeq(batchId: string): Promise<number>;
  /** Deletes every key of a batch (sandbox runs only). */
  deleteBatch(batchId: string): Promise<void>;
}

/**
 * Opens the ledger on a connection. The connection's lifetime stays with the caller. `register`
 * holds the payout register's settings (the duplicate window, `CONFIG_DEFAULTS.duplicateWindowHours`
 * by default).
 */
export function openLedger(redis: Redis, prefix: string, register: Partial<RegisterSettings> = {}): Ledger {
  defineLedgerScripts(redis);
  const c = ledgerContext(redis as LedgerRedis, prefix, {
    duplicateWindowHours: register.duplicateWindowHours ?? CONFIG_DEFAULTS.duplicateWindowHours,
  });
  return { prefix, ...batchOps(c), ...requestOps(c) };
}
