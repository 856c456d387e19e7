/**
 * Dashboard sessions, kept in Redis: a random id in an HttpOnly, SameSite=Strict cookie (Secure
 * behind TLS) → the user's name and the session's CSRF token. Sessions last 8 hours.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A logged-in user's session. */
export interface Session {
  readonly id: string;
  readonly user: string;
  /** Token every form action must carry back (synchroniser token). */
  readonly csrf: string;
}

/** Session lifetime in seconds. */
export const SESSION_TTL_SECONDS = 8 * 3600;

/** Session storage on one Redis connection under `prefix`. */
export function sessionStore(redis: Redis, prefix: string) {
  const key = (id: string) => `${prefix}:dashboard:session:${id}`;
  return {
    async create(user: string): Promise<Session> {
      const session = { id: randomBytes(32).toString('base64url'), user, csrf: randomBytes(32).toString('base64url') };
      await redis.set(
        key(session.id),
        JSON.stringify({ user: session.user, csrf: session.csrf }),
        'EX',
        SESSION_TTL_SECONDS,
      );
      return session;
    },
    async get(id: string | undefined): Promise<Session | undefined> {
      if (!id || !/^[\w-]{20,100}$/.test(id)) return undefined;
      const raw = await redis.get(key(id));
      if (!raw) return undefined;
      const { user, csrf } = JSON.parse(raw) as { user: string; csrf: string };
      return { id, user, csrf };
    },
    async destroy(id: string): Promise<void> {
      await redis.del(key(id));
    },
  };
}

/** Compares a submitted CSRF token with the session's in constant time. */
export function csrfMatches(session: Session, submitted: unknown): boolean {
  if (typeof submitted !== 'string') return false;
  const a = Buffer.from(session.csrf);
  const b = Buffer.from(submitted);
  return a.length === b.length && timingSafeEqual(a, b);
}
