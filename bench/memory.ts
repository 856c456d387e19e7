/**
 * `memory`: peak resident memory of the full `cashout import` for a small and a large file, and
 * their ratio. An import that streams holds about the same memory whatever the row count; a ratio
 * far above 1 means something grows with the file. The table also shows the bytes the checks
 * across rows hold at the end (from the import's "batch queued" log line): they grow with the
 * rows by design, 12 to 15 bytes a row per check.
 */
import { measureImport, importOutcome, type ImportRun } from './import.js';
import { note, num, payoutFile, printTable, ratio, saveResults, type BenchSettings } from './lib.js';

export interface MemoryBenchOptions {
  readonly sizes: readonly number[];
  readonly importTimeoutSeconds: number;
  readonly itemsPerRequest: number;
}

export const MEMORY_DEFAULTS: MemoryBenchOptions = {
  sizes: [10_000, 1_000_000],
  importTimeoutSeconds: 420,
  itemsPerRequest: 100,
};

export async function memoryBench(
  settings: BenchSettings,
  opts: MemoryBenchOptions = MEMORY_DEFAULTS,
): Promise<Record<string, unknown>> {
  const runs: (ImportRun & { reused: boolean; bytes: number })[] = [];
  for (const rows of opts.sizes) {
    const file = await payoutFile(rows, settings.seed);
    if (file.generated) note(`generated ${file.path} in ${num(file.generated.seconds, 1)} s`);
    const r = await measureImport(file, settings, {
      timeoutSeconds: opts.importTimeoutSeconds,
      itemsPerRequest: opts.itemsPerRequest,
    });
    if (r.reused) note(`${num(rows)} rows: reusing the import measured earlier in this run`);
    runs.push({ ...r, bytes: file.bytes });
  }
  const smallest = runs[0]!;
  const table = printTable(
    `memory — peak RSS of cashout import (${opts.itemsPerRequest} items/request), seed ${settings.seed}`,
    [
      'rows',
      'file MB',
      'seconds',
      'peak RSS MiB',
      'vs smallest',
      'of which cross-row tables MiB',
      'RSS source',
      'outcome',
    ],
    runs.map((r) => [
      num(r.rows),
      num(r.bytes / 1e6, 1),
      num(r.seconds, 1),
      num(r.peakRssMB),
      ratio(r.peakRssMB, smallest.peakRssMB),
      num(r.crossRowTablesMB, 1),
      r.rssSource + (r.reused ? ' (same run as import)' : ''),
      importOutcome(r),
    ]),
  );
  const largest = runs[runs.length - 1]!;
  if (
    largest.crossRowTablesMB !== undefined &&
    smallest.crossRowTablesMB !== undefined &&
    smallest.peakRssMB !== undefined &&
    largest.peakRssMB !== undefined
  ) {
    process.stdout.write(
      `From ${num(smallest.rows)} to ${num(largest.rows)} rows peak RSS grows by ${num(largest.peakRssMB - smallest.peakRssMB)} MiB, of which ${num(largest.crossRowTablesMB - smallest.crossRowTablesMB)} MiB are the tables of the checks across rows (a reference used twice, possible duplicates, wallet totals).\n`,
    );
  }
  if (largest.timedOut)
    process.stdout.write(
      `NOTE: the ${num(largest.rows)}-row import was stopped after ${num(largest.seconds)} s; its peak RSS is up to that moment.\n`,
    );
  const result = {
    options: opts,
    seed: settings.seed,
    runs,
    peakRatio:
      largest.peakRssMB !== undefined && smallest.peakRssMB !== undefined
        ? largest.peakRssMB / smallest.peakRssMB
        : null,
    table,
  };
  await saveResults('memory', result);
  return result;
}
