/**
 * `requestsInState`, which the dashboard's batch page and reconciliation.csv read a batch's
 * requests with: a batch of more requests than one read takes, some of them unknown, read against
 * the real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestsInState } from '../../src/results/write-reconciliation.js';
import { openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';

describe('the requests of a batch in given states', () => {
  let p: TestPipeline;
  let batchId: string;
  // More requests than one read (200) takes, so that reads follow one another.
  const REQUESTS = 450;
  const UNKNOWN = [1, 199, 200, 201, 333, 450];

  beforeAll(async () => {
    p = await openTestPipeline('requests-in-state');
    const rows = Array.from({ length: REQUESTS }, (_, i) => walletRow(i + 1, `${i + 1}.00`));
    const imported = await p.importCsv(await p.writeCsv('many.csv', rows), { itemsPerRequest: 1 });
    batchId = imported.batchId;
    expect(imported.requests).toBe(REQUESTS);
    for (const seq of UNKNOWN) {
      expect((await p.ledger.claim(batchId, seq, 'test')).claimed).toBe(true);
      await p.ledger.finish(batchId, seq, { state: 'unknown', message: 'timed out after sending' });
    }
  });

  afterAll(async () => {
    await p.close();
  });

  it('gives every request in the states asked for, in sequence order, with its body', async () => {
    const unknown = await requestsInState(p.ledger, batchId, ['unknown']);
    expect(unknown.map((r) => r.seq)).toEqual(UNKNOWN);
    // The body is read: the item of request n is file row n (line n + 1) with amount n.00.
    for (const r of unknown) {
      expect(r.walletLines).toEqual([r.seq + 1]);
      expect(r.body.mobile_wallets?.[0]?.amount).toBe(`${r.seq}.00`);
    }
  });

  it('without bodies, gives states and counts for the whole batch', async () => {
    const all = await requestsInState(p.ledger, batchId, ['pending', 'unknown'], { body: false });
    expect(all.map((r) => r.seq)).toEqual(Array.from({ length: REQUESTS }, (_, i) => i + 1));
    expect(all.filter((r) => r.state === 'unknown').map((r) => r.seq)).toEqual(UNKNOWN);
    expect(await requestsInState(p.ledger, batchId, ['accepted'], { body: false })).toEqual([]);
  });
});
