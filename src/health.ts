/**
 * The health endpoint of the long-running processes (`cashout worker`, `cashout scheduler`):
 * `GET /healthz` on CASHOUT_HEALTH_HOST:CASHOUT_HEALTH_PORT answers 200 only while every check of
 * the process passes (its Redis connections answer PING, its BullMQ worker runs), 503 otherwise,
 * with the names of the failing checks. Container health checks and load balancers call it.
 */
import { createServer, type Server } from 'node:http';
import type { Redis } from 'ioredis';
import { listenFailure } from './listen-failure.js';

/** One named readiness check; `check` resolves true when that part of the process is ready. */
export interface HealthCheck {
  readonly name: string;
  check(): Promise<boolean> | boolean;
}

/** What `GET /healthz` answers: `ok` with status 200, or `unavailable` with 503 and the failing checks. */
export interface HealthReport {
  readonly status: 'ok' | 'unavailable';
  readonly failing: readonly string[];
}

/** Longest wait for one check (a Redis PING) before it counts as failed, in ms. */
export const HEALTH_CHECK_TIMEOUT_MS = 2_000;

/** The path of the health endpoint. */
export const HEALTH_PATH = '/healthz';

/** A check that passes when `redis` is connected and answers PING with PONG within `timeoutMs`. */
export function redisCheck(name: string, redis: Redis, timeoutMs = HEALTH_CHECK_TIMEOUT_MS): HealthCheck {
  return {
    name,
    async check() {
      if (redis.status !== 'ready') return false;
      return (await withTimeout(redis.ping(), timeoutMs)) === 'PONG';
    },
  };
}

/**
 * The health endpoint of a long-running command (`cashout worker`, `cashout scheduler`) when
 * CASHOUT_HEALTH_PORT is set, else undefined: both of its Redis connections must answer PONG and
 * `running()` (its BullMQ worker runs and is not stopping) must hold, reported under `name`.
 */
export function serveProcessHealth(
  config: { readonly healthHost: string; readonly healthPort: number },
  connections: { readonly redis: Redis; readonly workerRedis: Redis },
  name: string,
  running: () => boolean,
): Promise<{ url: string; close(): Promise<void> } | undefined> {
  if (config.healthPort <= 0) return Promise.resolve(undefined);
  return serveHealth({
    host: config.healthHost,
    port: config.healthPort,
    checks: [
      redisCheck('redis', connections.redis),
      redisCheck('queue-redis', connections.workerRedis),
      { name, check: running },
    ],
  });
}

/** Runs every check at once (each bounded by `timeoutMs`; a check that throws fails). */
export async function runHealthChecks(
  checks: readonly HealthCheck[],
  timeoutMs = HEALTH_CHECK_TIMEOUT_MS,
): Promise<HealthReport> {
  const results = await Promise.all(
    checks.map(async (c) => {
      try {
        return (await withTimeout(Promise.resolve(c.check()), timeoutMs)) === true;
      } catch {
        return false;
      }
    }),
  );
  const failing = checks.filter((_, i) => !results[i]).map((c) => c.name);
  return { status: failing.length === 0 ? 'ok' : 'unavailable', failing };
}

/**
 * Serves `GET /healthz` (and HEAD) on host:port: 200 `{"status":"ok"}` while every check passes,
 * else 503 `{"status":"unavailable","failing":[…]}`; any other path is 404. Resolves once listening;
 * throws `CashoutError('config_invalid')` naming CASHOUT_HEALTH_PORT when it cannot listen there.
 */
export async function serveHealth(opts: {
  readonly host: string;
  readonly port: number;
  readonly checks: readonly HealthCheck[];
}): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== HEALTH_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    void runHealthChecks(opts.checks).then((report) => {
      const body = JSON.stringify(report);
      const headers = { 'content-type': 'application/json', 'cache-control': 'no-store' };
      res.writeHead(report.status === 'ok' ? 200 : 503, headers);
      res.end(req.method === 'HEAD' ? undefined : `${body}\n`);
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException) =>
      reject(listenFailure(err, opts.host, opts.port, { port: 'CASHOUT_HEALTH_PORT', host: 'CASHOUT_HEALTH_HOST' }));
    server.once('error', fail);
    server.listen(opts.port, opts.host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}${HEALTH_PATH}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `p`, or `undefined` when it has not settled within `ms`. */
async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
