/**
 * Redis connections (ioredis) for BullMQ and the ledger. A connection that cannot be reached in
 * time becomes `CashoutError('redis_unreachable')` with a one-line cause, never a hang.
 */
import { Redis } from 'ioredis';
import { CashoutError } from '../errors.js';

/** Opens a connection and waits until it answers PING. `forWorker` sets `maxRetriesPerRequest: null` as BullMQ workers need. */
export async function connectRedis(
  url: string,
  opts: { forWorker?: boolean; connectTimeoutMs?: number } = {},
): Promise<Redis> {
  const redis = new Redis(url, {
    maxRetriesPerRequest: opts.forWorker ? null : 3,
    enableReadyCheck: true,
    lazyConnect: true,
    connectTimeout: opts.connectTimeoutMs ?? 5_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    // After `disconnect()`, a socket Redis does not close (a hung server) is destroyed this soon.
    disconnectTimeout: 500,
  });
  redis.on('error', () => undefined);
  const safeUrl = url.replace(/\/\/[^@/]*@/, '//***@');
  try {
    await Promise.race([
      redis.connect(),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('timed out')), opts.connectTimeoutMs ?? 5_000).unref(),
      ),
    ]);
    await redis.ping();
  } catch (cause) {
    redis.disconnect();
    throw new CashoutError(
      'redis_unreachable',
      `Redis at ${safeUrl} cannot be reached (${(cause as Error).message}); start Redis or set REDIS_URL`,
      { url: safeUrl },
      cause,
    );
  }
  return redis;
}

/** Closes a connection without throwing. */
export async function closeRedis(redis: Redis | undefined): Promise<void> {
  if (!redis) return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
