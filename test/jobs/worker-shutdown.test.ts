/**
 * A `cashout worker` process told to stop (SIGTERM) while Redis is away, hanging or coming back:
 * it ends within the request timeout plus a few seconds; what was in flight is recorded, or left
 * in `sending` (never made sendable again) and named in its last log line with exit code 5; a
 * worker started afterwards settles every request, and nothing is paid twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { requestJobId } from '../../src/batch-id.js';
import { EXIT_LEFT_FOR_RECOVERY } from '../../src/commands/worker.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { startPrivateRedis, type PrivateRedis } from '../../src/queue/private-redis.js';
import { SUBMIT_QUEUE } from '../../src/queue/queues.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { ROOT, runCli } from '../support/cli.js';
import { HEADER, walletRow } from '../support/pipeline.js';

const TOKEN = 'shutdown-token';
const REQUEST_TIMEOUT_MS = 3_000;
/** What the worker may take to end after SIGTERM: the request timeout plus a few seconds. */
const STOP_BUDGET_MS = REQUEST_TIMEOUT_MS + 5_000;
/** The sandbox answers each request this late, so that requests are in flight when Redis goes. */
const LATENCY_MS = 1_500;
const ROWS = 12;

/** What happens to Redis just before the worker gets SIGTERM. */
type Disturbance = 'none' | 'killed' | 'hanging' | 'killed then back';

/** A `cashout worker` child process and what it wrote on stderr (its JSON log lines). */
interface WorkerProcess {
  readonly child: ChildProcess;
  stderr: string;
  readonly exited: Promise<number | null>;
}

function spawnWorker(env: Record<string, string>): WorkerProcess {
  const base: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k]!;
  const bin = join(ROOT, 'bin', 'cashout.js');
  const child = spawn(process.execPath, [bin, 'worker'], { cwd: ROOT, env: { ...base, ...env } });
  const w: WorkerProcess = {
    child,
    stderr: '',
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
  child.stdout?.resume();
  child.stderr?.on('data', (d) => (w.stderr += d));
  return w;
}

/** How a worker ended after SIGTERM: its exit code, after how long, and whether within the budget. */
interface Stopped {
  readonly code: number | null;
  readonly ms: number;
  readonly inTime: boolean;
}

/** Sends SIGTERM and waits for the exit, at most `budgetMs` (then SIGKILL). */
async function stopWorker(w: WorkerProcess, budgetMs: number): Promise<Stopped> {
  const started = Date.now();
  w.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), budgetMs)));
  const inTime = await Promise.race([w.exited.then(() => true), late]);
  clearTimeout(timer);
  const ms = Date.now() - started;
  if (!inTime) w.child.kill('SIGKILL');
  return { code: await w.exited, ms, inTime };
}

/** Polls `check` every 20 ms until it holds; throws after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The worker's log line naming the requests it left for the recovery sweep, if any. */
function leftInLog(stderr: string): { batchId: string; seq: number }[] | undefined {
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { left?: { batchId: string; seq: number }[] };
    if (entry.left) return entry.left;
  }
  return undefined;
}

function openMonitor(url: string): { redis: Redis; ledger: Ledger } {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, retryStrategy: () => 100 });
  redis.on('error', () => undefined);
  return { redis, ledger: openLedger(redis, '{shutdown}') };
}

/**
 * Imports a batch, starts a worker, waits until requests are being sent, disturbs Redis, sends
 * SIGTERM, then restarts Redis and lets a new worker settle the batch; checks the ledger throughout.
 */
async function scenario(disturbance: Disturbance): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'cashout-shutdown-'));
  let redis: PrivateRedis | undefined;
  let sandbox: Sandbox | undefined;
  let monitor: { redis: Redis; ledger: Ledger } | undefined;
  const workers: WorkerProcess[] = [];
  try {
    redis = await startPrivateRedis({ appendOnly: true, dir });
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList(), faults: { latencyMs: LATENCY_MS } });
    const file = join(dir, 'payouts.csv');
    await writeFile(file, `${[HEADER, ...Array.from({ length: ROWS }, (_, i) => walletRow(i + 1))].join('\n')}\n`);
    const env = {
      REDIS_URL: redis.url,
      CASHOUT_REDIS_PREFIX: '{shutdown}',
      CASHOUT_REPORTS_DIR: join(dir, 'reports'),
      CASHOUT_API_BASE_URL: sandbox.url,
      CASHOUT_API_TOKEN: TOKEN,
      CASHOUT_ITEMS_PER_REQUEST: '1',
      CASHOUT_CONCURRENCY: '4',
      CASHOUT_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      CASHOUT_CONNECT_TIMEOUT_MS: '500',
      CASHOUT_CONNECT_RETRIES: '0',
      CASHOUT_JOB_LOCK_MS: '1000',
      CASHOUT_LOG_LEVEL: 'info',
    };
    const imported = await runCli(['import', file], env);
    expect(imported.code, imported.stderr).toBe(0);
    const batchId = /Batch ([0-9a-f]{16}) queued/.exec(imported.stdout)?.[1];
    expect(batchId).toBeDefined();
    const id = batchId!;

    // Requests in flight: taken in the ledger, and their POSTs at the service.
    const first = spawnWorker(env);
    workers.push(first);
    monitor = openMonitor(redis.url);
    const watch = monitor.ledger;
    const sent = sandbox;
    await until('requests are being sent', async () => (await watch.sendingSeqs(id)).length > 0 && sent.received() > 0);
    const sendingBefore = await watch.sendingSeqs(id);
    monitor.redis.disconnect();

    const port = redis.port;
    if (disturbance === 'hanging') {
      redis.process.kill('SIGSTOP');
    } else if (disturbance !== 'none') {
      const gone = new Promise((r) => redis!.process.once('exit', r));
      redis.process.kill('SIGKILL');
      await gone;
    }
    const stopping = stopWorker(first, STOP_BUDGET_MS);
    if (disturbance === 'killed then back') redis = await startPrivateRedis({ appendOnly: true, dir, port });
    const stopped = await stopping;
    expect(stopped.inTime, `still running ${STOP_BUDGET_MS} ms after SIGTERM; its log:\n${first.stderr}`).toBe(true);
    expect(stopped.ms).toBeLessThan(STOP_BUDGET_MS);
    expect(first.stderr).not.toMatch(/Holder \d|\+2010\d/);

    if (disturbance === 'hanging') {
      redis.process.kill('SIGCONT');
    } else if (disturbance === 'killed') {
      redis = await startPrivateRedis({ appendOnly: true, dir, port });
    }
    monitor = openMonitor(redis.url);
    const ledger = monitor.ledger;
    const last = await ledger.lastSeq(id);
    const seqs = Array.from({ length: last }, (_, i) => i + 1);
    const left = leftInLog(first.stderr) ?? [];
    const leftSeqs = new Set(left.map((r) => r.seq));
    for (const r of left) expect(r.batchId).toBe(id);

    const states = await ledger.requestStates(id, seqs);
    // A request taken before Redis went away is never made sendable again.
    for (const seq of sendingBefore) expect(states[seq - 1], `request ${seq}`).not.toBe('pending');
    // Every request still in sending was named as left for the recovery sweep.
    const stillSending = seqs.filter((seq) => states[seq - 1] === 'sending');
    // Each request is in exactly one state: the batch's set of sending requests agrees with them.
    expect(await ledger.sendingSeqs(id)).toEqual(stillSending);
    for (const seq of stillSending) expect(leftSeqs.has(seq), `request ${seq} left in sending, not named`).toBe(true);

    if (disturbance === 'none' || disturbance === 'killed then back') {
      // Redis was there (or came back) within the time allowed: every outcome was recorded.
      expect(stopped.code, first.stderr).toBe(0);
      expect(left).toEqual([]);
      expect(stillSending).toEqual([]);
      for (const seq of sendingBefore) expect(states[seq - 1]).toBe('accepted');
      if (disturbance === 'none') {
        // ... and so was the end of their jobs: none is left active, to be failed as stalled.
        const queue = new Queue(SUBMIT_QUEUE, { connection: monitor.redis, prefix: '{shutdown}' });
        const jobStates = await Promise.all(sendingBefore.map((seq) => queue.getJobState(requestJobId(id, seq))));
        await queue.close();
        expect(jobStates).toEqual(sendingBefore.map(() => 'completed'));
      }
    } else {
      expect(stopped.code, first.stderr).toBe(EXIT_LEFT_FOR_RECOVERY);
      // The outcomes could not be recorded: those requests stay where they were.
      for (const seq of sendingBefore) expect(leftSeqs.has(seq), `request ${seq} not named as left`).toBe(true);
      if (disturbance === 'killed') for (const seq of sendingBefore) expect(states[seq - 1]).toBe('sending');
    }

    // A new worker settles the batch: its recovery sweep makes what was left in sending unknown.
    const second = spawnWorker(env);
    workers.push(second);
    await until('the batch is final', async () => (await ledger.getBatch(id))?.open === 0, 30_000);
    const secondStop = await stopWorker(second, STOP_BUDGET_MS);
    expect(secondStop.code, second.stderr).toBe(0);

    const created = new Map<string, number>();
    for (const e of sandbox.ledger()) {
      for (const item of e.body.mobile_wallets ?? []) {
        created.set(item.holder_name, (created.get(item.holder_name) ?? 0) + 1);
      }
    }
    expect(
      [...created.values()].filter((n) => n > 1),
      'items created twice',
    ).toEqual([]);
    const final = await ledger.requestStates(id, seqs);
    for (const seq of seqs) {
      const state = final[seq - 1];
      expect(['accepted', 'unknown'], `request ${seq}`).toContain(state);
      const request = await ledger.getRequest(id, seq);
      const holder = request!.body.mobile_wallets![0]!.holder_name;
      if (state === 'accepted') expect(created.get(holder), `request ${seq} accepted but not created`).toBe(1);
    }
    expect(await ledger.sendingSeqs(id)).toEqual([]);
    // What was left in sending is never reported accepted without the service's answer.
    if (disturbance === 'killed') for (const seq of sendingBefore) expect(final[seq - 1]).toBe('unknown');
  } finally {
    for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
    monitor?.redis.disconnect();
    redis?.process.kill('SIGCONT');
    await sandbox?.close();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('cashout worker stopped while Redis is away', () => {
  const slow = { timeout: 90_000 };

  it('Redis up: the in-flight outcomes are recorded and their jobs completed, exit 0', slow, async () => {
    await scenario('none');
  });

  it('Redis killed: ends within the request timeout plus a few seconds, leaves what was sending', slow, async () => {
    await scenario('killed');
  });

  it('Redis hanging (SIGSTOP): ends in time all the same', slow, async () => {
    await scenario('hanging');
  });

  it('Redis back during the stop: the in-flight outcomes are recorded, exit 0', slow, async () => {
    await scenario('killed then back');
  });
});
