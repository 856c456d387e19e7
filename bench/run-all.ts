/**
 * `npm run bench` = `node dist/bench/run-all.js [import|memory|submit|workers ...] [options]`.
 * Without names every benchmark runs, in that order. Each prints a table and writes
 * `bench/results/<name>-<timestamp>.json`.
 *
 * Options and exit codes: `USAGE` below (`npm run bench -- --help`); smaller sizes are handy to try
 * the harness.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { importBench, IMPORT_DEFAULTS } from './import.js';
import { memoryBench, MEMORY_DEFAULTS } from './memory.js';
import { submitBench, SUBMIT_DEFAULTS } from './submit.js';
import { workersBench, WORKERS_DEFAULTS } from './workers.js';
import { codeVersion, dropPayoutFiles, machineInfo, note, type BenchSettings } from './lib.js';

const NAMES = ['import', 'memory', 'submit', 'workers'] as const;
type Name = (typeof NAMES)[number];

/** A wrong option value: the run stops with its message and exit code 2. */
class UsageError extends Error {}

/**
 * Whole numbers separated by commas, each at least `min` (`latencies` may be 0; sizes, rounds,
 * worker counts and the timeout at least 1); `fallback` when the option is absent.
 */
function list(value: string | undefined, fallback: readonly number[], what: string, min = 1): number[] {
  if (value === undefined) return [...fallback];
  const out = value.split(',').map((v) => Number(v.trim().replace(/_/g, '')));
  if (value.trim() === '' || out.some((n) => !Number.isInteger(n) || n < min))
    throw new UsageError(
      `${what} needs whole numbers of at least ${min}, separated by commas (got ${JSON.stringify(value)})`,
    );
  return out;
}

/** One whole number of at least `min`. */
function one(value: string | undefined, fallback: number, what: string, min = 1): number {
  if (value === undefined) return fallback;
  const n = Number(value.trim().replace(/_/g, ''));
  if (value.trim() === '' || !Number.isInteger(n) || n < min)
    throw new UsageError(`${what} needs a whole number of at least ${min} (got ${JSON.stringify(value)})`);
  return n;
}

const USAGE = `Usage: npm run bench -- [import|memory|submit|workers ...] [options]
Without names every benchmark runs, in that order. Each prints a table and writes
bench/results/<name>-<timestamp>.json. Run it on a quiet machine: the figures are ratios of steps
measured side by side, and a busy machine moves them.

Options:
  --seed N                 payout file seed (default 42); files are cached in the temporary folder
  --import-rows N          rows of the import benchmark (default 1,000,000)
  --import-timeout S       longest \`cashout import\` may run, seconds (default 420)
  --import-rounds N        times the import benchmark's steps run; medians are shown (default 3)
  --import-baseline DIR    another build of bulk-cashout (bin/cashout.js with its dist/ built, e.g. an
                           earlier commit): each round also runs its import, after this one's or,
                           every other round, before it, and the medians of their time ratios and
                           (with /usr/bin/time) their CPU-second ratios are shown
  --memory-rows A,B        file sizes of the memory benchmark (default 10000,1000000)
  --submit-rows N          rows of the submit benchmark (default 100,000)
  --latencies A,B          sandbox latencies of the submit benchmark, ms (default 0,50)
  --workers-rows N         rows of the workers benchmark (default 100,000)
  --workers A,B,C          worker counts (default 1,2,4)
  --drop-files             delete the generated payout files at the end
  -h, --help               show this help

Redis: a private redis-server per measurement, unless BENCH_REDIS_URL names one to use (keys then
live under a fresh {cashout-bench-…} prefix and are deleted afterwards).
Exit codes: 0 every benchmark ran, 1 one failed, 2 wrong usage.
`;

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        seed: { type: 'string' },
        'import-rows': { type: 'string' },
        'import-timeout': { type: 'string' },
        'import-rounds': { type: 'string' },
        'import-baseline': { type: 'string' },
        'memory-rows': { type: 'string' },
        'submit-rows': { type: 'string' },
        latencies: { type: 'string' },
        'workers-rows': { type: 'string' },
        workers: { type: 'string' },
        'drop-files': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    process.stderr.write(
      `${(err as Error).message.split('\n')[0]!.split('. ')[0]!.replace(/\.$/, '')}; see npm run bench -- --help\n`,
    );
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const unknown = positionals.filter((p) => !(NAMES as readonly string[]).includes(p));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; choose from ${NAMES.join(', ')}\n`);
    return 2;
  }
  const chosen: Name[] = positionals.length > 0 ? (positionals as Name[]) : [...NAMES];
  const settings: BenchSettings = {
    seed: one(values.seed, 42, '--seed', 0),
    ...(process.env.BENCH_REDIS_URL ? { redisUrl: process.env.BENCH_REDIS_URL } : {}),
    dropFiles: values['drop-files'] === true,
  };
  // Every option value is checked before anything runs.
  const baseline = values['import-baseline'];
  if (baseline !== undefined && !existsSync(join(baseline, 'bin', 'cashout.js'))) {
    process.stderr.write(
      `--import-baseline ${JSON.stringify(baseline)} holds no bin/cashout.js; give the folder of another bulk-cashout, built (npm ci)\n`,
    );
    return 2;
  }
  const importTimeoutSeconds = one(values['import-timeout'], IMPORT_DEFAULTS.importTimeoutSeconds, '--import-timeout');
  const runs: Record<Name, () => Promise<unknown>> = {
    import: (
      (o) => () =>
        importBench(settings, o)
    )({
      ...IMPORT_DEFAULTS,
      rows: one(values['import-rows'], IMPORT_DEFAULTS.rows, '--import-rows'),
      rounds: one(values['import-rounds'], IMPORT_DEFAULTS.rounds, '--import-rounds'),
      importTimeoutSeconds,
      ...(baseline === undefined ? {} : { baseline: resolve(baseline) }),
    }),
    memory: (
      (o) => () =>
        memoryBench(settings, o)
    )({
      ...MEMORY_DEFAULTS,
      sizes: list(values['memory-rows'], MEMORY_DEFAULTS.sizes, '--memory-rows'),
      importTimeoutSeconds,
    }),
    submit: (
      (o) => () =>
        submitBench(settings, o)
    )({
      ...SUBMIT_DEFAULTS,
      rows: one(values['submit-rows'], SUBMIT_DEFAULTS.rows, '--submit-rows'),
      latenciesMs: list(values.latencies, SUBMIT_DEFAULTS.latenciesMs, '--latencies', 0),
    }),
    workers: (
      (o) => () =>
        workersBench(settings, o)
    )({
      ...WORKERS_DEFAULTS,
      rows: one(values['workers-rows'], WORKERS_DEFAULTS.rows, '--workers-rows'),
      workers: list(values.workers, WORKERS_DEFAULTS.workers, '--workers'),
    }),
  };
  const m = machineInfo();
  const v = codeVersion();
  process.stdout.write(`machine: ${m.cpu}, ${m.cores} cores, ${m.totalMemoryMB} MiB, node ${m.node}, ${m.platform}\n`);
  if (v)
    process.stdout.write(
      `code: ${v.commit.slice(0, 12)}${v.uncommittedChanges ? ' with uncommitted changes in src/, jobs/ or bin/' : ''}\n`,
    );
  let failed = 0;
  try {
    for (const name of chosen) {
      const t0 = performance.now();
      try {
        await runs[name]();
      } catch (err) {
        failed++;
        process.stderr.write(`benchmark ${name} failed: ${(err as Error).stack ?? String(err)}\n`);
      }
      note(`${name} took ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    if (settings.dropFiles) await dropPayoutFiles();
  }
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main().catch((err: unknown) => {
  if (!(err instanceof UsageError)) throw err;
  process.stderr.write(`${err.message}; see npm run bench -- --help\n`);
  return 2;
});
