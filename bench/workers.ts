/**
 * `workers`: the same file paid by 1, 2 and 4 `cashout worker` processes against a sandbox with a
 * fixed latency. Each round: `cashout import` into a fresh prefix, start N workers, poll the
 * ledger until the batch is final, SIGTERM the workers.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { openLedger } from '../src/ledger/index.js';
import { importEnv } from './import.js';
import {
  benchPrefix,
  benchRedis,
  deleteKeys,
  note,
  num,
  payoutFile,
  printTable,
  ratio,
  runMeasured,
  saveResults,
  scratchDir,
  sleep,
  startMeasured,
  startSandboxProcess,
  waitForPid,
  type BenchSettings,
  type Measured,
} from './lib.js';

export interface WorkersBenchOptions {
  readonly rows: number;
  readonly workers: readonly number[];
  readonly latencyMs: number;
  readonly concurrency: number;
  readonly itemsPerRequest: number;
  readonly timeoutSeconds: number;
}

export const WORKERS_DEFAULTS: WorkersBenchOptions = {
  rows: 100_000,
  workers: [1, 2, 4],
  latencyMs: 50,
  concurrency: 50,
  itemsPerRequest: 100,
  timeoutSeconds: 150,
};

interface WorkersRound {
  workers: number;
  importSeconds: number;
  /** From the first worker's start to the batch being final in the ledger. */
  secondsToFinal: number | undefined;
  rowsPerSecond: number | undefined;
  /** From SIGTERM until every worker exited. */
  stopSeconds: number;
  batchState: string | undefined;
  accepted: number | undefined;
  sandboxCreatedItems: number;
  sandboxReceived: number;
  /** Requests sent by each worker process (ledger `sent_by`). */
  sentByWorker: number[];
  workerExitCodes: (number | null)[];
  workerPeakRssMB: (number | undefined)[];
  timedOut: boolean;
}

export async function workersBench(
  settings: BenchSettings,
  opts: WorkersBenchOptions = WORKERS_DEFAULTS,
): Promise<Record<string, unknown>> {
  note(
    `workers: ${num(opts.rows)} rows, ${opts.workers.join('/')} workers, latency ${opts.latencyMs} ms, concurrency ${opts.concurrency} per worker`,
  );
  const file = await payoutFile(opts.rows, settings.seed);
  const sandbox = await startSandboxProcess(opts.latencyMs);
  const rounds: WorkersRound[] = [];
  try {
    for (const n of opts.workers) {
      const redis = await benchRedis(settings);
      const prefix = benchPrefix();
      const scratch = await scratchDir('workers');
      const conn = new Redis(redis.url, { maxRetriesPerRequest: 3 });
      const children: ReturnType<typeof startMeasured>[] = [];
      try {
        await sandbox.reset();
        const env = {
          ...importEnv(redis.url, prefix, join(scratch.dir, 'reports'), opts.itemsPerRequest),
          CASHOUT_API_BASE_URL: sandbox.url,
          CASHOUT_API_TOKEN: sandbox.token,
          CASHOUT_CONCURRENCY: String(opts.concurrency),
        };
        note(`${n} worker(s): cashout import`);
        const imp = await runMeasured(['import', file.path], { env, cwd: scratch.dir, timeoutMs: 300_000 });
        const batchId = /Batch ([0-9a-f]{16}) queued/.exec(imp.stdout)?.[1];
        if (!batchId) throw new Error(`cashout import failed (exit ${imp.code}): ${imp.stderrTail.slice(-2000)}`);
        const ledger = openLedger(conn, prefix);
        note(`${n} worker(s): starting them, waiting for batch ${batchId} to be final`);
        const t0 = performance.now();
        for (let i = 0; i < n; i++)
          children.push(
            startMeasured(['worker'], { env, cwd: scratch.dir, timeoutMs: (opts.timeoutSeconds + 60) * 1000 }),
          );
        await Promise.all(children.map((c) => waitForPid(c)));
        let secondsToFinal: number | undefined;
        let batchState: string | undefined;
        const deadline = Date.now() + opts.timeoutSeconds * 1000;
        for (;;) {
          const b = await ledger.getBatch(batchId);
          batchState = b?.state;
          if (b && b.open === 0 && (b.state === 'finished' || b.state === 'needs_reconciliation')) {
            secondsToFinal = (performance.now() - t0) / 1000;
            break;
          }
          if (Date.now() > deadline) break;
          await sleep(50);
        }
        const tStop = performance.now();
        for (const c of children) c.signal('SIGTERM');
        const ended: Measured[] = await Promise.all(children.map((c) => c.done));
        const stopSeconds = (performance.now() - tStop) / 1000;
        const last = await ledger.lastSeq(batchId);
        const pipe = conn.pipeline();
        for (let s = 1; s <= last; s++) pipe.hget(`${prefix}:batch:${batchId}:req:${s}`, 'sent_by');
        const sentBy = new Map<string, number>();
        for (const [, v] of (await pipe.exec()) ?? [])
          if (typeof v === 'string') sentBy.set(v, (sentBy.get(v) ?? 0) + 1);
        const summaryText = await readFile(join(scratch.dir, 'reports', batchId, 'summary.json'), 'utf8').catch(
          () => undefined,
        );
        const accepted = summaryText
          ? (JSON.parse(summaryText) as { byStatus: { accepted: { rows: number } } }).byStatus.accepted.rows
          : undefined;
        const created = await sandbox.created();
        rounds.push({
          workers: n,
          importSeconds: imp.seconds,
          secondsToFinal,
          rowsPerSecond: secondsToFinal !== undefined ? (accepted ?? created.items) / secondsToFinal : undefined,
          stopSeconds,
          batchState,
          accepted,
          sandboxCreatedItems: created.items,
          sandboxReceived: created.received,
          sentByWorker: [...sentBy.values()].sort((a, b) => b - a),
          workerExitCodes: ended.map((e) => e.code),
          workerPeakRssMB: ended.map((e) => e.peakRssMB),
          timedOut: secondsToFinal === undefined,
        });
        note(`${n} worker(s): final after ${num(secondsToFinal, 1)} s`);
      } finally {
        // Anything still running after a failure is stopped hard.
        for (const c of children) if (!c.ended()) c.signal('SIGKILL');
        await Promise.all(children.map((c) => c.done.catch(() => undefined)));
        conn.disconnect();
        await deleteKeys(redis.url, prefix).catch(() => undefined);
        await redis.stop();
        await scratch.cleanup();
      }
    }
  } finally {
    await sandbox.stop();
  }
  const one = rounds.find((r) => r.workers === 1)?.rowsPerSecond;
  const table = printTable(
    `workers — ${num(opts.rows)} rows, latency ${opts.latencyMs} ms, ${opts.itemsPerRequest} items/request, concurrency ${opts.concurrency} per worker, seed ${settings.seed}`,
    [
      'workers',
      'import s',
      'to final s',
      'rows/s',
      'vs 1 worker',
      'bound rows/s',
      'vs bound',
      'requests per worker',
      'stop s',
      'peak RSS MiB (each)',
      'outcome',
    ],
    rounds.map((r) => {
      const bound = (r.workers * opts.concurrency * opts.itemsPerRequest) / (opts.latencyMs / 1000);
      return [
        String(r.workers),
        num(r.importSeconds, 1),
        num(r.secondsToFinal, 1),
        num(r.rowsPerSecond),
        ratio(r.rowsPerSecond, one),
        num(bound),
        ratio(r.rowsPerSecond, bound),
        r.sentByWorker.join('/'),
        num(r.stopSeconds, 1),
        r.workerPeakRssMB.map((x) => num(x)).join('/'),
        `${r.timedOut ? `NOT FINAL after ${opts.timeoutSeconds} s (${r.batchState})` : r.batchState}; ${num(r.accepted)} accepted; sandbox created ${num(r.sandboxCreatedItems)} from ${num(r.sandboxReceived)} POSTs; exits ${r.workerExitCodes.join('/')}`,
      ];
    }),
  );
  const result = { options: opts, seed: settings.seed, rounds, table };
  await saveResults('workers', result);
  return result;
}
