/**
 * Processor of the inbox queue: one job = one scan of the inbox folder (src/inbox/scan-inbox.ts).
 * The job data is ignored; the result stored on the job is counts only (no personal data). A
 * file that cannot be imported is not a failed job (it goes to `failed/` with a note); the job
 * fails only when the inbox itself cannot be read, and the next tick scans again.
 */
import type { Job } from 'bullmq';
import { scanInbox, type ScanDeps, type ScanReport } from '../src/inbox/scan-inbox.js';

/** Result stored on a completed scan job. */
export interface ScanJobResult {
  readonly done: number;
  readonly failed: number;
  /** Left in processing/ after an error that was not the file's fault; taken again later. */
  readonly retry: number;
  readonly refused: number;
  readonly waiting: number;
  /** Of `waiting`: files whose last line has no line break yet. */
  readonly unfinished: number;
}

/** Counts of a scan. */
export function scanCounts(report: ScanReport): ScanJobResult {
  const count = (result: string) => report.taken.filter((t) => t.result === result).length;
  return {
    done: count('done'),
    failed: count('failed'),
    retry: count('retry'),
    refused: report.refused.length,
    waiting: report.waiting.length,
    unfinished: report.unfinished.length,
  };
}

/** Builds the processor function. */
export function createScanInboxProcessor(deps: ScanDeps) {
  return async (job: Job): Promise<ScanJobResult> => {
    const log = deps.log.child({ jobId: job.id });
    const report = await scanInbox({ ...deps, log });
    const counts = scanCounts(report);
    if (report.taken.length > 0 || report.stopped)
      log.info({ ...counts, stopped: report.stopped }, 'inbox scan finished');
    else log.debug(counts, 'inbox scan finished; nothing to take');
    return counts;
  };
}
