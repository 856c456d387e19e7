/**
 * Queues notifications: one job per receiving address on the BullMQ queue `cashout-notify`, which
 * `cashout worker` delivers (jobs/deliver-notification.ts). Queuing never throws: a notification
 * that cannot be queued is logged and the batch goes on; a receiver that fails is retried by the
 * queue with exponential backoff, off the batch's path.
 */
import { Queue, type ConnectionOptions } from 'bullmq';
import { z } from 'zod';
import type { Logger } from 'pino';
import { hostOf } from './deliveries.js';
import { buildPayload, NOTIFY_EVENTS, type BatchFigures, type NotifyEvent } from './payload.js';
import { logQueueErrors } from '../queue/connection.js';

/** Name of the notification queue. */
export const NOTIFY_QUEUE = 'cashout-notify';

/** Job data of one delivery: the address, the batch, and the body exactly as it is sent. */
export const NotifyJobData = z.object({
  url: z.string().url(),
  batchId: z.string().regex(/^[0-9a-f]{16}$/),
  event: z.enum(NOTIFY_EVENTS),
  id: z.string().min(1),
  body: z.string().min(2),
});
export type NotifyJobData = z.infer<typeof NotifyJobData>;

/** Notification settings (CASHOUT_WEBHOOK_*, CASHOUT_DASHBOARD_URL). */
export interface NotifySettings {
  readonly urls: readonly string[];
  /** Tries per address (first included). */
  readonly attempts: number;
  /** First retry after this many ms; doubling. */
  readonly backoffMs: number;
  readonly dashboardUrl: string | undefined;
}

/** Queues notifications of batch events. */
export interface Notifier {
  /** Queues `event` for every address; `at` is the event's time (it makes the notification's id). Never throws. */
  notify(event: NotifyEvent, figures: BatchFigures, at?: Date): Promise<void>;
  close(): Promise<void>;
}

/** A notifier that queues nothing (no CASHOUT_WEBHOOK_URLS). */
export const NO_NOTIFIER: Notifier = { notify: async () => undefined, close: async () => undefined };

/** Opens the notification queue under `prefix`; `NO_NOTIFIER` when no address is configured. */
export function createNotifier(
  settings: NotifySettings,
  connection: ConnectionOptions,
  prefix: string,
  log: Logger,
): Notifier {
  if (settings.urls.length === 0) return NO_NOTIFIER;
  const queue = new Queue<NotifyJobData>(NOTIFY_QUEUE, { connection, prefix });
  logQueueErrors(queue, log, 'notification queue');
  return {
    async notify(event, figures, at = new Date()) {
      const payload = buildPayload(event, figures, settings.dashboardUrl, at);
      const body = JSON.stringify(payload);
      try {
        await queue.addBulk(
          settings.urls.map((url, i) => ({
            name: 'deliver-notification',
            data: { url, batchId: figures.batchId, event, id: payload.id, body },
            opts: {
              jobId: `${payload.id}.${i}`,
              attempts: settings.attempts,
              backoff: { type: 'exponential', delay: settings.backoffMs },
              removeOnComplete: { age: 7 * 24 * 3600, count: 10_000 },
              removeOnFail: { age: 30 * 24 * 3600 },
            },
          })),
        );
        log.info({ batchId: figures.batchId, event, to: settings.urls.map(hostOf) }, 'notification queued');
      } catch (err) {
        const reason = (err as Error).message;
        log.warn(
          { batchId: figures.batchId, event, err: reason },
          'notification could not be queued; the batch goes on',
        );
      }
    },
    close: () => queue.close(),
  };
}
