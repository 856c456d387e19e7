/**
 * `cashout sandbox`: runs the local stand-in of the service's staging environment on 127.0.0.1
 * until stopped. Faults come from SANDBOX_LATENCY_MS, SANDBOX_FAULT_RATES, SANDBOX_RETRY_AFTER_SECONDS
 * and SANDBOX_SEED, or at run time from `PUT /__sandbox/faults`.
 */
import { randomBytes } from 'node:crypto';
import { startSandbox } from '../sandbox/server.js';
import { faultConfigFromEnv } from '../sandbox/faults.js';
import { EXIT } from '../errors.js';
import type { AppContext } from './context.js';

/** Starts the sandbox and waits for SIGINT/SIGTERM. */
export async function sandboxCommand(ctx: AppContext, opts: { port?: number; host?: string }): Promise<number> {
  const token = ctx.config.sandboxToken ?? randomBytes(24).toString('hex');
  const sandbox = await startSandbox({
    token,
    banks: ctx.banks,
    bodyLimitBytes: ctx.config.sandboxBodyLimitBytes,
    port: opts.port ?? ctx.config.sandboxPort,
    ...(opts.host ? { host: opts.host } : {}),
    faults: faultConfigFromEnv(process.env),
  });
  process.stdout.write(
    `Sandbox listening on ${sandbox.url}\n` +
      `  POST ${sandbox.url}/api/v1/merchant/withdrawal  (Authorization: Bearer <token>)\n` +
      `  GET  ${sandbox.url}/__sandbox/ledger            (what it created)\n` +
      (ctx.config.sandboxToken ? '  token: from CASHOUT_SANDBOX_TOKEN\n' : `  token for this run: ${token}\n`) +
      `Point the client at it: CASHOUT_API_BASE_URL=${sandbox.url} CASHOUT_API_TOKEN=<token>\n`,
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await sandbox.close();
  return EXIT.ok;
}
