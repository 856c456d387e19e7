/**
 * The chaos run: a batch paid by several `cashout worker` processes against a faulty sandbox,
 * with workers killed (`kill -9`) and restarted at random moments, and optionally Redis itself
 * killed and restarted (append-only file on, so it comes back with what it acknowledged). Then
 * it checks the never-pay-twice, never-lose-a-row figures against what the sandbox really created.
 * Used by the chaos test (`npm test`) and by `npm run chaos` (larger, prints a table).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { parse } from 'csv-parse/sync';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { mulberry32 } from '../../src/sandbox/faults.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { startPrivateRedis, type PrivateRedis } from '../../src/queue/private-redis.js';
import { openLedger } from '../../src/ledger/index.js';
import { EXIT } from '../../src/errors.js';
import { runCli, ROOT } from './cli.js';
import { HEADER } from './pipeline.js';
import { requestsInState } from '../../src/results/write-reconciliation.js';

/** Settings of one chaos run. */
export interface ChaosOptions {
  readonly rows: number;
  readonly workers: number;
  /** How many times a random worker is killed with SIGKILL (and restarted). */
  readonly kills: number;
  /** Also kill Redis with SIGKILL once, mid-batch, and restart it. */
  readonly killRedis: boolean;
  readonly itemsPerRequest: number;
  readonly seed: number;
  /**
   * Longest the batches may take to become final, ms (3 minutes by default: a busy machine
   * stretches the recovery after kills; how fast it is is the benchmarks' business, not this run's).
   */
  readonly timeoutMs?: number;
  /** No faults at the sandbox (to measure sharing rather than resilience). */
  readonly faultless?: boolean;
  /**
   * An operator at work during the disturbances: the same file uploaded again with one change
   * (twice), and failed jobs retried at random (Bull Board's retry and `cashout retry`).
   */
  readonly operator?: boolean;
}

/** What a chaos run found. Every "must be 0" figure is a broken promise when it is not. */
export interface ChaosFigures {
  rows: number;
  requests: number;
  posts: number;
  faultedShare: number;
  /** How many distinct worker processes took requests (from the ledger's `sent_by`). */
  workersThatSent: number;
  workerKills: number;
  redisKills: number;
  accepted: number;
  rejected: number;
  unknown: number;
  notSent: number;
  invalid: number;
  /** Items the sandbox created more than once (must be 0). */
  duplicates: number;
  /** Input rows without exactly one row in results.csv (must be 0). */
  lostRows: number;
  /** Rows reported accepted that the sandbox did not create (must be 0). */
  acceptedNotCreated: number;
  /** Items the sandbox created whose row is neither accepted nor unknown (must be 0). */
  createdUnaccounted: number;
  /** Unknown rows missing from reconciliation.csv (must be 0). */
  unknownNotListed: number;
  /** Worker processes that ended by themselves other than for want of Redis at their start (must be 0). */
  unexpectedExits: number;
  /** Worker processes that found no Redis at their start (exit 3) and were started again, as a supervisor would. */
  workerRestarts: number;
  /** Workers that did not exit 0 within the request timeout plus 5 s of SIGTERM at the end (must be 0). */
  uncleanStops: number;
  /** The workers' exit codes on that SIGTERM ('late' for one still running after the time allowed). */
  stopCodes: string;
  /** Batches imported (the file, and the operator's uploads). */
  batches: number;
  /** Operator actions done: uploads and retries. */
  operatorActions: number;
  /** Payees (by reference) the sandbox created more than once, across every batch (must be 0). */
  payeesPaidTwice: number;
  /** Input rows of any batch without exactly one final status in its report (must be 0). */
  rowsWithoutOneStatus: number;
  seconds: number;
}

const TOKEN = 'chaos-token';
/** How the reports' CSV files are read: by column name, without their byte-order mark. */
const CSV_READ = { columns: true, bom: true } as const;

function chaosCsv(rows: number, rand: () => number): string {
  const banks = [
    'National Bank of Egypt',
    'Banque Misr',
    'Commercial International Bank',
    'Al Ahli Bank of Kuwait – Egypt',
  ];
  const lines = [HEADER];
  for (let i = 1; i <= rows; i++) {
    const amount = `${100 + Math.floor(rand() * 9900)}.${String(Math.floor(rand() * 100)).padStart(2, '0')}`;
    if (i % 3 === 0) {
      lines.push(
        `bank,${amount},TRANSFER,Chaos Holder ${i},,${banks[i % banks.length]},"${i} Nile St, Cairo",${String(100_000_000_000 + i)},Chaos payout ${i},C-${i}`,
      );
    } else {
      lines.push(
        `wallet,${amount},TRANSFER,Chaos Holder ${i},+2010${String(10_000_000 + i).slice(-8)},,,,Chaos payout ${i},C-${i}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Runs one chaos batch and returns its figures. */
export async function runChaos(opts: ChaosOptions): Promise<ChaosFigures> {
  const started = Date.now();
  const rand = mulberry32(opts.seed);
  const dir = await mkdtemp(join(tmpdir(), 'cashout-chaos-'));
  let redis: PrivateRedis | undefined;
  let sandbox: Sandbox | undefined;
  const workers: (ChildProcess | undefined)[] = [];
  // Set once the run stops its workers (or gives up): from then on no worker is started again.
  let finishing = false;
  let monitor: Redis | undefined;
  try {
    redis = await startPrivateRedis({ appendOnly: true, dir });
    const faults = {
      latencyMs: { min: 2, max: 30 },
      rates: opts.faultless
        ? {}
        : {
            http500: 0.04,
            http503: 0.04,
            http429: 0.04,
            hang: 0.03,
            createThenReset: 0.05,
            malformed200: 0.05,
            createThen500: 0.05,
          },
      retryAfterSeconds: 1,
      seed: opts.seed,
    };
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList(), faults });
    const file = join(dir, 'chaos.csv');
    await writeFile(file, chaosCsv(opts.rows, rand));
    const env = {
      REDIS_URL: redis.url,
      CASHOUT_REDIS_PREFIX: '{chaos}',
      CASHOUT_REPORTS_DIR: join(dir, 'reports'),
      CASHOUT_API_BASE_URL: sandbox.url,
      CASHOUT_API_TOKEN: TOKEN,
      CASHOUT_ITEMS_PER_REQUEST: String(opts.itemsPerRequest),
      CASHOUT_CONCURRENCY: '4',
      CASHOUT_REQUEST_TIMEOUT_MS: '800',
      CASHOUT_CONNECT_TIMEOUT_MS: '500',
      CASHOUT_CONNECT_RETRIES: '3',
      CASHOUT_CONNECT_BACKOFF_MS: '100',
      CASHOUT_JOB_LOCK_MS: '1500',
      CASHOUT_LOG_LEVEL: 'warn',
    };
    const imported = await runCli(['import', file], env);
    if (imported.code !== 0) throw new Error(`import failed (${imported.code}): ${imported.stderr}`);
    const batchId = /Batch ([0-9a-f]{16}) queued/.exec(imported.stdout)?.[1];
    if (!batchId) throw new Error(`no batch id in: ${imported.stdout}`);
    const batchIds = [batchId];
    let operatorActions = 0;

    const workerStarts: number[] = [];
    // Each worker process's output (warnings and errors) goes to its own file, shown when the run fails.
    const workerLogs: { file: string; child: ChildProcess }[] = [];
    // Processes this run ends itself (SIGKILL, or SIGTERM at the end): their exits are expected.
    const endedByRun = new Set<ChildProcess>();
    let workerRestarts = 0;
    let unexpectedExits = 0;
    const startWorker = (i: number) => {
      const base: Record<string, string> = {};
      for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k]!;
      const file = join(dir, `worker-${workerLogs.length + 1}.log`);
      const out = openSync(file, 'a');
      const child = spawn(process.execPath, [join(ROOT, 'bin', 'cashout.js'), 'worker'], {
        cwd: ROOT,
        env: { ...base, ...env },
        stdio: ['ignore', out, out],
      });
      closeSync(out);
      workers[i] = child;
      workerLogs.push({ file, child });
      workerStarts.push(Date.now());
      // As a supervisor would (the compose file's `restart: unless-stopped`): a worker that found no
      // Redis at its start (exit 3, Redis being restarted) is started again. Any other exit of its
      // own is a broken promise.
      child.once('exit', (code) => {
        if (endedByRun.has(child) || finishing) return;
        if (code === EXIT.redis) {
          workerRestarts++;
          setTimeout(() => {
            if (!finishing && workers[i] === child) startWorker(i);
          }, 500);
        } else {
          unexpectedExits++;
        }
      });
    };
    for (let i = 0; i < opts.workers; i++) startWorker(i);

    monitor = new Redis(redis.url, { maxRetriesPerRequest: null, retryStrategy: () => 100 });
    monitor.on('error', () => undefined);
    const ledger = openLedger(monitor, '{chaos}');

    // The disturbances, at seeded random moments while the batch is being paid.
    let workerKills = 0;
    let redisKills = 0;
    const plan: { at: number; what: 'worker' | 'redis' | 'upload' | 'retry' }[] = [];
    let uploads = 0;
    for (let k = 0; k < opts.kills; k++) plan.push({ at: 150 + rand() * 2500, what: 'worker' });
    if (opts.killRedis) plan.push({ at: 600 + rand() * 1200, what: 'redis' });
    if (opts.operator) {
      for (let k = 0; k < 2; k++) plan.push({ at: 200 + rand() * 2500, what: 'upload' });
      for (let k = 0; k < 3; k++) plan.push({ at: 300 + rand() * 2800, what: 'retry' });
    }
    plan.sort((a, b) => a.at - b.at);
    const t0 = Date.now();
    for (const step of plan) {
      const wait = t0 + step.at - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (step.what === 'upload') {
        // The same file again with one amount changed (a "corrected" file): a new batch.
        const lines = (await readFile(file, 'utf8')).split('\n');
        const at = 1 + Math.floor(rand() * opts.rows);
        lines[at] = lines[at]!.replace(
          /^(wallet|bank),(\d+)\./,
          (_m, ch: string, units: string) => `${ch},${Number(units) + 1 + uploads}.`,
        );
        const again = join(dir, `chaos-again-${++uploads}.csv`);
        await writeFile(again, lines.join('\n'));
        const r = await runCli(['import', again], env, 30_000);
        // "Batch <id> queued: …", or the summary of a batch that ended at its import (every row
        // held by the first batch): "Batch <id>  <file>  (finished)".
        const id = /^Batch ([0-9a-f]{16})\b/m.exec(r.stdout)?.[1];
        if (id) batchIds.push(id);
        operatorActions++;
        continue;
      }
      if (step.what === 'retry') {
        operatorActions += await retryAtRandom(redis.url, batchIds, rand, env);
        continue;
      }
      if (step.what === 'worker') {
        const i = Math.floor(rand() * opts.workers);
        const victim = workers[i];
        if (victim && victim.exitCode === null) {
          endedByRun.add(victim);
          const gone = new Promise((r) => victim.once('exit', r));
          victim.kill('SIGKILL');
          await gone;
          workerKills++;
        }
        startWorker(i);
      } else {
        const port = redis.port;
        const gone = new Promise((r) => redis!.process.once('exit', r));
        redis.process.kill('SIGKILL');
        await gone;
        redisKills++;
        await new Promise((r) => setTimeout(r, 300));
        redis = await startPrivateRedis({ appendOnly: true, dir, port });
      }
    }

    // Wait until every request of every batch is final.
    const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
    for (const id of batchIds) {
      for (;;) {
        const b = await ledger.getBatch(id).catch(() => undefined);
        if (b && b.open === 0 && (b.state === 'finished' || b.state === 'needs_reconciliation')) break;
        if (Date.now() > deadline) {
          const open = b
            ? await requestsInState(ledger, id, ['pending', 'sending'], { body: false }).catch(() => [])
            : [];
          const shown = JSON.stringify(b, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
          const requests = open.map((q) => `${q.seq}:${q.state}`).join(' ');
          throw new Error(
            `batch ${id} not final in time: ${shown}; open requests: ${requests}\n${await workerLogTails(workerLogs)}`,
          );
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }

    // Stop the workers as an operator would; each must exit 0 within the request timeout plus a
    // few seconds (a worker still running then is killed, and counted).
    finishing = true;
    let uncleanStops = 0;
    const stopCodes: string[] = [];
    // A worker restarted a moment ago is still loading: give it a second to start (a signal that
    // arrives before a process has even loaded its code ends it with nothing in flight anyway).
    const lastStart = Math.max(...workerStarts);
    if (Date.now() - lastStart < 1_000) await new Promise((r) => setTimeout(r, 1_000 - (Date.now() - lastStart)));
    const stopWithinMs = Number(env.CASHOUT_REQUEST_TIMEOUT_MS) + 5_000;
    await Promise.all(
      workers.map(async (w) => {
        if (!w || w.exitCode !== null) return;
        let timer: NodeJS.Timeout | undefined;
        const code = await new Promise<number | null | 'late'>((resolve) => {
          w.once('exit', (c, signal) => resolve(c ?? (signal as unknown as number)));
          timer = setTimeout(() => resolve('late'), stopWithinMs);
          w.kill('SIGTERM');
        });
        clearTimeout(timer);
        if (code === 'late') w.kill('SIGKILL');
        stopCodes.push(String(code));
        if (code !== 0) uncleanStops++;
      }),
    );

    const reports: { results: Record<string, string>[]; reconciliation: Record<string, string>[] }[] = [];
    for (const id of batchIds) {
      const report = await runCli(['report', id], env);
      if (report.code === null || report.code > 1)
        throw new Error(`report of ${id} failed (${report.code}): ${report.stderr}`);
      await runCli(['reconcile', id], env);
      const batchDir = join(dir, 'reports', id);
      reports.push({
        results: parse(await readFile(join(batchDir, 'results.csv')), CSV_READ) as Record<string, string>[],
        reconciliation: parse(await readFile(join(batchDir, 'reconciliation.csv')), CSV_READ) as Record<
          string,
          string
        >[],
      });
    }
    const { results, reconciliation } = reports[0]!;

    // The figures.
    const key = (holder: string, amount: string) => `${holder}|${amount}`;
    const created = new Map<string, number>();
    for (const e of sandbox.ledger()) {
      for (const item of [...(e.body.mobile_wallets ?? []), ...(e.body.bank_accounts ?? [])]) {
        const k = key(item.holder_name, item.amount);
        created.set(k, (created.get(k) ?? 0) + 1);
      }
    }
    const inputLines = new Set(Array.from({ length: opts.rows }, (_, i) => i + 2));
    const lostIn = (rows: readonly Record<string, string>[]) => {
      const seen = new Map<number, number>();
      for (const r of rows) seen.set(Number(r.line), (seen.get(Number(r.line)) ?? 0) + 1);
      let lost = 0;
      for (const l of inputLines) if (seen.get(l) !== 1) lost++;
      return lost + [...seen.keys()].filter((l) => !inputLines.has(l)).length;
    };
    const lostRows = lostIn(results);
    const rowsWithoutOneStatus = reports.reduce((n, r) => n + lostIn(r.results), 0);

    // Across every batch: a created item must be accepted or unknown in exactly one of them.
    const allRows = reports.flatMap((r) => r.results);
    const statusesOf = new Map<string, string[]>();
    for (const r of allRows) {
      const k = key(r.holder_name!, r.amount!);
      statusesOf.set(k, [...(statusesOf.get(k) ?? []), r.status!]);
    }
    const acceptedNotCreated = allRows.filter(
      (r) => r.status === 'accepted' && !created.has(key(r.holder_name!, r.amount!)),
    ).length;
    let createdUnaccounted = 0;
    for (const k of created.keys()) {
      const paid = (statusesOf.get(k) ?? []).filter((s) => s === 'accepted' || s === 'unknown').length;
      if (paid !== 1) createdUnaccounted++;
    }
    // A payee is its reference; the holder name carries the same number in this file.
    const perPayee = new Map<string, number>();
    for (const e of sandbox.ledger()) {
      for (const item of [...(e.body.mobile_wallets ?? []), ...(e.body.bank_accounts ?? [])]) {
        perPayee.set(item.holder_name, (perPayee.get(item.holder_name) ?? 0) + 1);
      }
    }
    const payeesPaidTwice = [...perPayee.values()].filter((n) => n > 1).length;
    let unknownNotListed = 0;
    for (const r of reports) {
      const listed = new Set(r.reconciliation.map((x) => x.line));
      unknownNotListed += r.results.filter((x) => x.status === 'unknown' && !listed.has(x.line)).length;
    }
    void reconciliation;
    const count = (s: string) => results.filter((r) => r.status === s).length;
    const posts = sandbox.received();
    const requests = await ledger.lastSeq(batchId);
    const senders = new Set<string>();
    for (let seq = 1; seq <= requests; seq++) {
      const r = await ledger.getRequest(batchId, seq);
      if (r?.sentBy) senders.add(r.sentBy);
    }
    return {
      rows: opts.rows,
      requests,
      posts,
      faultedShare: Object.values(faults.rates as Record<string, number>).reduce((a, b) => a + b, 0),
      workersThatSent: senders.size,
      workerKills,
      redisKills,
      accepted: count('accepted'),
      rejected: count('rejected'),
      unknown: count('unknown'),
      notSent: count('not_sent'),
      invalid: count('invalid'),
      duplicates: [...created.values()].filter((n) => n > 1).length,
      lostRows,
      acceptedNotCreated,
      createdUnaccounted,
      unknownNotListed,
      unexpectedExits,
      workerRestarts,
      uncleanStops,
      stopCodes: stopCodes.join(','),
      batches: batchIds.length,
      operatorActions,
      payeesPaidTwice,
      rowsWithoutOneStatus,
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
  } finally {
    finishing = true;
    for (const w of workers) if (w && w.exitCode === null) w.kill('SIGKILL');
    monitor?.disconnect();
    await sandbox?.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The last lines of each worker process's output, with whether it still runs (for a failed run's message). */
async function workerLogTails(logs: readonly { file: string; child: ChildProcess }[]): Promise<string> {
  const parts: string[] = [];
  for (const [i, { file, child }] of logs.entries()) {
    const text = await readFile(file, 'utf8').catch(() => '');
    const lines = text.trimEnd().split('\n').slice(-15).join('\n');
    const state =
      child.exitCode === null && child.signalCode === null
        ? 'running'
        : `ended (${child.exitCode ?? child.signalCode})`;
    parts.push(`worker process ${i + 1} (pid ${child.pid}, ${state}):\n${lines || '(no output)'}`);
  }
  return parts.join('\n');
}

/**
 * The operator presses Retry at random: some failed jobs of the submit queue are retried (as Bull
 * Board's button does) and one random request is retried with `cashout retry`. Redis may be down
 * meanwhile: whatever fails is given up. Returns the number of retries asked for.
 */
async function retryAtRandom(
  url: string,
  batchIds: readonly string[],
  rand: () => number,
  env: Record<string, string>,
): Promise<number> {
  const { Queue } = await import('bullmq');
  const connection = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 1000, retryStrategy: () => null });
  connection.on('error', () => undefined);
  const queue = new Queue('cashout-submit', { connection, prefix: '{chaos}' });
  let asked = 0;
  try {
    const failed = await Promise.race([
      queue.getFailed(0, 200),
      new Promise<never[]>((r) => setTimeout(() => r([]), 3000)),
    ]);
    for (const job of failed) {
      if (rand() < 0.5) continue;
      await job.retry('failed').catch(() => undefined);
      asked++;
    }
  } catch {
    // Redis away: nothing retried this time.
  } finally {
    await queue.close().catch(() => undefined);
    connection.disconnect();
  }
  const id = batchIds[Math.floor(rand() * batchIds.length)]!;
  await runCli(['retry', id, String(1 + Math.floor(rand() * 20))], env, 15_000);
  return asked + 1;
}
