/**
 * Chaos: 2,000 rows paid by two worker processes against a sandbox that faults about 30 % of the
 * requests in every way it can, while workers are killed with SIGKILL and restarted; then once
 * more with Redis itself killed and restarted mid-batch. Nothing may be created twice, no row may
 * be lost, and every row must match what the sandbox really created.
 */
import { describe, expect, it } from 'vitest';
import { runChaos, type ChaosFigures } from '../support/chaos.js';

function expectSafe(f: ChaosFigures): void {
  expect(f.duplicates, 'items created twice').toBe(0);
  expect(f.lostRows, 'rows without exactly one final status').toBe(0);
  expect(f.acceptedNotCreated, 'accepted rows the service did not create').toBe(0);
  expect(f.createdUnaccounted, 'created items reported neither accepted nor unknown').toBe(0);
  expect(f.unknownNotListed, 'unknown rows missing from reconciliation.csv').toBe(0);
  expect(f.uncleanStops, 'workers that did not stop cleanly on SIGTERM').toBe(0);
  expect(f.accepted + f.rejected + f.unknown + f.notSent + f.invalid).toBe(f.rows);
  expect(f.accepted).toBeGreaterThan(f.rows / 2);
}

describe('chaos', () => {
  it('workers killed at random moments: no duplicate, no lost row', { timeout: 120_000 }, async () => {
    const f = await runChaos({ rows: 2000, workers: 2, kills: 3, killRedis: false, itemsPerRequest: 10, seed: Date.now() % 100_000 });
    expect(f.workerKills).toBeGreaterThanOrEqual(3);
    expect(f.faultedShare).toBeGreaterThanOrEqual(0.2);
    expectSafe(f);
  });

  const operatorSeed = (Date.now() + 13) % 100_000;
  it(`an operator re-uploads the file with a change and retries failed jobs while workers and Redis are killed: nobody paid twice (seed ${operatorSeed})`, { timeout: 120_000 }, async () => {
    const f = await runChaos({ rows: 1000, workers: 2, kills: 2, killRedis: true, itemsPerRequest: 20, seed: operatorSeed, operator: true });
    expect(f.batches, 'the operator\'s uploads were imported').toBeGreaterThanOrEqual(2);
    expect(f.payeesPaidTwice, 'payees created twice across batches').toBe(0);
    expect(f.rowsWithoutOneStatus, 'rows of any batch without exactly one final status').toBe(0);
    expectSafe(f);
  });

  it('Redis killed and restarted mid-batch: no duplicate, no lost row', { timeout: 120_000 }, async () => {
    const f = await runChaos({ rows: 2000, workers: 2, kills: 1, killRedis: true, itemsPerRequest: 10, seed: (Date.now() + 7) % 100_000 });
    expect(f.redisKills).toBe(1);
    expectSafe(f);
  });
});
