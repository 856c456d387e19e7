/**
 * Duplicates across files and within a file: the same content is not imported twice (unless
 * --force), a reference already paid is not paid again (unless allowed), and rows that look like
 * the same payment entered twice are flagged (or refused with --strict-duplicates).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { isCashoutError } from '../../src/errors.js';
import { formatSummary } from '../../src/results/print-summary.js';
import { bankRow, openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';

const TOKEN = 'dup-token';

describe('duplicates', () => {
  let sandbox: Sandbox;
  let p: TestPipeline;
  beforeAll(async () => {
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    p = await openTestPipeline('dups');
  });
  afterAll(async () => {
    await sandbox.close();
    await p.close();
  });
  const pay = async (batchId: string) => p.submit(batchId, { baseUrl: sandbox.url, token: TOKEN });

  it('a second import of the same file is refused with the earlier batch; --force makes a new batch', async () => {
    const file = await p.writeCsv('same.csv', [walletRow(1), walletRow(2)]);
    const first = await p.importCsv(file);
    await pay(first.batchId);
    const again = await p.importCsv(file).catch((e: unknown) => e);
    expect(isCashoutError(again, 'batch_exists')).toBe(true);
    expect((again as Error).message).toContain(first.batchId);

    // --force: a new batch, but the references were paid in the first one, so nothing is paid twice by default.
    const forced = await p.importCsv(file, { force: true });
    expect(forced.batchId).not.toBe(first.batchId);
    expect(forced.duplicateRows).toBe(2);
    const { rows } = await pay(forced.batchId);
    expect(rows.map((r) => r.status)).toEqual(['duplicate', 'duplicate']);
    expect(rows[0]!.message).toContain(first.batchId);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it('content refused as a whole and imported again is a new batch: the refused batch keeps its rows and names its successor', async () => {
    // One invalid row: the whole file is refused (all or nothing), its report written.
    const file = await p.writeCsv('refused-first.csv', [walletRow(40), walletRow(41, '"1,500.00"')]);
    const refused = await p.importCsv(file, { importedBy: 'scheduler' });
    expect(refused.state).toBe('refused');
    await p.report(refused.batchId);
    const refusedDir = (await p.ledger.getBatch(refused.batchId))!.reportDir;
    const filesBefore = await Promise.all(
      ['results.csv', 'summary.json', 'row-notes.jsonl', 'input.csv'].map((f) => readFile(join(refusedDir, f), 'utf8')),
    );
    const recordBefore = await p.ledger.getBatch(refused.batchId);

    // The same content again, with --partial: a new batch that names the refused one, in its own folder.
    const partial = await p.importCsv(file, { partial: true, importedBy: 'alice' });
    expect(partial.batchId).not.toBe(refused.batchId);
    expect(partial.state).toBe('queued');
    const record = (await p.ledger.getBatch(partial.batchId))!;
    expect(record.follows).toBe(refused.batchId);
    expect(record.reportDir).not.toBe(refusedDir);
    const events = await p.ledger.listApprovals(partial.batchId);
    expect(events[0]!.note).toContain(`refused as a whole before as batch ${refused.batchId}`);

    // The refused batch: the same record, file and row notes; its report the same rows and counts,
    // now naming the batch that follows it (written again at once, not only by `cashout report`).
    expect(await p.ledger.getBatch(refused.batchId)).toEqual({ ...recordBefore, supersededBy: partial.batchId });
    const [resultsAfter, summaryAfter, ...filesAfter] = await Promise.all(
      ['results.csv', 'summary.json', 'row-notes.jsonl', 'input.csv'].map((f) => readFile(join(refusedDir, f), 'utf8')),
    );
    expect(filesAfter).toEqual(filesBefore.slice(2));
    const again = `; the file was imported again as batch ${partial.batchId}`;
    expect(resultsAfter!.replaceAll(again, '')).toBe(filesBefore[0]);
    expect(resultsAfter).toContain(again);
    const { reportWrittenAt: _w1, ...summaryBefore } = JSON.parse(filesBefore[1]!) as Record<string, unknown>;
    const { reportWrittenAt: _w2, ...summaryNow } = JSON.parse(summaryAfter!) as Record<string, unknown>;
    expect(summaryNow).toEqual({ ...summaryBefore, supersededBy: partial.batchId });

    // A third import of the content meets the batch that was queued: refused, naming it and --force.
    const third = await p.importCsv(file).catch((e: unknown) => e);
    expect(isCashoutError(third, 'batch_exists')).toBe(true);
    expect((third as Error).message).toContain(partial.batchId);
    expect((third as Error).message).toContain('--force');
    const { rows, summary } = await pay(partial.batchId);
    expect(rows.map((r) => r.status)).toEqual(['accepted', 'invalid']);

    // Each report names the other batch: in summary.json, in the printed summary and in summary.html.
    expect(summary.follows).toBe(refused.batchId);
    expect(formatSummary(summary, record.reportDir)).toContain(
      `Follows batch ${refused.batchId}: the same file, refused as a whole before`,
    );
    expect(await readFile(join(record.reportDir, 'summary.html'), 'utf8')).toContain(refused.batchId);
    const refusedReport = await p.report(refused.batchId);
    expect(refusedReport.summary.supersededBy).toBe(partial.batchId);
    expect(formatSummary(refusedReport.summary, refusedDir)).toContain(
      `Imported again as batch ${partial.batchId}: cashout report ${partial.batchId}`,
    );
    expect(await readFile(join(refusedDir, 'summary.html'), 'utf8')).toContain(partial.batchId);
  });

  it('a file whose every row is held by another batch ends at its import, with its report written', async () => {
    const first = await p.importCsv(await p.writeCsv('held-first.csv', [walletRow(50), bankRow(51)]));
    expect(first.state).toBe('queued');
    // The same references again, other amounts: nothing to send, so no worker ever ends this batch.
    const again = await p.importCsv(await p.writeCsv('held-again.csv', [walletRow(50, '70.00'), bankRow(51, '80.00')]));
    expect(again.state).toBe('finished');
    expect([again.requests, again.duplicateRows]).toEqual([0, 2]);
    const logged = p.logLines.map((l) => JSON.parse(l) as { batchId?: string; msg: string });
    expect(logged.filter((l) => l.batchId === again.batchId).map((l) => l.msg)).toContain(
      'batch finished at its import: no row to send',
    );
    expect(logged.some((l) => l.batchId === again.batchId && l.msg === 'batch queued')).toBe(false);
    expect(again.summary?.byStatus.duplicate).toEqual({ rows: 2, amount: '150.00' });
    const results = parse(await readFile(join(again.reportDir, 'results.csv')), { columns: true, bom: true }) as Record<
      string,
      string
    >[];
    expect(results.map((r) => [r.reference, r.status])).toEqual([
      ['REF-50', 'duplicate'],
      ['BREF-51', 'duplicate'],
    ]);
    expect(results[0]!.message).toContain(first.batchId);
    expect(JSON.parse(await readFile(join(again.reportDir, 'summary.json'), 'utf8')).batchState).toBe('finished');
    await pay(first.batchId);
  });

  it('a reference paid in an earlier batch is marked duplicate and not sent; allowed on request', async () => {
    const a = await p.importCsv(await p.writeCsv('a.csv', [walletRow(10), bankRow(11)]));
    await pay(a.batchId);
    const before = sandbox.ledger().length;
    // Another file: same reference REF-10 on a different amount, and a new row.
    const b = await p.importCsv(await p.writeCsv('b.csv', [walletRow(10, '999.00'), walletRow(12)]));
    const { rows, summary } = await pay(b.batchId);
    expect(rows.map((r) => [r.reference, r.status])).toEqual([
      ['REF-10', 'duplicate'],
      ['REF-12', 'accepted'],
    ]);
    expect(summary.byStatus.duplicate).toEqual({ rows: 1, amount: '999.00' });
    expect(sandbox.ledger().length).toBe(before + 1);

    const c = await p.importCsv(await p.writeCsv('c.csv', [walletRow(10, '888.00')]), {
      payAgain: { note: 'customer asked for a second payment' },
      importedBy: 'alice',
    });
    const paid = await pay(c.batchId);
    expect(paid.rows[0]!.status).toBe('accepted');
  });

  it('rows paying the same amount to the same holder or number are flagged, and refused with --strict-duplicates', async () => {
    const rows = [
      walletRow(20, '50.00'),
      walletRow(21, '60.00'),
      walletRow(20, '50.00').replace('REF-20', 'REF-20b'),
      bankRow(22),
      bankRow(22).replace('BREF-22', 'BREF-22b'),
    ];
    const file = await p.writeCsv('twins.csv', rows);
    const warned = await p.importCsv(file);
    expect(warned.warnedRows).toBe(2);
    const report = await pay(warned.batchId);
    expect(report.rows.map((r) => r.warnings)).toEqual([
      '',
      '',
      'possible duplicate of line 2 (same mobile number and amount)',
      '',
      'possible duplicate of line 5 (same account number and amount)',
    ]);
    expect(report.rows.every((r) => r.status === 'accepted')).toBe(true);

    // The same mistakes in a new file (new references), refused as a whole with --strict-duplicates.
    const strictRows = [
      walletRow(30, '50.00'),
      walletRow(31, '60.00'),
      walletRow(30, '50.00').replace('REF-30', 'REF-30b'),
      bankRow(32),
      bankRow(32).replace('BREF-32', 'BREF-32b'),
      walletRow(33),
    ];
    const strictFile = await p.writeCsv('twins-strict.csv', strictRows);
    const refused = await p.importCsv(strictFile, { strictDuplicates: true });
    expect(refused.state).toBe('refused');
    expect(refused.invalidRows).toBe(2);
    const { rows: out } = await p.report(refused.batchId);
    expect(out.filter((r) => r.status === 'invalid').map((r) => r.line)).toEqual(['4', '6']);
    expect(out[2]!.errors).toMatch(/^row: pays the same amount to the same mobile number as line 2/);
    const rejectedCsv = await readFile(join(refused.reportDir, 'rejected-rows.csv'));
    const rejected = parse(rejectedCsv, { relax_column_count: true, bom: true }) as string[][];
    expect(rejected.slice(1).map((r) => [r[0], r[11]])).toEqual([
      ['4', 'REF-30b'],
      ['6', 'BREF-32b'],
    ]);
  });
});
