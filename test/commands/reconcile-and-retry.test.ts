/**
 * Unknown outcomes are parked until a person decides, and the dashboard's Retry button (Bull
 * Board's own API call) cannot pay twice: against the real Redis, the sandbox over HTTP and Bull
 * Board served over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify, { type FastifyInstance } from 'fastify';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { registerBullBoard } from '../../src/dashboard/bull-board.js';
import { requestJobId } from '../../src/batch-id.js';
import { writeReconciliation } from '../../src/results/write-reconciliation.js';
import { isCashoutError } from '../../src/errors.js';
import { freePort } from '../../src/queue/private-redis.js';
import { bankRow, openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';

const TOKEN = 'reconcile-test-token';

describe('reconciliation and retries from the dashboard', () => {
  let sandbox: Sandbox;
  let p: TestPipeline;
  let app: FastifyInstance;
  let board: string;
  let worker: { close(): Promise<void> };

  beforeAll(async () => {
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    p = await openTestPipeline('reconcile');
    app = Fastify();
    await registerBullBoard(app, [p.queue]);
    board = `${await app.listen({ host: '127.0.0.1', port: 0 })}/queues/api/queues/cashout-submit`;
    worker = p.startWorker({ baseUrl: sandbox.url, token: TOKEN, connections: 4 });
  });
  afterAll(async () => {
    await worker.close();
    await app.close();
    await sandbox.close();
    await p.close();
  });

  const jobState = async (batchId: string, seq: number) =>
    (await p.queue.getJob(requestJobId(batchId, seq)))!.getState();
  const requestState = async (batchId: string, seq: number) => (await p.ledger.getRequest(batchId, seq))!.state;

  async function unknownBatch(rows: string[]): Promise<string> {
    sandbox.setFaults({ rates: { createThen500: 1 } });
    const file = await p.writeCsv(`b-${rows.length}-${Date.now()}.csv`, rows);
    const batch = await p.importCsv(file, { itemsPerRequest: 10 });
    await expect.poll(() => requestState(batch.batchId, 1), { timeout: 10_000 }).toBe('unknown');
    await expect.poll(() => jobState(batch.batchId, 1), { timeout: 10_000 }).toBe('failed');
    sandbox.setFaults({});
    return batch.batchId;
  }

  it('Retry from Bull Board refuses an unknown request, and sends it exactly once after "not created"', async () => {
    const batchId = await unknownBatch([walletRow(1), bankRow(2)]);
    expect(sandbox.ledger()).toHaveLength(1); // the service did create it: that is what makes resending dangerous
    const received = sandbox.received();

    const retry = () => fetch(`${board}/${requestJobId(batchId, 1)}/retry`, { method: 'PUT' });
    expect((await retry()).status).toBe(204);
    await expect.poll(() => jobState(batchId, 1), { timeout: 10_000 }).toBe('failed');
    const job = await p.queue.getJob(requestJobId(batchId, 1));
    expect(job!.failedReason).toMatch(/may already have been created/);
    expect(sandbox.received()).toBe(received);
    expect(await requestState(batchId, 1)).toBe('unknown');

    await p.ledger.resolve(batchId, 1, 'not_created', 'amira', 'not in the merchant dashboard on 2026-11-22');
    expect((await retry()).status).toBe(204);
    await expect.poll(() => requestState(batchId, 1), { timeout: 10_000 }).toBe('accepted');
    expect(sandbox.received()).toBe(received + 1);
    expect(await jobState(batchId, 1)).toBe('completed');

    // A completed submission cannot be retried from the dashboard at all.
    const again = await retry();
    expect(again.status).toBe(403);
    expect(sandbox.received()).toBe(received + 1);

    const { rows, summary } = await p.report(batchId);
    expect(rows.map((r) => r.status)).toEqual(['accepted', 'accepted']);
    expect(rows[0]!.message).toMatch(/reconciled as not created by amira/);
    expect(summary.resolutions).toEqual([expect.objectContaining({ request: 1, finding: 'not_created', by: 'amira' })]);
  });

  it('"created" turns the rows accepted (reconciled) without sending anything', async () => {
    const batchId = await unknownBatch([walletRow(11), walletRow(12), bankRow(13)]);
    const batch = await p.ledger.getBatch(batchId);
    expect(batch!.state).toBe('needs_reconciliation');
    const { requests, path } = await writeReconciliation(p.ledger, batchId, batch!.reportDir);
    expect(requests.map((r) => r.seq)).toEqual([1]);
    const listed = parse(await readFile(path), { columns: true, bom: true }) as Record<string, string>[];
    expect(listed.map((r) => r.line)).toEqual(['2', '3', '4']);

    const received = sandbox.received();
    await p.ledger.resolve(batchId, 1, 'created', 'omar', 'found as W-991 in the dashboard');
    expect((await p.ledger.getBatch(batchId))!.state).toBe('finished');
    const { rows } = await p.report(batchId);
    expect(rows.map((r) => r.status)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(rows[0]!.message).toMatch(/accepted \(reconciled\).*omar.*W-991/);
    expect(sandbox.received()).toBe(received);

    // A resolved request cannot be resolved again, nor sent from the dashboard.
    const second = await p.ledger.resolve(batchId, 1, 'not_created', 'x', 'y').catch((e: unknown) => e);
    expect(isCashoutError(second, 'request_state')).toBe(true);
    expect((await fetch(`${board}/${requestJobId(batchId, 1)}/retry`, { method: 'PUT' })).status).toBe(204);
    await expect.poll(() => jobState(batchId, 1), { timeout: 10_000 }).toBe('failed');
    expect(sandbox.received()).toBe(received);
  });

  it('a not_sent request is sent when retried from the dashboard, once', async () => {
    const q = await openTestPipeline('notsent');
    const qApp = Fastify();
    try {
      await registerBullBoard(qApp, [q.queue]);
      const qBoard = `${await qApp.listen({ host: '127.0.0.1', port: 0 })}/queues/api/queues/cashout-submit`;
      const file = await q.writeCsv('not-sent.csv', [walletRow(21), bankRow(22)]);
      const batch = await q.importCsv(file);
      const closed = `http://127.0.0.1:${await freePort()}`;
      const { rows } = await q.submit(batch.batchId, { baseUrl: closed, token: TOKEN });
      expect(rows.map((r) => r.status)).toEqual(['not_sent', 'not_sent']);
      expect(await (await q.queue.getJob(requestJobId(batch.batchId, 1)))!.getState()).toBe('failed');

      const before = sandbox.ledger().length;
      expect((await fetch(`${qBoard}/${requestJobId(batch.batchId, 1)}/retry`, { method: 'PUT' })).status).toBe(204);
      const after = await q.submit(batch.batchId, { baseUrl: sandbox.url, token: TOKEN });
      expect(after.rows.map((r) => r.status)).toEqual(['accepted', 'accepted']);
      expect(sandbox.ledger().length).toBe(before + 1);
    } finally {
      await qApp.close();
      await q.close();
    }
  });

  it('the dashboard refuses to add, duplicate or edit submission jobs', async () => {
    const add = await fetch(`${board}/add`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x', data: { batchId: '0000000000000000', seq: 1 } }),
    });
    expect(add.status, await add.clone().text()).toBe(403);
    const edit = await fetch(`${board}/anything/update-data`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(edit.status).toBe(403);
    const retryCompleted = await fetch(`${board}/retry/completed`, { method: 'PUT' });
    expect(retryCompleted.status).toBe(403);
    expect(await p.queue.count()).toBe(0);
  });
});
