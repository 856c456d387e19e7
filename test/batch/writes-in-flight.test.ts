/**
 * Work kept in flight a few at a time: staged requests written to the ledger
 * (src/batch/stage-requests.ts) and jobs added to the queue (src/queue/enqueue-requests.ts). At
 * most the limit is in flight, the writer waits while it is reached, writes go out in order, and a
 * failed write fails the whole, after the others in flight have ended. Also the row cursor over a
 * checked part (`partRows` in src/import/check-chunk.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Queue } from 'bullmq';
import { createRequestStager } from '../../src/batch/stage-requests.js';
import { enqueueRequests, seqRange } from '../../src/queue/enqueue-requests.js';
import type { SubmitJobData } from '../../src/queue/queues.js';
import type { Ledger } from '../../src/ledger/index.js';
import {
  itemStart,
  itemText,
  partRows,
  ROW_BANK,
  ROW_INVALID,
  ROW_WALLET,
  type ChunkPart,
} from '../../src/import/check-chunk.js';

/** Calls that end when the test says so, recording how many were in flight at most. */
function heldCalls<T>() {
  const calls: { args: T; end: (error?: Error) => void }[] = [];
  let inFlight = 0;
  let most = 0;
  return {
    calls,
    get most() {
      return most;
    },
    call(args: T): Promise<void> {
      inFlight++;
      most = Math.max(most, inFlight);
      return new Promise<void>((resolve, reject) => {
        calls.push({
          args,
          end: (error) => {
            inFlight--;
            if (error) reject(error);
            else resolve();
          },
        });
      });
    },
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Adds `n` valid rows (one item each) to a stager of one item per request. */
async function addRows(stager: ReturnType<typeof createRequestStager>, from: number, n: number): Promise<void> {
  const item = Buffer.from('{"amount":"1.00"}');
  for (let line = from; line < from + n; line++)
    await stager.add('wallet', line, item, 0, item.length, `REF-${line}`, 100n, `r:REF-${line}`);
}

describe('staging requests in the ledger', () => {
  it('writes ten requests at a time, in order, at most two writes in flight, the reader waiting', async () => {
    const ledger = heldCalls<readonly { seq: number }[]>();
    const stager = createRequestStager(
      { stageRequests: (_id, requests) => ledger.call(requests) } as Pick<Ledger, 'stageRequests'>,
      'batch',
      1,
      false,
    );
    await addRows(stager, 2, 10);
    expect(ledger.calls).toHaveLength(1);
    // A second write in flight: the reader waits until one of the two has ended.
    let waiting = true;
    const second = addRows(stager, 12, 10).then(() => (waiting = false));
    await settle();
    expect([waiting, ledger.calls.length]).toEqual([true, 2]);
    ledger.calls[0]!.end();
    await second;
    const third = addRows(stager, 22, 10);
    await settle();
    expect(ledger.calls).toHaveLength(3);
    ledger.calls[1]!.end();
    await third;
    let finished = false;
    const finishing = stager.finish().then(() => (finished = true));
    await settle();
    expect(finished).toBe(false);
    ledger.calls[2]!.end();
    await finishing;
    expect(ledger.most).toBe(2);
    expect(stager.requests).toBe(30);
    expect(ledger.calls.map((c) => c.args.map((r) => r.seq))).toEqual([
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
      [21, 22, 23, 24, 25, 26, 27, 28, 29, 30],
    ]);
  });

  it('fails at the next write after a failed one, and settles every write before the batch is refused', async () => {
    const ledger = heldCalls<readonly { seq: number }[]>();
    const stager = createRequestStager(
      { stageRequests: (_id, requests) => ledger.call(requests) } as Pick<Ledger, 'stageRequests'>,
      'batch',
      1,
      false,
    );
    await addRows(stager, 2, 10);
    ledger.calls[0]!.end(new Error('payee held'));
    await settle();
    await expect(addRows(stager, 12, 10)).rejects.toThrow('payee held');
    let settled = false;
    const settling = stager.settle().then(() => (settled = true));
    await settle();
    expect(settled).toBe(false);
    ledger.calls[1]!.end();
    await settling;
  });

  it('fails when the last write fails', async () => {
    const stager = createRequestStager(
      { stageRequests: () => Promise.reject(new Error('no Redis')) } as Pick<Ledger, 'stageRequests'>,
      'batch',
      1,
      false,
    );
    await addRows(stager, 2, 3);
    await expect(stager.finish()).rejects.toThrow('no Redis');
  });
});

describe('adding jobs to the queue', () => {
  const queueOf = (addBulk: (jobs: readonly { data: SubmitJobData }[]) => Promise<void>) =>
    ({ addBulk }) as unknown as Queue<SubmitJobData>;

  it('adds every seq once, at most `inFlight` calls at once', async () => {
    const bulk = heldCalls<readonly { data: SubmitJobData }[]>();
    const adding = enqueueRequests(
      queueOf((jobs) => bulk.call(jobs)),
      'batch',
      seqRange(1, 25),
      2,
      3,
    );
    await settle();
    expect(bulk.calls).toHaveLength(3);
    for (let ended = 0; ended < bulk.calls.length; ended++) {
      bulk.calls[ended]!.end();
      await settle();
    }
    expect(await adding).toBe(25);
    expect(bulk.most).toBe(3);
    expect(bulk.calls.flatMap((c) => c.args.map((j) => j.data.seq))).toEqual([...seqRange(1, 25)]);
  });

  it('throws a failed call once the calls in flight have ended', async () => {
    const bulk = heldCalls<readonly { data: SubmitJobData }[]>();
    let done = false;
    const adding = enqueueRequests(
      queueOf((jobs) => bulk.call(jobs)),
      'batch',
      seqRange(1, 25),
      2,
      3,
    ).finally(() => (done = true));
    adding.catch(() => undefined);
    await settle();
    bulk.calls[1]!.end(new Error('queue down'));
    await settle();
    expect(done).toBe(false);
    expect(bulk.calls).toHaveLength(3);
    bulk.calls[0]!.end();
    bulk.calls[2]!.end();
    await expect(adding).rejects.toThrow('queue down');
  });
});

describe('the rows of a checked part', () => {
  const items = ['{"a":1}', '{"b":"ü"}'];
  const itemBytes = Buffer.from(items.join(''));
  const part: ChunkPart = {
    index: 0,
    last: true,
    lines: 6,
    kinds: Uint8Array.from([ROW_WALLET, ROW_INVALID, ROW_BANK, ROW_INVALID]),
    rowLines: Int32Array.from([0, 1, 3, 5]),
    piasters: BigInt64Array.from([100n, 250n]),
    fingerprints: new Uint32Array(16),
    itemBytes,
    itemEnds: Uint32Array.from([Buffer.byteLength(items[0]!), itemBytes.length]),
    references: 'R1\nR2',
    invalid: [
      { cells: ['x'], issues: [] },
      { cells: ['y'], issues: [] },
    ],
  };

  it('gives each row its file line, and its place among the valid or the invalid rows', () => {
    expect([...partRows(part, 10)]).toEqual([
      { kind: ROW_WALLET, line: 10, valid: 0, invalid: -1 },
      { kind: ROW_INVALID, line: 11, valid: -1, invalid: 0 },
      { kind: ROW_BANK, line: 13, valid: 1, invalid: -1 },
      { kind: ROW_INVALID, line: 15, valid: -1, invalid: 1 },
    ]);
  });

  it("reads each valid row's item", () => {
    expect(itemStart(part, 1)).toBe(Buffer.byteLength(items[0]!));
    expect([itemText(part, 0), itemText(part, 1)]).toEqual(items);
  });
});
