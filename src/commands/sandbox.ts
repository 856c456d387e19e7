/**
 * `cashout sandbox`: runs the local stand-in of the service's staging environment on 127.0.0.1
 * until stopped: the withdrawal and card charge endpoints, and the OTP dialog with a demo page.
 * Faults come from SANDBOX_LATENCY_MS, SANDBOX_FAULT_RATES, SANDBOX_RETRY_AFTER_SECONDS and
 * SANDBOX_SEED (environment or .env, read with the rest of the configuration; `cashout sandbox
 * --help` lists them), or at run time from `PUT /__sandbox/faults`. The token, merchant code and
 * hash key come from settings, or are random for the run and printed.
 */
import { randomBytes } from 'node:crypto';
import { startSandbox } from '../sandbox/server.js';
import { faultConfigFromEnv } from '../sandbox/faults.js';
import { loadTestCardsFile } from '../sandbox/test-cards.js';
import { EXIT } from '../errors.js';
import type { AppContext } from './context.js';
import { listenFailure } from '../listen-failure.js';

/**
 * Starts the sandbox and waits for SIGINT/SIGTERM. Throws `CashoutError('config_invalid')` when a
 * SANDBOX_* fault setting is invalid or it cannot listen on its address and port.
 */
export async function sandboxCommand(ctx: AppContext, opts: { port?: number; host?: string }): Promise<number> {
  const { config } = ctx;
  const token = config.sandboxToken ?? randomBytes(24).toString('hex');
  const port = opts.port ?? config.sandboxPort;
  const sandbox = await startSandbox({
    token,
    banks: ctx.banks,
    bodyLimitBytes: config.sandboxBodyLimitBytes,
    port,
    ...(opts.host ? { host: opts.host } : {}),
    // SANDBOX_* fault settings: from the environment, or .env in the working folder like every setting.
    faults: faultConfigFromEnv(config.sandboxFaultSettings),
    ...(config.sandboxMerchantCode ? { merchantCode: config.sandboxMerchantCode } : {}),
    ...(config.sandboxHashKey ? { hashKey: config.sandboxHashKey } : {}),
    ...(config.sandboxTestCardsFile ? { testCards: loadTestCardsFile(config.sandboxTestCardsFile) } : {}),
  }).catch((err: unknown) => {
    throw listenFailure(err, opts.host ?? '127.0.0.1', port, {
      port: '--port or CASHOUT_SANDBOX_PORT',
      host: '--host',
    });
  });
  const cards = sandbox.testCards.map((c) => `    ${c.number}  ${c.label}\n`).join('');
  /** Where a secret came from: its setting, or this run (then it is printed). */
  const secret = (name: string, setting: string | undefined, value: string) =>
    setting ? `  ${name}: from its setting\n` : `  ${name} for this run: ${value}\n`;
  process.stdout.write(
    `Sandbox listening on ${sandbox.url}\n` +
      `  POST ${sandbox.url}/api/v1/merchant/withdrawal  (Authorization: Bearer <token>)\n` +
      `  POST ${sandbox.url}/api/v1/charge/card          (Authorization: Bearer <token>; signed, §5.2)\n` +
      `  GET  ${sandbox.url}/js/plugins/OTPPaymentPlugin.js  (the OTP dialog's script)\n` +
      `  GET  ${sandbox.url}/demo/charge                 (a page that opens the OTP dialog)\n` +
      `  GET  ${sandbox.url}/__sandbox/ledger            (the withdrawal requests it created)\n` +
      `  GET  ${sandbox.url}/__sandbox/charges           (the card charges it recorded)\n` +
      (config.sandboxToken ? '  token: from CASHOUT_SANDBOX_TOKEN\n' : `  token for this run: ${token}\n`) +
      secret('merchant code', config.sandboxMerchantCode, sandbox.merchant.code) +
      secret('hash key', config.sandboxHashKey, sandbox.merchant.hashKey) +
      `  test cards (any CVV and expiry; every other card is declined):\n${cards}` +
      `Point the client at it: CASHOUT_API_BASE_URL=${sandbox.url} CASHOUT_API_TOKEN=<token>\n` +
      '  and, for card charges, CASHOUT_MERCHANT_CODE=<merchant code> CASHOUT_HASH_KEY=<hash key>\n',
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await sandbox.close();
  return EXIT.ok;
}
