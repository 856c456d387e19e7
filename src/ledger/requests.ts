/**
 * Withdrawal requests in the ledger: staged with their payee keys, taken for sending, given their
 * outcome, split after a 422, resolved by a person. Every state move is one Lua script whose guard
 * comes from the lifecycle table (lifecycle.ts).
 */
import type { WithdrawalRequest, StagedRequest } from './withdrawal-request.js';
import { CashoutError } from '../errors.js';
import {
  parseRequest,
  OUTCOME_FIELDS,
  type ClaimResult,
  type LedgerRequest,
  type Outcome,
  type RequestState,
} from './codec.js';
import type { LedgerContext } from './keys.js';
import { allowedFrom, describeRefusal, OUTCOME_ACTION, transition } from './lifecycle.js';
import { checkPayees, describeHeld, parseHolder, windowCutoff, type PayeeHolder } from './payout-register.js';

/** A request to stage: built by the import's grouper (`StagedRequest`) or from items (`WithdrawalRequest`). */
export type RequestToStage = (WithdrawalRequest | StagedRequest) & { readonly payees?: string };

/** Request operations of a ledger (see `Ledger` in index.ts for each one's contract). */
export function requestOps(c: LedgerContext) {
  const { r } = c;

  async function getRequest(
    batchId: string,
    seq: number,
    options: { readonly body?: boolean } = {},
  ): Promise<LedgerRequest | undefined> {
    if (options.body !== false) return parseRequest(batchId, seq, await r.hgetall(c.reqKey(batchId, seq)));
    const values = await r.hmget(c.reqKey(batchId, seq), ...OUTCOME_FIELDS);
    const h: Record<string, string> = {};
    OUTCOME_FIELDS.forEach((f, i) => {
      const v = values[i];
      if (v !== null && v !== undefined) h[f] = v;
    });
    return parseRequest(batchId, seq, h);
  }

  /** Throws the table's refusal for `action` on a request found in `state`. */
  function refuse(
    batchId: string,
    seq: number,
    action: Parameters<typeof transition>[1],
    state: RequestState | 'missing',
  ): never {
    if (state === 'missing')
      throw new CashoutError('request_not_found', `batch ${batchId} has no request ${seq}`, { batchId, seq });
    const t = transition(state, action);
    const code = 'refused' in t ? t.refused : 'not_sending';
    throw new CashoutError('request_state', describeRefusal(code, batchId, seq, state), {
      batchId,
      seq,
      state,
      refusal: code,
    });
  }

  return {
    getRequest,
    async stageRequests(
      batchId: string,
      requests: readonly RequestToStage[],
      options: { readonly payAgain?: boolean } = {},
    ): Promise<void> {
      if (requests.length === 0) return;
      // One pipeline (no transaction: a batch is all staged or refused as a whole anyway). The
      // batch's last seq is raised first, so that a refusal after a crash halfway deletes every
      // request written (deleting one never written is harmless). Each request takes its payee
      // keys where they are free (HSETNX); a key that already has an entry is decided afterwards.
      const m = r.pipeline() as ReturnType<typeof r.pipeline> & {
        cashoutStage: (...args: (string | Buffer)[]) => unknown;
      };
      m.hset(c.batchKey(batchId), 'next_seq', requests[requests.length - 1]!.seq);
      for (const q of requests) {
        m.cashoutStage(
          c.registerKey,
          c.reqKey(batchId, q.seq),
          options.payAgain ? 'force' : 'nx',
          `${batchId}:${q.seq}`,
          q.payees ?? '',
          'state',
          'pending',
          'body',
          'bodyJson' in q ? q.bodyJson : JSON.stringify(q.body),
          'wallet_lines',
          JSON.stringify(q.walletLines),
          'bank_lines',
          JSON.stringify(q.bankLines),
          'total',
          q.totalPiasters.toString(),
          'refs',
          'referencesJson' in q ? q.referencesJson : JSON.stringify(q.references),
          'attempts',
          '0',
        );
      }
      const results = (await m.exec()) ?? [];
      const cutoff = windowCutoff(c.register);
      for (let i = 0; i < results.length; i++) {
        const [err, reply] = results[i]!;
        if (err) throw err;
        if (i === 0 || !Array.isArray(reply) || reply.length === 0) continue;
        // Keys with an entry already: free again (their payout released them), the batch's own
        // (imported again after a refusal), or held by another payout since the import checked.
        const existing = reply as string[];
        for (let k = 0; k + 1 < existing.length; k += 2) {
          const key = existing[k]!;
          const res = await r.cashoutTakePayee(c.registerKey, c.prefix, cutoff, key, existing[k + 1]!);
          if (res[0] === 'held') {
            const holder = parseHolder(res[1]!, res[2]!, res[3]!, res[4]!);
            const what = key.startsWith('r:') ? `reference ${key.slice(2)}` : 'a payee of this file';
            throw new CashoutError(
              'payee_held',
              `${describeHeld(what, holder)}; it was taken while this file was being imported, so nothing of this batch is sent; import the file again`,
              { batchId, holder: `${holder.batchId}:${holder.seq}` },
            );
          }
        }
      }
    },
    async checkPayees(batchId: string, keys: readonly string[]): Promise<Map<number, PayeeHolder>> {
      return checkPayees(r, c.prefix, c.register, batchId, keys);
    },
    async claim(batchId: string, seq: number, by: string, serviceUrl = ''): Promise<ClaimResult> {
      // The reply comes as bytes so that the body (tens of kilobytes) is never decoded here.
      const reply = await r.cashoutClaimBuffer(
        c.reqKey(batchId, seq),
        c.batchKey(batchId),
        c.sendingKey(batchId),
        c.registerKey,
        c.now(),
        by,
        String(seq),
        serviceUrl,
        c.prefix,
        windowCutoff(c.register),
        batchId,
      );
      const [tag, detail] = reply;
      const kind = tag.toString();
      if (kind === 'ok') {
        const h: Record<string, string> = {};
        let rawBody: Buffer | undefined;
        const pairs = Array.isArray(detail) ? detail : [];
        for (let i = 0; i + 1 < pairs.length; i += 2) {
          const field = pairs[i]!.toString();
          if (field === 'body') rawBody = pairs[i + 1]!;
          else h[field] = pairs[i + 1]!.toString();
        }
        const request = parseRequest(batchId, seq, h, rawBody);
        // Taken (now `sending`) but unreadable: cannot happen while the script runs atomically; never sent.
        if (!request) return { claimed: false, reason: 'missing' };
        return { claimed: true, request };
      }
      const text = (i: number) => {
        const v = reply[i];
        return Buffer.isBuffer(v) ? v.toString() : '';
      };
      if (kind === 'batch') return { claimed: false, reason: 'batch', batchState: text(1) as never };
      if (kind === 'state') return { claimed: false, reason: 'state', state: text(1) as RequestState };
      if (kind === 'service') return { claimed: false, reason: 'service', batchServiceUrl: text(1) };
      if (kind === 'payee')
        return { claimed: false, reason: 'payee', key: text(1), holder: text(2), holderState: text(3) };
      return { claimed: false, reason: 'missing' };
    },
    async finish(batchId: string, seq: number, outcome: Outcome): Promise<number> {
      const fields: string[] = ['message', outcome.message];
      if (outcome.httpStatus !== undefined) fields.push('http_status', String(outcome.httpStatus));
      if (outcome.rowErrors) fields.push('row_errors', JSON.stringify(outcome.rowErrors));
      const action = OUTCOME_ACTION[outcome.state];
      // An outcome is recorded only on a request being sent (lifecycle: record_* from sending).
      const from: RequestState = 'sending';
      const [open, st] = await r.cashoutFinish(
        c.reqKey(batchId, seq),
        c.batchKey(batchId),
        c.sendingKey(batchId),
        from,
        outcome.state,
        c.now(),
        String(seq),
        ...fields,
      );
      if (open < 0) {
        // A repeated write whose first reply was lost: the outcome is already recorded.
        if (st === outcome.state) return Number((await r.hget(c.batchKey(batchId), 'open')) ?? 0);
        refuse(batchId, seq, action, st as RequestState);
      }
      return open;
    },
    async finishUnsent(batchId: string, seq: number, message: string, from: RequestState = 'pending'): Promise<number> {
      if (!allowedFrom('give_up').includes(from)) refuse(batchId, seq, 'give_up', from);
      const [open, st] = await r.cashoutFinish(
        c.reqKey(batchId, seq),
        c.batchKey(batchId),
        c.sendingKey(batchId),
        from,
        'not_sent',
        c.now(),
        String(seq),
        'message',
        message,
      );
      if (open < 0) refuse(batchId, seq, 'give_up', st as RequestState);
      return open;
    },
    async release(batchId: string, seq: number): Promise<void> {
      const res = await r.cashoutRelease(c.reqKey(batchId, seq), c.sendingKey(batchId), String(seq));
      if (res !== 'ok') refuse(batchId, seq, 'release', res as RequestState);
    },
    async split(
      batchId: string,
      seq: number,
      rejected: Omit<Outcome, 'state'>,
      child: Omit<WithdrawalRequest, 'seq'> & { payees?: string },
    ): Promise<number> {
      const childSeq = await r.hincrby(c.batchKey(batchId), 'next_seq', 1);
      const [open, st, existing] = await r.cashoutSplit(
        c.reqKey(batchId, seq),
        c.batchKey(batchId),
        c.sendingKey(batchId),
        c.reqKey(batchId, childSeq),
        c.registerKey,
        c.now(),
        String(seq),
        String(childSeq),
        JSON.stringify(rejected.rowErrors ?? {}),
        rejected.message,
        String(rejected.httpStatus ?? 422),
        JSON.stringify(child.body),
        JSON.stringify(child.walletLines),
        JSON.stringify(child.bankLines),
        child.totalPiasters.toString(),
        JSON.stringify(child.references),
        child.payees ?? '',
        batchId,
      );
      if (open < 0) refuse(batchId, seq, 'split', st as RequestState);
      return existing !== undefined ? Number(existing) : childSeq;
    },
    async resolve(
      batchId: string,
      seq: number,
      finding: 'created' | 'not_created',
      by: string,
      note: string,
    ): Promise<void> {
      const at = c.now();
      const res = await r.cashoutResolve(
        c.reqKey(batchId, seq),
        c.batchKey(batchId),
        c.resolutionsKey(batchId),
        finding,
        JSON.stringify({ by, at, note, finding }),
        at,
        String(seq),
      );
      if (res[0] === 'missing') refuse(batchId, seq, 'resolve_created', 'missing');
      if (res[0] !== 'ok')
        refuse(batchId, seq, finding === 'created' ? 'resolve_created' : 'resolve_not_created', res[1] as RequestState);
    },
    async listResolutions(batchId: string) {
      return (await r.lrange(c.resolutionsKey(batchId), 0, -1)).map((entry) => {
        const space = entry.indexOf(' ');
        return {
          request: Number(entry.slice(0, space)),
          ...(JSON.parse(entry.slice(space + 1)) as { finding: string; by: string; at: string; note: string }),
        };
      });
    },
    async sendingSeqs(batchId: string): Promise<number[]> {
      return (await r.smembers(c.sendingKey(batchId))).map(Number).sort((a, b) => a - b);
    },
    async requestStates(batchId: string, seqs: readonly number[]): Promise<(RequestState | undefined)[]> {
      if (seqs.length === 0) return [];
      const p = r.pipeline();
      for (const seq of seqs) p.hget(c.reqKey(batchId, seq), 'state');
      const replies = (await p.exec()) ?? [];
      return seqs.map((_, i) => {
        const [err, value] = replies[i] ?? [new Error('no reply'), null];
        if (err) throw err;
        return typeof value === 'string' ? (value as RequestState) : undefined;
      });
    },
  };
}
