/**
 * Failed API key checks are limited per client address: after `AUTH_FAILURES_ALLOWED` failures in
 * `AUTH_WINDOW_SECONDS`, that address gets 429 until the window ends, whatever key it sends. Keys
 * are 256 random bits, so this only stops a client that floods the API with wrong keys.
 */
import type { Redis } from 'ioredis';

/** Failed key checks one address may make in a window. */
export const AUTH_FAILURES_ALLOWED = 20;
/** Length of the window, in seconds. */
export const AUTH_WINDOW_SECONDS = 15 * 60;

/** Counts failed key checks per address in Redis (shared by every dashboard process). */
export interface AuthLimiter {
  /** Seconds the address must wait before its next try; 0 = it may try. */
  waitSeconds(address: string): Promise<number>;
  /** Counts one failure of the address. */
  failed(address: string): Promise<void>;
}

/** The limiter under `prefix`. */
export function authLimiter(redis: Redis, prefix: string): AuthLimiter {
  const key = (address: string) => `${prefix}:api-auth-failures:${address}`;
  return {
    async waitSeconds(address) {
      const [count, ttl] = await Promise.all([redis.get(key(address)), redis.ttl(key(address))]);
      return Number(count ?? 0) >= AUTH_FAILURES_ALLOWED ? Math.max(1, ttl) : 0;
    },
    async failed(address) {
      const n = await redis.incr(key(address));
      if (n === 1) await redis.expire(key(address), AUTH_WINDOW_SECONDS);
    },
  };
}
