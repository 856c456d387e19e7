/**
 * Items → withdrawal requests → the ledger, as the rows are read: valid rows are grouped into
 * requests (`createJsonGrouper`, in file order) and the requests staged `STAGE_GROUP` to a write,
 * with at most `STAGE_IN_FLIGHT` writes in flight (p-limit). While that many are, the reader waits
 * for one to end, so memory stays bounded whatever the file's size. A failed write fails the
 * import: it is thrown at the next write or by `finish`.
 */
import pLimit from 'p-limit';
import type { Ledger } from '../ledger/index.js';
import { createJsonGrouper, type StagedRequest } from './group-items.js';

/** Requests staged in one write, and writes in flight while rows are read. */
const STAGE_GROUP = 10;
const STAGE_IN_FLIGHT = 2;

/** The requests of one batch being made and staged. */
export interface RequestStager {
  /** Requests made so far. */
  readonly requests: number;
  /**
   * Adds one valid row: its channel, file line, the bytes holding its item JSON from `start` to
   * `end`, reference, amount in piasters and payee key. When a write is due, returns a promise to
   * await before the next row: it waits while the writes in flight are at their limit, and throws
   * a write that failed.
   */
  add(
    channel: 'wallet' | 'bank',
    line: number,
    source: Uint8Array,
    start: number,
    end: number,
    reference: string,
    piasters: bigint,
    payee: string,
  ): Promise<void> | undefined;
  /** Makes the last, partial request and stages what is left; resolves once every write is done. */
  finish(): Promise<void>;
  /** Waits for the writes in flight to end, failed or not (the import failed; the batch is refused next). */
  settle(): Promise<void>;
}

/** The stager of batch `batchId`: requests of at most `itemsPerRequest` items; `payAgain` as `Ledger.stageRequests` takes it. */
export function createRequestStager(
  ledger: Pick<Ledger, 'stageRequests'>,
  batchId: string,
  itemsPerRequest: number,
  payAgain: boolean,
): RequestStager {
  const grouper = createJsonGrouper(itemsPerRequest);
  const limit = pLimit(STAGE_IN_FLIGHT);
  // Writes in flight; each takes itself out when it ends, a failure kept in `failure`.
  const writes = new Set<Promise<void>>();
  let failure: { readonly error: unknown } | undefined;
  let group: StagedRequest[] = [];
  let requests = 0;
  const write = async () => {
    if (group.length === 0) return;
    const staged = group;
    group = [];
    const written: Promise<void> = limit(() => ledger.stageRequests(batchId, staged, { payAgain })).then(
      () => void writes.delete(written),
      (error: unknown) => {
        writes.delete(written);
        failure ??= { error };
      },
    );
    writes.add(written);
    while (writes.size > 0 && limit.activeCount + limit.pendingCount >= STAGE_IN_FLIGHT) await Promise.race(writes);
    if (failure) throw failure.error;
  };
  const take = (req: StagedRequest | undefined) => {
    if (!req) return false;
    group.push(req);
    requests++;
    return true;
  };
  return {
    get requests() {
      return requests;
    },
    add(channel, line, source, start, end, reference, piasters, payee) {
      const req = grouper.add(channel, line, source, start, end, reference, piasters, payee);
      return take(req) && group.length >= STAGE_GROUP ? write() : undefined;
    },
    async finish() {
      take(grouper.finish());
      await write();
      await Promise.all(writes);
      if (failure) throw failure.error;
    },
    async settle() {
      await Promise.all(writes);
    },
  };
}
