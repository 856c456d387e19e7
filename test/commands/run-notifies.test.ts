/**
 * `cashout run` notifies its batch's end as a worker would: the sample is paid against the
 * sandbox by the real command, with a webhook address set; a notification worker started
 * afterwards on the same Redis delivers `batch.finished` to a receiver on 127.0.0.1, signed, with
 * the run's batch and counts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { verifySignature } from '../../src/notify/signature.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startNotifyWorker, type NotifyWorker } from '../../jobs/index.js';
import { memoryLog } from '../support/pipeline.js';
import { deleteKeys, TEST_REDIS_URL, testPrefix } from '../support/redis.js';
import { runCliInProcess } from '../support/cli-in-process.js';

const TOKEN = 'run-notifies-test-token';
const SECRET = 'a-webhook-secret-for-run';
const SAMPLE = join(PACKAGE_ROOT, 'samples', 'payouts.csv');

describe('cashout run and notifications', () => {
  const prefix = testPrefix('run-notify');
  let sandbox: Sandbox;
  let receiver: Server;
  let receiverUrl: string;
  let reports: string;
  let redis: Redis;
  let notifyWorker: NotifyWorker | undefined;
  // The first delivery: resolved by the receiver.
  let delivered: Promise<{ headers: Record<string, string | string[] | undefined>; body: string }>;

  beforeAll(async () => {
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    reports = await mkdtemp(join(tmpdir(), 'cashout-run-notify-'));
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    delivered = new Promise((resolve) => {
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          resolve({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(204).end();
        });
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
  });

  afterAll(async () => {
    await notifyWorker?.close();
    redis.disconnect();
    await new Promise((resolve) => receiver.close(resolve));
    await sandbox.close();
    await rm(reports, { recursive: true, force: true });
    await deleteKeys(prefix);
  });

  it('queues batch.finished when its batch is paid, delivered by a worker', async () => {
    const res = await runCliInProcess(['run', SAMPLE], {
      REDIS_URL: TEST_REDIS_URL,
      CASHOUT_REDIS_PREFIX: prefix,
      CASHOUT_REPORTS_DIR: reports,
      CASHOUT_API_BASE_URL: sandbox.url,
      CASHOUT_API_TOKEN: TOKEN,
      CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
      CASHOUT_WEBHOOK_URLS: receiverUrl,
      CASHOUT_WEBHOOK_SECRET: SECRET,
      CASHOUT_LOG_LEVEL: 'warn',
    });
    expect(res.code).toBe(0);
    const [batchId] = await readdir(reports);

    // `run` has ended; a worker on the same Redis delivers what it queued.
    notifyWorker = startNotifyWorker(
      { connection: redis, prefix },
      { secret: SECRET, timeoutMs: 2_000, redis, prefix, log: memoryLog().log },
    );
    const got = await delivered;
    expect(got.headers['x-cashout-event']).toBe('batch.finished');
    expect(verifySignature(SECRET, got.headers['x-cashout-signature'] as string, got.body)).toBe(true);
    const body = JSON.parse(got.body) as Record<string, any>;
    expect(body).toMatchObject({ event: 'batch.finished', batchId, state: 'finished', rows: 200 });
    expect(body.counts.accepted).toBe(200);
  });
});
