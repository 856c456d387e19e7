/**
 * `cashout run <file>`: import, submit in this process until every request of the batch is final,
 * write the report, print the summary. `--sandbox` starts the local stand-in of the service (and,
 * if needed, a private Redis) for the run. Exit: 0 every row accepted, 1 some row not accepted,
 * 2 file or usage problem, 3 Redis, 4 the service could not be reached or refused the token.
 */
import { randomBytes } from 'node:crypto';
import { startSandbox, type Sandbox } from '../sandbox/server.js';
import type { ImportOptions, ImportResult, OpenedPayoutFile } from '../batch/import-batch.js';
import { requireSafeRedis } from '../queue/redis-safety.js';
import { writeReport, type ReportSummary } from '../results/write-report.js';
import { formatSummary } from '../results/print-summary.js';
import { notifyBatchEnd } from '../notify/batch-events.js';
import { CashoutError, EXIT } from '../errors.js';
import { startSubmitWorker } from '../../jobs/index.js';
import { startProgress } from './progress.js';
import {
  importOpenedFile,
  openImportFile,
  openQueues,
  paymentClientFor,
  serviceTarget,
  workerSettingsFor,
  type AppContext,
  type QueueHandles,
} from './context.js';
import type { Ledger } from '../ledger/index.js';
import { registerKey } from '../ledger/payout-register.js';

/** Options of `run` and `import`. */
export interface RunOptions extends Omit<ImportOptions, 'payAgain'> {
  readonly sandbox?: boolean;
  /** A label for who runs the import, recorded beside the system user name (`--as`). */
  readonly as?: string;
  /** Why rows whose payee another payout holds are paid again (`--pay-again`); absent: they are not sent. */
  readonly payAgain?: string;
}

/** Exit code for a finished batch's summary, with a one-line cause on stderr for exit 4. */
export function exitCodeForSummary(s: ReportSummary, validRows: number): number {
  if (s.rows > 0 && s.byStatus.accepted.rows === s.rows) return EXIT.ok;
  if (s.haltReason) {
    process.stderr.write(`cashout: ${s.haltReason}\n`);
    return EXIT.service;
  }
  const reachedService = s.byStatus.accepted.rows + s.byStatus.rejected.rows + s.byStatus.unknown.rows;
  if (s.batchState !== 'refused' && validRows > 0 && reachedService === 0 && s.byStatus.not_sent.rows >= validRows) {
    process.stderr.write(`cashout: the service at ${s.serviceUrl} could not be reached; nothing was sent\n`);
    return EXIT.service;
  }
  return EXIT.notAllAccepted;
}

/** A pause that ends early when `wake()` is called (or at once when it was called since the last pause). */
export interface Waker {
  pause(ms: number): Promise<void>;
  wake(): void;
}

/** Makes a `Waker`. */
export function createWaker(): Waker {
  let woken = false;
  let end: (() => void) | undefined;
  return {
    pause(ms) {
      if (woken) {
        woken = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          end = undefined;
          resolve();
        }, ms);
        end = () => {
          clearTimeout(timer);
          end = undefined;
          resolve();
        };
      });
    },
    wake() {
      if (end) end();
      else woken = true;
    },
  };
}

/**
 * Reads the ledger until the batch has no open request, showing progress. It looks every 200 ms,
 * and at once when `waker` is woken (this process's worker recorded the batch's last outcome) or
 * `signal` aborts. The ledger alone decides that the batch is done.
 */
export async function waitForBatch(
  ledger: Ledger,
  batchId: string,
  log: AppContext['log'],
  signal?: AbortSignal,
  waker: Waker = createWaker(),
): Promise<void> {
  const progress = startProgress(log, 'submitting', 'requests final');
  const onAbort = () => waker.wake();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      const b = await ledger.getBatch(batchId);
      if (!b) throw new CashoutError('batch_not_found', `batch ${batchId} disappeared from the ledger`);
      const last = await ledger.lastSeq(batchId);
      progress.update(Math.max(0, last - b.open), last);
      if (b.open === 0 && b.state !== 'staging') break;
      if (signal?.aborted) break;
      await waker.pause(200);
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    progress.stop();
  }
}

/** Runs the whole job on one file; returns the exit code. */
export async function runCommand(ctx: AppContext, file: string, opts: RunOptions): Promise<number> {
  let sandbox: Sandbox | undefined;
  let handles: QueueHandles | undefined;
  let batchId: string | undefined;
  const stop = new AbortController();
  const onSignal = () => {
    ctx.log.warn('stopping: no new submission starts; in-flight ones finish and are recorded');
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let opened: OpenedPayoutFile | undefined;
  try {
    // The file is checked and its import threads start first: a bad file answers at once, and
    // the threads load while the sandbox starts and Redis is opened.
    opened = await openImportFile(ctx, file, opts);
    let target: { baseUrl: string; token: string };
    if (opts.sandbox) {
      const token = randomBytes(24).toString('hex');
      sandbox = await startSandbox({ token, banks: ctx.banks, bodyLimitBytes: ctx.config.sandboxBodyLimitBytes });
      target = { baseUrl: sandbox.url, token };
      ctx.log.info({ url: sandbox.url }, 'sandbox started');
      if (ctx.config.requireApproval)
        ctx.log.info(
          'CASHOUT_REQUIRE_APPROVAL does not apply to a sandbox run: it is sent without waiting for approval',
        );
    } else {
      target = serviceTarget(ctx.config);
    }
    handles = await openQueues(ctx, { sandbox: opts.sandbox === true });
    const makeDurable = opts.sandbox ? undefined : await requireSafeRedis(handles.redis, ctx.config.allowUnsafeRedis);
    // The worker connects while the file is read, and takes no job before the batch is queued.
    const client = paymentClientFor(ctx, target);
    const done = createWaker();
    let runBatch: string | undefined;
    const worker = startSubmitWorker(
      { ...workerSettingsFor(ctx, handles, target.baseUrl, { makeDurable }), autorun: false },
      {
        ledger: handles.ledger,
        client,
        log: ctx.log,
        queue: handles.queue,
        onBatchDone: async (id) => {
          if (id === runBatch) done.wake();
        },
      },
    );
    let imported: ImportResult;
    try {
      const ready = worker.ready();
      ready.catch(() => undefined); // awaited below, once the batch is queued
      imported = await importOpenedFile(ctx, handles, target, opened, opts);
      batchId = imported.batchId;
      if (imported.state === 'queued') {
        await ready;
        runBatch = imported.batchId;
        if (!stop.signal.aborted) worker.start();
        await waitForBatch(handles.ledger, imported.batchId, ctx.log, stop.signal, done);
      }
    } finally {
      await worker.close();
      await client.close();
    }
    // A batch that was never queued had its report written by the import.
    const summary =
      imported.summary ?? (await writeReport(handles.ledger, imported.batchId, { bom: ctx.config.csvBom }));
    // Its end is notified as a worker's would be (queued; a `cashout worker` delivers it).
    await notifyBatchEnd(handles.notifier, summary);
    process.stdout.write(formatSummary(summary, imported.reportDir));
    if (stop.signal.aborted && summary.byStatus.pending.rows > 0) {
      process.stderr.write(
        `cashout: stopped before the batch finished; run "cashout worker" to finish batch ${imported.batchId}\n`,
      );
      return EXIT.notAllAccepted;
    }
    return exitCodeForSummary(summary, imported.validRows);
  } finally {
    await opened?.close();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    if (handles) {
      if (opts.sandbox) {
        // A sandbox run's ledger and jobs are of no use after it: its report is on disk. Its payout
        // register too: the prefix is this run's own, so only this batch's payees are in it.
        if (batchId) await handles.ledger.deleteBatch(batchId).catch(() => undefined);
        await handles.redis.del(registerKey(handles.prefix)).catch(() => undefined);
        await handles.queue.obliterate({ force: true }).catch(() => undefined);
      }
      await handles.close();
    }
    await sandbox?.close();
  }
}
