/**
 * The HTTP API shows a settled batch as the ledger has it now, also when the ledger changed after
 * the batch's report was last written (a worker that finished a retried request and has not yet
 * rewritten the report, or a finding recorded by another process): the counts, state and findings
 * it serves never lag behind the ledger. A batch lists its report files from its first read, and a
 * refused batch and the batch that imported its file again name each other. A batch being sent
 * has its report written once at a time and once every few seconds, however often it is read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { apiKeyStore } from '../../src/api/api-keys.js';
import { openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';
import { REWRITE_AFTER_MS } from '../../src/api/batch-report.js';
import { startTestDashboard } from '../support/dashboard.js';

const TOKEN = 'settled-summary-token';

describe('HTTP API: a settled batch changed after its report was written', () => {
  let p: TestPipeline;
  let sandbox: Sandbox;
  let app: FastifyInstance;
  let base: string;
  let key: string;

  beforeAll(async () => {
    p = await openTestPipeline('settled-summary');
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    ({ app, base } = await startTestDashboard(p, { users: 'none', api: { import: undefined, maxFileBytes: 1000 } }));
    key = (await apiKeyStore(p.redis, p.prefix).create('amira')).key;
  });
  afterAll(async () => {
    await app?.close();
    await sandbox?.close();
    await p?.close();
  });

  const get = async (path: string) => {
    const res = await fetch(`${base}/api/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, any>;
  };

  it('serves the counts, state and findings of the ledger, not those of the last report', async () => {
    const file = await p.writeCsv('settled.csv', [walletRow(1), walletRow(2), walletRow(3), walletRow(4)]);
    const { batchId } = await p.importCsv(file, { itemsPerRequest: 2, serviceUrl: sandbox.url });
    sandbox.setFaults({ rates: { http500: 1 } });
    const { summary } = await p.submit(batchId, { baseUrl: sandbox.url, token: TOKEN, serviceUrl: sandbox.url });
    sandbox.setFaults({});
    expect(summary.batchState).toBe('needs_reconciliation');
    const before = await get(`/batches/${batchId}`);
    expect(before).toMatchObject({ state: 'needs_reconciliation' });
    expect(before.byStatus.unknown.rows).toBe(4);

    // Another process records a finding on the first request; the report is not written again.
    await p.ledger.resolve(batchId, 1, 'created', 'amira', 'seen in the merchant dashboard');
    const one = await get(`/batches/${batchId}`);
    expect(one.state).toBe('needs_reconciliation');
    expect(one.byStatus.accepted.rows).toBe(2);
    expect(one.byStatus.unknown.rows).toBe(2);
    expect(one.resolutions).toHaveLength(1);

    // The second finding ends the batch: finished, every row accepted, in the rows listed too.
    await p.ledger.resolve(batchId, 2, 'created', 'amira', 'seen in the merchant dashboard');
    const done = await get(`/batches/${batchId}`);
    expect(done.state).toBe('finished');
    expect(done.byStatus.accepted.rows).toBe(4);
    expect(done.byStatus.unknown.rows).toBe(0);
    expect(done.resolutions).toHaveLength(2);
    const unknown = await get(`/batches/${batchId}/rows?status=unknown`);
    expect(unknown.matching).toBe(0);
  });

  it('says of rows resolved as not created that they wait for a person to retry them', async () => {
    const file = await p.writeCsv('not-created.csv', [walletRow(21), walletRow(22)]);
    const { batchId } = await p.importCsv(file, { itemsPerRequest: 2, serviceUrl: sandbox.url });
    sandbox.setFaults({ rates: { http500: 1 } });
    await p.submit(batchId, { baseUrl: sandbox.url, token: TOKEN, serviceUrl: sandbox.url });
    sandbox.setFaults({});
    await p.ledger.resolve(batchId, 1, 'not_created', 'amira', 'not in the merchant dashboard');
    const pending = await get(`/batches/${batchId}/rows?status=pending`);
    expect(pending.matching).toBe(2);
    for (const row of pending.rows as Record<string, string>[]) {
      expect(row.message).toMatch(
        /^not sent again yet: resolved as not created by amira on .* \(not in the merchant dashboard\)/,
      );
      expect(row.message).toContain(`it is sent when someone retries request 1 (cashout retry ${batchId} 1, or Retry`);
    }
  });

  it('lists the report files of a queued batch on the first read, and links a refused batch and its successor', async () => {
    const file = await p.writeCsv('refused-first.csv', [walletRow(11), walletRow(12, '"1,500.00"')]);
    const refused = await p.importCsv(file, { serviceUrl: sandbox.url });
    expect(refused.state).toBe('refused');
    const again = await p.importCsv(file, { partial: true, serviceUrl: sandbox.url });
    expect(again.state).toBe('queued');
    const queued = await get(`/batches/${again.batchId}`);
    expect(queued.files).toEqual(expect.arrayContaining(['results.csv', 'summary.json', 'rejected-rows.csv']));
    expect(queued.follows).toBe(refused.batchId);
    expect(queued).not.toHaveProperty('supersededBy');
    const first = await get(`/batches/${refused.batchId}`);
    expect(first.supersededBy).toBe(again.batchId);
    expect(first).not.toHaveProperty('follows');
  });

  it('writes the report of a batch being sent at most once at a time and once every few seconds, and at once when its state changed', async () => {
    const file = await p.writeCsv('polled.csv', [walletRow(31), walletRow(32), walletRow(33)]);
    const { batchId } = await p.importCsv(file, { itemsPerRequest: 1, serviceUrl: sandbox.url });
    const writtenAt = async () => (await get(`/batches/${batchId}/files/summary.json`)).reportWrittenAt as string;
    // Three readers at once share one write; a fourth right after reads it again.
    const together = await Promise.all([writtenAt(), writtenAt(), writtenAt()]);
    expect(new Set(together).size).toBe(1);
    expect(await writtenAt()).toBe(together[0]);
    // The ledger's state changed: written again at once.
    await p.ledger.halt(batchId, 'the service refused the access token (HTTP 401)');
    const halted = await get(`/batches/${batchId}/files/summary.json`);
    expect(halted.batchState).toBe('halted');
    expect(halted.reportWrittenAt).not.toBe(together[0]);
    // Past the interval, written again.
    await new Promise((resolve) => setTimeout(resolve, REWRITE_AFTER_MS + 200));
    expect(await writtenAt()).not.toBe(halted.reportWrittenAt);
  });
});
