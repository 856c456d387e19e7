/**
 * `summary.html`: the batch report people read and print. One self-contained page (no network
 * needed to open it): the batch's facts, counts and EGP totals per status and per channel, a bar
 * chart of rows per status (Chart.js, inlined) with the same numbers in a table so the page reads
 * without scripts, what each status means for the money, the rows that need attention, the
 * approval story and the reconciliation findings. Laid out for A4.
 *
 * The page is an Eta template (`templates/summary.eta`) with auto-escaping: everything that comes
 * from data is HTML-escaped; only the two scripts below are inserted raw. A Content-Security-Policy
 * allows exactly those two scripts (by hash) and no network at all.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Eta } from 'eta';
import { AMOUNT_PATTERN } from '../money.js';
import { PACKAGE_ROOT } from '../paths.js';
import { groupDigits } from '../money.js';
import { ATTENTION_LIMIT, ROW_STATUSES, type ReportSummary, type RowStatus, type Tally } from './report-summary.js';

/** A row that needs a person's attention (status invalid, rejected, unknown, not_sent or duplicate), as in results.csv. */
export interface AttentionRow {
  line: number;
  channel: string;
  reference: string;
  holder_name: string;
  amount: string;
  status: string;
  request: string;
  message: string;
  errors: string;
}

/** One step of the batch's approval story (the ledger's approval events). */
export interface ApprovalEntry {
  action: 'imported' | 'approval_required' | 'approved' | 'cancelled' | 'expired' | 'pay_again' | 'retried';
  by: string;
  at: string;
  note?: string;
}

export interface SummaryHtmlInput {
  summary: ReportSummary;
  /** Rows with status invalid | rejected | unknown | not_sent | duplicate, at most ATTENTION_LIMIT of them, in input order. */
  attention: readonly AttentionRow[];
  /** How many such rows exist in all (may exceed `attention.length`). */
  attentionTotal: number;
  approvals: readonly ApprovalEntry[];
  /** ISO time the page is written. */
  generatedAt: string;
}

/** Folder of the page's templates (the same from `src/` and from the compiled `dist/src/`). */
export const TEMPLATES_DIR = join(PACKAGE_ROOT, 'src', 'results', 'templates');

/** Bar colours per status (light enough to print on any printer). */
const STATUS_COLOURS: Record<RowStatus, string> = {
  accepted: '#4caf50',
  rejected: '#e57373',
  unknown: '#ffb74d',
  not_sent: '#90a4ae',
  invalid: '#ba68c8',
  duplicate: '#bdbdbd',
  pending: '#64b5f6',
};

const APPROVAL_LABELS: Record<ApprovalEntry['action'], string> = {
  imported: 'imported',
  approval_required: 'approval required',
  approved: 'approved',
  cancelled: 'cancelled',
  expired: 'expired',
  pay_again: 'payees paid again on purpose',
  retried: 'request retried',
};

/**
 * Makes text safe as the content of an inline <script>: the parser must not see `</script` (which
 * would end the element) or `<!--` (which changes how it looks for the end). Both rewrites mean the
 * same inside JS strings, regular expressions and comments. Line ends are normalised the way the
 * HTML parser does, so the CSP hash matches what the browser hashes.
 */
export function scriptSafe(js: string): string {
  return js
    .replace(/\r\n?/g, '\n')
    .replace(/<\/(script)/gi, '<\\/$1')
    .replace(/<!--/g, '\\x3C!--');
}

/** JSON that can sit inside a <script>: `<`, `>`, `&` and the JS line separators are \u-escaped. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function cspHash(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
}

/** The Chart.js UMD build, read once. Its `package.json` exports do not list the file, so it is found beside the main entry. */
function loadChartJs(): string {
  const main = createRequire(import.meta.url).resolve('chart.js');
  return scriptSafe(readFileSync(join(dirname(main), 'chart.umd.min.js'), 'utf8'));
}

const CHART_JS = loadChartJs();
const CHART_JS_HASH = cspHash(CHART_JS);

const eta = new Eta({ views: TEMPLATES_DIR, autoEscape: true, cache: true });

/** "1234567.50" → "1,234,567.50"; anything that is not an EGP amount (an invalid row's cell) is shown as given. */
export function formatAmount(amount: string): string {
  return AMOUNT_PATTERN.test(amount) ? groupDigits(amount) : amount;
}

function formatCount(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The service's address as shown: user, password, query and fragment are dropped, so no secret can ride along. */
export function displayServiceUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return raw.replace(/\/\/[^/@]*@/, '//').replace(/[?#].*$/, '');
  }
  if (!u.username && !u.password && !u.search && !u.hash) return raw;
  u.username = '';
  u.password = '';
  u.search = '';
  u.hash = '';
  return u.toString();
}

function tallyView(t: Tally) {
  return { rows: formatCount(t.rows), amount: `${formatAmount(t.amount)}${withoutAmountWords(t)}` };
}

/** " and 2 rows with no valid amount": the rows a tally counts that its EGP total cannot hold; "" when none. */
export function withoutAmountWords(t: Tally): string {
  const n = t.withoutAmount ?? 0;
  if (n === 0) return '';
  return ` and ${formatCount(n)} ${n === 1 ? 'row' : 'rows'} with no valid amount`;
}

/** The chart's setup script: a bar per status, each bar labelled with its count so the printed chart needs no tooltip. */
function chartInitScript(labels: readonly string[], counts: readonly number[], colours: readonly string[]): string {
  const config = {
    type: 'bar',
    data: {
      labels,
      datasets: [{ label: 'Rows', data: counts, backgroundColor: colours, borderColor: '#424242', borderWidth: 1 }],
    },
    options: {
      responsive: false,
      animation: false,
      devicePixelRatio: 3,
      plugins: { legend: { display: false }, tooltip: { enabled: true } },
      scales: { y: { beginAtZero: true, ticks: { precision: 0 }, grace: '10%' } },
    },
  };
  return scriptSafe(`(function () {
  'use strict';
  var canvas = document.getElementById('status-chart');
  if (!canvas || typeof Chart === 'undefined') return;
  var config = ${jsonForScript(config)};
  config.plugins = [{
    id: 'barCounts',
    afterDatasetsDraw: function (chart) {
      var ctx = chart.ctx;
      var meta = chart.getDatasetMeta(0);
      var data = chart.data.datasets[0].data;
      ctx.save();
      ctx.fillStyle = '#000';
      ctx.font = '12px sans-serif';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'bottom';
      meta.data.forEach(function (bar, i) {
        ctx.fillText(String(data[i]).replace(/\\B(?=(\\d{3})+(?!\\d))/g, ','), bar.x, bar.y - 3);
      });
      ctx.restore();
    }
  }];
  new Chart(canvas, config);
})();
`);
}

/** Renders summary.html for a batch. Pure: the caller writes the file. */
export function renderSummaryHtml(input: SummaryHtmlInput): string {
  const s = input.summary;
  const shownStatuses = ROW_STATUSES.filter((st) => st !== 'pending' || s.byStatus.pending.rows > 0);
  const byStatus = shownStatuses.map((status) => ({ status, ...tallyView(s.byStatus[status]) }));
  const byChannel = Object.keys(s.byChannel)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((channel) => ({ channel, ...tallyView(s.byChannel[channel]!) }));

  const shown = input.attention.slice(0, ATTENTION_LIMIT);
  const moreRows = Math.max(input.attentionTotal, input.attention.length) - shown.length;
  const attention = shown.map((r) => ({
    line: String(r.line),
    status: r.status,
    channel: r.channel,
    reference: r.reference,
    holder: r.holder_name,
    amount: formatAmount(r.amount),
    request: r.request,
    message: r.message,
    errors: r.errors,
  }));

  const chartInit = chartInitScript(
    shownStatuses,
    shownStatuses.map((st) => s.byStatus[st].rows),
    shownStatuses.map((st) => STATUS_COLOURS[st]),
  );
  const csp = [
    "default-src 'none'",
    `script-src ${CHART_JS_HASH} ${cspHash(chartInit)}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');

  return eta.render('summary', {
    csp,
    batchId: s.batchId,
    generatedAt: input.generatedAt,
    facts: [
      { label: 'Batch', value: s.batchId, code: true },
      { label: 'File name', value: s.fileName, auto: true },
      { label: 'SHA-256', value: s.sha256, code: true },
      { label: 'State', value: s.batchState.replace(/_/g, ' ') },
      { label: 'Rows', value: formatCount(s.rows) },
      { label: 'Withdrawal requests', value: formatCount(s.requests) },
      { label: 'Started', value: s.startedAt },
      { label: 'Finished', value: s.finishedAt ?? 'not finished' },
      { label: 'Service address', value: displayServiceUrl(s.serviceUrl), code: true },
      { label: 'Report written', value: s.reportWrittenAt },
    ],
    haltReason: s.haltReason ?? '',
    refusalReason: s.refusalReason ?? '',
    follows: s.follows ?? '',
    supersededBy: s.supersededBy ?? '',
    awaitingApproval: s.batchState === 'awaiting_approval',
    byStatus,
    statusTotal: tallyView(s.total),
    byChannel,
    channelTotal: tallyView(s.total),
    attention,
    attentionTotal: formatCount(Math.max(input.attentionTotal, input.attention.length)),
    moreRows: moreRows > 0 ? formatCount(moreRows) : '',
    moreRowsWord: moreRows === 1 ? 'row' : 'rows',
    approvals: input.approvals.map((a) => ({
      action: APPROVAL_LABELS[a.action] ?? a.action,
      by: a.by,
      at: a.at,
      note: a.note ?? '',
    })),
    resolutions: s.resolutions.map((r) => ({
      request: String(r.request),
      finding: r.finding.replace(/_/g, ' '),
      by: r.by,
      at: r.at,
      note: r.note,
    })),
    chartJs: CHART_JS,
    chartInit,
  });
}
