/**
 * Login attempts are limited by failures, per client address and user name, in Redis: after
 * `maxFailures` wrong passwords for one user name from one address within `windowSeconds`, that
 * address may not try that name again until the window ends. A correct password clears the count,
 * so logging in is never limited; wrong passwords from another address, or for another user name,
 * never stop anyone. A browser that logged in as a user before carries a "known browser" cookie:
 * its attempts for that user are counted on the cookie instead of the address, so the failures of
 * others sharing the address (behind one proxy, say) cannot lock the real user out either.
 *
 * Each attempt is counted before the password is checked and the count is cleared on success, so
 * attempts sent all at once cannot get more than `maxFailures` passwords checked per window.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/** How many failures are allowed in how long. */
export interface LoginLimitSettings {
  readonly maxFailures: number;
  readonly windowSeconds: number;
}

/** 5 failed attempts per client address and user name in 15 minutes. */
export const DEFAULT_LOGIN_LIMIT: LoginLimitSettings = { maxFailures: 5, windowSeconds: 15 * 60 };

/** Name of the cookie that marks a browser a user logged in from before. */
export const KNOWN_BROWSER_COOKIE = 'cashout_known_browser';

/** How long a browser stays known after its last login, in seconds. */
export const KNOWN_BROWSER_TTL_SECONDS = 90 * 24 * 3600;

/** One login attempt: who it is for and where it comes from. */
export interface LoginAttempt {
  readonly address: string;
  readonly user: string;
  /** The known-browser cookie the attempt carries, if any. */
  readonly knownBrowser: string | undefined;
}

/** The outcome of starting an attempt: `retryAfterSeconds > 0` means refused without checking. */
export interface AttemptTicket {
  /** The counter this attempt was counted on; give it back to `succeeded`. */
  readonly counter: string;
  readonly retryAfterSeconds: number;
}

/** The login limiter: failure counters and known browsers under `prefix`. */
export interface LoginLimiter {
  /** Counts an attempt before its password is checked; refuses it when the limit is reached. */
  begin(attempt: LoginAttempt): Promise<AttemptTicket>;
  /** Clears the attempt's counter after a correct password. */
  succeeded(ticket: AttemptTicket): Promise<void>;
  /** Marks the browser as known for `user`; returns the cookie value to set. */
  rememberBrowser(user: string, current: string | undefined): Promise<string>;
}

const TOKEN_PATTERN = /^[\w-]{20,100}$/;
const digest = (text: string) => createHash('sha256').update(text).digest('base64url');

/** A login limiter on one Redis connection under `prefix`. */
export function loginLimiter(
  redis: Redis,
  prefix: string,
  settings: LoginLimitSettings = DEFAULT_LOGIN_LIMIT,
): LoginLimiter {
  const knownKey = (token: string) => `${prefix}:dashboard:known-browser:${token}`;
  const isKnown = async (token: string | undefined, user: string) =>
    token !== undefined && TOKEN_PATTERN.test(token) && (await redis.get(knownKey(token))) === user;

  return {
    async begin(attempt) {
      const counter = (await isKnown(attempt.knownBrowser, attempt.user))
        ? `${prefix}:dashboard:login-failures:browser:${digest(attempt.knownBrowser!)}`
        : `${prefix}:dashboard:login-failures:address:${digest(`${attempt.address}\n${attempt.user}`)}`;
      // The window starts at the first attempt and is never extended by later ones.
      const result = await redis
        .multi()
        .set(counter, 0, 'EX', settings.windowSeconds, 'NX')
        .incr(counter)
        .ttl(counter)
        .exec();
      const count = Number(result?.[1]?.[1] ?? Number.POSITIVE_INFINITY);
      const ttl = Number(result?.[2]?.[1] ?? settings.windowSeconds);
      return { counter, retryAfterSeconds: count > settings.maxFailures ? Math.max(1, ttl) : 0 };
    },
    async succeeded(ticket) {
      await redis.del(ticket.counter);
    },
    async rememberBrowser(user, current) {
      const token = (await isKnown(current, user)) ? current! : randomBytes(32).toString('base64url');
      await redis.set(knownKey(token), user, 'EX', KNOWN_BROWSER_TTL_SECONDS);
      return token;
    },
  };
}
