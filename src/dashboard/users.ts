/**
 * Dashboard users: names with scrypt password hashes, from CASHOUT_DASHBOARD_USERS
 * ("name:hash,name:hash") or CASHOUT_DASHBOARD_USERS_FILE (one "name:hash" a line). A hash is
 * "scrypt$<salt base64>$<key base64>", made by `cashout hash-password`. Passwords are compared in
 * constant time, and an unknown name costs the same work as a known one.
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { CashoutError } from '../errors.js';

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;
const KEY_LENGTH = 32;

/** Users by name → password hash. */
export type UserTable = ReadonlyMap<string, string>;

/** Makes a password hash for the users setting. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_LENGTH);
  return `scrypt$${salt.toString('base64')}$${key.toString('base64')}`;
}

const DUMMY = `scrypt$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_LENGTH).toString('base64')}`;

/** True when `password` matches `user`'s hash. Unknown users are checked against a dummy hash so both take as long. */
export async function verifyPassword(users: UserTable, user: string, password: string): Promise<boolean> {
  const stored = users.get(user);
  const [, saltB64 = '', keyB64 = ''] = (stored ?? DUMMY).split('$');
  const expected = Buffer.from(keyB64, 'base64');
  const actual = await scrypt(password, Buffer.from(saltB64, 'base64'), KEY_LENGTH);
  const same = expected.length === actual.length && timingSafeEqual(expected, actual);
  return stored !== undefined && same;
}

/** What a dashboard user's name may be: 1 to 64 letters, digits, `_`, `.`, `@` or `-`. */
export const USER_NAME = /^[\w.@-]{1,64}$/;

/** Parses "name:hash" entries (comma- or newline-separated). Throws `config_invalid` naming the bad entry's user. */
export function parseUsers(text: string, source: string): UserTable {
  const users = new Map<string, string>();
  for (const raw of text.split(/[,\n]/)) {
    const entry = raw.trim();
    if (entry === '' || entry.startsWith('#')) continue;
    const colon = entry.indexOf(':');
    const name = colon > 0 ? entry.slice(0, colon).trim() : '';
    const hash = colon > 0 ? entry.slice(colon + 1).trim() : '';
    if (!USER_NAME.test(name) || !/^scrypt\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/.test(hash)) {
      throw new CashoutError(
        'config_invalid',
        `${source}: each entry must be name:scrypt$… (made by "cashout hash-password")${name ? `; check the entry of ${name}` : ''}`,
        { key: source },
      );
    }
    users.set(name, hash);
  }
  return users;
}

/** Loads the users from configuration (inline setting, then file); empty when neither is set. */
export function loadUsers(inline: string | undefined, file: string | undefined): UserTable {
  const users = new Map<string, string>();
  if (inline) for (const [k, v] of parseUsers(inline, 'CASHOUT_DASHBOARD_USERS')) users.set(k, v);
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      throw new CashoutError(
        'config_invalid',
        'setting CASHOUT_DASHBOARD_USERS_FILE names a file that cannot be read',
        { key: 'CASHOUT_DASHBOARD_USERS_FILE' },
      );
    }
    for (const [k, v] of parseUsers(text, 'CASHOUT_DASHBOARD_USERS_FILE')) users.set(k, v);
  }
  return users;
}
