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
  // The last error of the connection: a refused password shows there, while the connect call
  // only says the connection closed.
  let lastError: Error | undefined;
  redis.on('error', (err: Error) => {
    lastError = err;
  });
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
    const refused = [lastError, cause as Error].find((e) => e && AUTH_REFUSED.test(e.message));
    if (refused) {
      const text = /\bNOAUTH\b/.test(refused.message)
        ? `Redis at ${safeUrl} needs a password: give it in REDIS_URL (redis://:<password>@host:port)`
        : `Redis at ${safeUrl} refused the user or password of REDIS_URL (${refused.message.split('\n')[0]}); check REDIS_URL`;
      throw new CashoutError('redis_unreachable', text, { url: safeUrl }, refused);
    }
    throw new CashoutError(
      'redis_unreachable',
      `Redis at ${safeUrl} cannot be reached (${(cause as Error).message}); start Redis or set REDIS_URL`,
      { url: safeUrl },
      cause,
    );
  }
  return redis;
}

/** Redis's answers to a user or password it does not accept (AUTH, or a command before AUTH). */
const AUTH_REFUSED = /\b(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/i;

/** Closes a connection without throwing. */
export async function closeRedis(redis: Redis | undefined): Promise<void> {
  if (!redis) return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}
