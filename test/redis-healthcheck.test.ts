/**
 * The Redis health check of docker-compose.yml (scripts/redis-healthcheck.sh, mounted into the
 * Redis container and run there by compose) is run here as compose runs it: healthy against a
 * Redis that answers PONG; unhealthy while Redis answers PING with an error (LOADING while it reads
 * its append-only file, NOAUTH), and when nothing listens. Every server here is private to the test,
 * on 127.0.0.1 and a free port, and stopped at the end.
 */
import { spawn } from 'node:child_process';
import { Socket, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startPrivateRedis, type PrivateRedis } from '../src/queue/private-redis.js';
import { PACKAGE_ROOT } from '../src/paths.js';

const SCRIPT = join(PACKAGE_ROOT, 'scripts', 'redis-healthcheck.sh');

/** Runs the health check against 127.0.0.1:`port`; resolves its exit code (0 = healthy). */
function healthCheck(port: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [SCRIPT], {
      env: { PATH: process.env.PATH ?? '', REDIS_HEALTH_HOST: '127.0.0.1', REDIS_HEALTH_PORT: String(port) },
      stdio: 'ignore',
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** A server speaking just enough RESP to answer every command with `reply` (an error reply, say). */
async function fakeRedis(reply: string): Promise<{ port: number; commands: string[]; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const commands: string[] = [];
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (data) => {
      commands.push(data.toString('latin1'));
      socket.write(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  return {
    port: typeof addr === 'object' && addr ? addr.port : 0,
    commands,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const started: { stop(): Promise<void> }[] = [];
afterAll(async () => {
  for (const s of started) await s.stop();
});

describe('the Redis health check of docker-compose.yml', () => {
  it('is healthy when Redis answers PING with PONG', async () => {
    const redis: PrivateRedis = await startPrivateRedis();
    started.push(redis);
    expect(await healthCheck(redis.port)).toBe(0);
  });

  it('is unhealthy while Redis is still loading its data (PING answered -LOADING)', async () => {
    const loading = await fakeRedis('-LOADING Redis is loading the dataset in memory\r\n');
    started.push({ stop: loading.close });
    expect(await healthCheck(loading.port)).not.toBe(0);
    // It did ask: the answer, not a failed connection, made it unhealthy.
    expect(loading.commands.join('')).toMatch(/PING/i);
  });

  it('is unhealthy when a real Redis answers PING with an error (NOAUTH: a password it was not given)', async () => {
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    const child = spawn('redis-server', [...args, '--requirepass', 'not-given'], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    started.push({
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          await exited;
        }
      },
    });
    // Wait until it listens: the fake that answers PONG would make the script pass; this one must not.
    const deadline = Date.now() + 10_000;
    let listening = false;
    while (!listening && Date.now() < deadline) {
      listening = await new Promise<boolean>((resolve) => {
        const probe = new Socket();
        probe.once('connect', () => (probe.destroy(), resolve(true)));
        probe.once('error', () => resolve(false));
        probe.connect(port, '127.0.0.1');
      });
      if (!listening) await new Promise((r) => setTimeout(r, 50));
    }
    expect(listening).toBe(true);
    expect(await healthCheck(port)).not.toBe(0);
  });

  it('is unhealthy when nothing listens', async () => {
    const port = await freePort();
    expect(await healthCheck(port)).not.toBe(0);
  });

  it('is healthy against the fake server when it answers +PONG (the fake speaks RESP as Redis does)', async () => {
    const pong = await fakeRedis('+PONG\r\n');
    started.push({ stop: pong.close });
    expect(await healthCheck(pong.port)).toBe(0);
  });
});
