/**
 * API keys of the HTTP API. A key is `cok_<id>_<secret>`: `id` (8 hex digits) names the key in
 * lists and revocations, `secret` is 32 random bytes in base64url. Only the SHA-256 of the whole
 * key is kept, in the Redis hash `<prefix>:api-keys` (field = id), with the key's name: the person
 * or system it acts for (`Actor.user` in src/ledger/actions.ts). A key is shown once, when made,
 * and never logged. SHA-256 suffices for keys of 256 random bits (nothing to guess word by word).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Redis } from 'ioredis';
import { CashoutError } from '../errors.js';

/** Recognisable start of every key (secret scanners can look for it). */
export const API_KEY_PREFIX = 'cok_';

const KEY_PATTERN = /^cok_([0-9a-f]{8})_([A-Za-z0-9_-]{43})$/;
/** A key's name: who it acts for, as recorded in the ledger (letters, digits, `.`, `_`, `-`, `@`). */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

/** What is kept of a key (never the key). */
export interface ApiKeyRecord {
  /** 8 hex digits, part of the key. */
  readonly id: string;
  /** Who the key acts for: recorded as the person of every action made with it. */
  readonly name: string;
  /** ISO time it was made. */
  readonly createdAt: string;
}

interface StoredKey extends ApiKeyRecord {
  /** Hex SHA-256 of the whole key. */
  readonly sha256: string;
}

/** The store of API keys under a Redis key prefix. */
export interface ApiKeyStore {
  /** Makes a key for `name`; returns it (the only time it exists outside its holder) and its record. */
  create(name: string): Promise<{ key: string; record: ApiKeyRecord }>;
  /** Every key's record, oldest first. */
  list(): Promise<ApiKeyRecord[]>;
  /** Removes a key by id; throws `CashoutError('api_key_not_found')` when there is none. */
  revoke(id: string): Promise<ApiKeyRecord>;
  /** The record of the key `presented`, or undefined (compared in constant time). */
  verify(presented: string): Promise<ApiKeyRecord | undefined>;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** Opens the key store on `redis` under `prefix` (CASHOUT_REDIS_PREFIX). */
export function apiKeyStore(redis: Redis, prefix: string): ApiKeyStore {
  const hash = `${prefix}:api-keys`;
  const parse = (raw: string): StoredKey => JSON.parse(raw) as StoredKey;
  const record = (s: StoredKey): ApiKeyRecord => ({ id: s.id, name: s.name, createdAt: s.createdAt });
  return {
    async create(name) {
      if (!NAME_PATTERN.test(name)) {
        const rule = 'a key name is 1 to 64 letters, digits, ".", "_", "-" or "@", starting with a letter or digit';
        throw new CashoutError('usage', rule);
      }
      for (;;) {
        const id = randomBytes(4).toString('hex');
        const key = `${API_KEY_PREFIX}${id}_${randomBytes(32).toString('base64url')}`;
        const createdAt = new Date().toISOString();
        const stored: StoredKey = { id, name, createdAt, sha256: sha256(key).toString('hex') };
        if ((await redis.hsetnx(hash, id, JSON.stringify(stored))) === 1) return { key, record: record(stored) };
      }
    },
    async list() {
      const all = Object.values(await redis.hgetall(hash)).map(parse);
      return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt)).map(record);
    },
    async revoke(id) {
      const raw = /^[0-9a-f]{8}$/.test(id) ? await redis.hget(hash, id) : null;
      if (raw === null || (await redis.hdel(hash, id)) === 0) {
        throw new CashoutError('api_key_not_found', `no API key with id ${JSON.stringify(id.slice(0, 16))}`);
      }
      return record(parse(raw));
    },
    async verify(presented) {
      const m = KEY_PATTERN.exec(presented);
      const raw = m ? await redis.hget(hash, m[1]!) : null;
      // Hash anyway, so a malformed key costs the same as a wrong one.
      const given = sha256(presented);
      if (raw === null) return undefined;
      const stored = parse(raw);
      const expected = Buffer.from(stored.sha256, 'hex');
      return expected.length === given.length && timingSafeEqual(expected, given) ? record(stored) : undefined;
    },
  };
}
