/**
 * `cashout sandbox` and `cashout dashboard` on a port another program holds: exit 2 with the
 * address, the reason in words and the option and setting that choose another port; no
 * "internal error", no stack trace.
 */
import { createServer, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { TEST_REDIS_URL } from '../support/redis.js';

describe('a server command on a port in use', () => {
  let taken: Server;
  let port: number;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    port = (taken.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  });

  it.each([
    ['sandbox', [], 'CASHOUT_SANDBOX_PORT'],
    ['dashboard', ['--no-auth'], 'CASHOUT_DASHBOARD_PORT'],
  ])('cashout %s exits 2 naming the port and %s', async (command, extra, setting) => {
    const r = await runCli([command, ...extra, '--port', String(port)], {
      REDIS_URL: TEST_REDIS_URL,
      CASHOUT_REDIS_PREFIX: `{cashout-test-port-${randomBytes(4).toString('hex')}}`,
    });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `cannot listen on 127.0.0.1:${port} (EADDRINUSE: another program already listens there)`,
    );
    expect(r.stderr).toContain(`--port or ${setting}`);
    expect(r.stderr).not.toContain('internal error');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
