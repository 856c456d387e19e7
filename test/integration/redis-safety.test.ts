/**
 * The ledger's Redis must keep what it acknowledged: workers refuse to submit, naming the setting,
 * when Redis would forget a `sending` mark (no append-only file, or no fsync before Redis 7.2) or
 * could evict ledger keys. Each case runs against a private redis-server started by the test.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../src/queue/private-redis.js';
import { checkRedisSafety, requireSafeRedis } from '../../src/queue/redis-safety.js';
import { isCashoutError } from '../../src/errors.js';
import { runCli } from '../support/cli.js';

describe('Redis safety for the ledger', () => {
  let server: PrivateRedis | undefined;
  let client: Redis | undefined;
  afterEach(async () => {
    client?.disconnect();
    await server?.stop();
    server = undefined;
  });

  async function open(appendOnly: boolean): Promise<Redis> {
    server = await startPrivateRedis({ appendOnly });
    client = new Redis(server.url);
    return client;
  }

  it('a Redis with append-only fsync always and noeviction is accepted', async () => {
    const redis = await open(true);
    const safety = await checkRedisSafety(redis);
    expect(safety.problems).toEqual([]);
    await expect(requireSafeRedis(redis, false)).resolves.not.toThrow();
  });

  it('without the append-only file it is refused, naming the setting', async () => {
    const redis = await open(false);
    const err = await requireSafeRedis(redis, false).catch((e: unknown) => e);
    expect(isCashoutError(err, 'redis_unsafe')).toBe(true);
    expect((err as Error).message).toContain('appendonly must be yes');
  });

  it('an evicting Redis is refused, and appendfsync must be always before Redis 7.2', async () => {
    const redis = await open(true);
    await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await redis.config('SET', 'appendfsync', 'everysec');
    const safety = await checkRedisSafety(redis);
    expect(safety.problems.join(' ')).toContain('maxmemory-policy must be noeviction');
    if (!safety.waitAof) expect(safety.problems.join(' ')).toContain('appendfsync must be always');
    // The explicit unsafe flag is the only way past it.
    await expect(requireSafeRedis(redis, true)).resolves.not.toThrow();
  });

  it('cashout worker refuses to start on an unsafe Redis: exit 3 and a one-line cause', async () => {
    await open(false);
    const res = await runCli(['worker'], {
      REDIS_URL: server!.url,
      CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
      CASHOUT_API_TOKEN: 'secret-token-value',
      CASHOUT_LOG_LEVEL: 'error',
    });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/^cashout: Redis is not safe for the submission ledger: appendonly must be yes/m);
    expect(res.stderr).not.toContain('secret-token-value');
  });
});
