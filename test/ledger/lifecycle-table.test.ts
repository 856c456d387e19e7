/**
 * The lifecycle table against the ledger's scripts: every request state × action, and every batch
 * state × action, is run through the real Lua on the real Redis, and the outcome (next state, or
 * a refusal that changes nothing) must be the one `transition` / `batchTransition` gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import {
  BATCH_ACTIONS,
  BATCH_STATES,
  REQUEST_ACTIONS,
  REQUEST_STATES,
  batchTransition,
  RETRY_SENDS_IN,
  transition,
  type BatchAction,
  type BatchState,
  type RequestAction,
  type RequestState,
} from '../../src/ledger/lifecycle.js';
import { retryRequest } from '../../src/ledger/actions.js';
import { SUBMIT_QUEUE, type SubmitJobData } from '../../src/queue/queues.js';
import { TEST_REDIS_URL, deleteKeys, testPrefix } from '../support/redis.js';

const BODY = JSON.stringify({
  mobile_wallets: [
    { amount: '10.00', type: 'TRANSFER', holder_name: 'A', mobile_number: '+201001234567', description: 'x' },
  ],
});

describe('the lifecycle table is what the scripts do', () => {
  const prefix = testPrefix('lifecycle');
  let redis: Redis;
  let ledger: Ledger;
  let queue: Queue<SubmitJobData>;
  let n = 0;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
    ledger = openLedger(redis, prefix);
    queue = new Queue<SubmitJobData>(SUBMIT_QUEUE, {
      connection: new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null }),
      prefix,
    });
  });
  afterAll(async () => {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
    await deleteKeys(prefix);
  });

  /** A fresh batch (16 hex digits) in `batchState` with request 1 in `state`. */
  async function fixture(state: RequestState, batchState: BatchState = 'queued'): Promise<string> {
    const id = (++n).toString(16).padStart(16, '0');
    await redis.hset(`${prefix}:batch:${id}`, {
      state: batchState,
      requests: 1,
      open: 1,
      next_seq: 1,
      imported_by: 'maker',
      service_url: '',
    });
    await redis.hset(`${prefix}:batch:${id}:req:1`, {
      state,
      body: BODY,
      wallet_lines: '[2]',
      bank_lines: '[]',
      total: '1000',
      refs: '{}',
      payees: '2\tr:LIFECYCLE-' + id + '\n',
      attempts: '0',
    });
    if (state === 'sending') await redis.sadd(`${prefix}:batch:${id}:sending`, '1');
    return id;
  }

  async function act(id: string, action: RequestAction, from: RequestState): Promise<void> {
    switch (action) {
      case 'claim': {
        const res = await ledger.claim(id, 1, 'test');
        if (!res.claimed) throw new Error(`refused: ${res.reason}`);
        return;
      }
      case 'release':
        return ledger.release(id, 1);
      case 'record_accepted':
      case 'record_rejected':
      case 'record_unknown':
      case 'record_not_sent': {
        const state = action.slice('record_'.length) as 'accepted' | 'rejected' | 'unknown' | 'not_sent';
        await ledger.finish(id, 1, { state, message: 'test' });
        return;
      }
      case 'give_up':
        await ledger.finishUnsent(id, 1, 'test', from);
        return;
      case 'split':
        await ledger.split(
          id,
          1,
          { message: '422', rowErrors: { '2': ['x'] } },
          { body: JSON.parse(BODY), walletLines: [2], bankLines: [], totalPiasters: 1000n, references: {} },
        );
        return;
      case 'resolve_created':
        return ledger.resolve(id, 1, 'created', 'checker', 'note');
      case 'resolve_not_created':
        return ledger.resolve(id, 1, 'not_created', 'checker', 'note');
      case 'retry':
        return retryRequest(ledger, queue, id, 1, { user: 'checker' });
    }
  }

  for (const from of REQUEST_STATES) {
    for (const action of REQUEST_ACTIONS) {
      const expected = transition(from, action);
      const label = 'to' in expected ? `→ ${expected.to}` : `refused (${expected.refused})`;
      it(`request ${from} × ${action}: ${label}`, async () => {
        const id = await fixture(from);
        const outcome = await act(id, action, from).then(
          () => 'done',
          (err: Error) => `refused: ${err.message}`,
        );
        const after = (await ledger.getRequest(id, 1, { body: false }))?.state;
        if ('to' in expected) {
          expect(outcome).toBe('done');
          expect(after).toBe(expected.to);
        } else {
          expect(outcome).toMatch(/^refused/);
          expect(after).toBe(from);
        }
      });
    }
  }

  async function batchAct(id: string, action: BatchAction): Promise<void> {
    switch (action) {
      case 'approve':
        await ledger.approveBatch(id, 'checker');
        return;
      case 'cancel':
        return ledger.cancelBatch(id, 'checker', 'note');
      case 'expire':
        return ledger.cancelBatch(id, 'bulk-cashout', 'expired', true);
      case 'halt':
        return ledger.halt(id, 'token refused');
      case 'release':
        return ledger.releaseBatch(id, { requests: 1, rows: 1, validRows: 1, invalidRows: 0, totalPiasters: 1000n });
      case 'release_for_approval':
        return ledger.releaseBatch(
          id,
          { requests: 1, rows: 1, validRows: 1, invalidRows: 0, totalPiasters: 1000n },
          new Date(Date.now() + 3_600_000).toISOString(),
        );
      case 'refuse':
        await ledger.refuseBatch(id, { rows: 1, validRows: 1, invalidRows: 0, totalPiasters: 1000n }, 'test');
        return;
    }
  }

  for (const from of BATCH_STATES) {
    for (const action of BATCH_ACTIONS) {
      const expected = batchTransition(from, action);
      it(`batch ${from} × ${action}: ${expected ? `→ ${expected}` : 'unchanged'}`, async () => {
        const id = await fixture('pending', from);
        await batchAct(id, action).catch(() => undefined);
        expect((await ledger.getBatch(id))?.state).toBe(expected ?? from);
      });
    }
  }

  // A person's retry is accepted exactly where the claim script would then take the request, so
  // that "queued again" is never said of a request no worker can send.
  for (const batchState of [...BATCH_STATES, 'stopped' as const]) {
    const sends = batchState !== 'stopped' && RETRY_SENDS_IN.includes(batchState);
    it(`retry of a not_sent request in a batch ${batchState}: ${sends ? 'queued again and taken' : 'refused, and the claim refuses too'}`, async () => {
      const make = async () => {
        const id = await fixture('not_sent', batchState === 'stopped' ? 'finished' : batchState);
        if (batchState === 'stopped') await redis.hset(`${prefix}:batch:${id}`, 'halt_reason', 'token refused');
        return id;
      };
      const retried = await retryRequest(ledger, queue, await make(), 1, { user: 'checker' }).then(
        () => 'queued',
        (err: Error) => `refused: ${err.message}`,
      );
      const claimed = (await ledger.claim(await make(), 1, 'test')).claimed;
      expect(retried === 'queued', retried).toBe(sends);
      expect(claimed).toBe(sends);
      if (!sends) expect(retried).toMatch(/nothing of it is sent/);
    });
  }
});
