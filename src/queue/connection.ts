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
  // Connections made from this one (`duplicate()`: a BullMQ worker's blocking connection) connect
  // at once and keep trying until Redis answers. A lazy one is connected by BullMQ with a single
  // `connect()`, and when Redis is away at that moment BullMQ keeps the failure: the worker takes
  // jobs but can never complete one.
  redis.options.lazyConnect = false;
  return redis;
}

/** Redis's answers to a user or password it does not accept (AUTH, or a command before AUTH). */
const AUTH_REFUSED = /\b(WRONGPASS|NOAUTH)\b|invalid password|invalid username-password/i;

/** Errors of a Redis connection that is away or refuses us (rather than of one command). */
const CONNECTION_FAILED =
  /Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|Stream isn't writeable|Reached the max retries/i;

/**
 * One line for an error of a Redis connection: its message's first line, with a refused password
 * named as such. Never the error object: ioredis errors carry their command's arguments, the
 * password of an AUTH among them.
 */
export function redisErrorText(err: unknown): string {
  const message = String((err as Error | undefined)?.message ?? err).split('\n')[0]!;
  return AUTH_REFUSED.test(message) ? `Redis refused the user or password of REDIS_URL (${message})` : message;
}

/** True for an error that says Redis is away or refuses the password, not that one command failed. */
export function isRedisConnectionError(err: unknown): boolean {
  const message = String((err as Error | undefined)?.message ?? '');
  return AUTH_REFUSED.test(message) || CONNECTION_FAILED.test(message);
}

/**
 * Logs the errors a BullMQ queue (or worker) emits, one line each (`redisErrorText`), as `what`.
 * A queue without an error listener has BullMQ print the whole error object on stderr, with the
 * password of an AUTH that Redis refused.
 */
export function logQueueErrors(
  emitter: { on(event: 'error', listener: (err: Error) => void): unknown },
  log: { warn(fields: object, msg: string): void },
  what: string,
): void {
  emitter.on('error', (err) => log.warn({ err: redisErrorText(err) }, `${what}: Redis error`));
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
