/**
 * The default of every setting that has one, in one place. `config.ts` applies them to the
 * variables left unset; code that runs without a `Config` (a function whose settings are optional,
 * a test, a `--help` text) takes the same values from here and never restates them. Units are in
 * the names, as in `Config`. Free of imports, so that `--help` can show the defaults without
 * loading the configuration parser.
 */

/**
 * Defaults of the `CASHOUT_*` settings, by their `Config` field (see `Config` in `config.ts` for
 * each one's meaning; `.env.example` and the README document the same values). Settings without a
 * default (optional, or "empty = none") are not listed.
 */
export const CONFIG_DEFAULTS = Object.freeze({
  redisPrefix: '{cashout}',
  reportsDir: './reports',
  csvBom: true,
  itemsPerRequest: 50,
  concurrency: 4,
  rateLimitPerSecond: 0,
  requestTimeoutMs: 30_000,
  connectTimeoutMs: 10_000,
  connectRetries: 4,
  connectBackoffMs: 1_000,
  jobLockMs: 30_000,
  walletCountries: Object.freeze(['EG']) as readonly string[],
  maxFieldLength: 255,
  allowUnsafeRedis: false,
  sandboxPort: 4010,
  maxFileBytes: 200_000_000,
  maxRows: 2_000_000,
  sandboxBodyLimitBytes: 1_048_576,
  /** EGP decimal string (never a float). */
  walletDailyLimit: '60000.00',
  requireApproval: false,
  approvalExpiryHours: 72,
  duplicateWindowHours: 72,
  inboxDir: './inbox',
  inboxSettleSeconds: 30,
  schedule: '*/5 * * * *',
  timezone: 'Africa/Cairo',
  dashboardHost: '127.0.0.1',
  dashboardPort: 4020,
  dashboardSecureCookies: false,
  metricsPort: 0,
  healthHost: '127.0.0.1',
  healthPort: 0,
  webhookAttempts: 8,
  webhookBackoffMs: 5_000,
  webhookTimeoutMs: 10_000,
  logLevel: 'info',
});

/**
 * Defaults of the sandbox's fault settings (`SANDBOX_*`, read by `faultConfigFromEnv`) that have a
 * value; the others default to nothing (no latency, no faults, a random seed).
 */
export const SANDBOX_FAULT_DEFAULTS = Object.freeze({
  /** `Retry-After` of the sandbox's 429 answers, in whole seconds (SANDBOX_RETRY_AFTER_SECONDS). */
  retryAfterSeconds: 1,
});
