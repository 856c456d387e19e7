/**
 * What the HTTP API reads of a batch's report folder: the summary (counts and EGP totals per
 * status), a page of results.csv rows with a given status, and the problems an import found
 * (row-notes.jsonl). While a batch is not settled the report is written again before it is read,
 * at most once every few seconds (`REWRITE_AFTER_MS`, longer for a batch whose report takes long
 * to write), and never twice at once: callers that come meanwhile share the write. A settled
 * batch's report is written again only when the ledger changed since.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { BATCH_FILES, type RowNote } from '../batch/import-batch.js';
import { describeIssue, describeIssues } from '../import/reasons.js';
import type { BatchRecord, Ledger } from '../ledger/index.js';
import { writeReport, type ReportSummary, type RowStatus } from '../results/write-report.js';
import { summaryMatches } from '../results/batch-view.js';

/** Batch states after which the ledger changes a batch's rows only by a person's action. */
const SETTLED = new Set(['finished', 'needs_reconciliation', 'cancelled', 'refused']);

/**
 * The shortest time, ms, between two writes of the report of a batch being sent, for this process;
 * a report that took `t` ms to write is reused for `REWRITE_FACTOR × t` ms at least (a batch of
 * 500,000 rows takes seconds: polling it does not keep a core busy writing its report).
 */
export const REWRITE_AFTER_MS = 2_000;
const REWRITE_FACTOR = 5;
/** Most batches whose last write this process remembers. */
const REMEMBERED = 1_000;

/** Per report folder: the write in progress, and when the last one ended and how long it took (ms). */
const writes = new Map<string, { running?: Promise<ReportSummary>; endedAt: number; tookMs: number }>();

/** Writes the report of a batch being sent, or joins the write of it already in progress in this process. */
function writeShared(ledger: Ledger, batch: BatchRecord, bom: boolean | undefined): Promise<ReportSummary> {
  const last = writes.get(batch.reportDir);
  if (last?.running) return last.running;
  const started = Date.now();
  const running = writeReport(ledger, batch.id, { bom });
  const done = () => {
    writes.delete(batch.reportDir);
    writes.set(batch.reportDir, { endedAt: Date.now(), tookMs: Date.now() - started });
    if (writes.size > REMEMBERED) writes.delete(writes.keys().next().value!);
  };
  running.then(done, done);
  writes.set(batch.reportDir, { ...(last ?? { endedAt: 0, tookMs: 0 }), running });
  return running;
}

async function readSummary(batch: BatchRecord): Promise<ReportSummary | undefined> {
  try {
    return JSON.parse(await readFile(join(batch.reportDir, BATCH_FILES.summary), 'utf8')) as ReportSummary;
  } catch {
    return undefined;
  }
}

/**
 * The batch's summary.json, written first when it is missing or when the ledger changed since it
 * was written. A settled batch: another state or end time (a worker ended a retried request and
 * has not yet written the report again), or another number of findings or story steps (a finding
 * recorded by another process). A batch being sent: another state, or this process wrote its
 * report longer ago than `REWRITE_AFTER_MS` (or five times as long as that write took).
 */
export async function freshSummary(
  ledger: Ledger,
  batch: BatchRecord,
  bom: boolean | undefined,
): Promise<ReportSummary> {
  if (SETTLED.has(batch.state)) {
    const written = await readSummary(batch);
    if (written && (await writtenSince(ledger, batch, written))) return written;
    // Not a write in progress: it may have begun before the change that settled the batch.
    return writeReport(ledger, batch.id, { bom });
  }
  const last = writes.get(batch.reportDir);
  if (
    last !== undefined &&
    last.running === undefined &&
    Date.now() - last.endedAt < Math.max(REWRITE_AFTER_MS, REWRITE_FACTOR * last.tookMs)
  ) {
    const written = await readSummary(batch);
    if (written && summaryMatches(batch, written)) return written;
  }
  return writeShared(ledger, batch, bom);
}

/** Whether `s` was written after the ledger's last change to `batch` (same state, end, findings and story). */
async function writtenSince(ledger: Ledger, batch: BatchRecord, s: ReportSummary): Promise<boolean> {
  if (!summaryMatches(batch, s)) return false;
  const [resolutions, approvals] = await Promise.all([
    ledger.listResolutions(batch.id),
    ledger.listApprovals(batch.id),
  ]);
  return s.resolutions.length === resolutions.length && s.approvals.length === approvals.length;
}

/** One row of results.csv as the API lists it (amounts are EGP decimal strings, as in the input). */
export type ResultRow = Record<string, string>;

/**
 * Rows of results.csv whose status is `status` (every row when undefined), `perPage` rows from
 * page `page` (1 = first), and how many such rows there are. Call `freshSummary` first.
 */
export async function resultRows(
  batch: BatchRecord,
  status: RowStatus | undefined,
  page: number,
  perPage: number,
): Promise<{ rows: ResultRow[]; matching: number }> {
  const from = (page - 1) * perPage;
  const rows: ResultRow[] = [];
  let matching = 0;
  const parser = createReadStream(join(batch.reportDir, BATCH_FILES.results)).pipe(parse({ columns: true, bom: true }));
  for await (const row of parser as AsyncIterable<ResultRow>) {
    if (status !== undefined && row.status !== status) continue;
    if (matching >= from && rows.length < perPage) rows.push(row);
    matching++;
  }
  return { rows, matching };
}

/** A problem an import found in a row: invalid (with each issue) or a duplicate payee. */
export interface RowProblem {
  readonly line: number;
  readonly status: 'invalid' | 'duplicate';
  /** `column: reason` entries joined by "; ", as results.csv's `errors` column. */
  readonly message: string;
  readonly issues?: readonly { column: string; code: string; message: string }[];
}

/** The first `limit` problems of row-notes.jsonl, and whether there were more. */
export async function importProblems(
  batch: BatchRecord,
  limit: number,
): Promise<{ problems: RowProblem[]; more: boolean }> {
  const problems: RowProblem[] = [];
  let more = false;
  let stream;
  try {
    stream = createReadStream(join(batch.reportDir, BATCH_FILES.notes));
    for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
      if (text.trim() === '') continue;
      const note = JSON.parse(text) as RowNote;
      if (note.status === undefined) continue;
      if (problems.length === limit) {
        more = true;
        break;
      }
      const issues = note.issues ?? [];
      problems.push({
        line: note.line,
        status: note.status,
        message: note.status === 'invalid' ? describeIssues(issues) : (note.message ?? ''),
        ...(issues.length > 0
          ? { issues: issues.map((i) => ({ column: i.column, code: i.code, message: describeIssue(i) })) }
          : {}),
      });
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  } finally {
    stream?.destroy();
  }
  return { problems, more };
}
