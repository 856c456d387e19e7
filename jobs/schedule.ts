/**
 * The inbox queue and its schedule.
 *
 * | queue          | job name   | processor      | options                                              |
 * |----------------|------------|----------------|------------------------------------------------------|
 * | cashout-inbox  | scan-inbox | scan-inbox.ts  | job scheduler "inbox-scan": CASHOUT_SCHEDULE cron in  |
 * |                |            |                | CASHOUT_TIMEZONE; concurrency 1 per worker           |
 *
 * `cashout scheduler` registers the job scheduler with `upsertJobScheduler` (idempotent: every
 * scheduler process registers the same id; the last settings win) and runs a worker whose job is
 * one inbox scan. Any number of scheduler processes may run: BullMQ hands each tick's job to one
 * worker, and even when scans overlap (a `--once` run, a stalled job run again) a file is taken
 * by one scan only (an atomic rename, see src/inbox/scan-inbox.ts).
 *
 * What daylight-saving changes do to the schedule: see DAYLIGHT SAVING below.
 */
import { Queue, Worker, getNextMillis, type ConnectionOptions, type Job, type RepeatOptions } from 'bullmq';
import type { Logger } from 'pino';
import { CashoutError } from '../src/errors.js';
import type { ScanJobResult } from './scan-inbox.js';
import { redisErrorText } from '../src/queue/connection.js';

// DAYLIGHT SAVING. Egypt (Africa/Cairo, the default time zone) reinstated summer time in 2023:
// it starts on the last Friday of April at 00:00 (clocks jump to 01:00) and ends on the last
// Thursday of October at 24:00 (clocks go back to 23:00 Thursday). BullMQ computes each next run
// with cron-parser in the configured time zone; with bullmq 6.7 and cron-parser 5.10 (checked by
// test/inbox/scan-inbox.test.ts):
// - Spring: local 00:00-00:59 of that Friday does not exist. The default `*/5 * * * *` keeps
//   running every five minutes of real time (23:55 EET is followed by 01:00 EEST, five minutes
//   later): nothing is missed. A pattern naming a time inside the skipped hour (`30 0 * * *`)
//   does not run that day.
// - Autumn: local 23:00-23:59 of that Thursday happens twice. `*/5 * * * *` runs through both
//   (still every five minutes of real time, so each wall-clock time of that hour is seen twice);
//   an hourly `0 * * * *` runs at both 23:00s; a pattern naming one time of that hour
//   (`30 23 * * *`) runs once, at the first (summer-time) occurrence.
// - A repeated or extra scan is harmless: taking a file is atomic and content imported before is
//   refused by the ledger, so no file is imported twice. A skipped run only delays files to the
//   next run.
// - The zone rules come from Node.js's ICU data (Node 20 has Egypt's 2023 rules). Set
//   CASHOUT_TIMEZONE=UTC for a schedule without such changes.

/** Name of the inbox queue (same key prefix as the submit queue). */
export const INBOX_QUEUE = 'cashout-inbox';

/** Id of the job scheduler that adds one scan job per tick. */
export const INBOX_SCHEDULER_ID = 'inbox-scan';

/** Name of the scan jobs. */
export const INBOX_JOB_NAME = 'scan-inbox';

/** When scans run. */
export interface InboxSchedule {
  /** Cron pattern (CASHOUT_SCHEDULE). */
  readonly pattern: string;
  /** IANA time zone of the pattern (CASHOUT_TIMEZONE). */
  readonly tz: string;
}

/** The repeat options registered for a schedule. */
export function inboxRepeatOptions(schedule: InboxSchedule): Omit<RepeatOptions, 'key'> {
  return { pattern: schedule.pattern, tz: schedule.tz };
}

/**
 * Checks a schedule before anything is registered: an unknown time zone or a pattern that does
 * not parse (or never fires) is a configuration error naming the variable.
 */
export function checkInboxSchedule(schedule: InboxSchedule, nowMs = Date.now()): InboxSchedule {
  try {
    new Intl.DateTimeFormat('en', { timeZone: schedule.tz });
  } catch {
    throw new CashoutError(
      'config_invalid',
      `setting CASHOUT_TIMEZONE is invalid: "${schedule.tz}" is not a known time zone (e.g. Africa/Cairo, UTC)`,
      { key: 'CASHOUT_TIMEZONE' },
    );
  }
  let next: number | undefined;
  try {
    next = getNextMillis(nowMs, inboxRepeatOptions(schedule));
  } catch (err) {
    throw new CashoutError(
      'config_invalid',
      `setting CASHOUT_SCHEDULE is invalid: "${schedule.pattern}" is not a cron pattern (${(err as Error).message})`,
      { key: 'CASHOUT_SCHEDULE' },
    );
  }
  if (next === undefined || !Number.isFinite(next)) {
    throw new CashoutError('config_invalid', `setting CASHOUT_SCHEDULE is invalid: "${schedule.pattern}" never runs`, {
      key: 'CASHOUT_SCHEDULE',
    });
  }
  return schedule;
}

/** Registers (or updates) the job scheduler; returns when the next scan is due (ms since epoch). */
export async function registerInboxSchedule(queue: Queue, schedule: InboxSchedule): Promise<number | undefined> {
  const job = await queue.upsertJobScheduler(INBOX_SCHEDULER_ID, inboxRepeatOptions(schedule), {
    name: INBOX_JOB_NAME,
    data: {},
    // A scan that failed is simply run again at the next tick.
    opts: { attempts: 1, removeOnComplete: { count: 200 }, removeOnFail: { count: 500 } },
  });
  return job?.timestamp !== undefined && job.delay !== undefined ? job.timestamp + job.delay : undefined;
}

/** Starts the worker that runs the scan jobs, one at a time in this process. */
export function startInboxWorker(
  settings: { readonly connection: ConnectionOptions; readonly prefix: string },
  processor: (job: Job) => Promise<ScanJobResult>,
  log: Logger,
): Worker {
  const worker = new Worker(INBOX_QUEUE, processor, {
    connection: settings.connection,
    prefix: settings.prefix,
    concurrency: 1,
  });
  worker.on('failed', (job, err) =>
    log.error({ jobId: job?.id, err: err.message }, 'inbox scan failed; the next tick scans again'),
  );
  worker.on('error', (err) => log.error({ err: redisErrorText(err) }, 'inbox worker error'));
  return worker;
}
