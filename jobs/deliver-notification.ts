/**
 * Processor of the `cashout-notify` queue: POSTs one notification to one address, signed
 * (src/notify/signature.ts), within a time limit, and records the attempt with the batch
 * (src/notify/deliveries.ts). A failure (no answer, or any status but 2xx) fails the attempt; the
 * queue tries again with exponential backoff up to the job's attempts. Nothing here touches a
 * batch: a receiver that fails or hangs delays only its own notifications.
 */
import { Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { CashoutError } from '../src/errors.js';
import { hostOf, recordDelivery } from '../src/notify/deliveries.js';
import { NOTIFY_QUEUE, NotifyJobData } from '../src/notify/notifier.js';
import { SIGNATURE_HEADER, signBody } from '../src/notify/signature.js';
import { redisErrorText } from '../src/queue/connection.js';

/** What the processor needs. */
export interface NotifyProcessorDeps {
  /** HMAC key (CASHOUT_WEBHOOK_SECRET). Never logged. */
  readonly secret: string;
  /** Time one delivery may take, in ms. */
  readonly timeoutMs: number;
  /** Connection and prefix of the delivery record. */
  readonly redis: Redis;
  readonly prefix: string;
  readonly log: Logger;
}

/** Builds the processor function. */
export function createNotifyProcessor(deps: NotifyProcessorDeps) {
  return async (job: Job): Promise<{ status: number }> => {
    const parsed = NotifyJobData.safeParse(job.data);
    if (!parsed.success) throw new CashoutError('notify_failed', 'job data is not a notification; nothing was sent');
    const { url, batchId, event, id, body } = parsed.data;
    const host = hostOf(url);
    const attempt = job.attemptsMade + 1;
    let status = 0;
    let error: string | undefined;
    try {
      const res = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        signal: AbortSignal.timeout(deps.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'bulk-cashout',
          'x-cashout-event': event,
          'x-cashout-delivery': id,
          [SIGNATURE_HEADER]: signBody(deps.secret, body),
        },
        body,
      });
      status = res.status;
      await res.body?.cancel().catch(() => undefined);
      if (status < 200 || status > 299) error = `answered HTTP ${status}`;
    } catch (err) {
      const name = (err as Error).name;
      const timedOut = name === 'TimeoutError' || name === 'AbortError';
      error = timedOut ? `no answer within ${deps.timeoutMs} ms` : 'could not connect';
    }
    const ok = error === undefined;
    await recordDelivery(deps.redis, deps.prefix, batchId, {
      event,
      id,
      host,
      attempt,
      status,
      ok,
      ...(error ? { error } : {}),
      at: new Date().toISOString(),
    }).catch((err: Error) => deps.log.warn({ batchId, err: err.message }, 'delivery attempt not recorded'));
    if (!ok) {
      const last = attempt >= (job.opts.attempts ?? 1);
      const what = last ? 'notification given up' : 'notification failed; will retry';
      deps.log.warn({ batchId, event, host, attempt, status, reason: error }, what);
      throw new CashoutError('notify_failed', `notification ${event} to ${host}: ${error}`, { batchId, host, attempt });
    }
    deps.log.info({ batchId, event, host, attempt, status }, 'notification delivered');
    return { status };
  };
}

/** A running notification worker. */
export interface NotifyWorker {
  /** Stops taking deliveries; does not wait for one in flight (it is tried again later). Never rejects. */
  close(): Promise<void>;
}

/** Starts delivering notifications (`concurrency` at once). */
export function startNotifyWorker(
  settings: { readonly connection: ConnectionOptions; readonly prefix: string; readonly concurrency?: number },
  deps: NotifyProcessorDeps,
): NotifyWorker {
  const worker = new Worker(NOTIFY_QUEUE, createNotifyProcessor(deps), {
    connection: settings.connection,
    prefix: settings.prefix,
    concurrency: settings.concurrency ?? 4,
    // A delivery whose worker died is delivered again: receivers drop repeats by the notification's id.
    maxStalledCount: 3,
  });
  worker.on('error', (err) => deps.log.warn({ err: redisErrorText(err) }, 'notification worker error'));
  return {
    async close() {
      await worker.close(true).catch(() => undefined);
    },
  };
}
