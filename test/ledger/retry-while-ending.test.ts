/**
 * A person's retry that comes while a worker is still ending the request's job (the request is
 * already `not_sent`, the job not yet completed) queues the request again once the job has ended,
 * instead of finding an active job, queuing nothing and saying "queued again".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from 'bullmq';
import { SUBMIT_QUEUE } from '../../src/queue/queues.js';
import { retryRequest } from '../../src/ledger/actions.js';
import { openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';

describe('a retry while the request’s job is ending', () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await openTestPipeline('retry-while-ending');
  });
  afterAll(async () => {
    await p.close();
  });

  it('waits for the job to end, then queues the request again', async () => {
    const batch = await p.importCsv(await p.writeCsv('ending.csv', [walletRow(7100)]));
    let release!: () => void;
    const ended = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const active = new Promise<void>((resolve) => (started = resolve));
    // A worker that ends the request as not sent, then takes a moment to complete its job.
    const worker: Worker = new Worker(
      SUBMIT_QUEUE,
      async () => {
        void worker.pause(true);
        await p.ledger.finishUnsent(batch.batchId, 1, 'not sent: the service could not be reached', 'pending');
        started();
        await ended;
      },
      { connection: p.workerRedis, prefix: p.prefix },
    );
    try {
      await active;
      const job = await p.queue.getJob(`${batch.batchId}-1`);
      expect(await job!.getState()).toBe('active');
      expect((await p.ledger.getRequest(batch.batchId, 1))!.state).toBe('not_sent');
      const retry = retryRequest(p.ledger, p.queue, batch.batchId, 1, { user: 'amira' });
      setTimeout(release, 300);
      await retry;
      // The worker is paused: the job queued again waits for the next worker.
      expect(await (await p.queue.getJob(`${batch.batchId}-1`))!.getState()).toBe('waiting');
      const story = await p.ledger.listApprovals(batch.batchId);
      expect(story.at(-1)).toMatchObject({ action: 'retried', by: 'amira', note: 'request 1' });
    } finally {
      release();
      await worker.close();
    }
  });
});
