/**
 * What each answer of the service does to the rows, against the real Redis and the sandbox over
 * HTTP: 200 → accepted; 422 → the named rows rejected, the others sent again as a new request;
 * 5xx, a reset after creating, a hang → unknown and never sent again by itself; 401 → the batch
 * stops, rows not_sent; connection refused → not_sent; 429 → sent later, once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { isCashoutError } from '../../src/errors.js';
import { enqueueRequests } from '../../src/queue/enqueue-requests.js';
import { requestJobId } from '../../src/batch-id.js';
import { freePort } from '../../src/queue/private-redis.js';
import { bankRow, openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';

const TOKEN = 'test-token-7f3a9c';
const UNKNOWN_BANK = 'Bank Of Nowhere Egypt';
let caseNo = 0;

describe('service answers mapped to rows', () => {
  let sandbox: Sandbox;
  let p: TestPipeline;

  beforeAll(async () => {
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    p = await openTestPipeline('answers', [UNKNOWN_BANK]);
  });
  afterEach(async () => {
    sandbox.setFaults({});
    await fetch(`${sandbox.url}/__sandbox/reset`, { method: 'POST' });
  });
  afterAll(async () => {
    await sandbox.close();
    await p.close();
  });

  const created = () =>
    sandbox.ledger().flatMap((e) => [...(e.body.mobile_wallets ?? []), ...(e.body.bank_accounts ?? [])]);

  it('a 422 naming one item rejects exactly that row and sends the other items again as a new request', async () => {
    const file = await p.writeCsv('422.csv', [
      walletRow(1),
      bankRow(2, '300.00', UNKNOWN_BANK),
      walletRow(3),
      bankRow(4),
      walletRow(5),
    ]);
    const batch = await p.importCsv(file, { itemsPerRequest: 5 });
    expect(batch.requests).toBe(1);
    const { rows, summary } = await p.submit(batch.batchId, { baseUrl: sandbox.url, token: TOKEN });

    const byLine = new Map(rows.map((r) => [r.line, r]));
    expect(byLine.get('3')).toMatchObject({ status: 'rejected', request: '1', http_status: '422' });
    expect(byLine.get('3')!.errors).toMatch(/^bank_name: /);
    for (const line of ['2', '4', '5', '6'])
      expect(byLine.get(line)).toMatchObject({ status: 'accepted', request: '2' });
    expect(sandbox.ledger()).toHaveLength(1);
    expect(
      created()
        .map((i) => i.holder_name)
        .sort(),
    ).toEqual(['Bank Holder 4', 'Holder 1', 'Holder 3', 'Holder 5']);
    expect(summary.byStatus.rejected).toEqual({ rows: 1, amount: '300.00' });
    expect(summary.byStatus.accepted.rows).toBe(4);
  });

  it('a 422 naming every item rejects every row of the request and sends nothing again', async () => {
    const file = await p.writeCsv('422-all.csv', [
      bankRow(11, '10.00', UNKNOWN_BANK),
      bankRow(12, '20.00', UNKNOWN_BANK),
    ]);
    const batch = await p.importCsv(file, { itemsPerRequest: 5 });
    const { rows } = await p.submit(batch.batchId, { baseUrl: sandbox.url, token: TOKEN });
    expect(rows.map((r) => [r.status, r.request])).toEqual([
      ['rejected', '1'],
      ['rejected', '1'],
    ]);
    expect(rows.every((r) => r.errors!.startsWith('bank_name: '))).toBe(true);
    expect(sandbox.received()).toBe(1);
    expect(sandbox.ledger()).toHaveLength(0);
  });

  it.each([
    ['HTTP 500', { rates: { http500: 1 } }, false],
    ['HTTP 503', { rates: { http503: 1 } }, false],
    ['a 200 whose body is not the documented one', { rates: { malformed200: 1 } }, true],
    ['a reset after the request was created', { rates: { createThenReset: 1 } }, true],
    ['created, then HTTP 500', { rates: { createThen500: 1 } }, true],
    ['no answer before the timeout', { rates: { hang: 1 } }, false],
  ])('%s leaves every row unknown and a retry of the job sends nothing', async (_label, faults, createdBySandbox) => {
    const n = 100 + (caseNo += 1);
    const file = await p.writeCsv(`unknown-${n}.csv`, [walletRow(n), bankRow(n)]);
    const batch = await p.importCsv(file, { itemsPerRequest: 5 });
    sandbox.setFaults(faults);
    const { rows, summary } = await p.submit(batch.batchId, {
      baseUrl: sandbox.url,
      token: TOKEN,
      requestTimeoutMs: 500,
    });
    expect(rows.map((r) => r.status)).toEqual(['unknown', 'unknown']);
    expect(summary.batchState).toBe('needs_reconciliation');
    expect(sandbox.ledger()).toHaveLength(createdBySandbox ? 1 : 0);

    // Staff press "retry" on the job (Bull Board's call): the processor refuses to send again.
    sandbox.setFaults({});
    const received = sandbox.received();
    const job = await p.queue.getJob(requestJobId(batch.batchId, 1));
    expect(job).toBeDefined();
    await job!.retry((await job!.getState()) as 'completed' | 'failed');
    const { rows: after } = await p.submit(batch.batchId, { baseUrl: sandbox.url, token: TOKEN });
    await expect
      .poll(async () => (await p.queue.getJob(requestJobId(batch.batchId, 1)))!.getState(), { timeout: 5000 })
      .toBe('failed');
    const failed = await p.queue.getJob(requestJobId(batch.batchId, 1));
    expect(failed!.failedReason).toMatch(/may already have been created/);
    expect(sandbox.received()).toBe(received);
    expect(after.map((r) => r.status)).toEqual(['unknown', 'unknown']);
  });

  it('a refused token stops the batch: nothing is created and every row is not_sent', async () => {
    const file = await p.writeCsv('401.csv', [
      walletRow(31),
      walletRow(32),
      walletRow(33),
      walletRow(34),
      walletRow(35),
    ]);
    const batch = await p.importCsv(file, { itemsPerRequest: 1 });
    const { rows, summary } = await p.submit(batch.batchId, {
      baseUrl: sandbox.url,
      token: 'wrong-token',
      concurrency: 1,
    });
    expect(rows.map((r) => r.status)).toEqual(['not_sent', 'not_sent', 'not_sent', 'not_sent', 'not_sent']);
    expect(summary.haltReason).toMatch(/access token was refused/);
    expect(sandbox.ledger()).toHaveLength(0);
    expect(sandbox.received()).toBe(1);
    expect(p.logLines.join('')).not.toContain('wrong-token');

    // Retrying the refused request (as from the dashboard) sends nothing: the batch stays stopped.
    const job = await p.queue.getJob(requestJobId(batch.batchId, 1));
    await job!.retry('failed');
    await p.submit(batch.batchId, { baseUrl: sandbox.url, token: TOKEN, concurrency: 1 });
    await expect
      .poll(async () => (await p.queue.getJob(requestJobId(batch.batchId, 1)))!.getState(), { timeout: 5000 })
      .toBe('failed');
    expect(sandbox.received()).toBe(1);
    expect((await p.ledger.getRequest(batch.batchId, 1))!.state).toBe('not_sent');
  });

  it('a service that refuses connections gets nothing sent: rows not_sent after the retries', async () => {
    const closedPort = await freePort();
    const file = await p.writeCsv('refused.csv', [walletRow(41)]);
    const batch = await p.importCsv(file);
    const { rows } = await p.submit(batch.batchId, {
      baseUrl: `http://127.0.0.1:${closedPort}`,
      token: TOKEN,
      connectRetries: 2,
    });
    expect(rows[0]).toMatchObject({ status: 'not_sent' });
    expect(rows[0]!.message).toMatch(/could not be reached/);
    const request = await p.ledger.getRequest(batch.batchId, 1);
    expect(request?.attempts).toBe(3);
  });

  it.each([
    ['a name that does not resolve (DNS failure)', () => 'http://cashout-no-such-host.invalid'],
    ['a TLS handshake that fails before anything is sent', () => sandbox.url.replace('http://', 'https://')],
  ])('%s: rows not_sent, nothing created', async (_label, baseUrl) => {
    const file = await p.writeCsv(`unreachable-${(caseNo += 1)}.csv`, [walletRow(70 + caseNo)]);
    const batch = await p.importCsv(file);
    const before = sandbox.ledger().length;
    const { rows } = await p.submit(batch.batchId, { baseUrl: baseUrl(), token: TOKEN });
    expect(rows[0]).toMatchObject({ status: 'not_sent' });
    expect(rows[0]!.message).toMatch(/could not be reached/);
    expect(sandbox.ledger().length).toBe(before);
  });

  it('HTTP 429 slows down and sends the request later, once', async () => {
    const file = await p.writeCsv('429.csv', [walletRow(51), walletRow(52)]);
    const batch = await p.importCsv(file, { itemsPerRequest: 1 });
    sandbox.setFaults({ rates: { http429: 1 }, retryAfterSeconds: 1 });
    const submitted = p.submit(batch.batchId, { baseUrl: sandbox.url, token: TOKEN });
    submitted.catch(() => undefined); // awaited below; a failure is reported there
    try {
      // A 429 answered: its request is back to pending after an attempt, waiting out Retry-After.
      // Only then does the service stop throttling, so the request is sent again and created.
      const releasedAfterAnAttempt = async () => {
        const requests = await Promise.all([1, 2].map((seq) => p.ledger.getRequest(batch.batchId, seq)));
        return requests.some((r) => r !== undefined && r.state === 'pending' && r.attempts > 0);
      };
      await expect.poll(releasedAfterAnAttempt, { timeout: 20_000, interval: 10 }).toBe(true);
    } finally {
      sandbox.setFaults({});
    }
    const { rows } = await submitted;
    expect(rows.map((r) => r.status)).toEqual(['accepted', 'accepted']);
    expect(sandbox.ledger()).toHaveLength(2);
    expect(sandbox.received()).toBeGreaterThan(2);
  });

  it('enqueuing the same requests again adds no job, and the same content cannot be imported twice', async () => {
    const file = await p.writeCsv('twice.csv', [walletRow(61), walletRow(62), walletRow(63), walletRow(64)]);
    const batch = await p.importCsv(file, { itemsPerRequest: 2 });
    const before = await p.queue.getJobCounts();
    expect(await enqueueRequests(p.queue, batch.batchId, [1, 2])).toBe(2);
    expect(await p.queue.getJobCounts()).toEqual(before);
    await p.submit(batch.batchId, { baseUrl: sandbox.url, token: TOKEN });
    expect(sandbox.ledger()).toHaveLength(2);

    const again = await p.importCsv(file, { itemsPerRequest: 2 }).catch((e: unknown) => e);
    expect(isCashoutError(again, 'batch_exists')).toBe(true);
    expect((again as Error).message).toContain(batch.batchId);
  });
});
