/**
 * `submit`: end to end, `cashout run <file>` against a sandbox in its own process, at a fixed
 * sandbox latency (0 ms, then 50 ms), next to a plain loop posting the same request bodies one at
 * a time, and next to a bare loop posting them `concurrency` at a time (no queue, no ledger: what
 * this machine and the sandbox allow at best). Rates are compared with the bound
 * `concurrency × items per request / latency` and with the sequential loop.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Pool, request } from 'undici';
import { loadBankList } from '../src/contract/supported-banks.js';
import { scanFile } from '../src/import/scan-file.js';
import { createGrouper } from '../src/batch/group-items.js';
import { WITHDRAWAL_PATH, type WithdrawalRequestBody } from '../src/contract/withdrawal-api.js';
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
  runMeasured,
  saveResults,
  scratchDir,
  startSandboxProcess,
  type BenchSettings,
  type SandboxProcess,
} from './lib.js';

export interface SubmitBenchOptions {
  readonly rows: number;
  readonly latenciesMs: readonly number[];
  readonly concurrency: number;
  readonly itemsPerRequest: number;
  readonly timeoutSeconds: number;
}

export const SUBMIT_DEFAULTS: SubmitBenchOptions = {
  rows: 100_000,
  latenciesMs: [0, 50],
  concurrency: 50,
  itemsPerRequest: 100,
  timeoutSeconds: 240,
};

/** The request bodies `cashout run` builds from the file: valid rows in file order, `itemsPerRequest` per request. */
export async function buildBodies(path: string, itemsPerRequest: number): Promise<WithdrawalRequestBody[]> {
  const banks = loadBankList();
  const grouper = createGrouper(itemsPerRequest);
  const bodies: WithdrawalRequestBody[] = [];
  await scanFile(
    path,
    { banks, walletCountries: ['EG'], maxFieldLength: 255 },
    {
      onItem(item) {
        const r = grouper.add(item);
        if (r) bodies.push(r.body);
      },
      onInvalid(row) {
        throw new Error(`line ${row.line} of ${path} is invalid`);
      },
    },
  );
  const last = grouper.finish();
  if (last) bodies.push(last.body);
  return bodies;
}

/** Posts each body in turn, waiting for each answer; returns seconds and how many answered 200. */
export async function postSequentially(
  sandbox: SandboxProcess,
  bodies: readonly WithdrawalRequestBody[],
): Promise<{ seconds: number; ok: number; other: Record<string, number> }> {
  const url = `${sandbox.url}${WITHDRAWAL_PATH}`;
  const headers = {
    authorization: `Bearer ${sandbox.token}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  let ok = 0;
  const other: Record<string, number> = {};
  const t0 = performance.now();
  for (const body of bodies) {
    const res = await request(url, { method: 'POST', headers, body: JSON.stringify(body) });
    await res.body.text();
    if (res.statusCode === 200) ok++;
    else other[res.statusCode] = (other[res.statusCode] ?? 0) + 1;
  }
  return { seconds: (performance.now() - t0) / 1000, ok, other };
}

/**
 * Posts every body with `concurrency` requests in flight over a pool of as many connections,
 * bodies serialized beforehand; nothing is queued or recorded. Returns seconds and how many
 * answered 200.
 */
export async function postConcurrently(
  sandbox: SandboxProcess,
  bodies: readonly WithdrawalRequestBody[],
  concurrency: number,
): Promise<{ seconds: number; ok: number; other: Record<string, number> }> {
  const serialized = bodies.map((b) => Buffer.from(JSON.stringify(b)));
  const headers = {
    authorization: `Bearer ${sandbox.token}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  const pool = new Pool(sandbox.url, { connections: concurrency });
  let ok = 0;
  const other: Record<string, number> = {};
  let next = 0;
  try {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < serialized.length) {
          const body = serialized[next++]!;
          const res = await pool.request({ path: WITHDRAWAL_PATH, method: 'POST', headers, body });
          await res.body.text();
          if (res.statusCode === 200) ok++;
          else other[res.statusCode] = (other[res.statusCode] ?? 0) + 1;
        }
      }),
    );
    return { seconds: (performance.now() - t0) / 1000, ok, other };
  } finally {
    await pool.close();
  }
}

/** Counts of summary.json by status. */
interface SummaryFacts {
  batchId: string;
  byStatus: Record<string, { rows: number }>;
  finishedAt: string | null;
  reportWrittenAt: string;
}

async function readSummary(reportsDir: string): Promise<SummaryFacts | undefined> {
  const dirs = await readdir(reportsDir).catch(() => [] as string[]);
  for (const d of dirs) {
    const text = await readFile(join(reportsDir, d, 'summary.json'), 'utf8').catch(() => undefined);
    if (text) return JSON.parse(text) as SummaryFacts;
  }
  return undefined;
}

interface LatencyResult {
  latencyMs: number;
  run: {
    seconds: number;
    rowsPerSecond: number;
    importSeconds: number | undefined;
    /** "batch queued" log line to the batch's `finishedAt` in the ledger. */
    submitSeconds: number | undefined;
    submitRowsPerSecond: number | undefined;
    /** Batch final in the ledger to `reportWrittenAt` of summary.json. */
    reportSeconds: number | undefined;
    /** `reportWrittenAt` to process exit: summary printed, queues and connections closed. */
    exitSeconds: number | undefined;
    peakRssMB: number | undefined;
    exitCode: number | null;
    timedOut: boolean;
    accepted: number | undefined;
    notAccepted: Record<string, number>;
    sandboxCreatedItems: number;
    sandboxReceived: number;
    stdout: string;
  };
  sequential: {
    seconds: number;
    rowsPerSecond: number;
    ok: number;
    other: Record<string, number>;
    sandboxCreatedItems: number;
  };
  /** The bare concurrent loop (no queue, no ledger). */
  concurrent: {
    seconds: number;
    rowsPerSecond: number;
    ok: number;
    other: Record<string, number>;
    sandboxCreatedItems: number;
  };
  boundRowsPerSecond: number | null;
}

export async function submitBench(
  settings: BenchSettings,
  opts: SubmitBenchOptions = SUBMIT_DEFAULTS,
): Promise<Record<string, unknown>> {
  note(
    `submit: ${num(opts.rows)} rows, latencies ${opts.latenciesMs.join(', ')} ms, concurrency ${opts.concurrency}, ${opts.itemsPerRequest} items/request`,
  );
  const file = await payoutFile(opts.rows, settings.seed);
  note('building the request bodies for the sequential loop');
  const bodies = await buildBodies(file.path, opts.itemsPerRequest);
  const results: LatencyResult[] = [];
  for (const latencyMs of opts.latenciesMs) {
    const sandbox = await startSandboxProcess(latencyMs);
    const redis = await benchRedis(settings);
    const prefix = benchPrefix();
    const scratch = await scratchDir('submit');
    try {
      note(
        `latency ${latencyMs} ms: cashout run (sandbox ${sandbox.url}, Redis ${redis.private ? 'private' : redis.url}, prefix ${prefix})`,
      );
      const reportsDir = join(scratch.dir, 'reports');
      let queuedAt: number | undefined;
      const startedAt = Date.now();
      const m = await runMeasured(['run', file.path], {
        env: {
          REDIS_URL: redis.url,
          CASHOUT_REDIS_PREFIX: prefix,
          CASHOUT_API_BASE_URL: sandbox.url,
          CASHOUT_API_TOKEN: sandbox.token,
          CASHOUT_CONCURRENCY: String(opts.concurrency),
          CASHOUT_ITEMS_PER_REQUEST: String(opts.itemsPerRequest),
          CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
          CASHOUT_REPORTS_DIR: reportsDir,
        },
        cwd: scratch.dir,
        timeoutMs: opts.timeoutSeconds * 1000,
        onStderrLine: (line) => {
          const l = logLine(line);
          if (l?.msg === 'batch queued' && typeof l.time === 'number') queuedAt = l.time;
        },
      });
      const endedAt = startedAt + m.seconds * 1000;
      const summary = await readSummary(reportsDir);
      const accepted = summary?.byStatus.accepted?.rows;
      const notAccepted: Record<string, number> = {};
      for (const [k, v] of Object.entries(summary?.byStatus ?? {}))
        if (k !== 'accepted' && v.rows > 0) notAccepted[k] = v.rows;
      const createdByRun = await sandbox.created();
      const finishedAt = summary?.finishedAt ? Date.parse(summary.finishedAt) : undefined;
      const submitSeconds =
        queuedAt !== undefined && finishedAt !== undefined ? (finishedAt - queuedAt) / 1000 : undefined;
      const writtenAt = summary?.reportWrittenAt ? Date.parse(summary.reportWrittenAt) : undefined;
      const reportSeconds =
        finishedAt !== undefined && writtenAt !== undefined ? (writtenAt - finishedAt) / 1000 : undefined;
      const exitSeconds = writtenAt !== undefined ? (endedAt - writtenAt) / 1000 : undefined;
      note(
        `latency ${latencyMs} ms: cashout run took ${num(m.seconds, 1)} s (exit ${m.code ?? m.signal}); sequential loop`,
      );
      await sandbox.reset();
      const seq = await postSequentially(sandbox, bodies);
      const createdBySeq = await sandbox.created();
      note(`latency ${latencyMs} ms: bare loop, ${opts.concurrency} at a time`);
      await sandbox.reset();
      const conc = await postConcurrently(sandbox, bodies, opts.concurrency);
      const createdByConc = await sandbox.created();
      results.push({
        latencyMs,
        run: {
          seconds: m.seconds,
          rowsPerSecond: (accepted ?? 0) / m.seconds,
          importSeconds: queuedAt !== undefined ? (queuedAt - startedAt) / 1000 : undefined,
          submitSeconds,
          submitRowsPerSecond: submitSeconds !== undefined ? (accepted ?? 0) / submitSeconds : undefined,
          reportSeconds,
          exitSeconds,
          peakRssMB: m.peakRssMB,
          exitCode: m.code,
          timedOut: m.timedOut,
          accepted,
          notAccepted,
          sandboxCreatedItems: createdByRun.items,
          sandboxReceived: createdByRun.received,
          stdout: m.stdout.trim(),
        },
        sequential: {
          seconds: seq.seconds,
          rowsPerSecond: createdBySeq.items / seq.seconds,
          ok: seq.ok,
          other: seq.other,
          sandboxCreatedItems: createdBySeq.items,
        },
        concurrent: {
          seconds: conc.seconds,
          rowsPerSecond: createdByConc.items / conc.seconds,
          ok: conc.ok,
          other: conc.other,
          sandboxCreatedItems: createdByConc.items,
        },
        boundRowsPerSecond: latencyMs > 0 ? (opts.concurrency * opts.itemsPerRequest) / (latencyMs / 1000) : null,
      });
    } finally {
      await deleteKeys(redis.url, prefix).catch(() => undefined);
      await redis.stop();
      await sandbox.stop();
      await scratch.cleanup();
    }
  }
  const table = printTable(
    `submit — ${num(opts.rows)} rows in ${num(bodies.length)} requests of ${opts.itemsPerRequest}, concurrency ${opts.concurrency}, seed ${settings.seed}`,
    ['latency', 'what', 'seconds', 'rows accepted', 'rows/s', 'vs bound', 'vs sequential', 'peak RSS MiB', 'note'],
    results.flatMap((r) => {
      const bound = r.boundRowsPerSecond ?? undefined;
      const runNote = `exit ${r.run.exitCode ?? 'killed'}${r.run.timedOut ? ', STOPPED (timeout)' : ''}; sandbox created ${num(r.run.sandboxCreatedItems)} items from ${num(r.run.sandboxReceived)} POSTs${Object.keys(r.run.notAccepted).length > 0 ? `; not accepted: ${JSON.stringify(r.run.notAccepted)}` : ''}`;
      return [
        [
          `${r.latencyMs} ms`,
          'cashout run, end to end',
          num(r.run.seconds, 1),
          num(r.run.accepted),
          num(r.run.rowsPerSecond),
          ratio(r.run.rowsPerSecond, bound),
          ratio(r.run.rowsPerSecond, r.sequential.rowsPerSecond),
          num(r.run.peakRssMB),
          runNote,
        ],
        ['', '  of which import', num(r.run.importSeconds, 1), '', '', '', '', '', 'start to "batch queued" log line'],
        [
          '',
          '  of which submit',
          num(r.run.submitSeconds, 1),
          '',
          num(r.run.submitRowsPerSecond),
          ratio(r.run.submitRowsPerSecond, bound),
          ratio(r.run.submitRowsPerSecond, r.sequential.rowsPerSecond),
          '',
          '"batch queued" to the batch final in the ledger',
        ],
        [
          '',
          '  of which report',
          num(r.run.reportSeconds, 1),
          '',
          '',
          '',
          '',
          '',
          'batch final to summary.json written (poll, worker close, report)',
        ],
        ['', '  of which exit', num(r.run.exitSeconds, 1), '', '', '', '', '', 'summary.json written to process exit'],
        [
          '',
          'sequential loop (undici)',
          num(r.sequential.seconds, 1),
          num(r.sequential.sandboxCreatedItems),
          num(r.sequential.rowsPerSecond),
          ratio(r.sequential.rowsPerSecond, bound),
          '1.00×',
          '',
          `${num(r.sequential.ok)} × 200${Object.keys(r.sequential.other).length > 0 ? `, others ${JSON.stringify(r.sequential.other)}` : ''}`,
        ],
        [
          '',
          `bare loop, ${opts.concurrency} at a time`,
          num(r.concurrent.seconds, 1),
          num(r.concurrent.sandboxCreatedItems),
          num(r.concurrent.rowsPerSecond),
          ratio(r.concurrent.rowsPerSecond, bound),
          ratio(r.concurrent.rowsPerSecond, r.sequential.rowsPerSecond),
          '',
          `no queue, no ledger: the most this machine and sandbox allow; ${num(r.concurrent.ok)} × 200${Object.keys(r.concurrent.other).length > 0 ? `, others ${JSON.stringify(r.concurrent.other)}` : ''}`,
        ],
        [
          '',
          'bound c × items / latency',
          '',
          '',
          num(bound),
          bound === undefined ? '' : '1.00×',
          '',
          '',
          bound === undefined ? 'no bound at 0 ms' : '',
        ],
      ];
    }),
  );
  const result = { options: opts, seed: settings.seed, requests: bodies.length, results, table };
  await saveResults('submit', result);
  return result;
}
