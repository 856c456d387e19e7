/**
 * Many workers share one Redis: three `cashout worker` processes pay one batch together, the
 * requests are spread among them, and the service receives every request exactly once.
 */
import { describe, expect, it } from 'vitest';
import { runChaos } from '../support/chaos.js';

describe('three worker processes on one batch', () => {
  it('share the requests and send each exactly once', { timeout: 120_000 }, async () => {
    const f = await runChaos({
      rows: 3000,
      workers: 3,
      kills: 0,
      killRedis: false,
      itemsPerRequest: 10,
      seed: 3,
      faultless: true,
    });
    expect(f.requests).toBe(300);
    expect(f.posts).toBe(f.requests);
    expect(f.duplicates).toBe(0);
    expect(f.lostRows).toBe(0);
    expect(f.accepted).toBe(3000);
    expect(f.workersThatSent).toBeGreaterThanOrEqual(2);
    expect(f.uncleanStops).toBe(0);
  });
});
