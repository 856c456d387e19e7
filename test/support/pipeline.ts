/**
 * The pipeline assembled in-process for integration tests: real Redis (own prefix), real HTTP to a
 * sandbox, real files. `runBatch` imports a CSV text, runs a submit worker until the batch is
 * final, writes the report and returns its rows.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { parse } from 'csv-parse/sync';
import { importBatch, type ImportDeps, type ImportOptions, type ImportResult } from '../../src/batch/import-batch.js';
import { makeBankList, loadBankList, type BankList } from '../../src/contract/supported-banks.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { SUBMIT_QUEUE, type SubmitJobData } from '../../src/queue/queues.js';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { createPaymentClient } from '../../src/submit/payment-client.js';
import { writeReport, type ReportSummary } from '../../src/results/write-report.js';
import { waitForBatch } from '../../src/commands/run.js';
import { startSubmitWorker } from '../../jobs/index.js';
import { TEST_REDIS_URL, deleteKeys, testPrefix } from './redis.js';

/** Header of the payout CSV template. */
export const HEADER =
  'channel,amount,type,holder_name,mobile_number,bank_name,bank_address,account_number,description,reference';

/** A valid wallet row. */
export function walletRow(n: number, amount = '100.00'): string {
  return `wallet,${amount},TRANSFER,Holder ${n},+2010${String(10_000_000 + n).slice(-8)},,,,Payout ${n},REF-${n}`;
}

/** A valid bank row. */
export function bankRow(n: number, amount = '250.00', bank = 'National Bank of Egypt'): string {
  return `bank,${amount},TRANSFER,Bank Holder ${n},,${bank},"1 Nile St, Cairo",${String(100_000_000_000 + n)},Salary ${n},BREF-${n}`;
}

/** An in-memory log sink (JSON lines). */
export function memoryLog(level = 'info'): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { log: createLogger({ level, stream }), lines };
}

/** Where a test worker sends, and its settings. `serviceUrl`: the address it checks batches against (none by default). */
export interface WorkerTarget {
  baseUrl: string;
  token: string;
  requestTimeoutMs?: number;
  connectRetries?: number;
  concurrency?: number;
  serviceUrl?: string;
  /** Connections of the worker's HTTP client (8 by default). */
  connections?: number;
  /** Called when a batch the worker sent is final (as `cashout worker` writes its report then). */
  onBatchDone?: (batchId: string) => Promise<void>;
}

/** One isolated pipeline: its own prefix, queue, ledger and reports folder. */
export interface TestPipeline {
  readonly prefix: string;
  readonly redis: Redis;
  readonly workerRedis: Redis;
  readonly queue: Queue<SubmitJobData>;
  readonly ledger: Ledger;
  readonly reportsDir: string;
  readonly log: Logger;
  readonly logLines: string[];
  /** The import's bank list (may hold names the sandbox does not know, to provoke a 422). */
  readonly banks: BankList;
  writeCsv(name: string, rows: readonly string[]): Promise<string>;
  importCsv(
    path: string,
    opts?: ImportOptions & { itemsPerRequest?: number; serviceUrl?: string },
  ): Promise<ImportResult>;
  /**
   * What an import needs in this pipeline (its ledger, queue, bank list, log and reports folder),
   * as the dashboard's uploads and the HTTP API take it; `extra` adds to it or replaces.
   */
  importDeps(extra: Partial<ImportDeps> & Pick<ImportDeps, 'itemsPerRequest' | 'serviceUrl'>): ImportDeps;

  /** Runs a worker against `baseUrl` until the batch is final; returns the report. */
  submit(batchId: string, target: WorkerTarget): Promise<{ summary: ReportSummary; rows: Record<string, string>[] }>;
  /** Starts a submit worker against `target.baseUrl` that checks batches against its address; the caller closes it. */
  startWorker(target: WorkerTarget): { close(): Promise<void> };
  report(batchId: string): Promise<{ summary: ReportSummary; rows: Record<string, string>[] }>;
  close(): Promise<void>;
}

/**
 * Opens a pipeline under a fresh prefix. `extraBanks` are added to the import's bank list only;
 * `logLevel` is the level of the in-memory log (`info` by default, `debug` to keep every line).
 */
export async function openTestPipeline(
  label: string,
  extraBanks: readonly string[] = [],
  logLevel = 'info',
): Promise<TestPipeline> {
  const prefix = testPrefix(label);
  const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
  const workerRedis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue<SubmitJobData>(SUBMIT_QUEUE, { connection: workerRedis, prefix });
  const ledger = openLedger(redis, prefix);
  const reportsDir = await mkdtemp(join(tmpdir(), `cashout-${label}-`));
  const { log, lines } = memoryLog(logLevel);
  const banks = makeBankList([...loadBankList().names, ...extraBanks]);
  const rules = { banks, walletCountries: ['EG'], maxFieldLength: 255 };

  const report = async (batchId: string) => {
    const summary = await writeReport(ledger, batchId);
    const batch = await ledger.getBatch(batchId);
    const text = await readFile(join(batch!.reportDir, 'results.csv'));
    const rows = parse(text, { columns: true, bom: true }) as Record<string, string>[];
    return { summary, rows };
  };

  const start = (target: WorkerTarget) => {
    const client = createPaymentClient({
      baseUrl: target.baseUrl,
      token: target.token,
      requestTimeoutMs: target.requestTimeoutMs ?? 2_000,
      connectTimeoutMs: 1_000,
      connections: target.connections ?? 8,
    });
    const worker = startSubmitWorker(
      {
        connection: workerRedis,
        prefix,
        concurrency: target.concurrency ?? 2,
        rateLimitPerSecond: 0,
        connectRetries: target.connectRetries ?? 0,
        connectBackoffMs: 10,
        requestTimeoutMs: target.requestTimeoutMs ?? 2_000,
        ...(target.serviceUrl === undefined ? {} : { serviceUrl: target.serviceUrl }),
      },
      { ledger, client, log, queue, ...(target.onBatchDone ? { onBatchDone: target.onBatchDone } : {}) },
    );
    return {
      async close() {
        await worker.close();
        await client.close();
      },
    };
  };

  return {
    prefix,
    redis,
    workerRedis,
    queue,
    ledger,
    reportsDir,
    log,
    logLines: lines,
    banks,
    async writeCsv(name, rows) {
      const path = join(reportsDir, name);
      await writeFile(path, `${[HEADER, ...rows].join('\n')}\n`);
      return path;
    },
    importDeps: (extra) => ({ ledger, queue, rules, log, reportsDir, ...extra }),
    importCsv(path, opts = {}) {
      const { itemsPerRequest, serviceUrl, ...importOptions } = opts;
      return importBatch(
        {
          ledger,
          queue,
          rules,
          log,
          reportsDir,
          itemsPerRequest: itemsPerRequest ?? 3,
          serviceUrl: serviceUrl ?? 'http://sandbox.test',
        },
        path,
        importOptions,
      );
    },
    async submit(batchId, target) {
      const worker = start(target);
      try {
        await waitForBatch(ledger, batchId, log);
      } finally {
        await worker.close();
      }
      return report(batchId);
    },
    startWorker: (target) => start(target),
    report,
    async close() {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      redis.disconnect();
      workerRedis.disconnect();
      await deleteKeys(prefix);
      await rm(reportsDir, { recursive: true, force: true });
    },
  };
}
