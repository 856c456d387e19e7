/**
 * Configuration: read once from the environment (and a `.env` file in the working folder, whose
 * values never override variables already set), validated with zod, frozen, and passed down.
 * Nothing else in the project reads `process.env` (`loadConfig` does). An unknown `CASHOUT_*`
 * variable is an error, so a typo cannot pass silently. The defaults live in `config-defaults.ts`
 * (`CONFIG_DEFAULTS`); `.env.example` lists every key with its unit and default.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { CONFIG_DEFAULTS as D } from './config-defaults.js';
import { CashoutError } from './errors.js';
import { closestName } from './closest-name.js';
import { parseHost } from './host-guard.js';

export { CONFIG_DEFAULTS, SANDBOX_FAULT_DEFAULTS } from './config-defaults.js';

const int = (min: number, max: number, dflt: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .default(dflt);

const bool = (dflt: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
    .transform((v) => v === 'true' || v === '1' || v === 'yes')
    .default(dflt);

/** An EGP amount setting: digits with an optional two-decimal part, normalised to "NN.NN". */
const amountSetting = z
  .string()
  .regex(/^\d+(\.\d{2})?$/, 'must be an amount in EGP such as 60000 or 60000.00')
  .transform((v) => (v.includes('.') ? v : `${v}.00`));

/** A comma-separated list of host names ("name" or "name:port"), normalised to lower case. */
const hostList = z
  .string()
  .transform((v) => v.split(',').map((h) => h.trim().toLowerCase()))
  .refine((hosts) => hosts.every((h) => parseHost(h) !== undefined), {
    message: 'must be host names separated by commas, e.g. cashout.example.com or cashout.example.com:8443',
  });

/**
 * The zod schema of every variable, with its default from `CONFIG_DEFAULTS`. Units are in the names
 * (`_MS`, `_SECONDS`, `_BYTES`).
 */
const EnvSchema = z.object({
  CASHOUT_API_BASE_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) address' }).optional(),
  CASHOUT_API_TOKEN: z.string().min(1).optional(),
  CASHOUT_API_TOKEN_FILE: z.string().min(1).optional(),
  CASHOUT_MERCHANT_CODE: z.string().min(1).optional(),
  CASHOUT_MERCHANT_CODE_FILE: z.string().min(1).optional(),
  CASHOUT_HASH_KEY: z.string().min(1).optional(),
  CASHOUT_HASH_KEY_FILE: z.string().min(1).optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
    .optional(),
  CASHOUT_REDIS_PREFIX: z.string().min(1).default(D.redisPrefix),
  CASHOUT_REPORTS_DIR: z.string().min(1).default(D.reportsDir),
  CASHOUT_CSV_BOM: bool(D.csvBom),
  CASHOUT_BANKS_FILE: z.string().min(1).optional(),
  CASHOUT_ITEMS_PER_REQUEST: int(1, 10_000, D.itemsPerRequest),
  CASHOUT_CONCURRENCY: int(1, 1_000, D.concurrency),
  CASHOUT_RATE_LIMIT_PER_SECOND: int(0, 100_000, D.rateLimitPerSecond),
  CASHOUT_REQUEST_TIMEOUT_MS: int(100, 600_000, D.requestTimeoutMs),
  CASHOUT_CONNECT_TIMEOUT_MS: int(100, 600_000, D.connectTimeoutMs),
  CASHOUT_CONNECT_RETRIES: int(0, 20, D.connectRetries),
  CASHOUT_CONNECT_BACKOFF_MS: int(0, 600_000, D.connectBackoffMs),
  CASHOUT_JOB_LOCK_MS: int(500, 600_000, D.jobLockMs),
  CASHOUT_WALLET_COUNTRIES: z
    .string()
    .regex(/^[A-Z]{2}(,[A-Z]{2})*$/, 'must be ISO country codes separated by commas, e.g. EG')
    .default(D.walletCountries.join(',')),
  CASHOUT_MAX_FIELD_LENGTH: int(1, 1_000_000, D.maxFieldLength),
  CASHOUT_ALLOW_UNSAFE_REDIS: bool(D.allowUnsafeRedis),
  CASHOUT_SANDBOX_PORT: int(0, 65_535, D.sandboxPort),
  CASHOUT_SANDBOX_TOKEN: z.string().min(1).optional(),
  CASHOUT_SANDBOX_MERCHANT_CODE: z.string().min(1).optional(),
  CASHOUT_SANDBOX_HASH_KEY: z.string().min(1).optional(),
  CASHOUT_SANDBOX_TEST_CARDS_FILE: z.string().min(1).optional(),
  CASHOUT_MAX_FILE_BYTES: int(1, 10_000_000_000, D.maxFileBytes),
  CASHOUT_MAX_ROWS: int(1, 100_000_000, D.maxRows),
  CASHOUT_IMPORT_THREADS: z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(0).max(16))
    .optional(),
  CASHOUT_SANDBOX_BODY_LIMIT_BYTES: int(1_024, 1_000_000_000, D.sandboxBodyLimitBytes),
  CASHOUT_MAX_ITEM_AMOUNT: amountSetting.optional(),
  CASHOUT_MAX_BATCH_TOTAL: amountSetting.optional(),
  CASHOUT_WALLET_DAILY_LIMIT: amountSetting.default(D.walletDailyLimit),
  CASHOUT_REQUIRE_APPROVAL: bool(D.requireApproval),
  CASHOUT_APPROVAL_THRESHOLD: amountSetting.optional(),
  CASHOUT_APPROVAL_EXPIRY_HOURS: int(1, 24 * 365, D.approvalExpiryHours),
  CASHOUT_DUPLICATE_WINDOW_HOURS: int(0, 24 * 365, D.duplicateWindowHours),
  CASHOUT_INBOX_DIR: z.string().min(1).default(D.inboxDir),
  CASHOUT_INBOX_SETTLE_SECONDS: int(0, 86_400, D.inboxSettleSeconds),
  CASHOUT_SCHEDULE: z.string().min(1).default(D.schedule),
  CASHOUT_TIMEZONE: z.string().min(1).default(D.timezone),
  CASHOUT_DASHBOARD_HOST: z.string().min(1).default(D.dashboardHost),
  CASHOUT_DASHBOARD_PORT: int(0, 65_535, D.dashboardPort),
  CASHOUT_DASHBOARD_USERS: z.string().min(1).optional(),
  CASHOUT_DASHBOARD_USERS_FILE: z.string().min(1).optional(),
  CASHOUT_DASHBOARD_SECURE_COOKIES: bool(D.dashboardSecureCookies),
  CASHOUT_DASHBOARD_HOSTS: hostList.optional(),
  CASHOUT_METRICS_PORT: int(0, 65_535, D.metricsPort),
  CASHOUT_HEALTH_HOST: z.string().min(1).default(D.healthHost),
  CASHOUT_HEALTH_PORT: int(0, 65_535, D.healthPort),
  CASHOUT_WEBHOOK_URLS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((u) => u.trim())
        .filter((u) => u !== ''),
    )
    .refine((urls) => urls.every((u) => /^https?:\/\/[^\s]+$/.test(u) && URL.canParse(u)), {
      message: 'must be http(s) addresses separated by commas',
    })
    .optional(),
  CASHOUT_WEBHOOK_SECRET: z.string().min(16, 'must have at least 16 characters').optional(),
  CASHOUT_WEBHOOK_SECRET_FILE: z.string().min(1).optional(),
  CASHOUT_WEBHOOK_ATTEMPTS: int(1, 50, D.webhookAttempts),
  CASHOUT_WEBHOOK_BACKOFF_MS: int(1, 3_600_000, D.webhookBackoffMs),
  CASHOUT_WEBHOOK_TIMEOUT_MS: int(100, 120_000, D.webhookTimeoutMs),
  CASHOUT_DASHBOARD_URL: z.url({ protocol: /^https?$/, message: 'must be an http(s) address' }).optional(),
  CASHOUT_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default(D.logLevel),
});

/** The validated, frozen configuration. Amount-free; durations in milliseconds. */
export interface Config {
  /** Base address of the payment service (interface doc: production or staging), without a trailing slash. */
  readonly apiBaseUrl: string | undefined;
  /** Bearer token (interface doc §5.1). Never logged, never written to a report. */
  readonly apiToken: string | undefined;
  /** Merchant code for the card charge signature (interface doc §5.2). A secret: never logged. */
  readonly merchantCode: string | undefined;
  /** Hash key for the card charge signature (interface doc §5.2). A secret: never logged. */
  readonly hashKey: string | undefined;
  readonly redisUrl: string | undefined;
  /** BullMQ and ledger key prefix; the `{…}` hash tag keeps every key in one Redis Cluster slot. */
  readonly redisPrefix: string;
  readonly reportsDir: string;
  /** Start every CSV the project writes with a UTF-8 byte-order mark, so that Excel reads Arabic names correctly. */
  readonly csvBom: boolean;
  readonly banksFile: string | undefined;
  /** Maximum payout items in one withdrawal request; the service's real limit is not shown (§8). */
  readonly itemsPerRequest: number;
  /** Withdrawal requests in flight per worker process. */
  readonly concurrency: number;
  /** Requests per second across all workers; 0 = no limit. */
  readonly rateLimitPerSecond: number;
  readonly requestTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** How often a request that provably never reached the service is tried again. */
  readonly connectRetries: number;
  readonly connectBackoffMs: number;
  /**
   * How long a worker's hold on a job lasts without renewal (BullMQ lock), in ms; also how often
   * workers look for jobs whose worker died. A dead worker's job is found after about twice this.
   */
  readonly jobLockMs: number;
  /** ISO 3166 countries whose mobile numbers are accepted for wallet rows. */
  readonly walletCountries: readonly string[];
  /** Longest accepted text value, in characters. */
  readonly maxFieldLength: number;
  /** Skip the Redis durability checks (never for real money). */
  readonly allowUnsafeRedis: boolean;
  readonly sandboxPort: number;
  readonly sandboxToken: string | undefined;
  /** Merchant code and hash key the sandbox checks charge signatures with; undefined = random per run. */
  readonly sandboxMerchantCode: string | undefined;
  readonly sandboxHashKey: string | undefined;
  /** JSON file replacing the sandbox's test card table. */
  readonly sandboxTestCardsFile: string | undefined;
  /**
   * The sandbox's fault settings as written: every `SANDBOX_*` variable that is set, by name (README
   * "The sandbox"). They are checked by `faultConfigFromEnv` (src/sandbox/faults.ts) when `cashout
   * sandbox` starts, so a bad one stops the sandbox only, as it always has.
   */
  readonly sandboxFaultSettings: Readonly<Record<string, string>>;
  /** Largest payout file accepted, in bytes (refused before parsing). */
  readonly maxFileBytes: number;
  /** Most data rows accepted in one file. */
  readonly maxRows: number;
  /** Threads that parse and check a payout file; undefined = one per core for files over 512 KiB, 0 = none. */
  readonly importThreads: number | undefined;
  /** Largest request body the sandbox accepts, in bytes. */
  readonly sandboxBodyLimitBytes: number;
  /** Largest amount of one payout item, EGP decimal string; over it the row is invalid. */
  readonly maxItemAmount: string | undefined;
  /** Largest total of one batch, EGP decimal string; over it the batch is refused. */
  readonly maxBatchTotal: string | undefined;
  /** Central Bank of Egypt's daily limit for an individual's wallet, EGP (a warning above it). */
  readonly walletDailyLimit: string;
  /** Maker-checker: batches wait for a second person's approval before anything is sent. */
  readonly requireApproval: boolean;
  /** With approval on: only batches whose total exceeds this (EGP) need it; undefined = all. */
  readonly approvalThreshold: string | undefined;
  /** A batch not approved within this many hours is cancelled. */
  readonly approvalExpiryHours: number;
  /**
   * Hours an accepted payout without reference keeps later rows with the same destination, holder
   * and amount from being sent (the payout register; rows with a reference are held for ever).
   */
  readonly duplicateWindowHours: number;
  readonly inboxDir: string;
  /** A file is taken from the inbox once unchanged for this many seconds (or with a .ready marker). */
  readonly inboxSettleSeconds: number;
  /** Cron pattern of the inbox scan. */
  readonly schedule: string;
  /** IANA time zone of the schedule. */
  readonly timezone: string;
  readonly dashboardHost: string;
  readonly dashboardPort: number;
  /** "name:scrypt-hash,name:scrypt-hash" (see README), or a file of such lines. */
  readonly dashboardUsers: string | undefined;
  readonly dashboardUsersFile: string | undefined;
  /** Mark session cookies Secure (set when the dashboard is served behind TLS). */
  readonly dashboardSecureCookies: boolean;
  /** Host names the dashboard answers besides the loopback names ("name" or "name:port"). */
  readonly dashboardHosts: readonly string[];
  /** Port of the worker's /metrics endpoint; 0 = none. */
  readonly metricsPort: number;
  /** Address of the worker's and scheduler's GET /healthz endpoint. */
  readonly healthHost: string;
  /** Port of the worker's and scheduler's GET /healthz endpoint; 0 = none. */
  readonly healthPort: number;
  /** Addresses that receive the batch notifications (README "Notifications"); empty = none. */
  readonly webhookUrls: readonly string[];
  /** Key of the notifications' HMAC-SHA256 signature. A secret: never logged. */
  readonly webhookSecret: string | undefined;
  /** Deliveries of one notification to one address before it is given up (first try included). */
  readonly webhookAttempts: number;
  /** Wait before the first retry of a delivery, in ms; doubles with each retry. */
  readonly webhookBackoffMs: number;
  /** Time one delivery may take, in ms. */
  readonly webhookTimeoutMs: number;
  /** The dashboard's address as people open it, for links in notifications (no trailing slash). */
  readonly dashboardUrl: string | undefined;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
}

/** Keys the project reads; any other `CASHOUT_*` key is refused. */
export const CONFIG_KEYS = Object.keys(EnvSchema.shape);

/** The known setting closest to `key`, when near enough to be a typo (a few letters off). */
function closestSetting(key: string): string | undefined {
  return closestName(key, CONFIG_KEYS, Math.max(2, Math.floor((key.length - 'CASHOUT_'.length) / 4)));
}

/** Reads `.env` from `cwd` (if any) into a copy of `env`, without overriding set variables. */
export function withDotEnv(env: NodeJS.ProcessEnv, cwd: string): Record<string, string | undefined> {
  const file = `${cwd}/.env`;
  if (!existsSync(file)) return { ...env };
  const fromFile = parseEnv(readFileSync(file, 'utf8'));
  return { ...fromFile, ...env };
}

/**
 * The configuration of this process: `env` (the process's environment unless given) with the
 * `.env` file of `cwd` (the working folder unless given), through `parseConfig`. The one place
 * that reads `process.env`. Throws `CashoutError('config_invalid')` like `parseConfig`.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): Config {
  return parseConfig(withDotEnv(env, cwd));
}

/**
 * A secret setting (`CASHOUT_X`, or the file `CASHOUT_X_FILE` names, which wins): the file's text,
 * trimmed, else `value`. Throws `CashoutError('config_invalid')` naming `fileKey` (never the value)
 * when the file cannot be read.
 */
function secretSetting(value: string | undefined, file: string | undefined, fileKey: string): string | undefined {
  if (!file) return value;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    throw new CashoutError('config_invalid', `setting ${fileKey} names a file that cannot be read`, { key: fileKey });
  }
}

/**
 * Validates an environment into a frozen `Config`. Throws `CashoutError('config_invalid')` naming
 * the variable and what is wrong with it; the message never echoes a token's value.
 */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const picked: Record<string, string> = {};
  const sandboxFaults: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || v === '') continue;
    if (k.startsWith('SANDBOX_')) sandboxFaults[k] = v;
    if (k.startsWith('CASHOUT_') && !CONFIG_KEYS.includes(k)) {
      const near = closestSetting(k);
      throw new CashoutError(
        'config_invalid',
        `unknown setting ${k}${near ? ` (did you mean ${near}?)` : ''}; known CASHOUT_ settings are listed in .env.example`,
        { key: k },
      );
    }
    if (CONFIG_KEYS.includes(k)) picked[k] = v;
  }
  const parsed = EnvSchema.safeParse(picked);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0] ?? '');
    throw new CashoutError('config_invalid', `setting ${key} is invalid: ${issue.message}`, { key });
  }
  const e = parsed.data;
  return Object.freeze({
    apiBaseUrl: e.CASHOUT_API_BASE_URL?.replace(/\/+$/, ''),
    apiToken: secretSetting(e.CASHOUT_API_TOKEN, e.CASHOUT_API_TOKEN_FILE, 'CASHOUT_API_TOKEN_FILE'),
    merchantCode: secretSetting(e.CASHOUT_MERCHANT_CODE, e.CASHOUT_MERCHANT_CODE_FILE, 'CASHOUT_MERCHANT_CODE_FILE'),
    hashKey: secretSetting(e.CASHOUT_HASH_KEY, e.CASHOUT_HASH_KEY_FILE, 'CASHOUT_HASH_KEY_FILE'),
    redisUrl: e.REDIS_URL,
    redisPrefix: e.CASHOUT_REDIS_PREFIX,
    reportsDir: e.CASHOUT_REPORTS_DIR,
    csvBom: e.CASHOUT_CSV_BOM,
    banksFile: e.CASHOUT_BANKS_FILE,
    itemsPerRequest: e.CASHOUT_ITEMS_PER_REQUEST,
    concurrency: e.CASHOUT_CONCURRENCY,
    rateLimitPerSecond: e.CASHOUT_RATE_LIMIT_PER_SECOND,
    requestTimeoutMs: e.CASHOUT_REQUEST_TIMEOUT_MS,
    connectTimeoutMs: e.CASHOUT_CONNECT_TIMEOUT_MS,
    connectRetries: e.CASHOUT_CONNECT_RETRIES,
    connectBackoffMs: e.CASHOUT_CONNECT_BACKOFF_MS,
    jobLockMs: e.CASHOUT_JOB_LOCK_MS,
    walletCountries: Object.freeze(e.CASHOUT_WALLET_COUNTRIES.split(',')),
    maxFieldLength: e.CASHOUT_MAX_FIELD_LENGTH,
    allowUnsafeRedis: e.CASHOUT_ALLOW_UNSAFE_REDIS,
    sandboxPort: e.CASHOUT_SANDBOX_PORT,
    sandboxToken: e.CASHOUT_SANDBOX_TOKEN,
    sandboxMerchantCode: e.CASHOUT_SANDBOX_MERCHANT_CODE,
    sandboxHashKey: e.CASHOUT_SANDBOX_HASH_KEY,
    sandboxTestCardsFile: e.CASHOUT_SANDBOX_TEST_CARDS_FILE,
    sandboxFaultSettings: Object.freeze(sandboxFaults),
    maxFileBytes: e.CASHOUT_MAX_FILE_BYTES,
    maxRows: e.CASHOUT_MAX_ROWS,
    importThreads: e.CASHOUT_IMPORT_THREADS,
    sandboxBodyLimitBytes: e.CASHOUT_SANDBOX_BODY_LIMIT_BYTES,
    maxItemAmount: e.CASHOUT_MAX_ITEM_AMOUNT,
    maxBatchTotal: e.CASHOUT_MAX_BATCH_TOTAL,
    walletDailyLimit: e.CASHOUT_WALLET_DAILY_LIMIT,
    requireApproval: e.CASHOUT_REQUIRE_APPROVAL,
    approvalThreshold: e.CASHOUT_APPROVAL_THRESHOLD,
    approvalExpiryHours: e.CASHOUT_APPROVAL_EXPIRY_HOURS,
    duplicateWindowHours: e.CASHOUT_DUPLICATE_WINDOW_HOURS,
    inboxDir: e.CASHOUT_INBOX_DIR,
    inboxSettleSeconds: e.CASHOUT_INBOX_SETTLE_SECONDS,
    schedule: e.CASHOUT_SCHEDULE,
    timezone: e.CASHOUT_TIMEZONE,
    dashboardHost: e.CASHOUT_DASHBOARD_HOST,
    dashboardPort: e.CASHOUT_DASHBOARD_PORT,
    dashboardUsers: e.CASHOUT_DASHBOARD_USERS,
    dashboardUsersFile: e.CASHOUT_DASHBOARD_USERS_FILE,
    dashboardSecureCookies: e.CASHOUT_DASHBOARD_SECURE_COOKIES,
    dashboardHosts: Object.freeze(e.CASHOUT_DASHBOARD_HOSTS ?? []),
    metricsPort: e.CASHOUT_METRICS_PORT,
    healthHost: e.CASHOUT_HEALTH_HOST,
    healthPort: e.CASHOUT_HEALTH_PORT,
    ...webhookSettings(e),
    logLevel: e.CASHOUT_LOG_LEVEL,
  });
}

/**
 * The notification settings; throws `config_invalid` when addresses are set without a secret
 * (an unsigned notification could be forged by anyone who can reach the receiver).
 */
function webhookSettings(e: z.infer<typeof EnvSchema>) {
  const urls = e.CASHOUT_WEBHOOK_URLS ?? [];
  let secret = e.CASHOUT_WEBHOOK_SECRET;
  if (e.CASHOUT_WEBHOOK_SECRET_FILE) {
    try {
      secret = readFileSync(e.CASHOUT_WEBHOOK_SECRET_FILE, 'utf8').trim();
    } catch {
      const key = 'CASHOUT_WEBHOOK_SECRET_FILE';
      throw new CashoutError('config_invalid', `setting ${key} names a file that cannot be read`, { key });
    }
  }
  if (urls.length > 0 && (secret === undefined || secret.length < 16)) {
    const message =
      'setting CASHOUT_WEBHOOK_SECRET (or CASHOUT_WEBHOOK_SECRET_FILE) is missing or shorter than 16 ' +
      'characters: notifications to CASHOUT_WEBHOOK_URLS are always signed';
    throw new CashoutError('config_invalid', message, { key: 'CASHOUT_WEBHOOK_SECRET' });
  }
  return {
    webhookUrls: Object.freeze(urls),
    webhookSecret: secret,
    webhookAttempts: e.CASHOUT_WEBHOOK_ATTEMPTS,
    webhookBackoffMs: e.CASHOUT_WEBHOOK_BACKOFF_MS,
    webhookTimeoutMs: e.CASHOUT_WEBHOOK_TIMEOUT_MS,
    dashboardUrl: e.CASHOUT_DASHBOARD_URL?.replace(/\/+$/, ''),
  };
}

/** Default Redis address when `REDIS_URL` is not set. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
