/** The dashboard started for tests on a test pipeline (`./pipeline.ts`), and its users. */
import type { FastifyInstance } from 'fastify';
import { buildDashboard } from '../../src/dashboard/server.js';
import type { DashboardDeps } from '../../src/dashboard/page-kit.js';
import { hashPassword } from '../../src/dashboard/users.js';
import type { TestPipeline } from './pipeline.js';

/** A dashboard user table: each of `names` with `password` (hashed as `cashout hash-password` does). */
export async function staffUsers(
  password: string,
  names: readonly string[] = ['maker', 'checker'],
): Promise<Map<string, string>> {
  const hash = await hashPassword(password);
  return new Map(names.map((name) => [name, hash]));
}

/**
 * Builds the dashboard on the ledger, queue, Redis and log of `p`, with plain (not Secure) cookies
 * and `deps` added, and listens on a free port of 127.0.0.1. `base` is its address; the caller
 * closes `app`.
 */
export async function startTestDashboard(
  p: TestPipeline,
  deps: Partial<DashboardDeps> & Pick<DashboardDeps, 'users'>,
): Promise<{ app: FastifyInstance; base: string }> {
  const app = await buildDashboard({
    ledger: p.ledger,
    queue: p.queue,
    redis: p.redis,
    prefix: p.prefix,
    log: p.log,
    secureCookies: false,
    ...deps,
  });
  return { app, base: await app.listen({ host: '127.0.0.1', port: 0 }) };
}
