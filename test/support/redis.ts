/**
 * Test isolation on the shared Redis: every test file works under a key prefix of its own and
 * deletes only its own keys afterwards (never FLUSHALL/FLUSHDB).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** Address of the Redis the tests use (the real one; CI makes sure it answers). */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A fresh prefix, hash-tagged like the production default. */
export function testPrefix(label: string): string {
  return `{cashout-test-${label}-${randomBytes(4).toString('hex')}}`;
}

/** Every key under `prefix` (SCAN); with `lasting`, only those without an expiry. */
export async function keysUnder(prefix: string, options: { lasting?: boolean } = {}): Promise<string[]> {
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
  const found: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix.replace(/([*?[\]])/g, '\\$1')}*`, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
    if (!options.lasting) return found;
    const ttls = await Promise.all(found.map((k) => redis.pttl(k)));
    return found.filter((_, i) => ttls[i] === -1);
  } finally {
    redis.disconnect();
  }
}

/** Deletes every key under `prefix` (SCAN + UNLINK). */
export async function deleteKeys(prefix: string): Promise<void> {
  const keys = await keysUnder(prefix);
  if (keys.length === 0) return;
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
  try {
    for (let i = 0; i < keys.length; i += 1000) await redis.unlink(...keys.slice(i, i + 1000));
  } finally {
    redis.disconnect();
  }
}
