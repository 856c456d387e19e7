/**
 * The lifecycle of a withdrawal request and of a batch, as one pure table: state × action → the
 * next state, or a refusal with its reason. Nothing here touches Redis. The ledger's Lua scripts
 * take their guards from this table (`luaPrelude` writes it into every script), and a table test
 * checks every cell against the scripts, so the two cannot drift apart.
 *
 * The withdrawal endpoint has no idempotency key (interface doc §2.4, §5): a request may be sent
 * again only with proof that the first try created nothing. Hence:
 * - only `claim` moves a request to `sending`, and only from a state that proves nothing was
 *   created (`pending`: never sent; `not_sent`: provably refused before creation;
 *   `reconciled_not_created`: a person found it was not created);
 * - `sending` leaves only through an outcome (`accepted`, `rejected`, `unknown`, `not_sent`), or
 *   back to `pending` through `release`, which the caller may use only with proof (connection
 *   refused before sending, a 429);
 * - `unknown` leaves only through a person's finding (`resolve_created`, `resolve_not_created`).
 */

/** States of one withdrawal request in the ledger. */
export type RequestState =
  | 'pending'
  | 'sending'
  | 'accepted'
  | 'rejected'
  | 'unknown'
  | 'not_sent'
  | 'reconciled_created'
  | 'reconciled_not_created';

/** Every request state, in the order of the lifecycle. */
export const REQUEST_STATES: readonly RequestState[] = [
  'pending',
  'sending',
  'accepted',
  'rejected',
  'unknown',
  'not_sent',
  'reconciled_created',
  'reconciled_not_created',
];

/** States of a batch. */
export type BatchState =
  'staging' | 'refused' | 'awaiting_approval' | 'cancelled' | 'queued' | 'halted' | 'finished' | 'needs_reconciliation';

/**
 * Batch states in which a request of the batch may still be sent, so that a person's retry can
 * lead to a submission (as the claim script allows: a request not sent before, in a batch queued,
 * finished or needing reconciliation, never one whose batch was stopped because the service
 * refused the token). Elsewhere (staging, refused, awaiting approval, cancelled, halted) nothing
 * of the batch is sent, and a retry is refused.
 */
export const RETRY_SENDS_IN: readonly BatchState[] = ['queued', 'finished', 'needs_reconciliation'];

/** Whether a person's retry of a request of `batch` can lead to a submission (`RETRY_SENDS_IN`, not stopped). */
export function retrySends(batch: { readonly state: BatchState; readonly haltReason?: string | undefined }): boolean {
  return !batch.haltReason && RETRY_SENDS_IN.includes(batch.state);
}

/**
 * How long an import may stay `staging` before the workers' recovery sweep takes it for dead (its
 * process stopped mid-file) and refuses it: 2 hours, far beyond the minute a file at the row limit
 * takes. Such a batch has no job (jobs are added only once it is released), so refusing it sends
 * nothing and frees the payees its staged requests held.
 */
export const STALE_STAGING_MS = 2 * 3_600_000;

/** How an import that stopped mid-file ends, in the words of every message about one. */
export const STOPPED_IMPORT_ENDS = `the workers' recovery sweep refuses it ${STALE_STAGING_MS / 3_600_000} hours after its import began`;

/** Every batch state. */
export const BATCH_STATES: readonly BatchState[] = [
  'staging',
  'refused',
  'awaiting_approval',
  'cancelled',
  'queued',
  'halted',
  'finished',
  'needs_reconciliation',
];

/**
 * What may happen to a request. `record_*` are a worker's outcomes, `give_up` ends a request never
 * sent (its batch was stopped, or a later payout holds one of its payees), `split` is a 422 naming some rows (the others move to a new
 * request), `resolve_*` and `retry` are a person's actions.
 */
export type RequestAction =
  | 'claim'
  | 'release'
  | 'record_accepted'
  | 'record_rejected'
  | 'record_unknown'
  | 'record_not_sent'
  | 'give_up'
  | 'split'
  | 'resolve_created'
  | 'resolve_not_created'
  | 'retry';

/** Every request action. */
export const REQUEST_ACTIONS: readonly RequestAction[] = [
  'claim',
  'release',
  'record_accepted',
  'record_rejected',
  'record_unknown',
  'record_not_sent',
  'give_up',
  'split',
  'resolve_created',
  'resolve_not_created',
  'retry',
];

/** Why an action is refused, one code per situation (the wording is `describeRefusal`'s). */
export type RefusalCode =
  /** The request may already have been created (sending or unknown): a person must reconcile it. */
  | 'may_be_created'
  /** The request already has a final outcome. */
  | 'already_final'
  /** The action needs a request being sent, and this one is not. */
  | 'not_sending'
  /** Only an unknown request takes a person's finding. */
  | 'not_unknown'
  /** A request not yet sent cannot be given an outcome other than not sent. */
  | 'not_pending';

/** The table's answer: the next state, or a refusal. */
export type Transition = { readonly to: RequestState } | { readonly refused: RefusalCode };

/** States from which a request may be taken for sending: each proves the last try created nothing. */
export const SENDABLE: readonly RequestState[] = ['pending', 'not_sent', 'reconciled_not_created'];

/** States whose outcome is settled and never changes again. */
const SETTLED: readonly RequestState[] = ['accepted', 'rejected', 'reconciled_created'];

/** States in which the request may have been created and no one knows yet. */
const MAYBE_CREATED: readonly RequestState[] = ['sending', 'unknown'];

function refusedFor(from: RequestState, wanted: 'sendable' | 'sending' | 'unknown' | 'pending'): Transition {
  if (MAYBE_CREATED.includes(from) && wanted !== 'sending' && wanted !== 'unknown')
    return { refused: 'may_be_created' };
  if (wanted === 'sending') return { refused: SETTLED.includes(from) ? 'already_final' : 'not_sending' };
  if (wanted === 'unknown') return { refused: SETTLED.includes(from) ? 'already_final' : 'not_unknown' };
  if (wanted === 'pending') return { refused: SETTLED.includes(from) ? 'already_final' : 'not_pending' };
  return { refused: 'already_final' };
}

/**
 * The lifecycle: the next state of a request in state `from` after `action`, or why it is refused.
 * Pure and total: defined for every state × action (a table test covers each cell).
 */
export function transition(from: RequestState, action: RequestAction): Transition {
  switch (action) {
    case 'claim':
      return SENDABLE.includes(from) ? { to: 'sending' } : refusedFor(from, 'sendable');
    case 'retry':
      // A person's retry only queues the request again; the claim then decides. Allowed where a claim is.
      return SENDABLE.includes(from) ? { to: from } : refusedFor(from, 'sendable');
    case 'release':
      if (from === 'pending') return { to: 'pending' };
      return from === 'sending' ? { to: 'pending' } : refusedFor(from, 'sending');
    case 'record_accepted':
    case 'record_rejected':
    case 'record_unknown':
    case 'record_not_sent': {
      const outcome = RECORDED[action];
      // The same outcome written again (its first reply was lost) is recorded once: no change.
      if (from === outcome) return { to: outcome };
      return from === 'sending' ? { to: outcome } : refusedFor(from, 'sending');
    }
    case 'split':
      return from === 'sending' ? { to: 'rejected' } : refusedFor(from, 'sending');
    case 'give_up':
      // Never sent (batch stopped), or not sent again (a later payout holds a payee meanwhile).
      return from === 'pending' || from === 'reconciled_not_created' ? { to: 'not_sent' } : refusedFor(from, 'pending');
    case 'resolve_created':
      return from === 'unknown' ? { to: 'reconciled_created' } : refusedFor(from, 'unknown');
    case 'resolve_not_created':
      return from === 'unknown' ? { to: 'reconciled_not_created' } : refusedFor(from, 'unknown');
  }
}

/** The state each `record_*` action records. */
const RECORDED = {
  record_accepted: 'accepted',
  record_rejected: 'rejected',
  record_unknown: 'unknown',
  record_not_sent: 'not_sent',
} as const satisfies Partial<Record<RequestAction, RequestState>>;

/** The action that records each outcome a worker may record. */
export const OUTCOME_ACTION = {
  accepted: 'record_accepted',
  rejected: 'record_rejected',
  unknown: 'record_unknown',
  not_sent: 'record_not_sent',
} as const satisfies Record<string, RequestAction>;

/** States from which a request's `action` is allowed (the guard a script checks). */
export function allowedFrom(action: RequestAction): RequestState[] {
  return REQUEST_STATES.filter((s) => 'to' in transition(s, action));
}

/** Words for a refusal, about request `seq` of batch `batchId` in state `state`. */
export function describeRefusal(
  code: RefusalCode,
  batchId: string,
  seq: number,
  state: RequestState | 'missing',
): string {
  const what = `request ${seq} of batch ${batchId}`;
  switch (code) {
    case 'may_be_created':
      return `${what} may already have been created (ledger state ${state}); reconcile it first (cashout reconcile ${batchId})`;
    case 'already_final':
      return `${what} is already ${stateWords(state)}: its outcome is final; it is neither sent nor resolved again`;
    case 'not_sending':
      return `${what} is ${stateWords(state)}, not being sent; no outcome was recorded`;
    case 'not_unknown':
      return `${what} is ${stateWords(state)}, not unknown; only unknown requests are resolved`;
    case 'not_pending':
      return `${what} is ${stateWords(state)}, not waiting to be sent`;
  }
}

/** States whose words are not their name's: what a person did to them. */
const STATE_WORDS: Readonly<Record<string, string>> = {
  reconciled_created: 'resolved as created',
  reconciled_not_created: 'resolved as not created',
};

/** A state in words ("not sent", "resolved as created"). */
export function stateWords(state: string): string {
  return STATE_WORDS[state] ?? state.replaceAll('_', ' ');
}

// --- Batches ---------------------------------------------------------------------------------

/** What may happen to a batch as a whole. */
export type BatchAction = 'release' | 'release_for_approval' | 'refuse' | 'approve' | 'cancel' | 'expire' | 'halt';

/** Every batch action. */
export const BATCH_ACTIONS: readonly BatchAction[] = [
  'release',
  'release_for_approval',
  'refuse',
  'approve',
  'cancel',
  'expire',
  'halt',
];

/** The next state of a batch in `from` after `action`, or undefined when the action is refused there. */
export function batchTransition(from: BatchState, action: BatchAction): BatchState | undefined {
  switch (action) {
    case 'release':
      return from === 'staging' ? 'queued' : undefined;
    case 'release_for_approval':
      return from === 'staging' ? 'awaiting_approval' : undefined;
    case 'refuse':
      return from === 'staging' ? 'refused' : undefined;
    case 'approve':
      return from === 'awaiting_approval' ? 'queued' : undefined;
    case 'cancel':
    case 'expire':
      return from === 'awaiting_approval' ? 'cancelled' : undefined;
    case 'halt':
      return from === 'queued' ? 'halted' : undefined;
  }
}

// --- The payout register -------------------------------------------------------------------

/**
 * Whether a payout in a request of state `request`, in a batch of state `batch`, holds its payee
 * key in the payout register (a later row with the same key is then not sent). A payout that may
 * still move money (waiting for approval, queued, being sent, unknown) or that was accepted holds
 * it; `rejected`, `not_sent`, a refused or cancelled batch and "resolved not created" release it.
 * An accepted payout whose key is a fingerprint (no reference) holds it only within the duplicate
 * window; the register applies that rule (`payeeWindowApplies`).
 */
export function holdsPayee(request: RequestState, batch: BatchState): boolean {
  switch (request) {
    case 'pending':
      return batch !== 'refused' && batch !== 'cancelled';
    case 'sending':
    case 'unknown':
    case 'accepted':
    case 'reconciled_created':
      return true;
    case 'rejected':
    case 'not_sent':
    case 'reconciled_not_created':
      return false;
  }
}

/** States whose hold on a fingerprint key (a row without reference) ends after the duplicate window. */
export const WINDOWED_STATES: readonly RequestState[] = ['accepted', 'reconciled_created'];

// --- Lua -------------------------------------------------------------------------------------

function luaSet(name: string, members: readonly string[]): string {
  return `local ${name} = {${members.map((m) => `['${m}'] = true`).join(', ')}}`;
}

/**
 * Lua lines defining the table's guards, written at the top of every ledger script (its
 * `--@lifecycle` line): `CLAIMABLE`, `RELEASABLE`, `RESOLVABLE`, `HOLDING`, `PENDING_HOLDS_IN`,
 * `WINDOWED`.
 */
export function luaPrelude(): string {
  return [
    luaSet('CLAIMABLE', allowedFrom('claim')),
    luaSet('RESOLVABLE', allowedFrom('resolve_created')),
    luaSet(
      'HOLDING',
      REQUEST_STATES.filter((s) => s !== 'pending' && holdsPayee(s, 'queued')),
    ),
    luaSet(
      'PENDING_HOLDS_IN',
      BATCH_STATES.filter((b) => holdsPayee('pending', b)),
    ),
    luaSet('WINDOWED', WINDOWED_STATES),
  ].join('\n');
}
