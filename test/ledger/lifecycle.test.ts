/**
 * The lifecycle table's promises, read off the table itself: what may lead to a send, what leaves
 * `unknown`, and which payouts hold their payee. (test/ledger/lifecycle-table.test.ts checks
 * each cell against the ledger's scripts.)
 */
import { describe, expect, it } from 'vitest';
import {
  BATCH_STATES,
  REQUEST_ACTIONS,
  REQUEST_STATES,
  holdsPayee,
  luaPrelude,
  transition,
  type RequestAction,
  type RequestState,
  describeRefusal,
} from '../../src/ledger/lifecycle.js';

const moves = (pred: (from: RequestState, action: RequestAction, to: RequestState) => boolean) =>
  REQUEST_STATES.flatMap((from) =>
    REQUEST_ACTIONS.flatMap((action) => {
      const t = transition(from, action);
      return 'to' in t && pred(from, action, t.to) ? [`${from} × ${action} → ${t.to}`] : [];
    }),
  );

describe('the request lifecycle', () => {
  it('only a claim enters sending, and only from a state that proves nothing was created', () => {
    expect(moves((from, _a, to) => to === 'sending' && from !== 'sending')).toEqual([
      'pending × claim → sending',
      'not_sent × claim → sending',
      'reconciled_not_created × claim → sending',
    ]);
  });

  it("unknown is left only by a person's finding", () => {
    expect(moves((from, _a, to) => from === 'unknown' && to !== 'unknown')).toEqual([
      'unknown × resolve_created → reconciled_created',
      'unknown × resolve_not_created → reconciled_not_created',
    ]);
  });

  it('a settled outcome never changes', () => {
    for (const settled of ['accepted', 'rejected', 'reconciled_created'] as const) {
      expect(moves((from, _a, to) => from === settled && to !== settled)).toEqual([]);
    }
  });

  it('sending goes back to pending only by release (the caller must hold proof nothing was sent)', () => {
    expect(moves((from, _a, to) => from === 'sending' && to === 'pending')).toEqual(['sending × release → pending']);
  });

  it('a retry is allowed exactly where a claim is', () => {
    for (const s of REQUEST_STATES) expect('to' in transition(s, 'retry')).toBe('to' in transition(s, 'claim'));
  });

  it('every refusal of a request that may have been created says so', () => {
    for (const s of ['sending', 'unknown'] as const) {
      for (const a of ['claim', 'retry', 'give_up'] as const)
        expect(transition(s, a)).toEqual({ refused: 'may_be_created' });
    }
  });
});

describe('the payout register', () => {
  it('what may still move money or was paid holds the payee; the rest releases it', () => {
    const held = REQUEST_STATES.filter((s) => holdsPayee(s, 'queued'));
    expect(held).toEqual(['pending', 'sending', 'accepted', 'unknown', 'reconciled_created']);
    expect(BATCH_STATES.filter((b) => holdsPayee('pending', b))).toEqual([
      'staging',
      'awaiting_approval',
      'queued',
      'halted',
      'finished',
      'needs_reconciliation',
    ]);
  });

  it('the scripts get their guards from the table', () => {
    const lua = luaPrelude();
    expect(lua).toContain(
      "local CLAIMABLE = {['pending'] = true, ['not_sent'] = true, ['reconciled_not_created'] = true}",
    );
    expect(lua).toContain(
      "local HOLDING = {['sending'] = true, ['accepted'] = true, ['unknown'] = true, ['reconciled_created'] = true}",
    );
    expect(lua).toContain(
      "local PENDING_HOLDS_IN = {['staging'] = true, ['awaiting_approval'] = true, ['queued'] = true, ['halted'] = true, ['finished'] = true, ['needs_reconciliation'] = true}",
    );
  });
});

describe('refusals in words', () => {
  it('names a request a person resolved by what they did', () => {
    expect(describeRefusal('already_final', 'b1', 5, 'reconciled_created')).toBe(
      'request 5 of batch b1 is already resolved as created: its outcome is final; it is neither sent nor resolved again',
    );
    expect(describeRefusal('not_unknown', 'b1', 5, 'reconciled_not_created')).toBe(
      'request 5 of batch b1 is resolved as not created, not unknown; only unknown requests are resolved',
    );
    expect(describeRefusal('already_final', 'b1', 5, 'accepted')).toBe(
      'request 5 of batch b1 is already accepted: its outcome is final; it is neither sent nor resolved again',
    );
  });
});
