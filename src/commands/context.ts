/**
 * The composition root shared by the commands: configuration, logger, bank list and row rules,
 * and the Redis/BullMQ/ledger handles a command opens and closes.
 */
import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { DEFAULT_REDIS_URL, loadConfig, type Config } from '../config.js';
import { createLogger, type Logger } from '../logger.js';
import { loadBankList, type BankList } from '../contract/supported-banks.js';
import type { RowRules } from '../import/validate-row.js';
import type { PrivateRedis } from '../queue/private-redis.js';
import { SUBMIT_QUEUE, type SubmitJobData } from '../queue/queues.js';
import type { Ledger } from '../ledger/index.js';
import { CashoutError } from '../errors.js';
import {
  importBatch,
  importReadOptions,
  openPayoutFile,
  type BatchPolicy,
  type ImportDeps,
  type ImportOptions,
  type ImportResult,
  type OpenedPayoutFile,
} from '../batch/import-batch.js';
import { startProgress } from './progress.js';
import { readOptionsFrom } from '../import/read-rows.js';
import { createPaymentClient, type PaymentClient } from '../submit/payment-client.js';
import type { WorkerSettings } from '../../jobs/index.js';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { serviceAddress, tokenFingerprint } from '../submit/service-address.js';
import { actorText, type Actor } from '../ledger/actions.js';
import type { Notifier } from '../notify/notifier.js';
import { notifyAwaitingApproval } from '../notify/batch-events.js';

/** What every command gets. */
export interface AppContext {
  readonly config: Config;
  readonly log: Logger;
  readonly banks: BankList;
  readonly rules: RowRules;
}

/**
 * Reads configuration (`loadConfig`: `env` and the `.env` of `cwd`, the process's own unless given)
 * and the bank list; throws `CashoutError` naming a bad variable or file.
 */
export function loadContext(env?: NodeJS.ProcessEnv, cwd?: string): AppContext {
  const config = loadConfig(env, cwd);
  const log = createLogger({ level: config.logLevel });
  const banks = config.banksFile ? loadBankList(config.banksFile) : loadBankList();
  for (const name of banks.duplicates)
    log.warn({ bank: name, source: banks.source }, 'bank listed twice in the supported bank list; using it once');
  return {
    config,
    log,
    banks,
    rules: {
      banks,
      walletCountries: config.walletCountries,
      maxFieldLength: config.maxFieldLength,
      maxItemAmount: config.maxItemAmount,
    },
  };
}

/** The folder of CASHOUT_REPORTS_DIR that holds the report folders of sandbox runs. */
export const SANDBOX_REPORTS = 'sandbox';

/** Redis-side handles of a command. */
export interface QueueHandles {
  readonly redis: Redis;
  /** Connection for BullMQ workers (maxRetriesPerRequest: null). */
  readonly workerRedis: Redis;
  readonly queue: Queue<SubmitJobData>;
  readonly ledger: Ledger;
  readonly prefix: string;
  /**
   * The folder under which batches imported through these handles keep their report folders:
   * CASHOUT_REPORTS_DIR, or its `sandbox/` folder for a sandbox run. The same file gives the same
   * batch id, so a rehearsal in the sandbox must never write into the folder of a real batch of
   * that file (its copy of the file, its row notes, its results).
   */
  readonly reportsDir: string;
  /** Opened for a sandbox run (`openQueues(ctx, { sandbox: true })`): its keys and report stay apart from real batches. */
  readonly sandbox: boolean;
  readonly privateRedis?: PrivateRedis;
  /** Queues batch notifications (CASHOUT_WEBHOOK_URLS); queues nothing for a sandbox run. */
  readonly notifier: Notifier;
  close(): Promise<void>;
}

/**
 * Opens Redis, the submit queue and the ledger. With `sandbox`, keys live under a prefix of their
 * own for this run, and when REDIS_URL is unset and nothing answers on the default address, a
 * private `redis-server` is started for the run.
 */
export async function openQueues(ctx: AppContext, opts: { sandbox?: boolean } = {}): Promise<QueueHandles> {
  // Loaded here, not at start-up: commands that never touch Redis (validate, --help) start faster.
  const [
    { Queue },
    { closeRedis, connectRedis, logQueueErrors },
    { startPrivateRedis },
    { openLedger },
    { createNotifier, NO_NOTIFIER },
  ] = await Promise.all([
    import('bullmq'),
    import('../queue/connection.js'),
    import('../queue/private-redis.js'),
    import('../ledger/index.js'),
    import('../notify/notifier.js'),
  ]);
  let url = ctx.config.redisUrl ?? DEFAULT_REDIS_URL;
  let privateRedis: PrivateRedis | undefined;
  let redis: Redis;
  try {
    redis = await connectRedis(url, { connectTimeoutMs: opts.sandbox && !ctx.config.redisUrl ? 1_000 : 5_000 });
  } catch (err) {
    if (!(opts.sandbox && !ctx.config.redisUrl)) throw err;
    try {
      privateRedis = await startPrivateRedis();
    } catch {
      throw new CashoutError(
        'redis_unreachable',
        `Redis is not running on ${DEFAULT_REDIS_URL} and redis-server could not be started; install Redis (e.g. apt-get install redis-server) or set REDIS_URL`,
      );
    }
    url = privateRedis.url;
    ctx.log.info({ port: privateRedis.port }, 'started a private Redis for this sandbox run');
    redis = await connectRedis(url);
  }
  const workerRedis = await connectRedis(url, { forWorker: true });
  const prefix = opts.sandbox
    ? `${ctx.config.redisPrefix}:sandbox-${randomBytes(4).toString('hex')}`
    : ctx.config.redisPrefix;
  const queue = new Queue<SubmitJobData>(SUBMIT_QUEUE, { connection: workerRedis, prefix });
  logQueueErrors(queue, ctx.log, 'submit queue');
  const ledger = openLedger(redis, prefix, { duplicateWindowHours: ctx.config.duplicateWindowHours });
  const notifier = opts.sandbox
    ? NO_NOTIFIER
    : createNotifier(notifySettings(ctx.config), workerRedis, prefix, ctx.log);
  return {
    redis,
    workerRedis,
    queue,
    ledger,
    prefix,
    reportsDir: opts.sandbox ? join(ctx.config.reportsDir, SANDBOX_REPORTS) : ctx.config.reportsDir,
    sandbox: opts.sandbox === true,
    ...(privateRedis ? { privateRedis } : {}),
    notifier,
    async close() {
      await notifier.close();
      await queue.close();
      await closeRedis(workerRedis);
      await closeRedis(redis);
      await privateRedis?.stop();
    },
  };
}

/** Notification settings from configuration (CASHOUT_WEBHOOK_*, CASHOUT_DASHBOARD_URL). */
export function notifySettings(config: Config) {
  return {
    urls: config.webhookUrls,
    attempts: config.webhookAttempts,
    backoffMs: config.webhookBackoffMs,
    dashboardUrl: config.dashboardUrl,
  };
}

/** The batch policy (limits and approval rules) from configuration. */
export function batchPolicy(config: Config): BatchPolicy {
  return {
    maxBatchTotal: config.maxBatchTotal,
    requireApproval: config.requireApproval,
    approvalThreshold: config.approvalThreshold,
    approvalExpiryHours: config.approvalExpiryHours,
    walletDailyLimit: config.walletDailyLimit,
  };
}

/**
 * The person running a command: the operating-system user, with `--as` as a label beside it (never
 * in its place: who may approve a batch is decided by the user).
 */
export function cliActor(as: string | undefined): Actor {
  const label = as?.trim();
  return { user: userInfo().username, ...(label ? { label } : {}) };
}

/** What an import needs, from configuration and the open queues (run, import and the scheduler share it). */
export function importDeps(ctx: AppContext, handles: QueueHandles, serviceUrl: string, token?: string): ImportDeps {
  return {
    ledger: handles.ledger,
    queue: handles.queue,
    rules: ctx.rules,
    log: ctx.log,
    reportsDir: handles.reportsDir,
    // A sandbox run's ledger is removed at its end: a second rehearsal replaces the first's report.
    replaceReports: handles.sandbox,
    itemsPerRequest: ctx.config.itemsPerRequest,
    csvBom: ctx.config.csvBom,
    serviceUrl: serviceAddress(serviceUrl),
    ...(token ? { tokenFingerprint: tokenFingerprint(token) } : {}),
    // A sandbox run ends with its ledger removed: a batch of it could never be approved, so none
    // awaits approval there (approval guards real payments; the rehearsal pays the sandbox).
    policy: handles.sandbox ? { ...batchPolicy(ctx.config), requireApproval: false } : batchPolicy(ctx.config),
    limits: readOptionsFrom(ctx.config),
    onAwaitingApproval: notifyAwaitingApproval(handles.notifier),
  };
}

/**
 * Opens `file` for `importBatch` with the same read options `importDeps` gives it (the configured
 * file limits, with the command's delimiter and encoding), before any Redis connection: a bad file
 * is refused at once and the import threads start. Throws `CashoutError` for file problems.
 */
export function openImportFile(
  ctx: AppContext,
  file: string,
  opts: Pick<ImportOptions, 'delimiter' | 'encoding'>,
): Promise<OpenedPayoutFile> {
  return openPayoutFile(file, ctx.rules, importReadOptions({ limits: readOptionsFrom(ctx.config) }, opts));
}

/**
 * Imports `file`, opened by `openImportFile`, into the open queues (`importBatch` with
 * `importDeps`), showing the rows read and recording who imports (`opts.as`, else the system user).
 */
export async function importOpenedFile(
  ctx: AppContext,
  handles: QueueHandles,
  target: { readonly baseUrl: string; readonly token?: string },
  opened: OpenedPayoutFile,
  opts: Omit<ImportOptions, 'payAgain'> & { readonly as?: string | undefined; readonly payAgain?: string | undefined },
): Promise<ImportResult> {
  const actor = cliActor(opts.as);
  const { payAgain, ...rest } = opts;
  if (payAgain !== undefined && payAgain.trim() === '') {
    throw new CashoutError('usage', '--pay-again needs a reason: say why these payees are paid again');
  }
  const reading = startProgress(ctx.log, 'reading', 'rows');
  let rowsRead = 0;
  try {
    return await importBatch(
      importDeps(ctx, handles, target.baseUrl, target.token),
      opened.path,
      {
        ...rest,
        ...(payAgain === undefined ? {} : { payAgain: { note: payAgain.trim() } }),
        importedBy: actorText(actor),
        importedByUser: actor.user,
        // The file's row count is estimated from its size and first piece until it is read.
        onRowsRead: (n) => reading.update((rowsRead = n), Math.max(n, opened.scan.estimatedRows())),
      },
      opened,
    );
  } finally {
    reading.update(rowsRead, rowsRead); // the estimate gives way to the count read
    reading.stop();
  }
}

/** A payment client for `target` with the configured timeouts, one connection per request in flight. */
export function paymentClientFor(ctx: AppContext, target: { baseUrl: string; token: string }): PaymentClient {
  return createPaymentClient({
    baseUrl: target.baseUrl,
    token: target.token,
    requestTimeoutMs: ctx.config.requestTimeoutMs,
    connectTimeoutMs: ctx.config.connectTimeoutMs,
    connections: ctx.config.concurrency,
  });
}

/** Submit-worker settings from configuration (run and worker share them). */
export function workerSettingsFor(
  ctx: AppContext,
  handles: QueueHandles,
  serviceUrl: string,
  extra: Pick<WorkerSettings, 'makeDurable' | 'metrics'> = {},
): WorkerSettings {
  return {
    serviceUrl: serviceAddress(serviceUrl),
    connection: handles.workerRedis,
    prefix: handles.prefix,
    concurrency: ctx.config.concurrency,
    rateLimitPerSecond: ctx.config.rateLimitPerSecond,
    connectRetries: ctx.config.connectRetries,
    connectBackoffMs: ctx.config.connectBackoffMs,
    requestTimeoutMs: ctx.config.requestTimeoutMs,
    jobLockMs: ctx.config.jobLockMs,
    ...(extra.makeDurable ? { makeDurable: extra.makeDurable } : {}),
    ...(extra.metrics ? { metrics: extra.metrics } : {}),
  };
}

/** The service address and token from configuration, or a clear error naming what is missing. */
export function serviceTarget(config: Config): { baseUrl: string; token: string } {
  if (!config.apiBaseUrl)
    throw new CashoutError(
      'config_invalid',
      'setting CASHOUT_API_BASE_URL is missing: set the service address (or use --sandbox)',
      { key: 'CASHOUT_API_BASE_URL' },
    );
  if (!config.apiToken)
    throw new CashoutError(
      'config_invalid',
      'setting CASHOUT_API_TOKEN (or CASHOUT_API_TOKEN_FILE) is missing (or use --sandbox)',
      { key: 'CASHOUT_API_TOKEN' },
    );
  return { baseUrl: config.apiBaseUrl, token: config.apiToken };
}

/**
 * The service address from configuration, and the token when one is set: what an import needs (it
 * records the address, and the token's fingerprint when it has one). The scheduler imports with it,
 * so it runs without the token. Throws `CashoutError('config_invalid')` when the address is missing.
 */
export function importTarget(config: Config): { baseUrl: string; token?: string } {
  if (!config.apiBaseUrl) {
    const message = 'setting CASHOUT_API_BASE_URL is missing: set the service address the batches are imported for';
    throw new CashoutError('config_invalid', message, { key: 'CASHOUT_API_BASE_URL' });
  }
  return { baseUrl: config.apiBaseUrl, ...(config.apiToken ? { token: config.apiToken } : {}) };
}
