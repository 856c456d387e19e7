/**
 * The ledger's Redis must keep what it acknowledged: workers refuse to submit, naming the setting,
 * when Redis would forget a `sending` mark (no append-only file, or no fsync before Redis 7.2) or
 * could evict ledger keys. Each case runs against a private redis-server started by the test.
 * `cashout import` checks the file before it connects: a bad file is named even when no Redis
 * answers, and a good one whose import threads already started ends cleanly when none does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../src/queue/private-redis.js';
import { createRowMaker } from '../../scripts/generate-payouts.js';
import { checkRedisSafety, requireSafeRedis } from '../../src/queue/redis-safety.js';
import { isCashoutError } from '../../src/errors.js';
import { connectRedis } from '../../src/queue/connection.js';
import { ROOT, runCli } from '../support/cli.js';
import { spawn } from 'node:child_process';

describe('Redis safety for the ledger', () => {
  let server: PrivateRedis | undefined;
  let client: Redis | undefined;
  afterEach(async () => {
    client?.disconnect();
    await server?.stop();
    server = undefined;
  });

  async function open(appendOnly: boolean): Promise<Redis> {
    server = await startPrivateRedis({ appendOnly });
    client = new Redis(server.url);
    return client;
  }

  it('a Redis that wants a password says so, and one that refuses the password given says that, never showing it', async () => {
    const redis = await open(false);
    await redis.config('SET', 'requirepass', 'the-right-password');
    const port = new URL(server!.url).port;
    const refusal = (url: string) =>
      connectRedis(url, { connectTimeoutMs: 2_000 }).then(
        (r) => {
          r.disconnect();
          return 'connected';
        },
        (err: unknown) => {
          expect(isCashoutError(err, 'redis_unreachable')).toBe(true);
          return (err as Error).message;
        },
      );
    const wrong = await refusal(`redis://:not-the-password@127.0.0.1:${port}`);
    expect(wrong).toMatch(/refused the user or password of REDIS_URL \(WRONGPASS/);
    expect(wrong).not.toContain('not-the-password');
    expect(await refusal(`redis://127.0.0.1:${port}`)).toMatch(/needs a password: give it in REDIS_URL/);
    expect(await refusal(`redis://:the-right-password@127.0.0.1:${port}`)).toBe('connected');
  });

  it('a running worker whose Redis starts refusing its password logs that in one line, never the password', async () => {
    const redis = await open(false);
    await redis.config('SET', 'requirepass', 'first-password-7c1d');
    const port = new URL(server!.url).port;
    const base: Record<string, string> = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k]!;
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'cashout.js'), 'worker'], {
      cwd: ROOT,
      env: {
        ...base,
        REDIS_URL: `redis://:first-password-7c1d@127.0.0.1:${port}`,
        CASHOUT_REDIS_PREFIX: '{cashout-test-password}',
        CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
        CASHOUT_API_TOKEN: 'x',
        CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
      },
    });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await expect.poll(() => stderr, { timeout: 20_000 }).toContain('worker started');
      // The password changes under the running worker, and its connections are dropped.
      await redis.auth('first-password-7c1d');
      await redis.config('SET', 'requirepass', 'second-password-9e2f');
      await redis.auth('second-password-9e2f');
      await redis.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await expect.poll(() => stderr, { timeout: 20_000 }).toMatch(/Redis refused the user or password of REDIS_URL/);
      await new Promise((r) => setTimeout(r, 1500));
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    expect(stderr).not.toContain('first-password-7c1d');
    expect(stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{'))).toEqual([]);
  }, 60_000);

  it('a Redis with append-only fsync always and noeviction is accepted', async () => {
    const redis = await open(true);
    const safety = await checkRedisSafety(redis);
    expect(safety.problems).toEqual([]);
    await expect(requireSafeRedis(redis, false)).resolves.not.toThrow();
  });

  it('without the append-only file it is refused, naming the setting', async () => {
    const redis = await open(false);
    const err = await requireSafeRedis(redis, false).catch((e: unknown) => e);
    expect(isCashoutError(err, 'redis_unsafe')).toBe(true);
    expect((err as Error).message).toContain('appendonly must be yes');
  });

  it('an evicting Redis is refused, and appendfsync must be always before Redis 7.2', async () => {
    const redis = await open(true);
    await redis.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await redis.config('SET', 'appendfsync', 'everysec');
    const safety = await checkRedisSafety(redis);
    expect(safety.problems.join(' ')).toContain('maxmemory-policy must be noeviction');
    if (!safety.waitAof) expect(safety.problems.join(' ')).toContain('appendfsync must be always');
    // The explicit unsafe flag is the only way past it.
    await expect(requireSafeRedis(redis, true)).resolves.not.toThrow();
  });

  it('cashout worker refuses to start on an unsafe Redis: exit 3 and a one-line cause', async () => {
    await open(false);
    const res = await runCli(['worker'], {
      REDIS_URL: server!.url,
      CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
      CASHOUT_API_TOKEN: 'secret-token-value',
      CASHOUT_LOG_LEVEL: 'error',
    });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/^cashout: Redis is not safe for the submission ledger: appendonly must be yes/m);
    expect(res.stderr).not.toContain('secret-token-value');
  });

  describe('cashout import checks the file before it connects to Redis', () => {
    const env = async () => ({
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
      CASHOUT_API_TOKEN: 'x',
      CASHOUT_LOG_LEVEL: 'error',
    });

    it('a file that is not a payout CSV is named (exit 2), even with no Redis to reach', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cashout-early-'));
      try {
        const path = join(dir, 'notes.csv');
        await writeFile(path, 'name,comment\nAli,hello\n');
        const res = await runCli(['import', path], await env());
        expect(res.code).toBe(2);
        expect(res.stderr).toMatch(/^cashout: unknown column "name"/m);
        expect(res.stderr).not.toMatch(/Redis/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('a large good file whose import threads already started ends with exit 3 when Redis cannot be reached', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'cashout-early-'));
      try {
        const maker = createRowMaker({ rows: 20_000, seed: 5 });
        const lines = [
          'channel,amount,type,holder_name,mobile_number,bank_name,bank_address,account_number,description,reference',
        ];
        for (let i = 0; i < 20_000; i++) lines.push(maker.next().replace(/\n$/, ''));
        const path = join(dir, 'big.csv');
        await writeFile(path, `${lines.join('\n')}\n`);
        const res = await runCli(['import', path], await env());
        expect(res.code).toBe(3);
        expect(res.stderr.trim().split('\n')).toHaveLength(1);
        expect(res.stderr).toMatch(/^cashout: Redis at redis:\/\/127\.0\.0\.1:\d+ cannot be reached/);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
