/**
 * Withdrawal requests → BullMQ jobs on the submit queue. Job id = "<batchId>-<seq>", so adding the
 * same request twice is a no-op. Adds in chunks with `addBulk`.
 */
import type { Queue } from 'bullmq';
import pLimit from 'p-limit';
import { requestJobId } from '../batch-id.js';
import { SUBMIT_JOB_OPTIONS, type SubmitJobData } from './queues.js';

/**
 * Adds a job for each seq of the batch, `chunk` jobs (default 500) per `addBulk`, with at most
 * `inFlight` (default 4) `addBulk` calls waiting on Redis at once (p-limit): once that many are,
 * no more jobs are made until one of them ends, so memory stays bounded and Redis is kept busy.
 * Returns the number of jobs added (already present ids count too). Throws the first failed
 * `addBulk`, after the others have ended.
 */
export async function enqueueRequests(
  queue: Queue<SubmitJobData>,
  batchId: string,
  seqs: Iterable<number>,
  chunk = 500,
  inFlight = 4,
): Promise<number> {
  const limit = pLimit(inFlight);
  let buffer: { name: string; data: SubmitJobData; opts: typeof SUBMIT_JOB_OPTIONS }[] = [];
  let added = 0;
  // Calls in flight, and any that failed (thrown where these are awaited).
  const pending = new Set<Promise<void>>();
  const flush = async () => {
    if (buffer.length === 0) return;
    const jobs = buffer;
    buffer = [];
    const p: Promise<void> = limit(() => queue.addBulk(jobs)).then(() => {
      added += jobs.length;
      pending.delete(p);
    });
    pending.add(p);
    if (limit.activeCount + limit.pendingCount >= inFlight) await Promise.race(pending);
  };
  try {
    for (const seq of seqs) {
      buffer.push({
        name: 'submit-withdrawal',
        data: { batchId, seq },
        opts: { ...SUBMIT_JOB_OPTIONS, jobId: requestJobId(batchId, seq) },
      });
      if (buffer.length >= chunk) await flush();
    }
    await flush();
  } finally {
    await Promise.allSettled(pending);
  }
  await Promise.all(pending);
  return added;
}

/** 1..n */
export function* seqRange(from: number, to: number): Generator<number> {
  for (let s = from; s <= to; s++) yield s;
}
