/**
 * `import`: how fast a large payout file is read, validated and imported into Redis.
 * (a) csv-parse alone with `columns: true` in this process, the floor any import pays;
 * (b) `cashout validate` as a child process; (c) `cashout import` as a child process into Redis.
 * Each rate is also given as a ratio to (a). The three run one after the other, `rounds` times;
 * the table gives each step's median round and the median of the rounds' ratios, so that a
 * machine that is slower for a moment moves one round, not the figure.
 */
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
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
  redisFigures,
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
  /** Times the steps ((a), (b), (c) and, with a baseline, (d)) are run, one after the other (`--import-rounds`). */
  readonly rounds: number;
  /**
   * Another build of bulk-cashout (a folder holding `bin/cashout.js` and its built `dist/`), e.g.
   * an earlier commit: each round then also runs its `cashout import` over the same file as step
   * (d), after this checkout's or, every other round, before it (`--import-baseline`). Both imports
   * meet the same machine within a minute, which a ratio to (a) alone does not show.
   */
  readonly baseline?: string;
}

export const IMPORT_DEFAULTS: ImportBenchOptions = {
  rows: 1_000_000,
  importTimeoutSeconds: 420,
  itemsPerRequest: 100,
  rounds: 3,
};

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
  /**
   * CPU seconds the Redis server spent on the import (private Redis only): on a machine of few
   * cores it competes with the import's own threads, so it is part of the import's cost.
   */
  readonly redisCpuSeconds?: number;
  /** CPU seconds of the `cashout import` process, all its threads (`Measured.cpuSeconds`). */
  readonly cpuSeconds?: number;
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
  opts: { timeoutSeconds: number; itemsPerRequest: number; again?: boolean; bin?: string },
): Promise<ImportRun & { reused: boolean }> {
  const key = `${file.path}:${opts.itemsPerRequest}:${opts.timeoutSeconds}:${opts.bin ?? ''}`;
  const cached = importCache.get(key);
  if (cached && !opts.again) return { ...cached, reused: true };
  const redis = await benchRedis(settings);
  const prefix = benchPrefix();
  const scratch = await scratchDir('import');
  let rowsReadAtStop: number | undefined;
  let batchLog: Record<string, unknown> | undefined;
  try {
    note(
      `cashout import of ${num(file.rows)} rows (timeout ${opts.timeoutSeconds} s, Redis ${redis.private ? 'private' : redis.url}, prefix ${prefix})`,
    );
    const cpuBefore = redis.private ? (await redisFigures(redis.url)).cpuSeconds : undefined;
    const m: Measured = await runMeasured(['import', file.path], {
      env: importEnv(redis.url, prefix, `${scratch.dir}/reports`, opts.itemsPerRequest),
      cwd: scratch.dir,
      timeoutMs: opts.timeoutSeconds * 1000,
      ...(opts.bin ? { bin: opts.bin } : {}),
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
      ...(m.cpuSeconds === undefined ? {} : { cpuSeconds: m.cpuSeconds }),
      exitCode: m.code,
      signal: m.signal,
      timedOut: m.timedOut,
      ...(queued ? { queuedRows: Number(queued[2]), requests: Number(queued[3]) } : {}),
      ...(typeof batchLog?.warnedRows === 'number' ? { warnedRows: batchLog.warnedRows } : {}),
      ...(typeof batchLog?.crossRowTableBytes === 'number'
        ? { crossRowTablesMB: batchLog.crossRowTableBytes / 1048576 }
        : {}),
      ...(queued ? {} : { rowsReadAtStop, rowsStagedAtStop }),
      ...(redis.private ? redisAfter(await redisFigures(redis.url), cpuBefore) : {}),
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

/** The import's Redis figures from a reading after it (`after`) and the CPU seconds read before it. */
function redisAfter(
  after: { usedMB?: number; cpuSeconds?: number },
  cpuBefore: number | undefined,
): Pick<ImportRun, 'redisUsedMB' | 'redisCpuSeconds'> {
  return {
    ...(after.usedMB === undefined ? {} : { redisUsedMB: after.usedMB }),
    ...(after.cpuSeconds === undefined || cpuBefore === undefined
      ? {}
      : { redisCpuSeconds: after.cpuSeconds - cpuBefore }),
  };
}

/** CPU seconds of an import run, its process's and Redis's, or NaN when either is unknown. */
function importCpu(r: ImportRun): number {
  return r.cpuSeconds === undefined || r.redisCpuSeconds === undefined ? NaN : r.cpuSeconds + r.redisCpuSeconds;
}

/** The table row of an import run: its step, rows, seconds, rows/s, `ratioToRaw`, peak RSS and outcome. */
function importRow(step: string, r: ImportRun, ratioToRaw: number): string[] {
  return [
    step,
    num(r.queuedRows ?? r.rowsStagedAtStop),
    num(r.seconds, 1),
    num(r.rowsPerSecond),
    ratio(ratioToRaw, 1),
    num(r.peakRssMB),
    importOutcome(r),
  ];
}

/** Describes an import run's outcome in a few words. */
export function importOutcome(r: ImportRun): string {
  if (r.queuedRows !== undefined) return `queued ${num(r.queuedRows)} rows`;
  if (r.timedOut)
    return `STOPPED after ${num(r.seconds)} s: ${num(r.rowsStagedAtStop ?? r.rowsReadAtStop)} rows staged`;
  return `FAILED (exit ${r.exitCode ?? r.signal})`;
}

/** One `cashout validate` run: its time, rows and outcome. */
interface ValidateRun {
  readonly seconds: number;
  readonly rows: number | undefined;
  readonly valid: number | undefined;
  readonly invalid: number | undefined;
  readonly peakRssMB: number | undefined;
  readonly rssSource: string;
  readonly code: number | null;
  readonly signal: string | null;
  /** The last lines of its output. */
  readonly output: string;
}

/** Runs `cashout validate <path>` once, in a scratch folder. */
async function measureValidate(path: string): Promise<ValidateRun> {
  const scratch = await scratchDir('validate');
  try {
    const m = await runMeasured(['validate', path], { env: {}, cwd: scratch.dir, timeoutMs: 600_000 });
    const counts = /: (\d+) rows, (\d+) valid, (\d+) invalid/.exec(m.stdout);
    return {
      seconds: m.seconds,
      rows: counts ? Number(counts[1]) : undefined,
      valid: counts ? Number(counts[2]) : undefined,
      invalid: counts ? Number(counts[3]) : undefined,
      peakRssMB: m.peakRssMB,
      rssSource: m.rssSource,
      code: m.code,
      signal: m.signal,
      output: m.stdout.trim().split('\n').slice(-3).join('\n'),
    };
  } finally {
    await scratch.cleanup();
  }
}

/** One round of the import benchmark: (a), (b), (c) and, with a baseline, (d) one after the other. */
interface ImportRound {
  readonly raw: Awaited<ReturnType<typeof rawParse>>;
  readonly validate: ValidateRun;
  readonly import: ImportRun;
  readonly baseline?: ImportRun;
}

function rateOf(rows: number | undefined, seconds: number): number | undefined {
  return rows === undefined || seconds <= 0 ? undefined : rows / seconds;
}

/** The median of `values` (the mean of the middle two for an even count); NaN values sort last. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => (Number.isNaN(a) ? 1 : Number.isNaN(b) ? -1 : a - b));
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The item of `items` whose `by` is the median (the lower middle one for an even count). */
function medianBy<T>(items: readonly T[], by: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => by(a) - by(b));
  return sorted[(sorted.length - 1) >> 1]!;
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

  const rounds: ImportRound[] = [];
  for (let round = 1; round <= opts.rounds; round++) {
    const of = opts.rounds > 1 ? ` (round ${round} of ${opts.rounds})` : '';
    note(`(a) csv-parse with columns: true${of}`);
    const raw = await rawParse(file.path);
    note(`(b) cashout validate${of}`);
    const validate = await measureValidate(file.path);
    // (c) this checkout's import; (d) the baseline's, from its folder.
    const importOf = (step: string, dir?: string) => {
      note(`${step} cashout import${dir ? ` of the baseline ${dir}` : ''}${of}`);
      return measureImport(file, settings, {
        timeoutSeconds: opts.importTimeoutSeconds,
        itemsPerRequest: opts.itemsPerRequest,
        again: true,
        ...(dir ? { bin: join(dir, 'bin', 'cashout.js') } : {}),
      });
    };
    // With a baseline, every other round runs it first: neither import always follows the other.
    let imp: ImportRun;
    let baseline: ImportRun | undefined;
    if (opts.baseline && round % 2 === 0) {
      baseline = await importOf('(d)', opts.baseline);
      imp = await importOf('(c)');
    } else {
      imp = await importOf('(c)');
      if (opts.baseline) baseline = await importOf('(d)', opts.baseline);
    }
    rounds.push({ raw, validate, import: imp, ...(baseline ? { baseline } : {}) });
  }
  // Each step's median round (by its time), and the median of the rounds' ratios to (a).
  const raw = medianBy(rounds, (r) => r.raw.seconds).raw;
  const validate = medianBy(rounds, (r) => r.validate.seconds).validate;
  const imp = medianBy(rounds, (r) => r.import.seconds).import;
  const validateRatio = median(
    rounds.map((r) => (rateOf(r.validate.rows, r.validate.seconds) ?? NaN) / r.raw.rowsPerSecond),
  );
  const importRatio = median(rounds.map((r) => (r.import.rowsPerSecond ?? NaN) / r.raw.rowsPerSecond));
  const validateRows = validate.rows;
  const base = opts.baseline ? medianBy(rounds, (r) => r.baseline!.seconds).baseline! : undefined;
  const baseRatio = median(rounds.map((r) => (r.baseline?.rowsPerSecond ?? NaN) / r.raw.rowsPerSecond));
  // This import's time over the baseline's in the same round, the median of the rounds.
  const vsBaseline = median(rounds.map((r) => (r.baseline ? r.import.seconds / r.baseline.seconds : NaN)));
  // The same in CPU seconds (NaN without /usr/bin/time or a private Redis).
  const cpuVsBaseline = median(rounds.map((r) => (r.baseline ? importCpu(r.import) / importCpu(r.baseline) : NaN)));
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
      num(rateOf(validateRows, validate.seconds)),
      ratio(validateRatio, 1),
      num(validate.peakRssMB),
      validate.valid !== undefined
        ? `exit ${validate.code}, ${validate.valid} valid, ${validate.invalid} invalid`
        : `FAILED (exit ${validate.code ?? validate.signal})`,
    ],
    importRow(`(c) cashout import (${opts.itemsPerRequest} items/request)`, imp, importRatio),
    ...(base ? [importRow("(d) the baseline's cashout import", base, baseRatio)] : []),
  ];
  const table = printTable(
    `import — ${num(opts.rows)} rows, ${num(file.bytes / 1e6, 1)} MB, seed ${settings.seed}` +
      (opts.rounds > 1 ? `, median of ${opts.rounds} rounds` : ''),
    ['step', 'rows', 'seconds', 'rows/s', 'vs (a)', 'peak RSS MiB', 'outcome'],
    rows,
  );
  if (opts.rounds > 1)
    process.stdout.write(
      `each round, (a) s / (c) s / (c) vs (a): ${rounds
        .map(
          (r) =>
            `${num(r.raw.seconds, 1)} / ${num(r.import.seconds, 1)} / ${ratio(r.import.rowsPerSecond, r.raw.rowsPerSecond)}`,
        )
        .join(', ')}\n`,
    );
  if (imp.redisUsedMB !== undefined)
    process.stdout.write(
      `Redis memory after the import: ${num(imp.redisUsedMB)} MiB` +
        (imp.redisCpuSeconds === undefined ? '\n' : `; Redis CPU during it: ${num(imp.redisCpuSeconds, 1)} s\n`),
    );
  if (base) {
    process.stdout.write(
      `(c) against (d), the baseline ${opts.baseline}: each round (c) s / (d) s ${rounds
        .map((r) => `${num(r.import.seconds, 1)} / ${num(r.baseline!.seconds, 1)}`)
        .join(', ')}; the median of the rounds' (c)/(d) is ${num(vsBaseline, 3)}\n`,
    );
    if (base.redisCpuSeconds !== undefined)
      process.stdout.write(`Redis CPU during the baseline's import: ${num(base.redisCpuSeconds, 1)} s\n`);
    if (!Number.isNaN(cpuVsBaseline))
      process.stdout.write(
        `(c) against (d) in CPU seconds (the import process's threads plus Redis), which other work on the machine moves less than time: each round ${rounds
          .map((r) => `${num(importCpu(r.import), 1)} / ${num(importCpu(r.baseline!), 1)}`)
          .join(', ')}; the median of the rounds' (c)/(d) is ${num(cpuVsBaseline, 3)}\n`,
      );
  }
  if (rounds.some((r) => r.import.timedOut))
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
      rowsPerSecond: rateOf(validateRows, validate.seconds) ?? null,
      peakRssMB: validate.peakRssMB,
      rssSource: validate.rssSource,
      exitCode: validate.code,
      output: validate.output,
    },
    import: imp,
    ratios: { validate: validateRatio, import: importRatio },
    ...(base
      ? {
          baseline: {
            dir: opts.baseline,
            import: base,
            ratio: baseRatio,
            importOverBaseline: vsBaseline,
            importCpuOverBaseline: Number.isNaN(cpuVsBaseline) ? null : cpuVsBaseline,
          },
        }
      : {}),
    rounds: rounds.map((r) => ({
      rawSeconds: r.raw.seconds,
      validateSeconds: r.validate.seconds,
      importSeconds: r.import.seconds,
      importRatio: (r.import.rowsPerSecond ?? NaN) / r.raw.rowsPerSecond,
      importRedisCpuSeconds: r.import.redisCpuSeconds ?? null,
      importCpuSeconds: r.import.cpuSeconds ?? null,
      ...(r.baseline
        ? {
            baselineSeconds: r.baseline.seconds,
            baselineRatio: (r.baseline.rowsPerSecond ?? NaN) / r.raw.rowsPerSecond,
            baselineRedisCpuSeconds: r.baseline.redisCpuSeconds ?? null,
            baselineCpuSeconds: r.baseline.cpuSeconds ?? null,
          }
        : {}),
    })),
    table,
  };
  await saveResults('import', result);
  return result;
}
