/**
 * Ledger reads the import and the report lean on (src/ledger/): payee keys held by an earlier batch
 * are found wherever they stand in a long list (one Lua call answers only the hits), a large
 * request takes all its keys at once, and a request read without its body still carries
 * everything a report needs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { buildRequest, type WithdrawalRequest } from '../../src/batch/group-items.js';
import { isCashoutError } from '../../src/errors.js';
import type { PayoutItem } from '../../src/import/validate-row.js';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { TEST_REDIS_URL, deleteKeys, testPrefix } from '../support/redis.js';

const BATCH = '0123456789abcdef';
/** References with characters a JSON or Lua round trip could spoil. */
const PAID = ['REF "quoted"', 'مرجع-٧', 'back\\slash', 'plain-1'];

const item = (line: number, reference: string): PayoutItem => ({
  line,
  reference,
  channel: 'wallet',
  wallet: {
    amount: '10.00',
    type: 'TRANSFER',
    holder_name: `Holder ${line}`,
    mobile_number: '+201001234567',
    description: 'x',
  },
});

/** A request with the payee key of each of its rows (their references). */
const withPayees = (request: WithdrawalRequest) => ({
  ...request,
  payees: Object.entries(request.references)
    .map(([line, ref]) => `${line}\tr:${ref}\n`)
    .join(''),
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
    const request = buildRequest(
      1,
      PAID.map((ref, i) => item(i + 2, ref)),
    );
    await ledger.stageRequests(BATCH, [withPayees(request)]);
    await ledger.releaseBatch(BATCH, {
      requests: 1,
      rows: PAID.length,
      validRows: PAID.length,
      invalidRows: 0,
      totalPiasters: request.totalPiasters,
    });
    const claim = await ledger.claim(BATCH, 1, 'test');
    expect(claim.claimed).toBe(true);
    await ledger.finish(BATCH, 1, { state: 'accepted', httpStatus: 200, message: 'created' });
  });
  afterAll(async () => {
    redis.disconnect();
    await deleteKeys(prefix);
  });

  it('finds payee keys held by another batch at any position of a long list, and only those', async () => {
    const list = Array.from({ length: 2500 }, (_, i) => `r:NEW-${i}`);
    const at = [0, 999, 1000, 2499];
    at.forEach((pos, k) => (list[pos] = `r:${PAID[k]!}`));
    list[5] = ''; // a row refused anyway: not looked up, positions kept
    const held = await ledger.checkPayees('fedcba9876543210', list);
    expect([...held.keys()].sort((a, b) => a - b)).toEqual(at);
    at.forEach((pos, k) =>
      expect(held.get(pos)).toMatchObject({ batchId: BATCH, seq: 1, line: k + 2, state: 'accepted' }),
    );
    // The batch's own keys do not count against it (a batch imported again after a refusal).
    expect((await ledger.checkPayees(BATCH, list)).size).toBe(0);
  });

  it('reads a request without its body, with every outcome field', async () => {
    const full = await ledger.getRequest(BATCH, 1);
    const lean = await ledger.getRequest(BATCH, 1, { body: false });
    expect(full?.body.mobile_wallets).toHaveLength(PAID.length);
    expect(lean?.bodyJson).toBe('{}');
    const { bodyJson: _a, body: _c, payees: _p, ...fullRest } = full!;
    const { bodyJson: _b, body: _d, payees: _q, ...leanRest } = lean!;
    expect({ ...leanRest, references: lean!.references }).toEqual({ ...fullRest, references: full!.references });
    expect(lean?.state).toBe('accepted');
    expect(lean?.references).toEqual(Object.fromEntries(PAID.map((ref, i) => [String(i + 2), ref])));
  });

  it('a request of 2,500 items takes every key at once; a key held elsewhere refuses it unless paid again on purpose', async () => {
    const second = '89abcdef01234567';
    await createBatch(second, 2500);
    // 2,500 references (more than one Lua step takes at once), one of them paid by the first batch.
    const refs = Array.from({ length: 2500 }, (_, i) => (i === 1700 ? PAID[1]! : `BIG-${i}`));
    const request = withPayees(
      buildRequest(
        1,
        refs.map((ref, i) => item(i + 2, ref)),
      ),
    );
    const refused = await ledger.stageRequests(second, [request]).catch((e: unknown) => e);
    expect(isCashoutError(refused, 'payee_held')).toBe(true);
    expect((refused as Error).message).toContain(`already paid in batch ${BATCH} line 3`);

    await ledger.stageRequests(second, [request], { payAgain: true });
    await ledger.releaseBatch(second, {
      requests: 1,
      rows: refs.length,
      validRows: refs.length,
      invalidRows: 0,
      totalPiasters: request.totalPiasters,
    });
    const held = await ledger.checkPayees(
      '0000000000000000',
      refs.map((ref) => `r:${ref}`),
    );
    expect(held.size).toBe(2500);
    held.forEach((holder, i) =>
      expect(holder).toMatchObject({ batchId: second, seq: 1, line: i + 2, state: 'pending', batchState: 'queued' }),
    );
  });
});
