/**
 * Ledger reads the import and the report lean on (src/submit/ledger.ts): references paid in an
 * earlier batch are found wherever they stand in a long list (one Lua call answers only the hits),
 * and a request read without its body still carries everything a report needs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { buildRequest } from '../../src/batch/group-items.js';
import type { PayoutItem } from '../../src/import/validate-row.js';
import { openLedger, type Ledger } from '../../src/submit/ledger.js';
import { TEST_REDIS_URL, deleteKeys, testPrefix } from '../support/redis.js';

const BATCH = '0123456789abcdef';
/** References with characters a JSON or Lua round trip could spoil. */
const PAID = ['REF "quoted"', 'مرجع-٧', 'back\\slash', 'plain-1'];

const item = (line: number, reference: string): PayoutItem => ({
  line,
  reference,
  channel: 'wallet',
  wallet: { amount: '10.00', type: 'TRANSFER', holder_name: `Holder ${line}`, mobile_number: '+201001234567', description: 'x' },
});

describe('ledger reads', () => {
  const prefix = testPrefix('ledger-reads');
  let redis: Redis;
  let ledger: Ledger;
  const createBatch = (id: string, itemsPerRequest: number) =>
    ledger.createBatch({
      id,
      fileName: `${id}.csv`,
      sha256: id.repeat(4),
      createdAt: new Date().toISOString(),
      rows: 0,
      validRows: 0,
      invalidRows: 0,
      itemsPerRequest,
      serviceUrl: 'http://127.0.0.1:9',
      reportDir: '/nonexistent',
      partial: false,
      importedBy: 'test',
    });
  beforeAll(async () => {
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
    ledger = openLedger(redis, prefix);
    await createBatch(BATCH, 10);
    const request = buildRequest(1, PAID.map((ref, i) => item(i + 2, ref)));
    await ledger.stageRequests(BATCH, [request]);
    await ledger.releaseBatch(BATCH, { requests: 1, rows: PAID.length, validRows: PAID.length, invalidRows: 0, totalPiasters: request.totalPiasters });
    const claim = await ledger.claim(BATCH, 1, 'test');
    expect(claim.claimed).toBe(true);
    await ledger.finish(BATCH, 1, { state: 'accepted', httpStatus: 200, message: 'created' });
  });
  afterAll(async () => {
    redis.disconnect();
    await deleteKeys(prefix);
  });

  it('finds paid references at any position of a long list, and only those', async () => {
    const list = Array.from({ length: 2500 }, (_, i) => `NEW-${i}`);
    const at = [0, 999, 1000, 2499];
    at.forEach((pos, k) => (list[pos] = PAID[k]!));
    const found = await ledger.paidReferences(list);
    expect(found).toHaveLength(2500);
    found.forEach((where, pos) => {
      const k = at.indexOf(pos);
      if (k === -1) expect(where).toBeNull();
      else expect(where).toMatch(new RegExp(`^${BATCH}:${k + 2}:`));
    });
  });

  it('reads a request without its body, with every outcome field', async () => {
    const full = await ledger.getRequest(BATCH, 1);
    const lean = await ledger.getRequest(BATCH, 1, { body: false });
    expect(full?.body.mobile_wallets).toHaveLength(PAID.length);
    expect(lean?.bodyJson).toBe('{}');
    const { bodyJson: _a, body: _c, ...fullRest } = full!;
    const { bodyJson: _b, body: _d, ...leanRest } = lean!;
    expect({ ...leanRest, references: lean!.references }).toEqual({ ...fullRest, references: full!.references });
    expect(lean?.state).toBe('accepted');
    expect(lean?.references).toEqual(Object.fromEntries(PAID.map((ref, i) => [String(i + 2), ref])));
  });

  it('records every reference of a large accepted request as paid, keeping the first payment of each', async () => {
    const second = '89abcdef01234567';
    await createBatch(second, 2500);
    // 2,500 references (more than one Lua step marks at once), one of them paid by the first batch.
    const refs = Array.from({ length: 2500 }, (_, i) => (i === 1700 ? PAID[1]! : `BIG-${i}`));
    const request = buildRequest(1, refs.map((ref, i) => item(i + 2, ref)));
    await ledger.stageRequests(second, [request]);
    await ledger.releaseBatch(second, { requests: 1, rows: refs.length, validRows: refs.length, invalidRows: 0, totalPiasters: request.totalPiasters });
    expect((await ledger.claim(second, 1, 'test')).claimed).toBe(true);
    await ledger.finish(second, 1, { state: 'accepted', httpStatus: 200, message: 'created' });
    const found = await ledger.paidReferences(refs);
    found.forEach((where, i) => {
      if (i === 1700) expect(where).toMatch(new RegExp(`^${BATCH}:3:`));
      else expect(where).toMatch(new RegExp(`^${second}:${i + 2}:`));
    });
  });
});
