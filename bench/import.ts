/**
 * `import`: how fast a large payout file is read, validated and imported into Redis.
 * (a) csv-parse alone with `columns: true` in this process, the floor any import pays;
 * (b) `cashout validate` as a child process; (c) `cashout import` as a child process into Redis.
 * Each rate is also given as a ratio to (a).
 */
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { parse } from 'csv-parse';
import { Redis } from 'ioredis';
import { batchIdFromSha256 } from '../src/batch-id.js';
import { openLedger } from '../src/ledger/index.js';
import {
  benchPrefix,
  benchRedis,
  deleteKeys,
  logLine,
  note,
  num,
  payoutFile,
  printTable,
  ratio,
  redisUsedMB,
  runMeasured,
  saveResults,
  scratchDir,
  type BenchSettings,
  type Measured,
  type PayoutFile,
} from './lib.js';

/** Options of the import benchmark. */
export interface ImportBenchOptions {
  readonly rows: number;
  /** Longest the `cashout import` child may run, seconds. */
  readonly importTimeoutSeconds: number;
  readonly itemsPerRequest: number;
}

export const IMPORT_DEFAULTS: ImportBenchOptions = { rows: 1_000_000, importTimeoutSeconds: 420, itemsPerRequest: 100 };

/** What one `cashout import` run gave. */
export interface ImportRun {
  readonly rows: number;
  readonly seconds: number;
  readonly rowsPerSecond: number | undefined;
  readonly peakRssMB: number | undefined;
  readonly rssSource: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  /** Rows the import reported queued (from its output), when it finished. */
  readonly queuedRows?: number;
  readonly requests?: number;
  /** Rows flagged as possible duplicates of an earlier row (from the log). */
  readonly warnedRows?: number;
  /** Bytes held by the checks across rows at the end (references, possible duplicates, wallet totals; from the log), MiB. */
  readonly crossRowTablesMB?: number;
  /** After a timeout: rows read per the last progress log line, and rows staged in the ledger. */
  readonly rowsReadAtStop?: number;
  readonly rowsStagedAtStop?: number;
  /** Redis memory in use after the import (private Redis only), MiB. */
  readonly redisUsedMB?: number;
  readonly redisPrivate: boolean;
  readonly stdout: string;
  readonly error?: string;
}

/** rows/s of csv-parse with `columns: true` over the file. */
export async function rawParse(path: string): Promise<{ rows: number; seconds: number; rowsPerSecond: number }> {
  const t0 = performance.now();
  let rows = 0;
  const parser = createReadStream(path).pipe(parse({ columns: true }));
  for await (const record of parser) {
    if (record) rows++;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { rows, seconds, rowsPerSecond: rows / seconds };
}

async function sha256Of(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** The environment of `cashout import` for the benchmarks (no service is contacted by an import). */
export function importEnv(
  redisUrl: string,
  prefix: string,
  reportsDir: string,
  itemsPerRequest: number,
): Record<string, string> {
  return {
    REDIS_URL: redisUrl,
    CASHOUT_REDIS_PREFIX: prefix,
    CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
    CASHOUT_API_TOKEN: 'x',
    CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
    CASHOUT_REPORTS_DIR: reportsDir,
    CASHOUT_ITEMS_PER_REQUEST: String(itemsPerRequest),
  };
}

const importCache = new Map<string, ImportRun>();

/**
 * Runs `cashout import <file>` once into a fresh prefix (private Redis unless BENCH_REDIS_URL),
 * measures it and deletes its keys and report folder. The same file in the same process is
 * measured once (the `memory` benchmark reuses what `import` measured).
 */
export async function measureImport(
  file: PayoutFile,
  settings: BenchSettings,
  opts: { timeoutSeconds: number; itemsPerRequest: number },
): Promise<ImportRun & { reused: boolean }> {
  const key = `${file.path}:${opts.itemsPerRequest}:${opts.timeoutSeconds}`;
  const cached = importCache.get(key);
  if (cached) return { ...cached, reused: true };
  const redis = await benchRedis(settings);
  const prefix = benchPrefix();
  const scratch = await scratchDir('import');
  let rowsReadAtStop: number | undefined;
  let batchLog: Record<string, unknown> | undefined;
  try {
    note(
      `cashout import of ${num(file.rows)} rows (timeout ${opts.timeoutSeconds} s, Redis ${redis.private ? 'private' : redis.url}, prefix ${prefix})`,
    );
    const m: Measured = await runMeasured(['import', file.path], {
      env: importEnv(redis.url, prefix, `${scratch.dir}/reports`, opts.itemsPerRequest),
      cwd: scratch.dir,
      timeoutMs: opts.timeoutSeconds * 1000,
      onStderrLine: (line) => {
        const l = logLine(line);
        if (l?.phase === 'reading' && typeof l.done === 'number') rowsReadAtStop = l.done;
        if (l?.msg === 'batch queued') batchLog = l;
      },
    });
    const queued = /Batch ([0-9a-f]{16}) queued: (\d+) rows in (\d+) withdrawal requests/.exec(m.stdout);
    let rowsStagedAtStop: number | undefined;
    if (!queued) {
      // Stopped or failed: count what reached the ledger.
      const conn = new Redis(redis.url, { maxRetriesPerRequest: 3 });
      try {
        const id = batchIdFromSha256(await sha256Of(file.path));
        const last = await openLedger(conn, prefix).lastSeq(id);
        rowsStagedAtStop = Math.min(file.rows, last * opts.itemsPerRequest);
      } catch {
        rowsStagedAtStop = undefined;
      } finally {
        conn.disconnect();
      }
    }
    const run: ImportRun = {
      rows: file.rows,
      seconds: m.seconds,
      rowsPerSecond: queued
        ? Number(queued[2]) / m.seconds
        : rowsStagedAtStop !== undefined
          ? rowsStagedAtStop / m.seconds
          : undefined,
      peakRssMB: m.peakRssMB,
      rssSource: m.rssSource,
      exitCode: m.code,
      signal: m.signal,
      timedOut: m.timedOut,
      ...(queued ? { queuedRows: Number(queued[2]), requests: Number(queued[3]) } : {}),
      ...(typeof batchLog?.warnedRows === 'number' ? { warnedRows: batchLog.warnedRows } : {}),
      ...(typeof batchLog?.crossRowTableBytes === 'number'
        ? { crossRowTablesMB: batchLog.crossRowTableBytes / 1048576 }
        : {}),
      ...(queued ? {} : { rowsReadAtStop, rowsStagedAtStop }),
      ...(redis.private ? { redisUsedMB: await redisUsedMB(redis.url) } : {}),
      redisPrivate: redis.private,
      stdout: m.stdout.trim(),
      ...(queued || m.timedOut ? {} : { error: m.stderrTail.trim().split('\n').slice(-5).join('\n') }),
    };
    importCache.set(key, run);
    return { ...run, reused: false };
  } finally {
    const deleted = await deleteKeys(redis.url, prefix).catch(() => -1);
    if (!redis.private) note(`deleted ${deleted} keys under ${prefix}`);
    await redis.stop();
    await scratch.cleanup();
  }
}

/** Describes an import run's outcome in a few words. */
export function importOutcome(r: ImportRun): string {
  if (r.queuedRows !== undefined) return `queued ${num(r.queuedRows)} rows`;
  if (r.timedOut)
    return `STOPPED after ${num(r.seconds)} s: ${num(r.rowsStagedAtStop ?? r.rowsReadAtStop)} rows staged`;
  return `FAILED (exit ${r.exitCode ?? r.signal})`;
}

export async function importBench(
  settings: BenchSettings,
  opts: ImportBenchOptions = IMPORT_DEFAULTS,
): Promise<Record<string, unknown>> {
  note(`import: ${num(opts.rows)} rows, seed ${settings.seed}`);
  const file = await payoutFile(opts.rows, settings.seed);
  if (file.generated)
    note(`generated ${file.path} (${num(file.bytes / 1e6, 1)} MB) in ${num(file.generated.seconds, 1)} s`);
  else note(`using cached ${file.path} (${num(file.bytes / 1e6, 1)} MB)`);

  note('(a) csv-parse with columns: true');
  const raw = await rawParse(file.path);

  note('(b) cashout validate');
  const scratch = await scratchDir('validate');
  let validate: Measured;
  try {
    validate = await runMeasured(['validate', file.path], { env: {}, cwd: scratch.dir, timeoutMs: 600_000 });
  } finally {
    await scratch.cleanup();
  }
  const validated = /: (\d+) rows, (\d+) valid, (\d+) invalid/.exec(validate.stdout);
  const validateRows = validated ? Number(validated[1]) : undefined;

  note('(c) cashout import');
  const imp = await measureImport(file, settings, {
    timeoutSeconds: opts.importTimeoutSeconds,
    itemsPerRequest: opts.itemsPerRequest,
  });

  const rows: string[][] = [
    [
      '(a) csv-parse, columns: true (in process)',
      num(raw.rows),
      num(raw.seconds, 1),
      num(raw.rowsPerSecond),
      '1.00×',
      '—',
      'parsed',
    ],
    [
      '(b) cashout validate',
      num(validateRows),
      num(validate.seconds, 1),
      num(validateRows !== undefined ? validateRows / validate.seconds : undefined),
      ratio(validateRows !== undefined ? validateRows / validate.seconds : undefined, raw.rowsPerSecond),
      num(validate.peakRssMB),
      validated
        ? `exit ${validate.code}, ${validated[2]} valid, ${validated[3]} invalid`
        : `FAILED (exit ${validate.code ?? validate.signal})`,
    ],
    [
      `(c) cashout import (${opts.itemsPerRequest} items/request)`,
      num(imp.queuedRows ?? imp.rowsStagedAtStop),
      num(imp.seconds, 1),
      num(imp.rowsPerSecond),
      ratio(imp.rowsPerSecond, raw.rowsPerSecond),
      num(imp.peakRssMB),
      importOutcome(imp),
    ],
  ];
  const table = printTable(
    `import — ${num(opts.rows)} rows, ${num(file.bytes / 1e6, 1)} MB, seed ${settings.seed}`,
    ['step', 'rows', 'seconds', 'rows/s', 'vs (a)', 'peak RSS MiB', 'outcome'],
    rows,
  );
  if (imp.redisUsedMB !== undefined)
    process.stdout.write(`Redis memory after the import: ${num(imp.redisUsedMB)} MiB\n`);
  if (imp.timedOut)
    process.stdout.write(
      `NOTE: cashout import did not finish within ${opts.importTimeoutSeconds} s and was stopped; its rate is over the rows staged so far.\n`,
    );
  const result = {
    options: opts,
    seed: settings.seed,
    file: { path: file.path, rows: file.rows, bytes: file.bytes, generated: file.generated ?? null },
    rawParse: raw,
    validate: {
      rows: validateRows,
      seconds: validate.seconds,
      rowsPerSecond: validateRows !== undefined ? validateRows / validate.seconds : null,
      peakRssMB: validate.peakRssMB,
      rssSource: validate.rssSource,
      exitCode: validate.code,
      output: validate.stdout.trim().split('\n').slice(-3).join('\n'),
    },
    import: imp,
    table,
  };
  await saveResults('import', result);
  return result;
}
