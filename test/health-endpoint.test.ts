/**
 * GET /healthz of `cashout worker` and `cashout scheduler` (CASHOUT_HEALTH_PORT), and the health
 * check docker-compose.yml runs against it: the real processes against a private Redis, 200 and a
 * passing compose check once they are up; 503 and a failing check while their Redis is away; 200
 * again once it is back; nothing listening after SIGTERM. The scheduler runs without the token.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, startPrivateRedis, type PrivateRedis } from '../src/queue/private-redis.js';
import { ROOT } from './support/cli.js';

/** The `node -e` script of a service's health check in docker-compose.yml. */
async function composeHealthScript(service: string): Promise<string> {
  const compose = parseYaml(await readFile(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
    services: Record<string, { healthcheck: { test: string[] } }>;
  };
  const [kind, node, flag, script] = compose.services[service]!.healthcheck.test;
  expect([kind, node, flag]).toEqual(['CMD', 'node', '-e']);
  return script!;
}

/** Runs the compose health check as the container would, with CASHOUT_HEALTH_PORT set; its exit code. */
function runComposeCheck(script: string, port: number): number | null {
  const r = spawnSync(process.execPath, ['-e', script], {
    env: { PATH: process.env.PATH ?? '', CASHOUT_HEALTH_PORT: String(port) },
    timeout: 10_000,
  });
  return r.status;
}

/** GET /healthz: its status and body, or undefined when nothing answers. */
async function getHealth(port: number, path = '/healthz'): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined;
  }
}

/** Polls until `check` holds; throws naming `what` after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 25_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A `cashout` child process and its stderr. */
interface Cashout {
  readonly child: ChildProcess;
  stderr: string;
  readonly exited: Promise<number | null>;
}

function spawnCashout(args: readonly string[], env: Record<string, string>): Cashout {
  const base: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k]!;
  const bin = join(ROOT, 'bin', 'cashout.js');
  const child = spawn(process.execPath, [bin, ...args], { cwd: ROOT, env: { ...base, ...env } });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const c: Cashout = { child, stderr: '', exited };
  child.stdout.resume();
  child.stderr.on('data', (d) => (c.stderr += d));
  return c;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * Starts `cashout <command>` with a health port against a private Redis and walks it through
 * up → Redis away → Redis back → stopped, checking /healthz and the compose check at each step.
 */
async function exerciseHealth(
  command: 'worker' | 'scheduler',
  env: Record<string, string>,
  checks: readonly string[],
): Promise<void> {
  let redis: PrivateRedis | undefined = await startPrivateRedis({ appendOnly: true });
  cleanups.push(async () => redis?.stop());
  const redisPort = redis.port;
  const healthPort = await freePort();
  const script = await composeHealthScript(command);
  const proc = spawnCashout([command], {
    ...env,
    REDIS_URL: redis.url,
    CASHOUT_REDIS_PREFIX: `{health-${command}}`,
    CASHOUT_HEALTH_PORT: String(healthPort),
    CASHOUT_LOG_LEVEL: 'warn',
  });
  cleanups.push(async () => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
    await proc.exited;
  });

  await until(`${command} healthy: ${proc.stderr}`, async () => (await getHealth(healthPort))?.status === 200);
  const up = await getHealth(healthPort);
  expect(JSON.parse(up!.body)).toEqual({ status: 'ok', failing: [] });
  expect(runComposeCheck(script, healthPort)).toBe(0);
  expect((await getHealth(healthPort, '/metrics'))?.status).toBe(404);

  // Redis away: 503, naming the connections that fail; the compose check fails.
  await redis.stop();
  redis = undefined;
  await until(`${command} unhealthy without Redis`, async () => (await getHealth(healthPort))?.status === 503);
  const down = JSON.parse((await getHealth(healthPort))!.body) as { status: string; failing: string[] };
  expect(down.status).toBe('unavailable');
  expect(down.failing).toEqual(expect.arrayContaining([...checks]));
  expect(runComposeCheck(script, healthPort)).toBe(1);

  // Redis back on the same address: healthy again, without a restart of the process.
  redis = await startPrivateRedis({ appendOnly: true, port: redisPort });
  await until(`${command} healthy again: ${proc.stderr}`, async () => (await getHealth(healthPort))?.status === 200);
  expect(runComposeCheck(script, healthPort)).toBe(0);

  proc.child.kill('SIGTERM');
  expect(await proc.exited).toBe(0);
  expect(await getHealth(healthPort)).toBeUndefined();
  expect(runComposeCheck(script, healthPort)).toBe(1);
}

describe('GET /healthz and the compose health checks', () => {
  it('cashout worker: 200 while its Redis answers and its queue worker runs, 503 while Redis is away', async () => {
    await exerciseHealth(
      'worker',
      { CASHOUT_API_BASE_URL: 'http://127.0.0.1:9', CASHOUT_API_TOKEN: 'health-test-token' },
      ['redis', 'queue-redis'],
    );
  }, 120_000);

  it('cashout scheduler (with the service address, without the token): the same', async () => {
    const inbox = await mkdtemp(join(tmpdir(), 'cashout-health-inbox-'));
    cleanups.push(() => rm(inbox, { recursive: true, force: true }));
    const env = { CASHOUT_API_BASE_URL: 'http://127.0.0.1:9', CASHOUT_INBOX_DIR: inbox };
    await exerciseHealth('scheduler', env, ['redis', 'queue-redis']);
  }, 120_000);

  it('cashout worker with a health port already taken: exit 2 naming the setting, and nothing secret', async () => {
    const redis = await startPrivateRedis({ appendOnly: true });
    cleanups.push(() => redis.stop());
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => taken.close(() => resolve())));
    const addr = taken.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    const proc = spawnCashout(['worker'], {
      REDIS_URL: redis.url,
      CASHOUT_REDIS_PREFIX: '{health-taken}',
      CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
      CASHOUT_API_TOKEN: 'health-test-token',
      CASHOUT_HEALTH_PORT: String(port),
    });
    cleanups.push(async () => {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
      await proc.exited;
    });
    const code = await proc.exited;
    expect(code).toBe(2);
    expect(proc.stderr).toMatch(
      /cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE: another program already listens there\); choose another port with CASHOUT_HEALTH_PORT/,
    );
    expect(proc.stderr).not.toContain('health-test-token');
  }, 60_000);
});
