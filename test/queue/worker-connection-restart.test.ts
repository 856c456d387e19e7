/**
 * A worker process may start its BullMQ workers at the moment Redis restarts. The connection
 * `connectRedis` gives them must let them finish jobs once Redis is back: a worker that takes jobs
 * but can never complete one leaves every request of its batch pending, with nobody told.
 * Runs against a private redis-server that the test kills and starts again on the same port.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../src/queue/private-redis.js';
import { connectRedis } from '../../src/queue/connection.js';

describe('the worker connection across a Redis restart', () => {
  const closers: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  it('a BullMQ worker made on it while Redis is away completes its jobs once Redis is back', async () => {
    let server: PrivateRedis = await startPrivateRedis();
    closers.push(() => server.stop());
    const connection = await connectRedis(server.url, { forWorker: true });
    closers.push(() => connection.disconnect());

    // Redis goes away just before the worker is made (as when it restarts while a worker starts).
    const gone = new Promise((resolve) => server.process.once('exit', resolve));
    server.process.kill('SIGKILL');
    await gone;
    const processed: string[] = [];
    const worker = new Worker(
      'restart-check',
      async (job) => {
        processed.push(job.id!);
        return 'done';
      },
      { connection, prefix: '{restart}' },
    );
    worker.on('error', () => undefined);
    closers.push(() => worker.close(true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    server = await startPrivateRedis({ port: server.port });

    const producer = new Redis(server.url, { maxRetriesPerRequest: null });
    closers.push(() => producer.disconnect());
    const queue = new Queue('restart-check', { connection: producer, prefix: '{restart}' });
    closers.push(() => queue.close());
    const job = await queue.add('one', {}, { jobId: 'after-restart' });

    let state = await job.getState();
    for (const until = Date.now() + 15_000; state !== 'completed' && Date.now() < until;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = await job.getState();
    }
    expect(processed).toEqual(['after-restart']);
    expect(state).toBe('completed');
  }, 30_000);
});
