/**
 * Configuration (src/config.ts): defaults, all taken from `CONFIG_DEFAULTS`, refusal of bad or
 * unknown settings with a message that names the variable, never the token, token from a file,
 * `.env` that never overrides the environment, and the sandbox's SANDBOX_* fault settings read with
 * the rest.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS, loadConfig, parseConfig, withDotEnv } from '../src/config.js';
import { CashoutError } from '../src/errors.js';

const TOKEN = 's3cr3t-token';

const tmpDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'cashout-config-'));
  tmpDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of tmpDirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `fn`, expects a CashoutError and returns it. */
function caught(fn: () => unknown): CashoutError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CashoutError);
    return err as CashoutError;
  }
  throw new Error('expected a CashoutError, nothing was thrown');
}

describe('parseConfig defaults', () => {
  it.each([
    ['itemsPerRequest', 50],
    ['concurrency', 4],
    ['reportsDir', './reports'],
    ['csvBom', true],
    ['requestTimeoutMs', 30_000],
    ['connectTimeoutMs', 10_000],
    ['connectRetries', 4],
    ['rateLimitPerSecond', 0],
    ['walletCountries', ['EG']],
    ['allowUnsafeRedis', false],
    ['redisPrefix', '{cashout}'],
    ['logLevel', 'info'],
    ['apiToken', undefined],
    ['apiBaseUrl', undefined],
    ['dashboardHosts', []],
  ])('an empty environment gives %s = %j', (key, value) => {
    expect(parseConfig({})[key as keyof ReturnType<typeof parseConfig>]).toEqual(value);
  });

  it.each(Object.entries(CONFIG_DEFAULTS))(
    'an empty environment gives %s its default from CONFIG_DEFAULTS',
    (key, value) => {
      expect(parseConfig({})[key as keyof ReturnType<typeof parseConfig>]).toEqual(value);
    },
  );

  it.each([
    ['CASHOUT_ITEMS_PER_REQUEST', ''],
    ['CASHOUT_CONCURRENCY', undefined],
  ])('%s set to %j counts as unset (default applies)', (key, value) => {
    const cfg = parseConfig({ [key]: value });
    expect(cfg.itemsPerRequest).toBe(50);
    expect(cfg.concurrency).toBe(4);
  });
});

describe('parseConfig values', () => {
  it.each([
    [{ CASHOUT_ITEMS_PER_REQUEST: '10' }, 'itemsPerRequest', 10],
    [{ CASHOUT_CONCURRENCY: '16' }, 'concurrency', 16],
    [{ CASHOUT_WALLET_COUNTRIES: 'EG,SA' }, 'walletCountries', ['EG', 'SA']],
    [{ CASHOUT_ALLOW_UNSAFE_REDIS: 'yes' }, 'allowUnsafeRedis', true],
    [{ CASHOUT_CSV_BOM: 'false' }, 'csvBom', false],
    [{ CASHOUT_API_BASE_URL: 'https://pay.example.com/' }, 'apiBaseUrl', 'https://pay.example.com'],
    [{ CASHOUT_API_TOKEN: TOKEN }, 'apiToken', TOKEN],
    [
      { CASHOUT_DASHBOARD_HOSTS: 'Cashout.Example.com, ops.example.com:8443,[::1]:4020' },
      'dashboardHosts',
      ['cashout.example.com', 'ops.example.com:8443', '[::1]:4020'],
    ],
  ])('%j → %s = %j', (env, key, value) => {
    expect(parseConfig(env)[key as keyof ReturnType<typeof parseConfig>]).toEqual(value);
  });

  it.each([
    ['CASHOUT_ITEMS_PER_REQUEST', 'abc'],
    ['CASHOUT_ITEMS_PER_REQUEST', '0'],
    ['CASHOUT_ITEMS_PER_REQUEST', '-5'],
    ['CASHOUT_ITEMS_PER_REQUEST', '2.5'],
    ['CASHOUT_CONCURRENCY', '0'],
    ['CASHOUT_REQUEST_TIMEOUT_MS', '30s'],
    ['CASHOUT_API_BASE_URL', 'ftp://x'],
    ['CASHOUT_API_BASE_URL', 'not a url'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
    ['CASHOUT_WALLET_COUNTRIES', 'eg'],
    ['CASHOUT_ALLOW_UNSAFE_REDIS', 'maybe'],
    ['CASHOUT_CSV_BOM', 'no thanks'],
    ['CASHOUT_LOG_LEVEL', 'loud'],
    ['CASHOUT_DASHBOARD_HOSTS', 'http://cashout.example.com'],
    ['CASHOUT_DASHBOARD_HOSTS', 'cashout.example.com,,other.example'],
    ['CASHOUT_DASHBOARD_HOSTS', 'cashout.example.com:99999'],
    ['CASHOUT_DASHBOARD_HOSTS', 'cashout example.com'],
  ])('%s=%j is refused with config_invalid naming the variable', (key, value) => {
    const err = caught(() => parseConfig({ [key]: value }));
    expect(err.code).toBe('config_invalid');
    expect(err.message).toContain(key);
  });

  it.each(['CASHOUT_TYPO', 'CASHOUT_ITEMS_PER_REQUESTS', 'CASHOUT_API_TOKN'])(
    'unknown setting %s is refused, naming it',
    (key) => {
      const err = caught(() => parseConfig({ [key]: '1' }));
      expect(err.code).toBe('config_invalid');
      expect(err.message).toContain(key);
    },
  );

  it.each([
    ['CASHOUT_CONCURRANCY', 'CASHOUT_CONCURRENCY'],
    ['CASHOUT_ITEMS_PER_REQUESTS', 'CASHOUT_ITEMS_PER_REQUEST'],
    ['CASHOUT_API_TOKN', 'CASHOUT_API_TOKEN'],
  ])('unknown setting %s names the setting it looks like, %s', (key, near) => {
    expect(caught(() => parseConfig({ [key]: '1' })).message).toContain(`(did you mean ${near}?)`);
  });

  it('an unknown setting like no known one is named without a guess', () => {
    expect(caught(() => parseConfig({ CASHOUT_TYPO: '1' })).message).not.toContain('did you mean');
  });

  it('variables outside the CASHOUT_ namespace are ignored', () => {
    expect(parseConfig({ PATH: '/usr/bin', HOME: '/root', CASHOUTX: 'y' }).itemsPerRequest).toBe(50);
  });
});

describe('the token never appears in an error', () => {
  it.each([
    ['a bad number next to it', { CASHOUT_API_TOKEN: TOKEN, CASHOUT_ITEMS_PER_REQUEST: 'abc' }],
    ['a bad address next to it', { CASHOUT_API_TOKEN: TOKEN, CASHOUT_API_BASE_URL: 'ftp://x' }],
    ['an unknown key next to it', { CASHOUT_API_TOKEN: TOKEN, CASHOUT_TYPO: 'x' }],
    ['the token under a misspelt key', { CASHOUT_API_TOKN: TOKEN }],
    ['the token as the base address', { CASHOUT_API_BASE_URL: TOKEN }],
    ['the token as a number', { CASHOUT_CONCURRENCY: TOKEN }],
    ['the sandbox token next to a bad value', { CASHOUT_SANDBOX_TOKEN: TOKEN, CASHOUT_LOG_LEVEL: 'loud' }],
  ])('with %s', (_label, env) => {
    const err = caught(() => parseConfig(env));
    expect(err.code).toBe('config_invalid');
    expect(err.message).not.toContain(TOKEN);
    expect(String(err.stack)).not.toContain(TOKEN);
    expect(JSON.stringify(err.context)).not.toContain(TOKEN);
  });

  it('an unreadable token file is refused without echoing anything from it', () => {
    const err = caught(() => parseConfig({ CASHOUT_API_TOKEN_FILE: join(tempDir(), 'missing', TOKEN) }));
    expect(err.code).toBe('config_invalid');
    expect(err.message).toContain('CASHOUT_API_TOKEN_FILE');
    expect(err.message).not.toContain(TOKEN);
  });
});

describe('CASHOUT_API_TOKEN_FILE', () => {
  it.each([
    ['a bare token', 'tok-from-file', 'tok-from-file'],
    ['a trailing newline', 'tok-from-file\n', 'tok-from-file'],
    ['surrounding spaces and CRLF', '  tok-from-file \r\n', 'tok-from-file'],
  ])('reads the token from a file with %s (trimmed)', (_label, content, expected) => {
    const file = join(tempDir(), 'token');
    writeFileSync(file, content, { mode: 0o600 });
    expect(parseConfig({ CASHOUT_API_TOKEN_FILE: file }).apiToken).toBe(expected);
  });

  it('the file wins over CASHOUT_API_TOKEN', () => {
    const file = join(tempDir(), 'token');
    writeFileSync(file, 'tok-from-file\n');
    expect(parseConfig({ CASHOUT_API_TOKEN: 'tok-inline', CASHOUT_API_TOKEN_FILE: file }).apiToken).toBe(
      'tok-from-file',
    );
  });
});

describe('the result is frozen', () => {
  it.each([
    ['overwriting itemsPerRequest', (c: Record<string, unknown>) => (c.itemsPerRequest = 1)],
    ['adding a key', (c: Record<string, unknown>) => (c.extra = 1)],
    ['pushing a wallet country', (c: Record<string, unknown>) => (c.walletCountries as string[]).push('SA')],
  ])('%s throws', (_label, mutate) => {
    const cfg = parseConfig({});
    expect(Object.isFrozen(cfg)).toBe(true);
    expect(() => mutate(cfg as unknown as Record<string, unknown>)).toThrow(TypeError);
    expect(cfg.itemsPerRequest).toBe(50);
    expect(cfg.walletCountries).toEqual(['EG']);
  });
});

describe('withDotEnv', () => {
  it.each([
    ['a variable only in .env is read', 'CASHOUT_CONCURRENCY=8\n', {}, 'CASHOUT_CONCURRENCY', '8'],
    [
      'the environment wins over .env',
      'CASHOUT_CONCURRENCY=8\n',
      { CASHOUT_CONCURRENCY: '2' },
      'CASHOUT_CONCURRENCY',
      '2',
    ],
    [
      'quoted values and comments are understood',
      '# comment\nCASHOUT_REPORTS_DIR="/var/cashout reports"\n',
      {},
      'CASHOUT_REPORTS_DIR',
      '/var/cashout reports',
    ],
    ['variables of the environment are kept', 'CASHOUT_CONCURRENCY=8\n', { HOME: '/home/x' }, 'HOME', '/home/x'],
  ])('%s', (_label, dotEnv, env, key, expected) => {
    const dir = tempDir();
    writeFileSync(join(dir, '.env'), dotEnv);
    expect(withDotEnv(env, dir)[key]).toBe(expected);
  });

  it('the environment token wins over a token in .env, end to end', () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.env'), 'CASHOUT_API_TOKEN=from-dotenv\nCASHOUT_ITEMS_PER_REQUEST=20\n');
    const cfg = parseConfig(withDotEnv({ CASHOUT_API_TOKEN: 'from-env' }, dir));
    expect(cfg.apiToken).toBe('from-env');
    expect(cfg.itemsPerRequest).toBe(20);
  });

  it('without a .env the result is a copy of the environment, not the object itself', () => {
    const env = { CASHOUT_CONCURRENCY: '3' };
    const out = withDotEnv(env, tempDir());
    expect(out).toEqual(env);
    expect(out).not.toBe(env);
  });

  it('a typo inside .env is refused like one in the environment', () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.env'), 'CASHOUT_TYPO=1\n');
    const err = caught(() => parseConfig(withDotEnv({}, dir)));
    expect(err.message).toContain('CASHOUT_TYPO');
  });
});

describe('the sandbox fault settings', () => {
  it('are the SANDBOX_* variables that are set, as written, and nothing else', () => {
    const cfg = parseConfig({
      SANDBOX_FAULT_RATES: 'http503=1',
      SANDBOX_LATENCY_MS: ' 20-80 ',
      SANDBOX_SEED: '',
      SANDBOX_RETRY_AFTER_SECONDS: undefined,
      CASHOUT_SANDBOX_PORT: '0',
      HOME: '/home/x',
    });
    expect(cfg.sandboxFaultSettings).toEqual({ SANDBOX_FAULT_RATES: 'http503=1', SANDBOX_LATENCY_MS: ' 20-80 ' });
    expect(Object.isFrozen(cfg.sandboxFaultSettings)).toBe(true);
    expect(parseConfig({}).sandboxFaultSettings).toEqual({});
  });

  it('are read from .env like every setting, the environment winning', () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.env'), 'SANDBOX_FAULT_RATES=http503=1\nSANDBOX_SEED=7\n');
    const cfg = loadConfig({ SANDBOX_SEED: '9' }, dir);
    expect(cfg.sandboxFaultSettings).toEqual({ SANDBOX_FAULT_RATES: 'http503=1', SANDBOX_SEED: '9' });
  });
});

describe('loadConfig', () => {
  it('parses the given environment with the .env of the given folder', () => {
    const dir = tempDir();
    writeFileSync(join(dir, '.env'), 'CASHOUT_CONCURRENCY=8\nCASHOUT_ITEMS_PER_REQUEST=20\n');
    const cfg = loadConfig({ CASHOUT_CONCURRENCY: '2' }, dir);
    expect(cfg.concurrency).toBe(2);
    expect(cfg.itemsPerRequest).toBe(20);
  });
});
