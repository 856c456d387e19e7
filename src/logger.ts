/**
 * The root logger (pino). JSON lines on stderr by default, pretty when stderr is a terminal, so
 * stdout stays free for the command's own output. The token never appears: `authorization` and
 * token fields are removed, and `mobile_number`, `number` and `account_number` are masked wherever
 * they sit in a logged object, at any depth and inside arrays (`maskDeep` on every line). Card
 * charges: `card_number` shows its last four digits, `cvv`, `hash_key` and `merchant_code` are removed.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import { Writable } from 'node:stream';
import pretty from 'pino-pretty';
import { maskDeep, maskNumber } from './mask.js';
import { writeTerminalLog } from './terminal-log.js';

export type { Logger } from 'pino';

const SECRET_KEYS = [
  'authorization',
  'token',
  'apiToken',
  'cvv',
  'hash_key',
  'hashKey',
  'merchant_code',
  'merchantCode',
];
const SECRET_PATHS = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `*.${k}`),
  'headers.authorization',
  '*.headers.authorization',
];
const MASKED_PATHS = [
  'mobile_number',
  'number',
  'account_number',
  '*.mobile_number',
  '*.number',
  '*.account_number',
  '*.*.mobile_number',
  '*.*.number',
  '*.*.account_number',
];

/** Options of the root logger. */
export interface LoggerOptions {
  readonly level: string;
  /** Where lines go (tests pass an in-memory stream). Default: stderr, pretty on a terminal. */
  readonly stream?: DestinationStream;
}

/** Creates the root logger; use `.child({ batchId })` and `.child({ batchId, seq, jobId })` below it. */
export function createLogger(opts: LoggerOptions): Logger {
  const base = {
    level: opts.level,
    base: { app: 'bulk-cashout' },
    formatters: { log: (obj: Record<string, unknown>) => maskDeep(obj) },
    redact: {
      paths: [...SECRET_PATHS, ...MASKED_PATHS],
      censor: (value: unknown, path: string[]) => {
        const key = path[path.length - 1] ?? '';
        if (SECRET_KEYS.includes(key)) return '[redacted]';
        return typeof value === 'string' ? maskNumber(value) : '[redacted]';
      },
    },
  };
  if (opts.stream) return pino(base, opts.stream);
  if (process.stderr.isTTY) {
    // Pretty lines in this thread, through the terminal's log sink: above a progress bar when one is drawn.
    const terminal = new Writable({
      write(chunk: Buffer, _enc, done) {
        writeTerminalLog(chunk.toString('utf8'));
        done();
      },
    });
    return pino(base, pretty({ destination: terminal, colorize: true, ignore: 'pid,hostname,app', sync: true }));
  }
  return pino(base, pino.destination({ dest: 2, sync: true }));
}
