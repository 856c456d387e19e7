/**
 * Commands told to use a place they cannot: `cashout sandbox`, `cashout dashboard` and the
 * worker's metrics on a port another program holds, the sandbox on an address that does not
 * exist, the scheduler with a file where its inbox folder should be, `validate --errors-file` in a
 * folder that does not exist or naming a folder. Each exits 2 with the place,
 * the reason in words and what chooses another; no "internal error", no stack trace.
 */
import { createServer, type Server } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { TEST_REDIS_URL, deleteKeys } from '../support/redis.js';

const used: string[] = [];
const prefix = () => {
  used.push(`{cashout-test-places-${randomBytes(4).toString('hex')}}`);
  return used.at(-1)!;
};
const noStackTrace = (stderr: string) => {
  expect(stderr).not.toContain('internal error');
  expect(stderr).not.toMatch(/\n\s+at /);
};

describe('commands told to use a place they cannot', () => {
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
    for (const p of used) await deleteKeys(p);
  });

  it.each([
    ['sandbox', [], 'CASHOUT_SANDBOX_PORT'],
    ['dashboard', ['--no-auth'], 'CASHOUT_DASHBOARD_PORT'],
  ])('cashout %s exits 2 naming the port and %s', async (command, extra, setting) => {
    const r = await runCli([command, ...extra, '--port', String(port)], {
      REDIS_URL: TEST_REDIS_URL,
      CASHOUT_REDIS_PREFIX: prefix(),
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `cannot listen on 127.0.0.1:${port} (EADDRINUSE: another program already listens there)`,
    );
    expect(r.stderr).toContain(`--port or ${setting}`);
    noStackTrace(r.stderr);
  });

  it('the worker with its metrics port in use exits 2 naming CASHOUT_METRICS_PORT', async () => {
    const r = await runCli(['worker'], {
      REDIS_URL: TEST_REDIS_URL,
      CASHOUT_REDIS_PREFIX: prefix(),
      CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
      CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
      CASHOUT_API_TOKEN: 'places-test-token',
      CASHOUT_METRICS_PORT: String(port),
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${port} (EADDRINUSE`);
    expect(r.stderr).toContain('choose another port with CASHOUT_METRICS_PORT');
    expect(r.stderr).not.toContain('places-test-token');
    noStackTrace(r.stderr);
  });

  it('the sandbox on an address that does not exist exits 2 naming --host', async () => {
    const r = await runCli(['sandbox', '--host', '999.1.1.1', '--port', '0']);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      'cannot listen on 999.1.1.1:0 (ENOTFOUND: no such address or host name); choose another address with --host',
    );
    noStackTrace(r.stderr);
  });

  it('the sandbox with a token it refuses exits 2 with the token rule, not as a listening failure', async () => {
    const r = await runCli(['sandbox', '--port', '0'], { CASHOUT_SANDBOX_TOKEN: 'two words' });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('the sandbox token must be a non-empty string without spaces or control characters');
    expect(r.stderr).not.toContain('cannot listen');
    noStackTrace(r.stderr);
  });

  it('the scheduler with a file where its inbox folder should be exits 2 naming CASHOUT_INBOX_DIR', async () => {
    const inbox = join(await mkdtemp(join(tmpdir(), 'cashout-places-')), 'inbox');
    await writeFile(inbox, 'not a folder');
    const r = await runCli(['scheduler', '--once'], {
      REDIS_URL: TEST_REDIS_URL,
      CASHOUT_REDIS_PREFIX: prefix(),
      CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
      CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
      CASHOUT_INBOX_DIR: inbox,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`setting CASHOUT_INBOX_DIR: ${inbox}`);
    expect(r.stderr).toContain('(a file of that name is in the way)');
    noStackTrace(r.stderr);
  });

  it.each([
    [
      'in a folder that does not exist',
      '/nonexistent-folder/problems.csv',
      'the folder /nonexistent-folder does not exist',
    ],
    ['naming a folder', tmpdir(), 'is a folder; give a file name'],
  ])('validate --errors-file %s exits 2 before checking anything', async (_label, path, why) => {
    const r = await runCli(['validate', 'samples/payouts-with-errors.csv', '--errors-file', path]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--errors-file ${path}: ${why}`);
    expect(r.stdout).toBe('');
    noStackTrace(r.stderr);
  });
});
