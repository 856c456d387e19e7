/**
 * Requests in flight and the rate limit, across workers: each worker sends as many requests at
 * once as its concurrency (CASHOUT_CONCURRENCY), several workers add up, and the queue-wide rate
 * limit (CASHOUT_RATE_LIMIT_PER_SECOND) holds for all of them together. Two workers here stand for
 * two processes: they share nothing but Redis (their own connections, clients and BullMQ workers).
 * Against the real Redis and the sandbox over HTTP; every POST is timed by a counting client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { createPaymentClient, type PaymentClient } from '../../src/submit/payment-client.js';
import { openLedger } from '../../src/ledger/index.js';
import { SUBMIT_QUEUE, type SubmitJobData } from '../../src/queue/queues.js';
import { concurrencyShares, startSubmitWorker, type RunningWorker } from '../../jobs/index.js';
import { TEST_REDIS_URL } from '../support/redis.js';
import { openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';

const TOKEN = 'concurrency-test-token';

/**
 * What the counting clients saw: POST start times (ms) and the most POSTs open at once; with a
 * `gate`, each POST waits at it before going out.
 */
interface Traffic {
  starts: number[];
  open: number;
  maxOpen: number;
  gate?: Gate;
}

/** Holds POSTs until `count` of them are open at once, then lets every one through. */
interface Gate {
  /** Called with the POSTs open now; resolves once `count` were open together (or the deadline passed). */
  reached(open: number): Promise<void>;
}

/**
 * A gate for `count` POSTs. After `deadlineMs` it opens anyway, so that a worker that never has its
 * share in flight fails the test's count instead of hanging it.
 */
function gateAt(count: number, deadlineMs = 15_000): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const deadline = setTimeout(() => open(), deadlineMs);
  deadline.unref();
  return {
    reached(n) {
      if (n >= count) {
        clearTimeout(deadline);
        open();
      }
      return opened;
    },
  };
}

/** A payment client whose POSTs are counted in `traffic` (shared by all workers of a test). */
function countingClient(inner: PaymentClient, traffic: Traffic): PaymentClient {
  return {
    async postWithdrawal(body) {
      traffic.starts.push(performance.now());
      traffic.maxOpen = Math.max(traffic.maxOpen, ++traffic.open);
      try {
        await traffic.gate?.reached(traffic.open);
        return await inner.postWithdrawal(body);
      } finally {
        traffic.open--;
      }
    },
    close: () => inner.close(),
  };
}

/** One stand-in for a worker process: its own Redis connections, client and submit worker. */
async function startProcess(
  p: TestPipeline,
  sandbox: Sandbox,
  traffic: Traffic,
  settings: { concurrency: number; rateLimitPerSecond: number },
) {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
  const workerRedis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue<SubmitJobData>(SUBMIT_QUEUE, { connection: workerRedis, prefix: p.prefix });
  const client = countingClient(
    createPaymentClient({
      baseUrl: sandbox.url,
      token: TOKEN,
      requestTimeoutMs: 5_000,
      connectTimeoutMs: 1_000,
      connections: settings.concurrency,
    }),
    traffic,
  );
  const worker: RunningWorker = startSubmitWorker(
    {
      connection: workerRedis,
      prefix: p.prefix,
      ...settings,
      connectRetries: 0,
      connectBackoffMs: 10,
      requestTimeoutMs: 5_000,
    },
    { ledger: openLedger(redis, p.prefix), client, log: p.log, queue },
  );
  return {
    async stop() {
      await worker.close();
      await client.close();
      await queue.close();
      redis.disconnect();
      workerRedis.disconnect();
    },
  };
}

describe('requests in flight and the rate limit across workers', () => {
  let sandbox: Sandbox;
  let p: TestPipeline;

  beforeAll(async () => {
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    p = await openTestPipeline('concurrency');
  });
  afterAll(async () => {
    await sandbox.close();
    await p.close();
  });

  async function queuedBatch(rows: number, first: number): Promise<string> {
    const file = await p.writeCsv(
      `c-${first}.csv`,
      Array.from({ length: rows }, (_, i) => walletRow(first + i)),
    );
    const batch = await p.importCsv(file, { itemsPerRequest: 1 });
    expect(batch.state).toBe('queued');
    return batch.batchId;
  }

  async function finished(batchId: string): Promise<void> {
    await expect
      .poll(async () => (await p.ledger.getBatch(batchId))?.state, { timeout: 20_000, interval: 50 })
      .toBe('finished');
  }

  it('shares a concurrency among BullMQ workers of at most 10 jobs, summing to it', () => {
    expect(concurrencyShares(1)).toEqual([1]);
    expect(concurrencyShares(4)).toEqual([4]);
    expect(concurrencyShares(10)).toEqual([10]);
    expect(concurrencyShares(11)).toEqual([6, 5]);
    expect(concurrencyShares(50)).toEqual([10, 10, 10, 10, 10]);
    expect(concurrencyShares(1_000).reduce((a, b) => a + b, 0)).toBe(1_000);
  });

  it('each worker has its concurrency in flight, and two workers add up', async () => {
    // The first POSTs wait until both workers have their 12 in flight, however slowly they take
    // their jobs; the sandbox's latency then keeps them open long enough that a 25th would show.
    sandbox.setFaults({ latencyMs: 150 });
    const batchId = await queuedBatch(72, 1_000);
    const traffic: Traffic = { starts: [], open: 0, maxOpen: 0, gate: gateAt(24) };
    const workers = await Promise.all([
      startProcess(p, sandbox, traffic, { concurrency: 12, rateLimitPerSecond: 0 }),
      startProcess(p, sandbox, traffic, { concurrency: 12, rateLimitPerSecond: 0 }),
    ]);
    try {
      await finished(batchId);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      sandbox.setFaults({});
    }
    expect(traffic.starts).toHaveLength(72);
    expect(traffic.maxOpen).toBe(24);
  });

  it('the rate limit holds for all workers together', async () => {
    const limit = 5;
    const batchId = await queuedBatch(16, 2_000);
    const traffic: Traffic = { starts: [], open: 0, maxOpen: 0 };
    const workers = await Promise.all([
      startProcess(p, sandbox, traffic, { concurrency: 8, rateLimitPerSecond: limit }),
      startProcess(p, sandbox, traffic, { concurrency: 8, rateLimitPerSecond: limit }),
    ]);
    try {
      await finished(batchId);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    const starts = traffic.starts.sort((a, b) => a - b);
    expect(starts).toHaveLength(16);
    // BullMQ's limiter admits `limit` jobs per window of a second (for the whole queue): no
    // `limit + 1` requests may start within less than a second (less a little for timers).
    for (let i = 0; i + limit < starts.length; i++) expect(starts[i + limit]! - starts[i]!).toBeGreaterThan(900);
    expect(starts[starts.length - 1]! - starts[0]!).toBeGreaterThan(2_700);
  });
});
