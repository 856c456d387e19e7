/**
 * The ledger's Redis keys (P = configured prefix, e.g. "{cashout}"; the hash tag keeps every key
 * in one cluster slot, as the scripts that touch several keys need):
 *
 *   P:batches                       sorted set of batch ids by creation time (ms)
 *   P:batch:<id>                    hash: batch facts, state, counters
 *   P:batch:<id>:req:<seq>          hash: one withdrawal request
 *   P:batch:<id>:sending            set of seqs currently `sending` (for crash recovery)
 *   P:batch:<id>:approvals          list: who did what to the batch (JSON events)
 *   P:batch:<id>:resolutions        list: findings on unknown requests
 *   P:payouts                       hash: the payout register (payout-register.ts)
 */
import type { LedgerRedis } from './scripts.js';
import type { RegisterSettings } from './payout-register.js';

/** What the ledger's parts share: the connection, the key names, the clock and the register's settings. */
export interface LedgerContext {
  readonly r: LedgerRedis;
  readonly prefix: string;
  readonly register: RegisterSettings;
  readonly batchKey: (id: string) => string;
  readonly reqKey: (id: string, seq: number) => string;
  readonly sendingKey: (id: string) => string;
  readonly approvalsKey: (id: string) => string;
  readonly resolutionsKey: (id: string) => string;
  readonly registerKey: string;
  readonly batchesKey: string;
  /** The current time as an ISO string. */
  readonly now: () => string;
}

/** The key names under `prefix`. */
export function ledgerContext(r: LedgerRedis, prefix: string, register: RegisterSettings): LedgerContext {
  const batchKey = (id: string) => `${prefix}:batch:${id}`;
  return {
    r,
    prefix,
    register,
    batchKey,
    reqKey: (id, seq) => `${batchKey(id)}:req:${seq}`,
    sendingKey: (id) => `${batchKey(id)}:sending`,
    approvalsKey: (id) => `${batchKey(id)}:approvals`,
    resolutionsKey: (id) => `${batchKey(id)}:resolutions`,
    registerKey: `${prefix}:payouts`,
    batchesKey: `${prefix}:batches`,
    now: () => new Date().toISOString(),
  };
}
