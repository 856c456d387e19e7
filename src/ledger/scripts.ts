/**
 * The ledger's Lua scripts (`src/ledger/lua/*.lua`), loaded once and defined as commands on a
 * connection. A script's `--@lifecycle` line becomes the lifecycle table's guards (`luaPrelude`),
 * and its `--@payees` line the payout register's rule (`payees.lua`), so every guard comes from
 * one place.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { PACKAGE_ROOT } from '../paths.js';
import { luaPrelude } from './lifecycle.js';

/** Folder of the scripts (the same from `src/` and from the compiled `dist/src/`). */
export const LUA_DIR = join(PACKAGE_ROOT, 'src', 'ledger', 'lua');

/** The scripts by command name: file and number of keys. */
const SCRIPTS = {
  cashoutClaim: { file: 'claim.lua', keys: 4 },
  cashoutFinish: { file: 'finish.lua', keys: 3 },
  cashoutSplit: { file: 'split.lua', keys: 5 },
  cashoutRelease: { file: 'release.lua', keys: 2 },
  cashoutResolve: { file: 'resolve.lua', keys: 3 },
  cashoutStage: { file: 'stage.lua', keys: 2 },
  cashoutTakePayee: { file: 'take-payee.lua', keys: 1 },
  cashoutCheckPayees: { file: 'check-payees.lua', keys: 1 },
  cashoutApprove: { file: 'approve.lua', keys: 2 },
  cashoutCancel: { file: 'cancel.lua', keys: 2 },
  cashoutHalt: { file: 'halt.lua', keys: 1 },
  cashoutReleaseBatch: { file: 'release-batch.lua', keys: 2 },
  cashoutRefuseBatch: { file: 'refuse-batch.lua', keys: 1 },
  cashoutSupersede: { file: 'supersede.lua', keys: 1 },
} as const;

/** Name of a ledger script command. */
export type ScriptName = keyof typeof SCRIPTS;

let sources: Record<ScriptName, string> | undefined;

/** The text of a script as Redis runs it (includes resolved). */
export function scriptSource(name: ScriptName): string {
  sources ??= loadAll();
  return sources[name];
}

function loadAll(): Record<ScriptName, string> {
  const read = (file: string) => readFileSync(join(LUA_DIR, file), 'utf8');
  const prelude = luaPrelude();
  const payees = read('payees.lua');
  const out = {} as Record<ScriptName, string>;
  for (const [name, { file }] of Object.entries(SCRIPTS) as [ScriptName, (typeof SCRIPTS)[ScriptName]][]) {
    out[name] = read(file)
      .replace('--@lifecycle', () => prelude)
      .replace('--@payees', () => payees);
  }
  return out;
}

const DEFINED = new WeakSet<Redis>();

/** Defines every ledger script as a command of `redis` (once per connection). */
export function defineLedgerScripts(redis: Redis): void {
  if (DEFINED.has(redis)) return;
  DEFINED.add(redis);
  for (const [name, { keys }] of Object.entries(SCRIPTS) as [ScriptName, (typeof SCRIPTS)[ScriptName]][]) {
    redis.defineCommand(name, { numberOfKeys: keys, lua: scriptSource(name) });
  }
}

/** The script commands as typed methods of a connection. */
export type LedgerRedis = Redis & {
  cashoutClaimBuffer(
    req: string,
    batch: string,
    sending: string,
    register: string,
    ...args: string[]
  ): Promise<[Buffer, ...(Buffer | Buffer[])[]]>;
  cashoutFinish(req: string, batch: string, sending: string, ...args: string[]): Promise<[number, string]>;
  cashoutSplit(
    parent: string,
    batch: string,
    sending: string,
    child: string,
    register: string,
    ...args: string[]
  ): Promise<[number, string, string?]>;
  cashoutRelease(req: string, sending: string, seq: string): Promise<string>;
  cashoutResolve(req: string, batch: string, list: string, ...args: string[]): Promise<string[]>;
  cashoutStage(register: string, req: string, ...args: (string | Buffer)[]): Promise<string[]>;
  cashoutTakePayee(register: string, ...args: string[]): Promise<string[]>;
  cashoutCheckPayees(register: string, ...args: string[]): Promise<(number | string)[]>;
  cashoutApprove(batch: string, approvals: string, ...args: string[]): Promise<string[]>;
  cashoutCancel(batch: string, approvals: string, ...args: string[]): Promise<string[]>;
  cashoutHalt(batch: string, reason: string): Promise<string | null>;
  cashoutReleaseBatch(batch: string, approvals: string, ...args: string[]): Promise<string[]>;
  cashoutRefuseBatch(batch: string, ...args: string[]): Promise<string[]>;
  cashoutSupersede(batch: string, next: string): Promise<string[]>;
};
