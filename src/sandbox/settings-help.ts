/**
 * The settings of `cashout sandbox`, as its `--help` lists them (README "The sandbox" and
 * `.env.example` describe the same). It imports nothing but the defaults (which import nothing),
 * so that `--help` answers at once.
 */
import { CONFIG_DEFAULTS, SANDBOX_FAULT_DEFAULTS } from '../config-defaults.js';

/** One setting of the sandbox: its variable, what it does, and its default. */
export interface SandboxSetting {
  readonly name: string;
  readonly meaning: string;
  readonly dflt: string;
}

/**
 * The fault settings, read when the sandbox starts (from the environment or `.env`; the
 * environment wins); `PUT /__sandbox/faults` changes them while it runs. See `faultConfigFromEnv`.
 */
export const SANDBOX_FAULT_SETTINGS: readonly SandboxSetting[] = [
  {
    name: 'SANDBOX_LATENCY_MS',
    meaning: 'time before each answer, in ms: "50" (fixed) or "20-80" (uniform in the range)',
    dflt: '0',
  },
  {
    name: 'SANDBOX_FAULT_RATES',
    meaning:
      'kind=probability entries separated by commas, e.g. "http500=0.05,hang=0.01" (at most 1 in all). ' +
      'Nothing is created by http500, http503, http429 (with Retry-After) and hang (never answers); ' +
      'createThenReset (connection dropped), malformed200 and createThen500 create the request, then answer badly',
    dflt: 'none',
  },
  {
    name: 'SANDBOX_RETRY_AFTER_SECONDS',
    meaning: 'Retry-After of the http429 answers, in whole seconds',
    dflt: String(SANDBOX_FAULT_DEFAULTS.retryAfterSeconds),
  },
  {
    name: 'SANDBOX_SEED',
    meaning: 'seed (0 to 4294967295) of the fault and latency draws, for repeatable runs',
    dflt: 'random',
  },
];

/** The sandbox's other settings (CASHOUT_SANDBOX_*, in the configuration like every CASHOUT_ key). */
export const SANDBOX_OTHER_SETTINGS: readonly SandboxSetting[] = [
  {
    name: 'CASHOUT_SANDBOX_PORT',
    meaning: 'port (--port wins; 0 = any free port)',
    dflt: String(CONFIG_DEFAULTS.sandboxPort),
  },
  { name: 'CASHOUT_SANDBOX_TOKEN', meaning: 'the bearer token it accepts', dflt: 'random, printed at start' },
  {
    name: 'CASHOUT_SANDBOX_BODY_LIMIT_BYTES',
    meaning: 'largest request body, in bytes',
    dflt: String(CONFIG_DEFAULTS.sandboxBodyLimitBytes),
  },
  {
    name: 'CASHOUT_SANDBOX_MERCHANT_CODE',
    meaning: 'merchant code card charge signatures are checked with',
    dflt: 'random, printed at start',
  },
  {
    name: 'CASHOUT_SANDBOX_HASH_KEY',
    meaning: 'hash key card charge signatures are checked with',
    dflt: 'random, printed at start',
  },
  {
    name: 'CASHOUT_SANDBOX_TEST_CARDS_FILE',
    meaning: 'JSON file replacing the test cards',
    dflt: 'the bundled cards',
  },
];

/** The text `cashout sandbox --help` shows after its options. */
export function sandboxSettingsHelp(): string {
  const line = (s: SandboxSetting) => `  ${s.name}\n${wrap(`${s.meaning} (default: ${s.dflt})`, '      ', 96)}`;
  return (
    '\nFault settings (from the environment or .env, read at start;\n' +
    'PUT /__sandbox/faults changes them while the sandbox runs):\n' +
    SANDBOX_FAULT_SETTINGS.map(line).join('\n') +
    '\n\nOther settings:\n' +
    SANDBOX_OTHER_SETTINGS.map(line).join('\n') +
    '\n'
  );
}

/** `text` broken at spaces into lines of at most `width` characters, each starting with `indent`. */
function wrap(text: string, indent: string, width: number): string {
  const lines: string[] = [];
  let current = '';
  for (const word of text.split(' ')) {
    if (current !== '' && indent.length + current.length + 1 + word.length > width) {
      lines.push(indent + current);
      current = word;
    } else {
      current = current === '' ? word : `${current} ${word}`;
    }
  }
  if (current !== '') lines.push(indent + current);
  return lines.join('\n');
}
