/**
 * Is this Redis safe to keep the ledger on? The `sending` mark must be on disk before a POST
 * starts, or a Redis crash could forget that a request was sent and let it be sent again. So:
 *  - Redis 7.2+ with `appendonly yes`: each mark is followed by `WAITAOF 1 0`, which returns once
 *    the local append-only file holds it;
 *  - older Redis: `appendonly yes` and `appendfsync always` are required;
 *  - and always `maxmemory-policy noeviction`, so ledger keys are never evicted.
 */
import type { Redis } from 'ioredis';
import { CashoutError } from '../errors.js';

/** What the check found. `problems` name the settings to change. */
export interface RedisSafety {
  readonly version: string;
  readonly waitAof: boolean;
  readonly problems: readonly string[];
}

function versionAtLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = version.split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

/** Reads the server's version and persistence/eviction settings. Never throws for missing CONFIG rights: that becomes a problem. */
export async function checkRedisSafety(redis: Redis): Promise<RedisSafety> {
  const info = await redis.info('server');
  const version = /redis_version:(\S+)/.exec(info)?.[1] ?? '0.0.0';
  const problems: string[] = [];
  let settings: Record<string, string> = {};
  try {
    const flat = (await redis.call('CONFIG', 'GET', 'appendonly', 'appendfsync', 'maxmemory-policy')) as string[];
    for (let i = 0; i + 1 < flat.length; i += 2) settings[flat[i]!] = flat[i + 1]!;
  } catch {
    settings = {};
    problems.push(
      'the Redis settings cannot be read (CONFIG GET is not allowed); check appendonly, appendfsync and maxmemory-policy by hand',
    );
  }
  const waitAof = versionAtLeast(version, 7, 2);
  if (settings.appendonly !== undefined && settings.appendonly !== 'yes')
    problems.push('appendonly must be yes (the ledger must survive a Redis restart)');
  if (!waitAof && settings.appendfsync !== undefined && settings.appendfsync !== 'always') {
    problems.push(
      `appendfsync must be always on Redis ${version} (before 7.2 there is no WAITAOF to wait for the disk)`,
    );
  }
  if (settings['maxmemory-policy'] !== undefined && settings['maxmemory-policy'] !== 'noeviction') {
    problems.push(
      `maxmemory-policy must be noeviction (it is ${settings['maxmemory-policy']}; ledger keys must never be evicted)`,
    );
  }
  return { version, waitAof: waitAof && settings.appendonly === 'yes', problems };
}

/**
 * Throws `CashoutError('redis_unsafe')` naming each setting unless the server is safe or `allowUnsafe` is set.
 * Returns the `makeDurable` function to call after each `sending` mark (WAITAOF where available).
 */
export async function requireSafeRedis(redis: Redis, allowUnsafe: boolean): Promise<(() => Promise<void>) | undefined> {
  const safety = await checkRedisSafety(redis);
  if (safety.problems.length > 0 && !allowUnsafe) {
    throw new CashoutError(
      'redis_unsafe',
      `Redis is not safe for the submission ledger: ${safety.problems.join('; ')}. Fix the settings (see README "How bulk-cashout keeps money safe"), or set CASHOUT_ALLOW_UNSAFE_REDIS=true for tests only`,
      { problems: safety.problems },
    );
  }
  if (!safety.waitAof) return undefined;
  return async () => {
    const res = (await redis.call('WAITAOF', '1', '0', '5000')) as [number, number];
    if (!Array.isArray(res) || res[0] < 1) throw new Error('WAITAOF did not confirm the local append-only file');
  };
}
