/**
 * Batches in the ledger: created when an import starts (`staging`), then released (`queued` or
 * `awaiting_approval`) or refused as a whole; approved, cancelled or halted as a whole. Each move
 * is guarded by `batchTransition` (lifecycle.ts); who did what is kept in the batch's events list.
 */
import { CashoutError } from '../errors.js';
import { STOPPED_IMPORT_ENDS, stateWords } from './lifecycle.js';
import type { ApprovalEvent, BatchCounts, BatchRecord } from './codec.js';
import { parseBatch } from './codec.js';
import type { LedgerContext } from './keys.js';

/** What `createBatch` records (the rest starts empty). */
export type NewBatch = Omit<
  BatchRecord,
  | 'state'
  | 'open'
  | 'requests'
  | 'finishedAt'
  | 'haltReason'
  | 'totalPiasters'
  | 'refusalReason'
  | 'expiresAt'
  | 'approvedBy'
  | 'supersededBy'
>;

/** Batch operations of a ledger (see `Ledger` in index.ts for each one's contract). */
export function batchOps(c: LedgerContext) {
  const { r } = c;

  async function getBatch(batchId: string): Promise<BatchRecord | undefined> {
    return parseBatch(batchId, await r.hgetall(c.batchKey(batchId)));
  }

  async function deleteBatch(batchId: string): Promise<void> {
    const last = Number((await r.hget(c.batchKey(batchId), 'next_seq')) ?? 0);
    const m = r.multi();
    for (let seq = 1; seq <= last; seq++) m.del(c.reqKey(batchId, seq));
    m.del(c.batchKey(batchId), c.sendingKey(batchId), c.resolutionsKey(batchId), c.approvalsKey(batchId)).zrem(
      c.batchesKey,
      batchId,
    );
    await m.exec();
  }

  return {
    getBatch,
    deleteBatch,
    async createBatch(b: NewBatch): Promise<void> {
      const created = await r.hsetnx(c.batchKey(b.id), 'state', 'staging');
      if (created === 0) {
        const existing = await getBatch(b.id);
        const state = existing?.state ?? 'staging';
        const what =
          state === 'refused'
            ? 'and refused as a whole'
            : state === 'staging'
              ? `and its import has not finished; nothing new was queued. If that import stopped (its process died), ${STOPPED_IMPORT_ENDS}; import the file again then`
              : `(batch ${stateWords(state)}); nothing new was queued; to pay this file as a new batch all the same, import it with --force (rows already paid or to be paid are not sent again)`;
        throw new CashoutError(
          'batch_exists',
          `this file's content was already imported as batch ${b.id} on ${existing?.createdAt ?? 'an earlier date'} ${what}`,
          { batchId: b.id, createdAt: existing?.createdAt, state },
        );
      }
      const note = b.forced
        ? 'content imported before, imported again as a new batch (--force)'
        : b.follows
          ? `content refused as a whole before as batch ${b.follows}, imported again as a new batch`
          : undefined;
      const imported = { action: 'imported', by: b.importedBy, at: b.createdAt, ...(note ? { note } : {}) };
      const events = [JSON.stringify(imported)];
      if (b.payAgain) {
        events.push(JSON.stringify({ action: 'pay_again', by: b.payAgain.by, at: b.createdAt, note: b.payAgain.note }));
      }
      await r
        .multi()
        .hset(c.batchKey(b.id), {
          file_name: b.fileName,
          sha256: b.sha256,
          created_at: b.createdAt,
          rows: b.rows,
          valid_rows: b.validRows,
          invalid_rows: b.invalidRows,
          requests: 0,
          open: 0,
          next_seq: 0,
          items_per_request: b.itemsPerRequest,
          service_url: b.serviceUrl,
          report_dir: b.reportDir,
          partial: b.partial ? '1' : '0',
          imported_by: b.importedBy,
          ...(b.importedByUser ? { imported_by_user: b.importedByUser } : {}),
          ...(b.delimiter ? { delimiter: b.delimiter } : {}),
          ...(b.encoding ? { encoding: b.encoding } : {}),
          ...(b.tokenFingerprint ? { token_fp: b.tokenFingerprint } : {}),
          ...(b.forced ? { forced: '1' } : {}),
          ...(b.follows ? { follows: b.follows } : {}),
          ...(b.payAgain ? { pay_again_by: b.payAgain.by, pay_again_note: b.payAgain.note } : {}),
        })
        .zadd(c.batchesKey, Date.parse(b.createdAt), b.id)
        .del(c.approvalsKey(b.id))
        .rpush(c.approvalsKey(b.id), ...events)
        .exec();
    },
    async supersedeRefused(batchId: string, nextId: string): Promise<string> {
      const [outcome, value] = await r.cashoutSupersede(c.batchKey(batchId), nextId);
      if (outcome === 'ok') return value!;
      throw new CashoutError(
        'batch_state',
        `batch ${batchId} is ${stateWords(value ?? 'missing')}, not refused; only a refused batch is followed by a new import of its content`,
        { batchId, state: value },
      );
    },
    async listBatches(limit = 100): Promise<BatchRecord[]> {
      const ids = await r.zrevrange(c.batchesKey, 0, limit - 1);
      if (ids.length === 0) return [];
      const p = r.pipeline();
      for (const id of ids) p.hgetall(c.batchKey(id));
      const replies = (await p.exec()) ?? [];
      const out: BatchRecord[] = [];
      ids.forEach((id, i) => {
        const [err, h] = replies[i] ?? [new Error('no reply'), null];
        if (err) throw err;
        const b = parseBatch(id, h as Record<string, string>);
        if (b) out.push(b);
      });
      return out;
    },
    async releaseBatch(batchId: string, counts: BatchCounts, approvalUntil?: string): Promise<void> {
      const state = counts.requests === 0 ? 'finished' : approvalUntil ? 'awaiting_approval' : 'queued';
      const fields: Record<string, string> = {
        requests: String(counts.requests),
        open: String(counts.requests),
        valid_rows: String(counts.validRows),
        invalid_rows: String(counts.invalidRows),
        rows: String(counts.rows),
        total: counts.totalPiasters.toString(),
        ...(state === 'finished' ? { finished_at: c.now() } : {}),
        ...(state === 'awaiting_approval' ? { expires_at: approvalUntil! } : {}),
      };
      const event =
        state === 'awaiting_approval'
          ? JSON.stringify({
              action: 'approval_required',
              by: 'bulk-cashout',
              at: c.now(),
              note: `approve before ${approvalUntil}`,
            })
          : '';
      const res = await r.cashoutReleaseBatch(
        c.batchKey(batchId),
        c.approvalsKey(batchId),
        state,
        event,
        ...Object.entries(fields).flat(),
      );
      if (res[0] !== 'ok') {
        throw new CashoutError(
          'batch_state',
          `batch ${batchId} is ${res[1]}, no longer being imported; nothing of it was queued`,
          {
            batchId,
            state: res[1],
          },
        );
      }
    },
    async refuseBatch(batchId: string, counts: Omit<BatchCounts, 'requests'>, reason: string): Promise<boolean> {
      const res = await r.cashoutRefuseBatch(
        c.batchKey(batchId),
        c.reqKey(batchId, 0).slice(0, -1),
        'valid_rows',
        String(counts.validRows),
        'invalid_rows',
        String(counts.invalidRows),
        'rows',
        String(counts.rows),
        'total',
        counts.totalPiasters.toString(),
        'refusal_reason',
        reason,
        'finished_at',
        c.now(),
      );
      return res[0] === 'ok';
    },
    async approveBatch(batchId: string, by: string, user = by): Promise<number> {
      const res = await r.cashoutApprove(c.batchKey(batchId), c.approvalsKey(batchId), by, c.now(), user);
      if (res[0] === 'ok') return Number(res[1]);
      if (res[0] === 'self') {
        throw new CashoutError(
          'self_approval',
          `batch ${batchId} was imported by ${user}; someone else must approve it`,
          { batchId, by },
        );
      }
      if (res[0] === 'expired') {
        throw new CashoutError(
          'approval_expired',
          `batch ${batchId} was not approved before ${res[1]} and is now cancelled; import the file again`,
          {
            batchId,
          },
        );
      }
      throw new CashoutError('batch_state', `batch ${batchId} is ${res[1]}, not awaiting approval`, {
        batchId,
        state: res[1],
      });
    },
    async cancelBatch(batchId: string, by: string, note: string, expired = false): Promise<void> {
      const res = await r.cashoutCancel(
        c.batchKey(batchId),
        c.approvalsKey(batchId),
        by,
        note,
        c.now(),
        expired ? 'expired' : 'cancelled',
      );
      if (res[0] !== 'ok') {
        throw new CashoutError(
          'batch_state',
          `batch ${batchId} is ${res[1]}, not awaiting approval; only a batch awaiting approval can be cancelled`,
          { batchId, state: res[1] },
        );
      }
    },
    async listApprovals(batchId: string): Promise<ApprovalEvent[]> {
      return (await r.lrange(c.approvalsKey(batchId), 0, -1)).map((e) => JSON.parse(e) as ApprovalEvent);
    },
    async recordEvent(batchId: string, event: ApprovalEvent): Promise<void> {
      await r.rpush(c.approvalsKey(batchId), JSON.stringify(event));
    },
    async halt(batchId: string, reason: string): Promise<void> {
      await r.cashoutHalt(c.batchKey(batchId), reason);
    },
    async lastSeq(batchId: string): Promise<number> {
      return Number((await r.hget(c.batchKey(batchId), 'next_seq')) ?? 0);
    },
  };
}
