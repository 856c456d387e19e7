/**
 * The record of notification deliveries, per batch: every attempt to every address (its host
 * only, never its path or query, which may hold a receiver's token), with the answer's status.
 * Kept in the Redis list `<prefix>:notify:deliveries:<batchId>`, the last `KEPT` attempts.
 */
import type { Redis } from 'ioredis';

/** Attempts kept per batch. */
const KEPT = 500;

/** One delivery attempt. */
export interface DeliveryAttempt {
  /** The notification's event, e.g. `batch.finished`. */
  readonly event: string;
  /** Id of the notification (the same for every attempt and address). */
  readonly id: string;
  /** Host (and port) of the receiving address. */
  readonly host: string;
  /** 1 for the first try. */
  readonly attempt: number;
  /** HTTP status answered, or 0 when none came (refused, timed out). */
  readonly status: number;
  readonly ok: boolean;
  /** Why it failed, in words (never the receiver's answer body). */
  readonly error?: string;
  /** ISO time of the attempt. */
  readonly at: string;
}

const key = (prefix: string, batchId: string) => `${prefix}:notify:deliveries:${batchId}`;

/** Appends an attempt to its batch's record. */
export async function recordDelivery(
  redis: Redis,
  prefix: string,
  batchId: string,
  attempt: DeliveryAttempt,
): Promise<void> {
  const list = key(prefix, batchId);
  await redis.multi().rpush(list, JSON.stringify(attempt)).ltrim(list, -KEPT, -1).exec();
}

/** The batch's delivery attempts, oldest first. */
export async function listDeliveries(redis: Redis, prefix: string, batchId: string): Promise<DeliveryAttempt[]> {
  return (await redis.lrange(key(prefix, batchId), 0, -1)).map((raw) => JSON.parse(raw) as DeliveryAttempt);
}

/** Host (and port) of `url`, for records and logs. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid address';
  }
}
