/**
 * `cashout dashboard [--no-auth]`: serves the dashboard on CASHOUT_DASHBOARD_HOST:PORT
 * (127.0.0.1:4020 by default) until SIGINT/SIGTERM. Refuses to start without users, unless
 * `--no-auth` is given and the address is loopback. `cashout hash-password` makes a user entry.
 * It answers only the loopback Host names, the address it listens on and CASHOUT_DASHBOARD_HOSTS.
 */
import { Queue } from 'bullmq';
import { isIPv6 } from 'node:net';
import { CashoutError, EXIT } from '../errors.js';
import { buildDashboard } from '../dashboard/server.js';
import { hashPassword, loadUsers, USER_NAME } from '../dashboard/users.js';
import { parseHost } from '../host-guard.js';
import { createMetrics } from '../metrics.js';
import { importDeps, openQueues, type AppContext } from './context.js';
import { INBOX_QUEUE } from '../../jobs/schedule.js';
import { logQueueErrors } from '../queue/connection.js';
import { listenFailure } from '../listen-failure.js';
import { readHiddenLines } from './secret-input.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
const ANY_ADDRESS = new Set(['0.0.0.0', '::', '']);

/** The Host names to answer besides loopback: the configured ones and a specific listening address. */
function answeredHosts(configured: readonly string[], host: string, port: number): string[] {
  if (ANY_ADDRESS.has(host) || LOOPBACK.has(host)) return [...configured];
  const name = isIPv6(host) ? `[${host}]` : host;
  const entry = port > 0 ? `${name}:${port}` : name;
  return parseHost(entry) ? [...configured, entry] : [...configured];
}

/** Serves the dashboard; returns the exit code after a stop signal. */
export async function dashboardCommand(
  ctx: AppContext,
  opts: { auth?: boolean; port?: number; host?: string },
): Promise<number> {
  const host = opts.host ?? ctx.config.dashboardHost;
  const port = opts.port ?? ctx.config.dashboardPort;
  const noAuth = opts.auth === false;
  if (noAuth && !LOOPBACK.has(host))
    throw new CashoutError('usage', `--no-auth is allowed only on a loopback address (127.0.0.1), not ${host}`);
  const users = loadUsers(ctx.config.dashboardUsers, ctx.config.dashboardUsersFile);
  if (!noAuth && users.size === 0) {
    throw new CashoutError(
      'config_invalid',
      'no dashboard users: set CASHOUT_DASHBOARD_USERS (entries made by "cashout hash-password"), or start with --no-auth on 127.0.0.1 for a single local user',
      { key: 'CASHOUT_DASHBOARD_USERS' },
    );
  }
  const h = await openQueues(ctx);
  const inbox = new Queue(INBOX_QUEUE, { connection: h.workerRedis, prefix: h.prefix });
  logQueueErrors(inbox, ctx.log, 'inbox queue');
  const app = await buildDashboard({
    ledger: h.ledger,
    queue: h.queue,
    otherQueues: [inbox],
    redis: h.redis,
    prefix: h.prefix,
    log: ctx.log,
    users: noAuth ? 'none' : users,
    secureCookies: ctx.config.dashboardSecureCookies,
    csvBom: ctx.config.csvBom,
    metrics: createMetrics({ queues: [h.queue, inbox], ledger: h.ledger }),
    allowedHosts: answeredHosts(ctx.config.dashboardHosts, host, port),
    timeZone: ctx.config.timezone,
    // The HTTP API: uploads need the service's address (batches are bound to it).
    api: {
      import: ctx.config.apiBaseUrl ? importDeps(ctx, h, ctx.config.apiBaseUrl, ctx.config.apiToken) : undefined,
      maxFileBytes: ctx.config.maxFileBytes,
    },
  });
  let url: string;
  try {
    url = await app.listen({ host, port });
  } catch (err) {
    await app.close();
    await inbox.close();
    await h.close();
    throw listenFailure(err, host, port, {
      port: '--port or CASHOUT_DASHBOARD_PORT',
      host: '--host or CASHOUT_DASHBOARD_HOST',
    });
  }
  process.stdout.write(`Dashboard on ${url}${noAuth ? ' (no login: local use only)' : ''}\n`);
  ctx.log.info({ url, auth: !noAuth }, 'dashboard started');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await app.close();
  await inbox.close();
  await h.close();
  return EXIT.ok;
}

/** `cashout hash-password [--user name]`: reads a password from stdin, prints "name:hash" for CASHOUT_DASHBOARD_USERS. */
export async function hashPasswordCommand(opts: { user?: string }): Promise<number> {
  const user = opts.user ?? 'user';
  if (!USER_NAME.test(user)) {
    const text = `--user ${JSON.stringify(user)}: a user name has 1 to 64 letters, digits, _, ., @ or - (no colon, comma or space)`;
    throw new CashoutError('usage', text);
  }
  const [password = ''] = await readHiddenLines(['Password']).catch(() => []);
  if (password.length < 12) throw new CashoutError('usage', 'the password must have at least 12 characters');
  const hash = await hashPassword(password);
  process.stdout.write(`${user}:${hash}\n`);
  return EXIT.ok;
}
