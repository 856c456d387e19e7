/**
 * The terminal progress line (total, rate, time left), the log sink that keeps log lines above a
 * bar, and the printed summary (warnings, summary.html path, rows with no valid amount counted
 * apart), with the problem groups `cashout validate` prints.
 */
import { describe, expect, it } from 'vitest';
import { formatSecondsLeft, progressLine } from '../../src/commands/progress.js';
import { setTerminalLogSink, writeTerminalLog } from '../../src/terminal-log.js';
import { formatSummary } from '../../src/results/print-summary.js';
import { withoutAmountWords } from '../../src/results/summary-html.js';
import { ROW_STATUSES, type ReportSummary, type RowStatus, type Tally } from '../../src/results/write-report.js';
import { createProblemGroups, formatProblemGroups } from '../../src/results/problem-groups.js';

function summary(byStatus: Partial<Record<RowStatus, Tally>>, total: Tally, warningRows: number): ReportSummary {
  const all = Object.fromEntries(ROW_STATUSES.map((s) => [s, byStatus[s] ?? { rows: 0, amount: '0.00' }])) as Record<
    RowStatus,
    Tally
  >;
  return {
    batchId: '0123456789abcdef',
    fileName: 'payouts.csv',
    sha256: 'x',
    batchState: 'refused',
    rows: total.rows,
    requests: 0,
    byStatus: all,
    byChannel: {},
    total,
    startedAt: '2026-01-01T00:00:00Z',
    finishedAt: null,
    reportWrittenAt: '2026-01-01T00:00:01Z',
    serviceUrl: 'http://127.0.0.1:4010',
    approvals: [],
    resolutions: [],
    warningRows,
  };
}

describe('progress line', () => {
  it('shows done/total, the rate and the time left once the total is known', () => {
    expect(progressLine('submitting', 'requests final', 50, 200, 10)).toMatch(
      /^submitting \[█{8}░{22}\] 50\/200 requests final \| 5\/s \| 30s left$/,
    );
    expect(progressLine('reading', 'rows', 300, undefined, 2)).toBe('reading 300 rows | 150/s');
  });

  it('writes the time left as seconds, minutes or hours', () => {
    const shown = [12, 247, 3909, Number.NaN].map(formatSecondsLeft);
    expect(shown).toEqual(['12s', '4:07', '1:05:09', '--']);
  });

  it('sends log lines to the bar while one is drawn', () => {
    const taken: string[] = [];
    setTerminalLogSink((t) => taken.push(t));
    try {
      writeTerminalLog('a log line\n');
    } finally {
      setTerminalLogSink(undefined);
    }
    expect(taken).toEqual(['a log line\n']);
  });
});

describe('printed summary', () => {
  it('shows the warnings, both report paths and the rows whose amount is not counted', () => {
    const tally = { rows: 3, amount: '100.00', withoutAmount: 2 };
    const s = summary({ invalid: tally }, { ...tally }, 1);
    const text = formatSummary(s, '/reports/0123456789abcdef');
    expect(text).toContain(
      'invalid         3   EGP           100.00   row not valid; fix it and upload again; ' +
        '2 rows with no valid amount are not in this total',
    );
    expect(text).toContain('Warnings: 1 row (see the warnings column of results.csv)');
    expect(text).toContain('Report: /reports/0123456789abcdef/results.csv');
    expect(text).toContain('Summary: /reports/0123456789abcdef/summary.html');
    expect(withoutAmountWords({ rows: 3, amount: '1.00', withoutAmount: 1 })).toBe(' and 1 row with no valid amount');
    expect(withoutAmountWords({ rows: 3, amount: '1.00' })).toBe('');
  });

  it('for a batch awaiting approval, names the command another person runs, without a label that would not do', () => {
    const tally = { rows: 2, amount: '300.00' };
    const s = { ...summary({ pending: tally }, { ...tally }, 0), batchState: 'awaiting_approval' as const };
    const text = formatSummary(s, '/reports/0123456789abcdef');
    expect(text).toContain('Awaiting approval by another person');
    expect(text).toContain('cashout approve 0123456789abcdef\n');
    // `--as` only adds a label to the system user: the importer typing another name is still refused.
    expect(text).not.toContain('--as');
  });
});

describe('problem groups', () => {
  it('counts problems by column and reason, most frequent first, with the first line of each', () => {
    const groups = createProblemGroups((i) => `found ${i.found ?? ''}`);
    groups.add(2, { column: 'type', code: 'type_invalid', found: 'x' });
    for (let line = 3; line < 6; line++) {
      groups.add(line, { column: 'amount', code: 'amount_format', found: String(line) });
    }
    expect(formatProblemGroups(groups.list())).toEqual([
      'Problems by column and reason:',
      '  3 × amount, amount_format (first on line 3: found 3)',
      '  1 × type, type_invalid (first on line 2: found x)',
    ]);
  });
});
