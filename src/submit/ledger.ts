/**
 * The submission ledger: one Redis record per withdrawal request, and the only code that writes
 * it. The withdrawal endpoint has no idempotency key (interface doc §2.4, §5), so this ledger is
 * what stands between a re-delivered job and a second payment.
 *
 * Request states: `pending` → `sending` → `accepted` | `rejected` | `unknown` | `not_sent`.
 * `pending → sending` is one atomic compare-and-set (a Lua script); only the caller that wins it
 * may send. Every final move happens only from `sending` (or, for requests never sent, from
 * `pending` to `not_sent`), so a second worker, a retried job or a restarted process cannot move
 * a request back to sendable. A person's finding (`reconciled_created` / `reconciled_not_created`)
 * is the only way out of `unknown`.
 *
 * Keys (P = configured prefix, e.g. "{cashout}"; the hash tag keeps a batch in one cluster slot):
 *   P:batches                       sorted set of batch ids by creation time (ms)
 *   P:batch:<id>                    hash: batch facts, state, counters
 *   P:batch:<id>:req:<seq>          hash: one withdrawal request
 *   P:batch:<id>:sending            set of seqs currently `sending` (for crash recovery)
 */
import type { Redis } from 'ioredis';
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import type { StagedRequest, WithdrawalRequest } from '../batch/group-items.js';
import { CashoutError } from '../errors.js';

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

/** States after which the request needs nothing more from a worker. */
export const FINAL_STATES: readonly RequestState[] = ['accepted', 'rejected', 'unknown', 'not_sent', 'reconciled_created'];

/** States of a batch. */
export type BatchState = 'staging' | 'refused' | 'awaiting_approval' | 'cancelled' | 'queued' | 'halted' | 'finished' | 'needs_reconciliation';

/** Facts of a batch as kept in the ledger. Amounts are EGP decimal strings. */
export interface BatchRecord {
  readonly id: string;
  readonly state: BatchState;
  readonly fileName: string;
  readonly sha256: string;
  readonly createdAt: string;
  readonly rows: number;
  readonly validRows: number;
  readonly invalidRows: number;
  readonly requests: number;
  readonly open: number;
  readonly itemsPerRequest: number;
  readonly serviceUrl: string;
  readonly reportDir: string;
  readonly haltReason?: string;
  readonly finishedAt?: string;
  readonly partial: boolean;
  /** Who imported the batch (a user name, or "scheduler"). */
  readonly importedBy: string;
  /** How the input file is read again for reports: its field delimiter and text encoding, when not the defaults. */
  readonly delimiter?: string;
  readonly encoding?: string;
  /** Total of the rows queued, in piasters. */
  readonly totalPiasters: bigint;
  /** Why the batch was refused (state `refused`). */
  readonly refusalReason?: string;
  /** Until when an approval is accepted (state `awaiting_approval`), ISO time. */
  readonly expiresAt?: string;
  readonly approvedBy?: string;
}

/** One step of a batch's approval story, for reports and the dashboard. */
export interface ApprovalEvent {
  readonly action: 'imported' | 'approval_required' | 'approved' | 'cancelled' | 'expired';
  readonly by: string;
  readonly at: string;
  readonly note?: string;
}

/** Counts of an import, for the batch record. */
export interface BatchCounts {
  readonly requests: number;
  readonly rows: number;
  readonly validRows: number;
  readonly invalidRows: number;
  readonly totalPiasters: bigint;
}

/** One withdrawal request as kept in the ledger. */
export interface LedgerRequest {
  readonly batchId: string;
  readonly seq: number;
  readonly state: RequestState;
  /** The body, parsed from `bodyJson` when first read. */
  readonly body: WithdrawalRequestBody;
  /**
   * The body exactly as the ledger keeps it: UTF-8 JSON text, as a string or as its bytes. This is
   * what is sent (unchanged, never re-serialised). Absent on requests built outside the ledger.
   */
  readonly bodyJson?: string | Buffer;
  readonly walletLines: readonly number[];
  readonly bankLines: readonly number[];
  readonly totalPiasters: bigint;
  /** The payer's references by file line (for duplicate detection across batches). */
  readonly references: Readonly<Record<string, string>>;
  readonly attempts: number;
  /** Request this one was split from after a 422 (its un-named items). */
  readonly parent?: number;
  /** After a 422: the request that carries this one's un-named items again. */
  readonly resentAs?: number;
  readonly httpStatus?: number;
  readonly message?: string;
  /** After a 422: reasons per file line, for the rows the service named. */
  readonly rowErrors?: Readonly<Record<string, readonly string[]>>;
  readonly sendingAt?: string;
  /** The worker (host:pid) that took it for sending last. */
  readonly sentBy?: string;
  readonly finishedAt?: string;
  readonly resolution?: { readonly by: string; readonly at: string; readonly note: string; readonly finding: 'created' | 'not_created' };
}

/** Result of trying to take a request for sending. */
export type ClaimResult =
  | { readonly claimed: true; readonly request: LedgerRequest }
  | { readonly claimed: false; readonly reason: 'state'; readonly state: RequestState }
  | { readonly claimed: false; readonly reason: 'batch'; readonly batchState: BatchState }
  | { readonly claimed: false; readonly reason: 'missing' };

/** What a final move records. */
export interface Outcome {
  readonly state: 'accepted' | 'rejected' | 'unknown' | 'not_sent';
  readonly httpStatus?: number;
  readonly message: string;
  readonly rowErrors?: Readonly<Record<string, readonly string[]>>;
}

// KEYS: req, batch, sending-set. ARGV: now, worker id, seq.
// Sendable: pending (never sent), reconciled_not_created (a person found it was not created) and
// not_sent (provably never reached the service). Taking a not_sent request reopens it in its batch.
// On success the reply carries the request as it now is (HGETALL after the move to sending), so
// the caller sends exactly what the ledger holds, in the same round trip.
const CLAIM = `
local rs = redis.call('HGET', KEYS[1], 'state')
if not rs then return {'missing'} end
if rs ~= 'pending' and rs ~= 'reconciled_not_created' and rs ~= 'not_sent' then return {'state', rs} end
local st = redis.call('HGET', KEYS[2], 'state')
if not st then return {'missing'} end
if rs == 'not_sent' then
  if st ~= 'queued' and st ~= 'finished' and st ~= 'needs_reconciliation' then return {'batch', st} end
  -- A batch stopped because the token was refused sends nothing more.
  if redis.call('HEXISTS', KEYS[2], 'halt_reason') == 1 then return {'batch', 'halted'} end
  redis.call('HINCRBY', KEYS[2], 'req_not_sent', -1)
  redis.call('HINCRBY', KEYS[2], 'open', 1)
  redis.call('HSET', KEYS[2], 'state', 'queued')
  redis.call('HDEL', KEYS[2], 'finished_at')
elseif st ~= 'queued' then
  return {'batch', st}
end
redis.call('HSET', KEYS[1], 'state', 'sending', 'sending_at', ARGV[1], 'sent_by', ARGV[2])
redis.call('HDEL', KEYS[1], 'finished_at', 'message', 'http_status')
redis.call('HINCRBY', KEYS[1], 'attempts', 1)
redis.call('SADD', KEYS[3], ARGV[3])
return {'ok', redis.call('HGETALL', KEYS[1])}
`;

// A person's finding on an unknown request. KEYS: req, batch, resolutions list, paid-references. ARGV: finding, resolution json, now, seq.
const RESOLVE = `
local rs = redis.call('HGET', KEYS[1], 'state')
if not rs then return {'missing'} end
if rs ~= 'unknown' then return {'state', rs} end
redis.call('HINCRBY', KEYS[2], 'req_unknown', -1)
redis.call('HSET', KEYS[1], 'resolution', ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[4] .. ' ' .. ARGV[2])
if ARGV[1] == 'created' then
  redis.call('HSET', KEYS[1], 'state', 'reconciled_created')
  local refs = redis.call('HGET', KEYS[1], 'refs')
  local batch = string.match(KEYS[2], 'batch:(%x+)$')
  if refs and refs ~= '{}' then
    for line, ref in pairs(cjson.decode(refs)) do redis.call('HSETNX', KEYS[4], ref, batch .. ':' .. line .. ':' .. ARGV[3]) end
  end
  redis.call('HINCRBY', KEYS[2], 'req_reconciled_created', 1)
  local unknown = tonumber(redis.call('HGET', KEYS[2], 'req_unknown') or '0')
  local open = tonumber(redis.call('HGET', KEYS[2], 'open') or '0')
  if unknown <= 0 and open == 0 and redis.call('HGET', KEYS[2], 'state') == 'needs_reconciliation' then
    redis.call('HSET', KEYS[2], 'state', 'finished', 'finished_at', ARGV[3])
  end
else
  redis.call('HSET', KEYS[1], 'state', 'reconciled_not_created')
  redis.call('HINCRBY', KEYS[2], 'open', 1)
  local st = redis.call('HGET', KEYS[2], 'state')
  if st == 'needs_reconciliation' or st == 'finished' then
    redis.call('HSET', KEYS[2], 'state', 'queued')
    redis.call('HDEL', KEYS[2], 'finished_at')
  end
end
return {'ok'}
`;

// KEYS: req, batch, sending-set, paid-references. ARGV: from-state, to-state, now, seq, then field/value pairs.
const FINISH = `
local rs = redis.call('HGET', KEYS[1], 'state')
if rs ~= ARGV[1] then return {-1, rs or 'missing'} end
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'finished_at', ARGV[3], unpack(ARGV, 5))
if ARGV[2] == 'accepted' then
  local refs = redis.call('HGET', KEYS[1], 'refs')
  local batch = string.match(KEYS[2], 'batch:(%x+)$')
  if refs and refs ~= '{}' then
    for line, ref in pairs(cjson.decode(refs)) do redis.call('HSETNX', KEYS[4], ref, batch .. ':' .. line .. ':' .. ARGV[3]) end
  end
end
redis.call('SREM', KEYS[3], ARGV[4])
redis.call('HINCRBY', KEYS[2], 'req_' .. ARGV[2], 1)
local open = redis.call('HINCRBY', KEYS[2], 'open', -1)
if open == 0 then
  local st = redis.call('HGET', KEYS[2], 'state')
  if st == 'queued' or st == 'halted' then
    local unknown = tonumber(redis.call('HGET', KEYS[2], 'req_unknown') or '0')
    redis.call('HSET', KEYS[2], 'state', unknown > 0 and 'needs_reconciliation' or 'finished', 'finished_at', ARGV[3])
  end
end
return {open, 'ok'}
`;

// 422 with some rows named: parent sending → rejected, and a child request with the other items
// is created pending, in one step. KEYS: parent req, batch, sending-set, child req.
// ARGV: now, parent seq, child seq, rowErrors json, message, http status, child body, child wallet lines, child bank lines, child total.
const SPLIT = `
local rs = redis.call('HGET', KEYS[1], 'state')
if rs == 'rejected' then
  local ra = redis.call('HGET', KEYS[1], 'resent_as')
  if ra then return {tonumber(redis.call('HGET', KEYS[2], 'open')), 'ok', ra} end
end
if rs ~= 'sending' then return {-1, rs or 'missing'} end
redis.call('HSET', KEYS[1], 'state', 'rejected', 'finished_at', ARGV[1], 'row_errors', ARGV[4], 'message', ARGV[5], 'http_status', ARGV[6], 'resent_as', ARGV[3])
redis.call('SREM', KEYS[3], ARGV[2])
redis.call('HINCRBY', KEYS[2], 'req_rejected', 1)
redis.call('HSET', KEYS[4], 'state', 'pending', 'body', ARGV[7], 'wallet_lines', ARGV[8], 'bank_lines', ARGV[9], 'total', ARGV[10], 'refs', ARGV[11], 'attempts', 0, 'parent', ARGV[2])
return {tonumber(redis.call('HGET', KEYS[2], 'open')), 'ok'}
`;

// KEYS: req, sending-set. ARGV: seq. sending → pending (nothing was sent: proven).
const RELEASE = `
local rs = redis.call('HGET', KEYS[1], 'state')
if rs == 'pending' then return 'ok' end
if rs ~= 'sending' then return rs or 'missing' end
redis.call('HSET', KEYS[1], 'state', 'pending')
redis.call('SREM', KEYS[2], ARGV[1])
return 'ok'
`;

// KEYS: paid-references hash. ARGV: references joined by "\n". Returns a flat list of
// (1-based position, value) for the references found: one argument in and only the hits out, so a
// lookup of a thousand new references costs one short reply. HMGET takes a thousand at a time
// (Lua's unpack has a limit).
const PAID_LOOKUP = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local refs = {}
for ref in string.gmatch(ARGV[1], '[^\\n]+') do refs[#refs + 1] = ref end
if #refs == 0 then return {} end
local out = {}
for from = 1, #refs, 1000 do
  local to = math.min(from + 999, #refs)
  local found = redis.call('HMGET', KEYS[1], unpack(refs, from, to))
  for i = from, to do
    if found[i - from + 1] then out[#out + 1] = i; out[#out + 1] = found[i - from + 1] end
  end
end
return out
`;

type LedgerRedis = Redis & {
  cashoutPaidLookup(paid: string, joined: string): Promise<(number | string)[]>;
  cashoutClaimBuffer(req: string, batch: string, sending: string, now: string, by: string, seq: string): Promise<[Buffer, Buffer | Buffer[] | undefined]>;
  cashoutFinish(req: string, batch: string, sending: string, paid: string, ...args: string[]): Promise<[number, string]>;
  cashoutSplit(parent: string, batch: string, sending: string, child: string, ...args: string[]): Promise<[number, string, string?]>;
  cashoutRelease(req: string, sending: string, seq: string): Promise<string>;
  cashoutResolve(req: string, batch: string, list: string, paid: string, finding: string, resolution: string, now: string, seq: string): Promise<string[]>;
};

/** Ledger access bound to one Redis connection and key prefix. */
export interface Ledger {
  readonly prefix: string;
  createBatch(batch: Omit<BatchRecord, 'state' | 'open' | 'requests' | 'finishedAt' | 'haltReason' | 'totalPiasters' | 'refusalReason' | 'expiresAt' | 'approvedBy'>): Promise<void>;
  getBatch(batchId: string): Promise<BatchRecord | undefined>;
  listBatches(limit?: number): Promise<BatchRecord[]>;
  stageRequests(batchId: string, requests: readonly (WithdrawalRequest | StagedRequest)[]): Promise<void>;
  /**
   * staging → queued (the staged requests become sendable; the caller adds their jobs), or
   * staging → awaiting_approval when `approvalUntil` (ISO time) is given: nothing is sendable
   * until `approveBatch`.
   */
  releaseBatch(batchId: string, counts: BatchCounts, approvalUntil?: string): Promise<void>;
  /** staging → refused: staged requests are deleted; nothing will be sent. */
  refuseBatch(batchId: string, counts: Omit<BatchCounts, 'requests'>, reason: string): Promise<void>;
  /**
   * awaiting_approval → queued by someone other than the importer. Returns the number of requests
   * to enqueue. Throws `CashoutError('state_conflict')` for a batch not awaiting approval, an
   * approval by the importer, or an approval after the deadline (the batch is then cancelled).
   */
  approveBatch(batchId: string, by: string): Promise<number>;
  /** awaiting_approval → cancelled; nothing of the batch will be sent. */
  cancelBatch(batchId: string, by: string, note: string, expired?: boolean): Promise<void>;
  listApprovals(batchId: string): Promise<ApprovalEvent[]>;
  /**
   * A request's record, or undefined. With `{ body: false }` the body is not read (reports need
   * only the outcome: a request's body is most of its bytes); `bodyJson` is then "{}".
   */
  getRequest(batchId: string, seq: number, options?: { readonly body?: boolean }): Promise<LedgerRequest | undefined>;
  claim(batchId: string, seq: number, by: string): Promise<ClaimResult>;
  /** sending → final state. Returns the number of requests of the batch still open (0 = batch done). */
  finish(batchId: string, seq: number, outcome: Outcome): Promise<number>;
  /** pending → not_sent, for a request that will never be sent (batch halted). */
  finishUnsent(batchId: string, seq: number, message: string): Promise<number>;
  /** sending → pending, only when it is proven nothing reached the service. */
  release(batchId: string, seq: number): Promise<void>;
  /** sending → rejected with named rows, plus a new pending request with the other items. Returns the new seq. */
  split(batchId: string, seq: number, rejected: Omit<Outcome, 'state'>, child: Omit<WithdrawalRequest, 'seq'>): Promise<number>;
  /**
   * Records a person's finding on an `unknown` request: `created` makes its rows accepted
   * (reconciled); `not_created` makes it sendable again (a retry of its job then sends it).
   * Throws `CashoutError('state_conflict')` unless the request is `unknown`.
   */
  resolve(batchId: string, seq: number, finding: 'created' | 'not_created', by: string, note: string): Promise<void>;
  /** For each reference, where it was paid before ("<batchId>:<line>:<time>"), or null. */
  paidReferences(references: readonly string[]): Promise<(string | null)[]>;
  /** Every finding recorded on the batch, oldest first. */
  listResolutions(batchId: string): Promise<{ request: number; finding: string; by: string; at: string; note: string }[]>;
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

const DEFINED = new WeakSet<Redis>();

/** Opens the ledger on a connection. The connection's lifetime stays with the caller. */
export function openLedger(redis: Redis, prefix: string): Ledger {
  const r = redis as LedgerRedis;
  if (!DEFINED.has(redis)) {
    DEFINED.add(redis);
    r.defineCommand('cashoutClaim', { numberOfKeys: 3, lua: CLAIM });
    r.defineCommand('cashoutFinish', { numberOfKeys: 4, lua: FINISH });
    r.defineCommand('cashoutSplit', { numberOfKeys: 4, lua: SPLIT });
    r.defineCommand('cashoutRelease', { numberOfKeys: 2, lua: RELEASE });
    r.defineCommand('cashoutResolve', { numberOfKeys: 4, lua: RESOLVE });
    r.defineCommand('cashoutPaidLookup', { numberOfKeys: 1, lua: PAID_LOOKUP });
  }
  const batchKey = (id: string) => `${prefix}:batch:${id}`;
  const reqKey = (id: string, seq: number) => `${prefix}:batch:${id}:req:${seq}`;
  const sendingKey = (id: string) => `${prefix}:batch:${id}:sending`;
  const now = () => new Date().toISOString();
  const paidKey = `${prefix}:paid-references`;

  async function getBatch(batchId: string): Promise<BatchRecord | undefined> {
    return parseBatch(batchId, await r.hgetall(batchKey(batchId)));
  }

  function parseBatch(batchId: string, h: Record<string, string>): BatchRecord | undefined {
    if (!h.state) return undefined;
    return {
      id: batchId,
      state: h.state as BatchState,
      fileName: h.file_name ?? '',
      sha256: h.sha256 ?? '',
      createdAt: h.created_at ?? '',
      rows: Number(h.rows ?? 0),
      validRows: Number(h.valid_rows ?? 0),
      invalidRows: Number(h.invalid_rows ?? 0),
      requests: Number(h.requests ?? 0),
      open: Number(h.open ?? 0),
      itemsPerRequest: Number(h.items_per_request ?? 0),
      serviceUrl: h.service_url ?? '',
      reportDir: h.report_dir ?? '',
      partial: h.partial === '1',
      importedBy: h.imported_by ?? '',
      ...(h.delimiter ? { delimiter: h.delimiter } : {}),
      ...(h.encoding ? { encoding: h.encoding } : {}),
      totalPiasters: BigInt(h.total ?? '0'),
      ...(h.refusal_reason ? { refusalReason: h.refusal_reason } : {}),
      ...(h.expires_at ? { expiresAt: h.expires_at } : {}),
      ...(h.approved_by ? { approvedBy: h.approved_by } : {}),
      ...(h.halt_reason ? { haltReason: h.halt_reason } : {}),
      ...(h.finished_at ? { finishedAt: h.finished_at } : {}),
    };
  }

  /** Every field of a request record but its body (see `parseRequest`). */
  const OUTCOME_FIELDS = ['state', 'wallet_lines', 'bank_lines', 'total', 'refs', 'attempts', 'parent', 'resent_as', 'http_status', 'message', 'row_errors', 'sending_at', 'sent_by', 'finished_at', 'resolution'] as const;

  /** A request from its hash fields; `rawBody` (the body's bytes) takes the place of `h.body` when given. */
  function parseRequest(batchId: string, seq: number, h: Record<string, string>, rawBody?: Buffer): LedgerRequest | undefined {
    if (!h.state) return undefined;
    const bodyJson: string | Buffer = rawBody ?? h.body ?? '{}';
    let body: WithdrawalRequestBody | undefined;
    let references: Record<string, string> | undefined;
    return {
      batchId,
      seq,
      state: h.state as RequestState,
      bodyJson,
      // Parsed on first use: sending needs only the text, reports need no body at all.
      get body(): WithdrawalRequestBody {
        return (body ??= JSON.parse(typeof bodyJson === 'string' ? bodyJson : bodyJson.toString('utf8')) as WithdrawalRequestBody);
      },
      walletLines: JSON.parse(h.wallet_lines ?? '[]') as number[],
      bankLines: JSON.parse(h.bank_lines ?? '[]') as number[],
      totalPiasters: BigInt(h.total ?? '0'),
      get references(): Record<string, string> {
        return (references ??= JSON.parse(h.refs ?? '{}') as Record<string, string>);
      },
      attempts: Number(h.attempts ?? 0),
      ...(h.parent ? { parent: Number(h.parent) } : {}),
      ...(h.resent_as ? { resentAs: Number(h.resent_as) } : {}),
      ...(h.http_status ? { httpStatus: Number(h.http_status) } : {}),
      ...(h.message ? { message: h.message } : {}),
      ...(h.row_errors ? { rowErrors: JSON.parse(h.row_errors) as Record<string, string[]> } : {}),
      ...(h.sending_at ? { sendingAt: h.sending_at } : {}),
      ...(h.sent_by ? { sentBy: h.sent_by } : {}),
      ...(h.finished_at ? { finishedAt: h.finished_at } : {}),
      ...(h.resolution ? { resolution: JSON.parse(h.resolution) as LedgerRequest['resolution'] } : {}),
    };
  }

  async function getRequest(batchId: string, seq: number, options: { readonly body?: boolean } = {}): Promise<LedgerRequest | undefined> {
    if (options.body !== false) return parseRequest(batchId, seq, await r.hgetall(reqKey(batchId, seq)));
    const values = await r.hmget(reqKey(batchId, seq), ...OUTCOME_FIELDS);
    const h: Record<string, string> = {};
    OUTCOME_FIELDS.forEach((f, i) => {
      const v = values[i];
      if (v !== null && v !== undefined) h[f] = v;
    });
    return parseRequest(batchId, seq, h);
  }

  return {
    prefix,
    async createBatch(b) {
      let created = await r.hsetnx(batchKey(b.id), 'state', 'staging');
      if (created === 0 && (await r.hget(batchKey(b.id), 'state')) === 'refused') {
        await this.deleteBatch(b.id);
        created = await r.hsetnx(batchKey(b.id), 'state', 'staging');
      }
      if (created === 0) {
        const existing = await getBatch(b.id);
        throw new CashoutError(
          'batch_exists',
          `this file's content was already imported as batch ${b.id} on ${existing?.createdAt ?? 'an earlier date'}; nothing new was queued`,
          { batchId: b.id, createdAt: existing?.createdAt },
        );
      }
      await r
        .multi()
        .hset(batchKey(b.id), {
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
          ...(b.delimiter ? { delimiter: b.delimiter } : {}),
          ...(b.encoding ? { encoding: b.encoding } : {}),
        })
        .zadd(`${prefix}:batches`, Date.parse(b.createdAt), b.id)
        .del(`${batchKey(b.id)}:approvals`)
        .rpush(`${batchKey(b.id)}:approvals`, JSON.stringify({ action: 'imported', by: b.importedBy, at: b.createdAt }))
        .exec();
    },
    getBatch,
    async listBatches(limit = 100) {
      const ids = await r.zrevrange(`${prefix}:batches`, 0, limit - 1);
      if (ids.length === 0) return [];
      const p = r.pipeline();
      for (const id of ids) p.hgetall(batchKey(id));
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
    async stageRequests(batchId, requests) {
      if (requests.length === 0) return;
      // One pipeline (no transaction: a batch is all staged or refused as a whole anyway). The
      // batch's last seq is raised first, so that a refusal after a crash halfway deletes every
      // request written (deleting one never written is harmless).
      const m = r.pipeline();
      m.hset(batchKey(batchId), 'next_seq', requests[requests.length - 1]!.seq);
      for (const q of requests) {
        m.hset(
          reqKey(batchId, q.seq),
          {
            state: 'pending',
            body: 'bodyJson' in q ? q.bodyJson : JSON.stringify(q.body),
            wallet_lines: JSON.stringify(q.walletLines),
            bank_lines: JSON.stringify(q.bankLines),
            total: q.totalPiasters.toString(),
            refs: 'referencesJson' in q ? q.referencesJson : JSON.stringify(q.references),
            attempts: '0',
          },
        );
      }
      const results = (await m.exec()) ?? [];
      const failed = results.find(([err]) => err);
      if (failed) throw failed[0];
    },
    async releaseBatch(batchId, counts, approvalUntil) {
      const state = counts.requests === 0 ? 'finished' : approvalUntil ? 'awaiting_approval' : 'queued';
      const m = r.multi().hset(batchKey(batchId), {
        requests: counts.requests,
        open: counts.requests,
        valid_rows: counts.validRows,
        invalid_rows: counts.invalidRows,
        rows: counts.rows,
        total: counts.totalPiasters.toString(),
        state,
        ...(state === 'finished' ? { finished_at: now() } : {}),
        ...(state === 'awaiting_approval' ? { expires_at: approvalUntil! } : {}),
      });
      if (state === 'awaiting_approval') {
        m.rpush(`${batchKey(batchId)}:approvals`, JSON.stringify({ action: 'approval_required', by: 'bulk-cashout', at: now(), note: `approve before ${approvalUntil}` }));
      }
      await m.exec();
    },
    async refuseBatch(batchId, counts, reason) {
      const last = Number((await r.hget(batchKey(batchId), 'next_seq')) ?? 0);
      const m = r.multi();
      for (let seq = 1; seq <= last; seq++) m.del(reqKey(batchId, seq));
      m.hset(batchKey(batchId), {
        state: 'refused',
        requests: 0,
        open: 0,
        next_seq: 0,
        valid_rows: counts.validRows,
        invalid_rows: counts.invalidRows,
        rows: counts.rows,
        total: counts.totalPiasters.toString(),
        refusal_reason: reason,
        finished_at: now(),
      });
      await m.exec();
    },
    async approveBatch(batchId, by) {
      const res = (await r.eval(
        `local st = redis.call('HGET', KEYS[1], 'state')
         if st ~= 'awaiting_approval' then return {'state', st or 'missing'} end
         if redis.call('HGET', KEYS[1], 'imported_by') == ARGV[1] then return {'self', ARGV[1]} end
         local exp = redis.call('HGET', KEYS[1], 'expires_at')
         if exp and exp < ARGV[2] then
           redis.call('HSET', KEYS[1], 'state', 'cancelled', 'finished_at', ARGV[2], 'cancel_reason', 'approval expired')
           redis.call('RPUSH', KEYS[2], cjson.encode({action = 'expired', by = 'bulk-cashout', at = ARGV[2]}))
           return {'expired', exp}
         end
         redis.call('HSET', KEYS[1], 'state', 'queued', 'approved_by', ARGV[1], 'approved_at', ARGV[2])
         redis.call('RPUSH', KEYS[2], cjson.encode({action = 'approved', by = ARGV[1], at = ARGV[2]}))
         return {'ok', redis.call('HGET', KEYS[1], 'requests')}`,
        2,
        batchKey(batchId),
        `${batchKey(batchId)}:approvals`,
        by,
        now(),
      )) as string[];
      if (res[0] === 'ok') return Number(res[1]);
      if (res[0] === 'self') throw new CashoutError('state_conflict', `batch ${batchId} was imported by ${by}; someone else must approve it`, { batchId, by });
      if (res[0] === 'expired') throw new CashoutError('state_conflict', `batch ${batchId} was not approved before ${res[1]} and is now cancelled; import the file again`, { batchId });
      throw new CashoutError('state_conflict', `batch ${batchId} is ${res[1]}, not awaiting approval`, { batchId, state: res[1] });
    },
    async cancelBatch(batchId, by, note, expired = false) {
      const res = (await r.eval(
        `local st = redis.call('HGET', KEYS[1], 'state')
         if st ~= 'awaiting_approval' then return {'state', st or 'missing'} end
         redis.call('HSET', KEYS[1], 'state', 'cancelled', 'finished_at', ARGV[3], 'cancel_reason', ARGV[2])
         redis.call('RPUSH', KEYS[2], cjson.encode({action = ARGV[4], by = ARGV[1], at = ARGV[3], note = ARGV[2]}))
         return {'ok'}`,
        2,
        batchKey(batchId),
        `${batchKey(batchId)}:approvals`,
        by,
        note,
        now(),
        expired ? 'expired' : 'cancelled',
      )) as string[];
      if (res[0] !== 'ok') throw new CashoutError('state_conflict', `batch ${batchId} is ${res[1]}, not awaiting approval; only a batch awaiting approval can be cancelled`, { batchId, state: res[1] });
    },
    async listApprovals(batchId) {
      return (await r.lrange(`${batchKey(batchId)}:approvals`, 0, -1)).map((e) => JSON.parse(e) as ApprovalEvent);
    },
    getRequest,
    async claim(batchId, seq, by) {
      // The reply comes as bytes so that the body (tens of kilobytes) is never decoded here.
      const [tag, detail] = await r.cashoutClaimBuffer(reqKey(batchId, seq), batchKey(batchId), sendingKey(batchId), now(), by, String(seq));
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
      const value = Buffer.isBuffer(detail) ? detail.toString() : '';
      if (kind === 'batch') return { claimed: false, reason: 'batch', batchState: value as BatchState };
      if (kind === 'state') return { claimed: false, reason: 'state', state: value as RequestState };
      return { claimed: false, reason: 'missing' };
    },
    async finish(batchId, seq, outcome) {
      const fields: string[] = ['message', outcome.message];
      if (outcome.httpStatus !== undefined) fields.push('http_status', String(outcome.httpStatus));
      if (outcome.rowErrors) fields.push('row_errors', JSON.stringify(outcome.rowErrors));
      const [open, st] = await r.cashoutFinish(reqKey(batchId, seq), batchKey(batchId), sendingKey(batchId), paidKey, 'sending', outcome.state, now(), String(seq), ...fields);
      if (open < 0) {
        // A repeated write whose first reply was lost: the outcome is already recorded.
        if (st === outcome.state) return Number((await r.hget(batchKey(batchId), 'open')) ?? 0);
        throw new CashoutError('state_conflict', `request ${seq} of batch ${batchId} is ${st}, not sending; its outcome was not recorded twice`, { batchId, seq, state: st });
      }
      return open;
    },
    async finishUnsent(batchId, seq, message) {
      const [open, st] = await r.cashoutFinish(reqKey(batchId, seq), batchKey(batchId), sendingKey(batchId), paidKey, 'pending', 'not_sent', now(), String(seq), 'message', message);
      if (open < 0) throw new CashoutError('state_conflict', `request ${seq} of batch ${batchId} is ${st}, not pending`, { batchId, seq, state: st });
      return open;
    },
    async release(batchId, seq) {
      const res = await r.cashoutRelease(reqKey(batchId, seq), sendingKey(batchId), String(seq));
      if (res !== 'ok') throw new CashoutError('state_conflict', `request ${seq} of batch ${batchId} is ${res}, not sending`, { batchId, seq, state: res });
    },
    async split(batchId, seq, rejected, child) {
      const childSeq = await r.hincrby(batchKey(batchId), 'next_seq', 1);
      const [open, st, existing] = await r.cashoutSplit(
        reqKey(batchId, seq),
        batchKey(batchId),
        sendingKey(batchId),
        reqKey(batchId, childSeq),
        now(),
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
      );
      if (open < 0) throw new CashoutError('state_conflict', `request ${seq} of batch ${batchId} is ${st}, not sending`, { batchId, seq, state: st });
      return existing !== undefined ? Number(existing) : childSeq;
    },
    async resolve(batchId, seq, finding, by, note) {
      const at = now();
      const res = await r.cashoutResolve(reqKey(batchId, seq), batchKey(batchId), `${batchKey(batchId)}:resolutions`, paidKey, finding, JSON.stringify({ by, at, note, finding }), at, String(seq));
      if (res[0] === 'missing') throw new CashoutError('request_not_found', `batch ${batchId} has no request ${seq}`, { batchId, seq });
      if (res[0] !== 'ok') {
        throw new CashoutError('state_conflict', `request ${seq} of batch ${batchId} is ${res[1]}, not unknown; only unknown requests are resolved`, { batchId, seq, state: res[1] });
      }
    },
    async paidReferences(references) {
      const out: (string | null)[] = new Array<string | null>(references.length).fill(null);
      if (references.length === 0) return out;
      // References never hold a line break (refused as control characters), so they join on one;
      // an empty one could not be looked up that way and is never paid.
      if (references.some((ref) => ref === '' || ref.includes('\n'))) return r.hmget(paidKey, ...references);
      const hits = await r.cashoutPaidLookup(paidKey, references.join('\n'));
      for (let i = 0; i < hits.length; i += 2) out[Number(hits[i]) - 1] = String(hits[i + 1]);
      return out;
    },
    async listResolutions(batchId) {
      return (await r.lrange(`${batchKey(batchId)}:resolutions`, 0, -1)).map((entry) => {
        const space = entry.indexOf(' ');
        return { request: Number(entry.slice(0, space)), ...(JSON.parse(entry.slice(space + 1)) as { finding: string; by: string; at: string; note: string }) };
      });
    },
    async halt(batchId, reason) {
      await r.eval(
        `local st = redis.call('HGET', KEYS[1], 'state') if st == 'queued' then redis.call('HSET', KEYS[1], 'state', 'halted', 'halt_reason', ARGV[1]) end return st`,
        1,
        batchKey(batchId),
        reason,
      );
    },
    async sendingSeqs(batchId) {
      return (await r.smembers(sendingKey(batchId))).map(Number).sort((a, b) => a - b);
    },
    async requestStates(batchId, seqs) {
      if (seqs.length === 0) return [];
      const p = r.pipeline();
      for (const seq of seqs) p.hget(reqKey(batchId, seq), 'state');
      const replies = (await p.exec()) ?? [];
      return seqs.map((_, i) => {
        const [err, value] = replies[i] ?? [new Error('no reply'), null];
        if (err) throw err;
        return typeof value === 'string' ? (value as RequestState) : undefined;
      });
    },
    async lastSeq(batchId) {
      return Number((await r.hget(batchKey(batchId), 'next_seq')) ?? 0);
    },
    async deleteBatch(batchId) {
      const last = Number((await r.hget(batchKey(batchId), 'next_seq')) ?? 0);
      const m = r.multi();
      for (let seq = 1; seq <= last; seq++) m.del(reqKey(batchId, seq));
      m.del(batchKey(batchId), sendingKey(batchId), `${batchKey(batchId)}:resolutions`, `${batchKey(batchId)}:approvals`).zrem(`${prefix}:batches`, batchId);
      await m.exec();
    },
  };
}
