/**
 * Ledger + input → report. `results.csv` has one row per data row of the input, in input order,
 * each with exactly one status; it is written by streaming the batch's copy of the input again and
 * joining each row with its outcome (invalid rows from `row-notes.jsonl`, the others from their
 * withdrawal request in the ledger), so no per-row map is held. `summary.json` gives counts and
 * EGP totals (decimal strings) per status and per channel. Can be rerun at any time.
 */
import { createReadStream } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { indexHeader, type HeaderIndex } from '../import/columns.js';
import { readRecords } from '../import/read-rows.js';
import { describeIssues } from '../import/reasons.js';
import { alignCells } from '../import/field-count.js';
import { AMOUNT_PATTERN, formatPiasters, toPiasters } from '../money.js';
import { CashoutError } from '../errors.js';
import type { BatchRecord, Ledger, LedgerRequest } from '../ledger/index.js';
import { openCsvOut, type CsvOutOptions } from './csv-out.js';
import { renderSummaryHtml, type AttentionRow } from './summary-html.js';
import {
  ATTENTION_LIMIT,
  ATTENTION_STATUSES,
  NO_CHANNEL,
  ROW_STATUSES,
  type ReportSummary,
  type RowStatus,
  type Tally,
} from './report-summary.js';
import { BATCH_FILES, type RowNote } from './batch-files.js';
import { randomBytes } from 'node:crypto';
import { STOPPED_IMPORT_ENDS } from '../ledger/lifecycle.js';

export { NO_CHANNEL, ROW_STATUSES, type ReportSummary, type RowStatus, type Tally } from './report-summary.js';

/** Columns of results.csv. */
/** The message of a row of a batch still staging: its import has not finished, or its process stopped. */
const STAGING_MESSAGE = `not sent: the import of this batch has not finished (or its process stopped); if it stopped, ${STOPPED_IMPORT_ENDS}, and its rows may then be imported again`;

export const RESULT_COLUMNS = [
  'line',
  'channel',
  'reference',
  'holder_name',
  'amount',
  'status',
  'request',
  'http_status',
  'message',
  'errors',
  'warnings',
] as const;

interface RowOutcome {
  status: RowStatus;
  request: number | undefined;
  httpStatus: number | undefined;
  message: string;
  errors: string;
}

async function* readNotes(path: string): AsyncGenerator<RowNote> {
  let stream;
  try {
    stream = createReadStream(path);
    for await (const l of createInterface({ input: stream, crlfDelay: Infinity })) {
      if (l.trim() !== '') yield JSON.parse(l) as RowNote;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
}

function outcomeFromRequest(req: LedgerRequest, line: number): RowOutcome | 'follow' {
  const res = req.resolution;
  const reconciled = res
    ? ` (reconciled as ${res.finding.replace('_', ' ')} by ${res.by} on ${res.at}: ${res.note})`
    : '';
  const base = {
    request: req.seq,
    httpStatus: req.httpStatus,
    message: `${req.message ?? ''}${req.state === 'reconciled_created' ? '' : reconciled}`,
    errors: '',
  };
  switch (req.state) {
    case 'accepted':
      return { ...base, status: 'accepted' };
    case 'reconciled_created':
      return {
        ...base,
        status: 'accepted',
        message: `accepted (reconciled): created by the service, as ${res?.by ?? 'staff'} found on ${res?.at ?? '?'}: ${res?.note ?? ''}`,
      };
    case 'rejected': {
      const own = req.rowErrors?.[String(line)];
      if (own) return { ...base, status: 'rejected', errors: own.join('; ') };
      if (req.resentAs !== undefined) return 'follow';
      return { ...base, status: 'rejected' };
    }
    case 'unknown':
      return { ...base, status: 'unknown' };
    case 'not_sent':
      return { ...base, status: 'not_sent' };
    case 'reconciled_not_created':
      return {
        ...base,
        status: 'pending',
        message: `not sent again yet: resolved as not created by ${res?.by ?? 'staff'} on ${res?.at ?? '?'} (${res?.note ?? ''}); it is sent when someone retries request ${req.seq} (cashout retry ${req.batchId} ${req.seq}, or Retry on the batch page)`,
      };
    case 'sending':
      return { ...base, status: 'pending', message: 'being sent: its outcome is not recorded yet' };
    default:
      return { ...base, status: 'pending', message: 'waiting to be sent' };
  }
}

/** Outcome of `line`, which belongs to `req`, following 422 resends to the request that decided it. */
async function rowOutcome(
  ledger: Ledger,
  req: LedgerRequest,
  line: number,
  cache: Map<number, LedgerRequest>,
): Promise<RowOutcome> {
  let current = req;
  for (let hops = 0; hops < 10_000; hops++) {
    const o = outcomeFromRequest(current, line);
    if (o !== 'follow') return o;
    const next = current.resentAs!;
    let child = cache.get(next);
    if (!child) {
      child = await ledger.getRequest(current.batchId, next, { body: false });
      if (!child) break;
      cache.set(next, child);
    }
    current = child;
  }
  return {
    status: 'unknown',
    request: current.seq,
    httpStatus: undefined,
    message: 'request record missing from the ledger',
    errors: '',
  };
}

function emptyTallies(): Record<RowStatus, Tally> {
  return Object.fromEntries(ROW_STATUSES.map((s) => [s, { rows: 0, amount: '0.00' }])) as Record<RowStatus, Tally>;
}

/**
 * Writes results.csv and summary.json for a batch into its report folder and returns the summary.
 * `csv` says how results.csv is written (its byte-order mark: `Config.csvBom`).
 * Throws `CashoutError('batch_not_found')` for an unknown batch id.
 */
export async function writeReport(ledger: Ledger, batchId: string, csv: CsvOutOptions = {}): Promise<ReportSummary> {
  const batch = await ledger.getBatch(batchId);
  if (!batch) throw new CashoutError('batch_not_found', `no batch ${batchId} in the ledger`, { batchId });
  return writeReportFor(ledger, batch, csv);
}

async function writeReportFor(ledger: Ledger, batch: BatchRecord, csv: CsvOutOptions): Promise<ReportSummary> {
  const dir = batch.reportDir;
  const out = openCsvOut(join(dir, BATCH_FILES.results), RESULT_COLUMNS, csv);
  const notes = readNotes(join(dir, BATCH_FILES.notes))[Symbol.asyncIterator]();
  let nextNote = await notes.next();
  // Sums in piasters per tally; the decimal strings are written once, at the end.
  const totals = new Map<Tally, bigint>();
  const byStatus = emptyTallies();
  const byChannel: Record<string, Tally> = {};
  const total: Tally = { rows: 0, amount: '0.00' };
  const attention: AttentionRow[] = [];
  let attentionTotal = 0;
  const add = (t: Tally, piasters: bigint | undefined) => {
    t.rows++;
    if (piasters !== undefined) totals.set(t, (totals.get(t) ?? 0n) + piasters);
    else t.withoutAmount = (t.withoutAmount ?? 0) + 1;
  };
  let warningRows = 0;

  let seq = 0;
  let req: LedgerRequest | undefined;
  let reqLines: number[] = [];
  let reqPos = 0;
  const cache = new Map<number, LedgerRequest>();
  let sharedOutcome: RowOutcome | undefined;
  // Requests are read a few ahead of the rows (one round trip each, without their bodies).
  const AHEAD = 8;
  const ahead = new Map<number, Promise<LedgerRequest | undefined>>();
  const fetchRequest = (n: number) => {
    let p = ahead.get(n);
    if (!p) {
      p = ledger.getRequest(batch.id, n, { body: false });
      ahead.set(n, p);
    }
    return p;
  };
  const nextRequest = async () => {
    seq++;
    for (let n = seq + 1; n <= Math.min(batch.requests, seq + AHEAD); n++) void fetchRequest(n).catch(() => undefined);
    req = seq <= batch.requests ? await fetchRequest(seq) : undefined;
    ahead.delete(seq);
    reqLines = req ? [...req.walletLines, ...req.bankLines].sort((a, b) => a - b) : [];
    reqPos = 0;
    sharedOutcome = undefined;
    cache.clear();
  };
  await nextRequest();

  let header: HeaderIndex | undefined;
  let width = 0;
  const cell = (cells: readonly string[], col: keyof HeaderIndex) => {
    const i = header![col];
    return i < 0 ? '' : (cells[i] ?? '');
  };
  // Read the batch's copy of the input the way it was imported (delimiter, encoding); no size
  // limits here: the file was accepted once already.
  const readAs = {
    ...(batch.delimiter ? { delimiter: batch.delimiter } : {}),
    ...(batch.encoding ? { encoding: batch.encoding } : {}),
    maxBytes: Number.MAX_SAFE_INTEGER,
    maxRows: Number.MAX_SAFE_INTEGER,
    maxRecordBytes: 256 * 1024 * 1024,
  };
  for await (const record of readRecords(join(dir, BATCH_FILES.input), readAs)) {
    if (!header) {
      header = indexHeader(record.cells);
      width = Math.max(...Object.values(header)) + 1;
      continue;
    }
    const line = record.line;
    // A row with the wrong number of fields shows its own cells, or none (src/import/field-count.ts).
    const cells = alignCells(record.cells, width, batch.delimiter ?? ',') ?? [];
    let o: RowOutcome;
    let note: RowNote | undefined;
    if (!nextNote.done && nextNote.value.line === line) {
      note = nextNote.value;
      nextNote = await notes.next();
    }
    if (note?.status === 'invalid') {
      o = {
        status: 'invalid',
        request: undefined,
        httpStatus: undefined,
        message: 'row not valid; not sent',
        errors: describeIssues(note.issues ?? []),
      };
    } else if (note?.status === 'duplicate') {
      o = {
        status: 'duplicate',
        request: undefined,
        httpStatus: undefined,
        message: note.message ?? 'not sent: reference already paid',
        errors: '',
      };
    } else if (req && reqLines[reqPos] === line) {
      // Rows of a request share its outcome unless it was rejected (each row may have its own reasons).
      if (req.state === 'rejected') o = await rowOutcome(ledger, req, line, cache);
      else o = sharedOutcome ??= outcomeFromRequest(req, line) as RowOutcome;
      if (o.status === 'pending' && batch.state === 'staging') o = { ...o, message: STAGING_MESSAGE };
      else if (o.status === 'pending' && batch.state === 'cancelled')
        o = { ...o, status: 'not_sent', message: 'not sent: the batch was cancelled before approval' };
      else if (o.status === 'pending' && batch.state === 'awaiting_approval')
        o = { ...o, message: 'awaiting approval; nothing is sent before it' };
      reqPos++;
      if (reqPos >= reqLines.length) await nextRequest();
    } else if (batch.state === 'staging') {
      // Not read yet, or its import stopped: nothing of the batch is sent, and it still holds its
      // payees; it is not safe to pay again until the batch is refused.
      o = { status: 'pending', request: undefined, httpStatus: undefined, message: STAGING_MESSAGE, errors: '' };
    } else {
      o = {
        status: 'not_sent',
        request: undefined,
        httpStatus: undefined,
        message:
          batch.state === 'refused'
            ? `not queued: batch refused: ${batch.refusalReason ?? 'the file has invalid rows'}${
                batch.supersededBy ? `; the file was imported again as batch ${batch.supersededBy}` : ''
              }`
            : 'not queued',
        errors: '',
      };
    }
    const amount = cell(cells, 'amount');
    const channel = cell(cells, 'channel');
    const piasters = AMOUNT_PATTERN.test(amount) ? toPiasters(amount) : undefined;
    add(byStatus[o.status], piasters);
    // Only the two channels the service knows; any other value (an invalid row's) is grouped apart.
    add(
      (byChannel[channel === 'wallet' || channel === 'bank' ? channel : NO_CHANNEL] ??= { rows: 0, amount: '0.00' }),
      piasters,
    );
    add(total, piasters);
    if ((note?.warnings ?? []).length > 0) warningRows++;
    const writing = out.write([
      line,
      channel,
      cell(cells, 'reference'),
      cell(cells, 'holder_name'),
      amount,
      o.status,
      o.request,
      o.httpStatus,
      o.message,
      o.errors,
      (note?.warnings ?? []).join('; '),
    ]);
    if (writing) await writing;
    if ((ATTENTION_STATUSES as readonly string[]).includes(o.status)) {
      attentionTotal++;
      if (attention.length < ATTENTION_LIMIT) {
        attention.push({
          line,
          channel,
          reference: cell(cells, 'reference'),
          holder_name: cell(cells, 'holder_name'),
          amount,
          status: o.status,
          request: o.request === undefined ? '' : String(o.request),
          message: o.message,
          errors: o.errors,
        });
      }
    }
  }
  await out.close();
  for (const [t, sum] of totals) t.amount = formatPiasters(sum);

  const resolutions = await ledger.listResolutions(batch.id);
  const lastSeq = await ledger.lastSeq(batch.id);
  const summary: ReportSummary = {
    batchId: batch.id,
    fileName: batch.fileName,
    sha256: batch.sha256,
    batchState: batch.state,
    rows: total.rows,
    requests: lastSeq,
    byStatus,
    byChannel,
    total,
    startedAt: batch.createdAt,
    finishedAt: batch.finishedAt ?? null,
    reportWrittenAt: new Date().toISOString(),
    serviceUrl: batch.serviceUrl,
    ...(batch.haltReason ? { haltReason: batch.haltReason } : {}),
    ...(batch.refusalReason ? { refusalReason: batch.refusalReason } : {}),
    ...(batch.follows ? { follows: batch.follows } : {}),
    ...(batch.supersededBy ? { supersededBy: batch.supersededBy } : {}),
    approvals: await ledger.listApprovals(batch.id),
    resolutions,
    warningRows,
  };
  const tmp = join(dir, `${BATCH_FILES.summary}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  await writeFile(tmp, `${JSON.stringify(summary, null, 2)}\n`, { mode: 0o600 });
  await rename(tmp, join(dir, BATCH_FILES.summary));
  const html = renderSummaryHtml({
    summary,
    attention,
    attentionTotal,
    approvals: summary.approvals,
    generatedAt: summary.reportWrittenAt,
  });
  const htmlTmp = join(dir, `${BATCH_FILES.summaryHtml}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  await writeFile(htmlTmp, html, { mode: 0o600 });
  await rename(htmlTmp, join(dir, BATCH_FILES.summaryHtml));
  return summary;
}
