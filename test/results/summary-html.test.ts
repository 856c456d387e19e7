/**
 * summary.html (src/results/summary-html.ts): the page people read and print. Totals per status and
 * channel with grouped EGP amounts, the rows that need attention with their reasons, everything
 * from data HTML-escaped, Arabic intact, and no network needed to open it (Chart.js inlined).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { ATTENTION_LIMIT } from '../../src/results/report-summary.js';
import {
  displayServiceUrl,
  renderSummaryHtml,
  scriptSafe,
  TEMPLATES_DIR,
  type AttentionRow,
  type SummaryHtmlInput,
} from '../../src/results/summary-html.js';
import type { ReportSummary, RowStatus, Tally } from '../../src/results/write-report.js';

const HOSTILE = '<script>alert(1)</script>';
const ARABIC = 'محمد عبد الرحمن';

function tallies(over: Partial<Record<RowStatus, Tally>>): Record<RowStatus, Tally> {
  const zero = { rows: 0, amount: '0.00' };
  return {
    accepted: zero,
    rejected: zero,
    unknown: zero,
    not_sent: zero,
    invalid: zero,
    duplicate: zero,
    pending: zero,
    ...over,
  };
}

function summary(over: Partial<ReportSummary> = {}): ReportSummary {
  return {
    batchId: 'b-20250301-abc123',
    fileName: 'march-payroll.csv',
    sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    batchState: 'needs_reconciliation',
    rows: 1240,
    requests: 25,
    byStatus: tallies({
      accepted: { rows: 1234, amount: '1234567.50' },
      rejected: { rows: 2, amount: '3000.00' },
      unknown: { rows: 1, amount: '12345678901234567.89' },
      not_sent: { rows: 1, amount: '0.05' },
      invalid: { rows: 1, amount: '999.99' },
      duplicate: { rows: 1, amount: '1000000.00' },
    }),
    byChannel: {
      wallet: { rows: 1000, amount: '987654.32' },
      bank: { rows: 240, amount: '24000000.00' },
    },
    total: { rows: 1240, amount: '12345678902475345.34' },
    startedAt: '2025-03-01T08:00:00.000Z',
    finishedAt: '2025-03-01T08:10:00.000Z',
    reportWrittenAt: '2025-03-01T08:11:00.000Z',
    serviceUrl: 'https://staging.payouts.example',
    approvals: [],
    resolutions: [
      { request: 7, finding: 'not_created', by: 'mona', at: '2025-03-02T09:00:00.000Z', note: 'not on the dashboard' },
    ],
    ...over,
  };
}

function row(over: Partial<AttentionRow> = {}): AttentionRow {
  return {
    line: 5,
    channel: 'bank',
    reference: 'PAY-0005',
    holder_name: 'Omar Khaled',
    amount: '1500.00',
    status: 'rejected',
    request: '3',
    message: 'the service refused the request',
    errors: 'iban: not a valid Egyptian IBAN',
    ...over,
  };
}

function input(over: Partial<SummaryHtmlInput> = {}): SummaryHtmlInput {
  const attention = over.attention ?? [
    row(),
    row({
      line: 9,
      status: 'invalid',
      request: '',
      amount: '1,500',
      message: 'row not valid; not sent',
      errors: 'amount: use digits and a dot, like 1500.00',
    }),
    row({ line: 12, status: 'unknown', request: '4', message: 'no answer within 30 s', errors: '' }),
  ];
  return {
    summary: summary(),
    attention,
    attentionTotal: attention.length,
    approvals: [
      { action: 'imported', by: 'ahmed', at: '2025-03-01T07:50:00.000Z' },
      { action: 'approved', by: 'sara', at: '2025-03-01T07:59:00.000Z', note: 'checked against payroll' },
    ],
    generatedAt: '2025-03-01T08:11:30.000Z',
    ...over,
  };
}

/** The page as rendered, with the bodies of its scripts cut out (so a failure does not print all of Chart.js). */
function render(i: SummaryHtmlInput): string {
  return renderSummaryHtml(i).replace(/<script>[\s\S]*?<\/script>/g, '<script>…</script>');
}

/** The <tr> whose first cell (th or td) reads `first`, as HTML. */
function rowOf(html: string, section: string, first: string): string {
  const sec = sectionOf(html, section);
  const rows = sec.match(/<tr[\s\S]*?<\/tr>/g) ?? [];
  const found = rows.find((r) =>
    new RegExp(`^<tr[^>]*><t[hd][^>]*>${first.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}</t[hd]>`).test(r),
  );
  if (!found) throw new Error(`no row ${first} in section ${section}`);
  return found;
}

function sectionOf(html: string, id: string): string {
  const m = html.match(new RegExp(`<section id="${id}">([\\s\\S]*?)</section>`));
  if (!m) throw new Error(`no section ${id}`);
  return m[1]!;
}

/** Cell texts of a row; a tag becomes `tagAs` (a space by default, so that block parts of a cell stay apart). */
function cells(tr: string, tagAs = ' '): string[] {
  return [...tr.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((m) =>
    m[1]!
      .replace(/<[^>]+>/g, tagAs)
      .replace(/\s+/g, ' ')
      .trim(),
  );
}

/** Bodies of the page's <script> elements. */
function scripts(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
}

function decodeEntities(s: string): string {
  return s
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

describe('renderSummaryHtml: totals', () => {
  const html = render(input());

  it.each([
    ['accepted', '1,234', '1,234,567.50'],
    ['rejected', '2', '3,000.00'],
    ['unknown', '1', '12,345,678,901,234,567.89'],
    ['not_sent', '1', '0.05'],
    ['invalid', '1', '999.99'],
    ['duplicate', '1', '1,000,000.00'],
    ['total', '1,240', '12,345,678,902,475,345.34'],
  ])('the status table has %s with %s rows and EGP %s (exact, grouped)', (status, rows, amount) => {
    expect(cells(rowOf(html, 'by-status', status))).toEqual([status, rows, amount]);
  });

  it('amounts and counts are right-aligned', () => {
    expect(rowOf(html, 'by-status', 'accepted')).toMatch(
      /<td class="num">1,234<\/td><td class="num">1,234,567.50<\/td>/,
    );
    expect(html).toMatch(/\.num \{[^}]*text-align: right/);
  });

  it('pending is listed only when some rows are pending', () => {
    expect(() => rowOf(html, 'by-status', 'pending')).toThrow(/no row pending/);
    const withPending = render(
      input({ summary: summary({ byStatus: tallies({ pending: { rows: 3, amount: '30.00' } }) }) }),
    );
    expect(cells(rowOf(withPending, 'by-status', 'pending'))).toEqual(['pending', '3', '30.00']);
  });

  it.each([
    ['bank', '240', '24,000,000.00'],
    ['wallet', '1,000', '987,654.32'],
    ['total', '1,240', '12,345,678,902,475,345.34'],
  ])('the channel table has %s with %s rows and EGP %s', (channel, rows, amount) => {
    expect(cells(rowOf(html, 'by-channel', channel))).toEqual([channel, rows, amount]);
  });

  it('shows the batch facts and never the service address credentials', () => {
    const page = render(
      input({
        summary: summary({
          serviceUrl: 'https://cashout:s3cr3t-pass@api.payouts.example/v1?token=tok_live_123#x',
          haltReason: 'the service refused the token (401)',
        }),
      }),
    );
    const facts = sectionOf(page, 'batch');
    expect(cells(rowOf(page, 'batch', 'File name'))).toEqual(['File name', 'march-payroll.csv']);
    expect(cells(rowOf(page, 'batch', 'SHA-256'))).toEqual([
      'SHA-256',
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    ]);
    expect(cells(rowOf(page, 'batch', 'State'))).toEqual(['State', 'needs reconciliation']);
    expect(cells(rowOf(page, 'batch', 'Rows'))).toEqual(['Rows', '1,240']);
    expect(cells(rowOf(page, 'batch', 'Withdrawal requests'))).toEqual(['Withdrawal requests', '25']);
    expect(cells(rowOf(page, 'batch', 'Started'))).toEqual(['Started', '2025-03-01T08:00:00.000Z']);
    expect(cells(rowOf(page, 'batch', 'Finished'))).toEqual(['Finished', '2025-03-01T08:10:00.000Z']);
    expect(cells(rowOf(page, 'batch', 'Service address'))).toEqual([
      'Service address',
      'https://api.payouts.example/v1',
    ]);
    expect(facts).toContain('b-20250301-abc123');
    expect(page).not.toContain('s3cr3t');
    expect(page).not.toContain('tok_live_123');
    expect(page).toContain('the service refused the token (401)');
    expect(page).toContain('<title>Payout batch b-20250301-abc123</title>');
    expect(page).toMatch(/<h1>Payout batch <span[^>]*>b-20250301-abc123<\/span><\/h1>/);
    expect(page).toContain('Generated at 2025-03-01T08:11:30.000Z');
  });

  it('an unfinished batch says so', () => {
    const page = render(input({ summary: summary({ finishedAt: null }) }));
    expect(cells(rowOf(page, 'batch', 'Finished'))).toEqual(['Finished', 'not finished']);
  });
});

describe('renderSummaryHtml: rows that need attention', () => {
  it('lists each row with line, status, reference, holder, amount and reason (message + errors)', () => {
    const html = render(input());
    const rows =
      (sectionOf(html, 'attention').match(/<tbody>[\s\S]*<\/tbody>/)?.[0] ?? '').match(/<tr>[\s\S]*?<\/tr>/g) ?? [];
    expect(rows.map((r) => cells(r))).toEqual([
      [
        '5',
        'rejected',
        'bank',
        'PAY-0005',
        'Omar Khaled',
        '1,500.00',
        'the service refused the request iban: not a valid Egyptian IBAN request 3',
      ],
      // An invalid row's amount is shown as it was in the file.
      [
        '9',
        'invalid',
        'bank',
        'PAY-0005',
        'Omar Khaled',
        '1,500',
        'row not valid; not sent amount: use digits and a dot, like 1500.00',
      ],
      ['12', 'unknown', 'bank', 'PAY-0005', 'Omar Khaled', '1,500.00', 'no answer within 30 s request 4'],
    ]);
    expect(sectionOf(html, 'attention')).toContain('Rows that need attention (3)');
    expect(html).not.toContain('more rows: see results.csv');
  });

  it('says "and N more rows: see results.csv" when the list is cut', () => {
    const html = render(input({ attentionTotal: 2503 }));
    expect(sectionOf(html, 'attention')).toContain('and 2,500 more rows: see results.csv');
    expect(sectionOf(html, 'attention')).toContain('Rows that need attention (2,503)');
    const one = render(input({ attentionTotal: 4 }));
    expect(sectionOf(one, 'attention')).toContain('and 1 more row: see results.csv');
  });

  it(`lists at most ATTENTION_LIMIT (${ATTENTION_LIMIT}) rows and counts the rest`, () => {
    const many = Array.from({ length: ATTENTION_LIMIT + 5 }, (_, i) => row({ line: i + 2 }));
    const html = render(input({ attention: many, attentionTotal: many.length }));
    const listed = sectionOf(html, 'attention').match(/<tr><td class="num">/g) ?? [];
    expect(listed).toHaveLength(ATTENTION_LIMIT);
    expect(html).toContain('and 5 more rows: see results.csv');
  });

  it('says so when no row needs attention', () => {
    const html = render(input({ attention: [], attentionTotal: 0 }));
    expect(sectionOf(html, 'attention')).toContain('No rows need attention.');
    expect(sectionOf(html, 'attention')).not.toContain('<table');
  });
});

describe('renderSummaryHtml: approvals and resolutions', () => {
  it('lists the approval steps and the findings on unknown requests', () => {
    const html = render(input());
    expect(cells(rowOf(html, 'approvals', 'imported'))).toEqual(['imported', 'ahmed', '2025-03-01T07:50:00.000Z', '']);
    expect(cells(rowOf(html, 'approvals', 'approved'))).toEqual([
      'approved',
      'sara',
      '2025-03-01T07:59:00.000Z',
      'checked against payroll',
    ]);
    expect(cells(rowOf(html, 'resolutions', '7'))).toEqual([
      '7',
      'not created',
      'mona',
      '2025-03-02T09:00:00.000Z',
      'not on the dashboard',
    ]);
  });

  it('says so when there are none', () => {
    const html = render(input({ approvals: [], summary: summary({ resolutions: [] }) }));
    expect(sectionOf(html, 'approvals')).toContain('No approval steps recorded.');
    expect(sectionOf(html, 'resolutions')).toContain('No findings recorded on unknown requests.');
  });
});

describe('renderSummaryHtml: what the statuses mean', () => {
  it('uses the same wording as the README table', () => {
    const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
    const table = readme.split('### Statuses and what they mean for the money')[1]!.split('\n\n')[1]!;
    const readmeRows = table
      .split('\n')
      .slice(2)
      .map((l) =>
        l
          .split('|')
          .slice(1, -1)
          .map((c) => c.replace(/\*\*|`/g, '').trim()),
      );
    expect(readmeRows.map((r) => r[0])).toEqual([
      'accepted',
      'rejected',
      'unknown',
      'not_sent',
      'invalid',
      'duplicate',
    ]);
    const html = render(input());
    for (const r of readmeRows) {
      expect(cells(rowOf(html, 'meanings', `<code>${r[0]}</code>`), '').map(decodeEntities)).toEqual(r);
    }
  });
});

describe('renderSummaryHtml: escaping and text', () => {
  it('escapes hostile text from every data field', () => {
    const html = render(
      input({
        summary: summary({
          batchId: `b-${HOSTILE}`,
          fileName: HOSTILE,
          batchState: HOSTILE,
          haltReason: HOSTILE,
          byChannel: { [HOSTILE]: { rows: 1, amount: '1.00' } },
          resolutions: [{ request: 1, finding: HOSTILE, by: HOSTILE, at: HOSTILE, note: HOSTILE }],
        }),
        attention: [
          row({
            holder_name: HOSTILE,
            reference: HOSTILE,
            channel: HOSTILE,
            amount: HOSTILE,
            status: HOSTILE,
            request: HOSTILE,
            message: HOSTILE,
            errors: HOSTILE,
          }),
        ],
        approvals: [{ action: 'approved', by: HOSTILE, at: HOSTILE, note: '"><img src=x onerror=alert(2)>' }],
        generatedAt: HOSTILE,
      }),
    );
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert(1)');
    expect(html).not.toContain('<img');
    expect(html).toContain('&quot;&gt;&lt;img src=x onerror=alert(2)&gt;');
    // Only the two scripts of the page itself.
    expect(html.match(/<script/gi)).toHaveLength(2);
  });

  it('keeps Arabic text intact, in cells that pick their own direction, on a UTF-8 page', () => {
    const html = render(
      input({
        summary: summary({ fileName: 'رواتب مارس.csv' }),
        attention: [row({ holder_name: ARABIC, message: 'رقم الحساب غير صحيح' })],
        approvals: [{ action: 'approved', by: 'سارة', at: '2025-03-01T07:59:00.000Z' }],
      }),
    );
    expect(html.slice(0, 200)).toMatch(/<head>\s*<meta charset="utf-8">/);
    expect(html).toContain(`<td class="name holder" dir="auto">${ARABIC}</td>`);
    expect(html).toContain('<td class="reason" dir="auto">رقم الحساب غير صحيح');
    expect(html).toContain('<td dir="auto">رواتب مارس.csv</td>');
    expect(html).toContain('<td class="name" dir="auto">سارة</td>');
    expect(Buffer.from(html, 'utf8').toString('utf8')).toContain(ARABIC);
  });
});

describe('renderSummaryHtml: one self-contained file', () => {
  const html = renderSummaryHtml(input());

  it('loads nothing from the network', () => {
    const page = render(input());
    expect(page).not.toMatch(/\b(?:src|href|action|poster|srcset|data)\s*=\s*["']?\s*(?:https?:)?\/\//i);
    expect(page).not.toMatch(/<link\b/i);
    expect(page).not.toMatch(/@import|url\(/i);
    expect(page).not.toMatch(/<(?:iframe|img|object|embed)\b/i);
    // Chart.js itself fetches nothing: no request APIs in the embedded build.
    expect(scripts(html).join('\n')).not.toMatch(/\bfetch\(|XMLHttpRequest|importScripts|\bimport\(/);
    const csp = decodeEntities(page.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/)![1]!);
    expect(csp).toMatch(/(^|; )default-src 'none'(;|$)/);
    expect(csp).not.toMatch(/https?:|\*|'unsafe-eval'/);
  });

  it('embeds the Chart.js UMD build, with no early end of its script', () => {
    const main = createRequire(import.meta.url).resolve('chart.js');
    const chartJs = readFileSync(join(dirname(main), 'chart.umd.min.js'), 'utf8');
    const [lib, init] = scripts(html);
    expect(lib).toBe(scriptSafe(chartJs));
    expect(lib).toContain('Chart.js v4');
    expect(lib!.length).toBeGreaterThan(100_000);
    expect(init).toContain("document.getElementById('status-chart')");
    expect(init).toContain('new Chart(canvas, config)');
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(render(input())).toMatch(/<canvas id="status-chart" width="640" height="260"/);
  });

  it('the chart has the same counts as the table, one bar per listed status', () => {
    const init = scripts(html)[1]!;
    const config = JSON.parse(init.match(/var config = (\{.*\});/)![1]!) as {
      data: { labels: string[]; datasets: { data: number[] }[] };
    };
    expect(config.data.labels).toEqual(['accepted', 'rejected', 'unknown', 'not_sent', 'invalid', 'duplicate']);
    expect(config.data.datasets[0]!.data).toEqual([1234, 2, 1, 1, 1, 1]);
  });

  it('the Content-Security-Policy allows exactly the two scripts of the page', () => {
    const csp = decodeEntities(html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/)![1]!);
    const allowed = [...csp.matchAll(/'sha256-([A-Za-z0-9+/=]+)'/g)].map((m) => m[1]);
    const actual = scripts(html).map((s) => createHash('sha256').update(s, 'utf8').digest('base64'));
    expect(allowed).toEqual(actual);
  });

  it('prints on A4 with repeating table headers and unbroken rows', () => {
    const html = render(input());
    expect(html).toContain('@page { size: A4; margin: 15mm; }');
    const print = html.match(/@media print \{([\s\S]*?)\n {2}\}/)![1]!;
    expect(print).toMatch(/thead \{ display: table-header-group; \}/);
    expect(print).toMatch(/tr, th, td \{ break-inside: avoid; page-break-inside: avoid; \}/);
    expect(print).toMatch(/body \{[^}]*background: #fff/);
    expect(print).toMatch(/#status-chart \{ width: 640px; height: 260px; \}/);
  });

  it('the templates are found from the package root', () => {
    expect(TEMPLATES_DIR).toBe(join(PACKAGE_ROOT, 'src', 'results', 'templates'));
    expect(existsSync(join(TEMPLATES_DIR, 'summary.eta'))).toBe(true);
  });
});

describe('scriptSafe and displayServiceUrl', () => {
  it('scriptSafe keeps the parser inside the script', () => {
    expect(scriptSafe('a = "</script><script>x()</SCRIPT>"; b = "<!--"')).toBe(
      'a = "<\\/script><script>x()<\\/SCRIPT>"; b = "\\x3C!--"',
    );
    expect(scriptSafe('a\r\nb\rc')).toBe('a\nb\nc');
  });

  it.each([
    ['https://staging.payouts.example', 'https://staging.payouts.example'],
    ['https://api.payouts.example/v1/', 'https://api.payouts.example/v1/'],
    ['https://u:p@api.payouts.example/v1', 'https://api.payouts.example/v1'],
    ['https://api.payouts.example/v1?api_key=secret', 'https://api.payouts.example/v1'],
    ['not a url //user:pw@host/x?token=1', 'not a url //host/x'],
  ])('displayServiceUrl(%j) → %j', (raw, shown) => {
    expect(displayServiceUrl(raw)).toBe(shown);
  });
});

/**
 * A real browser opens the page with the network cut off: the chart draws, nothing is fetched,
 * nothing is refused. The browser is the one every browser test uses (test/support/browser.ts).
 */
describe('summary.html in a browser', () => {
  it('draws the chart offline under its own Content-Security-Policy and prints to A4', async () => {
    const { launchTestBrowser } = await import('../support/browser.js');
    const browser = await launchTestBrowser();
    try {
      const page = await browser.newPage();
      const requests: string[] = [];
      const problems: string[] = [];
      await page.route('**/*', (route) => {
        requests.push(route.request().url());
        return route.abort();
      });
      page.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      await page.setContent(
        renderSummaryHtml(input({ attention: [row({ holder_name: HOSTILE }), row({ holder_name: ARABIC })] })),
        { waitUntil: 'load' },
      );
      const drawn = await page.evaluate(() => {
        const g = globalThis as unknown as {
          Chart?: { getChart(c: unknown): { data: { datasets: { data: number[] }[] } } | undefined };
          document: {
            getElementById(id: string): {
              getContext(t: '2d'): {
                getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray };
              };
              width: number;
              height: number;
            } | null;
          };
        };
        const canvas = g.document.getElementById('status-chart')!;
        const chart = g.Chart?.getChart(canvas);
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let painted = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) painted++;
        return { counts: chart?.data.datasets[0]?.data ?? null, painted };
      });
      expect(problems).toEqual([]);
      expect(requests).toEqual([]);
      expect(drawn.counts).toEqual([1234, 2, 1, 1, 1, 1]);
      expect(drawn.painted).toBeGreaterThan(1000);
      const holders = await page.locator('#attention tbody td.holder').allTextContents();
      expect(holders).toEqual([HOSTILE, ARABIC]);
      const pdf = await page.pdf({ preferCSSPageSize: true, printBackground: false });
      expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    } finally {
      await browser.close();
    }
  }, 120_000); // the first run of the bundled browser unpacks it
});
