/**
 * A private, throwaway `redis-server` for sandbox runs and tests: listens on 127.0.0.1 on a free
 * port, keeps nothing on disk unless asked, and stops with `stop()` (or when this process exits).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { CashoutError } from '../errors.js';

/** A running private Redis. */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** Finds a free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts `redis-server` (from PATH). `appendOnly` turns on AOF with fsync always, in a temporary folder. */
export async function startPrivateRedis(
  opts: { appendOnly?: boolean; port?: number; dir?: string } = {},
): Promise<PrivateRedis> {
  const port = opts.port ?? (await freePort());
  const dir = opts.dir ?? (await mkdtemp(join(tmpdir(), 'cashout-redis-')));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--dir',
    dir,
    '--maxmemory-policy',
    'noeviction',
  ];
  args.push(...(opts.appendOnly ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']));
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  const spawnError = new Promise<never>((_, reject) =>
    child.once('error', (e) =>
      reject(
        new CashoutError(
          'redis_unreachable',
          `cannot start redis-server (${(e as NodeJS.ErrnoException).code ?? e.message}); install Redis or set REDIS_URL`,
          {},
          e,
        ),
      ),
    ),
  );
  const url = `redis://127.0.0.1:${port}`;
  const ready = (async () => {
    for (let i = 0; i < 100; i++) {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        probe.disconnect();
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new CashoutError('redis_unreachable', `redis-server did not start on port ${port}`);
  })();
  await Promise.race([ready, spawnError]);
  const onExit = () => child.kill('SIGKILL');
  process.once('exit', onExit);
  return {
    url,
    port,
    dir,
    process: child,
    async stop() {
      process.removeListener('exit', onExit);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      if (!opts.dir) await rm(dir, { recursive: true, force: true });
    },
  };
}
