/**
 * A person's actions on the ledger, one function each, used alike by the CLI, the dashboard and
 * the inbox: approve, cancel, resolve, retry. Each records who (`Actor`), when and why, and each
 * goes through the ledger's guards (lifecycle.ts); none sends anything by itself: only a worker
 * sends, and only what the ledger's claim allows.
 */
import type { Queue } from 'bullmq';
import { requestJobId } from '../batch-id.js';
import { CashoutError } from '../errors.js';
import { enqueueRequests, seqRange } from '../queue/enqueue-requests.js';
import type { SubmitJobData } from '../queue/queues.js';
import type { Ledger } from './index.js';
import { describeRefusal, retrySends, stateWords, transition } from './lifecycle.js';

/**
 * Who acts: `user` is the person (the operating-system user for the CLI, the logged-in user for
 * the dashboard, "scheduler" for the inbox), which decides who may approve; `label` is free text
 * a person may add (`--as`), shown next to the user but never replacing it.
 */
export interface Actor {
  readonly user: string;
  readonly label?: string;
}

/** How an actor is shown and recorded: "alice", or "alice (payroll desk)". */
export function actorText(actor: Actor): string {
  const label = actor.label?.trim();
  return label && label !== actor.user ? `${actor.user} (${label})` : actor.user;
}

/**
 * Approves a batch awaiting approval and queues its requests; returns how many. The approver
 * must be another person than the importer (compared by `user`, whatever the labels). Throws
 * `CashoutError` `batch_state`, `self_approval` or `approval_expired` (Ledger.approveBatch).
 */
export async function approveBatch(
  ledger: Ledger,
  queue: Queue<SubmitJobData>,
  batchId: string,
  actor: Actor,
): Promise<number> {
  const requests = await ledger.approveBatch(batchId, actorText(actor), actor.user);
  await enqueueRequests(queue, batchId, seqRange(1, requests));
  return requests;
}

/** Cancels a batch awaiting approval: nothing of it is sent. Throws `batch_state` otherwise. */
export async function cancelBatch(ledger: Ledger, batchId: string, actor: Actor, note: string): Promise<void> {
  await ledger.cancelBatch(batchId, actorText(actor), requireNote(note));
}

/**
 * Records a person's finding on an unknown request (`created`: its rows are accepted;
 * `not_created`: it may be retried, once its payees are still free). Throws `usage` without a
 * note, `request_state` unless the request is unknown, `request_not_found`.
 */
export async function resolveRequest(
  ledger: Ledger,
  batchId: string,
  seq: number,
  finding: 'created' | 'not_created',
  actor: Actor,
  note: string,
): Promise<void> {
  await ledger.resolve(batchId, seq, finding, actorText(actor), requireNote(note));
}

/** How long a retry waits for a job that is ending its request (`retryRequest`), and how often it looks, ms. */
const ACTIVE_WAIT_MS = 5_000;
const ACTIVE_POLL_MS = 100;

/**
 * Queues a request again when the lifecycle allows a retry (pending, not sent, or resolved as not
 * created) and records who asked. The worker's claim then decides again (it refuses a request
 * whose payee another payout holds meanwhile). Throws `request_state` (e.g. an unknown request:
 * reconcile it first), `batch_state` (a batch of which nothing is sent: `RETRY_SENDS_IN`, or one
 * stopped because the service refused the token), `service_mismatch` (the caller's `serviceUrl`,
 * its configured service address normalised by `serviceAddress`, is not the one the batch was
 * imported for: its workers would not send it either) or `request_not_found`.
 */
export async function retryRequest(
  ledger: Ledger,
  queue: Queue<SubmitJobData>,
  batchId: string,
  seq: number,
  actor: Actor,
  options: { readonly serviceUrl?: string | undefined } = {},
): Promise<void> {
  const request = await ledger.getRequest(batchId, seq, { body: false });
  if (!request) throw new CashoutError('request_not_found', `batch ${batchId} has no request ${seq}`, { batchId, seq });
  const batch = await ledger.getBatch(batchId);
  if (batch?.haltReason) {
    throw new CashoutError(
      'batch_state',
      `batch ${batchId} was stopped (${batch.haltReason}); nothing of it is sent again: fix the setting, then import the file again with --force (rows paid or to be paid are not sent twice)`,
      { batchId, seq, state: batch.state },
    );
  }
  if (batch?.serviceUrl && options.serviceUrl && batch.serviceUrl !== options.serviceUrl) {
    throw new CashoutError(
      'service_mismatch',
      `batch ${batchId} was imported for the service at ${batch.serviceUrl}, but this setup sends to ${options.serviceUrl}: request ${seq} is not queued again (retry it where CASHOUT_API_BASE_URL is ${batch.serviceUrl})`,
      { batchId, seq, batchServiceUrl: batch.serviceUrl, serviceUrl: options.serviceUrl },
    );
  }
  if (batch && !retrySends(batch)) {
    throw new CashoutError(
      'batch_state',
      `batch ${batchId} is ${stateWords(batch.state)}: nothing of it is sent, so request ${seq} is not queued again`,
      { batchId, seq, state: batch.state },
    );
  }
  const t = transition(request.state, 'retry');
  if ('refused' in t) {
    throw new CashoutError('request_state', describeRefusal(t.refused, batchId, seq, request.state), {
      batchId,
      seq,
      state: request.state,
    });
  }
  const job = await queue.getJob(requestJobId(batchId, seq));
  let state = job ? await job.getState() : 'missing';
  // A job still active after its request ended (not sent) is about to complete: a retry now would
  // queue nothing. It is waited for a moment; a pending request's active job sends it anyway.
  for (let waited = 0; job && state === 'active' && request.state !== 'pending'; waited += ACTIVE_POLL_MS) {
    if (waited >= ACTIVE_WAIT_MS) {
      throw new CashoutError(
        'request_state',
        `request ${seq} of batch ${batchId} is still held by a worker that is ending it; nothing was queued: retry it again in a moment`,
        { batchId, seq, state: request.state },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, ACTIVE_POLL_MS));
    state = await job.getState();
  }
  if (job && (state === 'failed' || state === 'completed')) await job.retry(state);
  else if (state === 'missing' || state === 'unknown') await enqueueRequests(queue, batchId, [seq]);
  await ledger.recordEvent(batchId, {
    action: 'retried',
    by: actorText(actor),
    at: new Date().toISOString(),
    note: `request ${seq}`,
  });
}

function requireNote(note: string): string {
  const text = note.trim();
  if (text === '')
    throw new CashoutError('usage', 'a note is required: say where you looked and what you found, or why');
  return text;
}
