/**
 * Withdrawal requests → BullMQ jobs on the submit queue. Job id = "<batchId>-<seq>", so adding the
 * same request twice is a no-op. Adds in chunks with `addBulk`.
 */
import type { Queue } from 'bullmq';
import { requestJobId } from '../batch/batch-id.js';
import { SUBMIT_JOB_OPTIONS, type SubmitJobData } from './queues.js';

/** Adds a job for each seq of the batch (chunks of `chunk`, default 500). */
export async function enqueueRequests(queue: Queue<SubmitJobData>, batchId: string, seqs: Iterable<number>, chunk = 500): Promise<number> {
  let buffer: { name: string; data: SubmitJobData; opts: typeof SUBMIT_JOB_OPTIONS }[] = [];
  let added = 0;
  const flush = async () => {
    if (buffer.length === 0) return;
    await queue.addBulk(buffer);
    added += buffer.length;
    buffer = [];
  };
  for (const seq of seqs) {
    buffer.push({ name: 'submit-withdrawal', data: { batchId, seq }, opts: { ...SUBMIT_JOB_OPTIONS, jobId: requestJobId(batchId, seq) } });
    if (buffer.length >= chunk) await flush();
  }
  await flush();
  return added;
}

/** 1..n */
export function* seqRange(from: number, to: number): Generator<number> {
  for (let s = from; s <= to; s++) yield s;
}
