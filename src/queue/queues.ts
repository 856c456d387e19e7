/**
 * Queue names and options. The submit queue is where each withdrawal request is one job
 * (`{ batchId, seq }`, job id "<batchId>-<seq>"). Its safety settings are part of the
 * never-pay-twice design: one attempt per job (retries of a POST are decided by the ledger, never
 * by BullMQ), and `maxStalledCount: 0` so a job whose worker died goes to failed, not back to wait.
 */
import { z } from 'zod';
import type { JobsOptions } from 'bullmq';

/** Name of the submit queue. */
export const SUBMIT_QUEUE = 'cashout-submit';

/** Job data of a submission: which ledger request to send. Holds no personal data. */
export const SubmitJobData = z.object({
  batchId: z.string().regex(/^[0-9a-f]{16}$/),
  seq: z.number().int().positive(),
});
export type SubmitJobData = z.infer<typeof SubmitJobData>;

/**
 * Default options of submit jobs. Retention: completed jobs are kept 7 days (at most 10,000),
 * failed ones 30 days; the ledger keeps what reports need regardless.
 */
export const SUBMIT_JOB_OPTIONS: JobsOptions = {
  attempts: 1,
  removeOnComplete: { age: 7 * 24 * 3600, count: 10_000 },
  removeOnFail: { age: 30 * 24 * 3600 },
};

/** Worker settings that must not be changed for the submit queue. */
export const SUBMIT_WORKER_SAFETY = { maxStalledCount: 0 } as const;
