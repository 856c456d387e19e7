/**
 * The report and the view of a batch whose import stopped mid-file (still `staging`): nothing of
 * it was sent and it still holds its payees, so no row of it reads as "not sent, safe to pay
 * again" and no request reads as final, until the recovery sweep refuses it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { buildRequest } from '../../src/batch/group-items.js';
import { batchIdFromSha256 } from '../../src/batch-id.js';
import { isCashoutError } from '../../src/errors.js';
import { writeReport } from '../../src/results/write-report.js';
import { batchView } from '../../src/results/batch-view.js';
import { openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';

describe('a batch whose import stopped mid-file', () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await openTestPipeline('staging-report');
  });
  afterAll(async () => {
    await p.close();
  });

  it('reports every row pending, naming the stopped import, and no request as final', async () => {
    const file = await p.writeCsv('stopped.csv', [walletRow(9000), walletRow(9001), walletRow(9002)]);
    const sha256 = createHash('sha256')
      .update(await readFile(file))
      .digest('hex');
    const id = batchIdFromSha256(sha256);
    const reportDir = join(p.reportsDir, id);
    await mkdir(reportDir, { recursive: true });
    await copyFile(file, join(reportDir, 'input.csv'));
    await p.ledger.createBatch({
      id,
      fileName: 'stopped.csv',
      sha256,
      createdAt: new Date().toISOString(),
      rows: 0,
      validRows: 0,
      invalidRows: 0,
      itemsPerRequest: 1,
      serviceUrl: '',
      reportDir,
      partial: false,
      importedBy: 'scheduler',
    });
    // The process stopped after staging the request of line 2: lines 3 and 4 were never read.
    const item = {
      line: 2,
      reference: 'REF-9000',
      channel: 'wallet' as const,
      wallet: {
        amount: '100.00',
        type: 'TRANSFER' as const,
        holder_name: 'Holder 9000',
        mobile_number: '+201010009000',
        description: 'x',
      },
    };
    await p.ledger.stageRequests(id, [{ ...buildRequest(1, [item]), payees: '2\tr:REF-9000\n' }]);

    const summary = await writeReport(p.ledger, id);
    expect(summary.byStatus.pending.rows).toBe(3);
    expect(summary.byStatus.not_sent.rows).toBe(0);
    const { rows } = await p.report(id);
    expect(rows.map((r) => r.status)).toEqual(['pending', 'pending', 'pending']);
    for (const r of rows)
      expect(r.message).toMatch(
        /^not sent: the import of this batch has not finished \(or its process stopped\); .*2 hours after/,
      );

    const view = await batchView(p.ledger, (await p.ledger.getBatch(id))!);
    expect([view.requestsDone, view.requestsAll]).toEqual([0, 1]);

    // The same file imported again meanwhile: refused, saying the import has not finished and when
    // the sweep frees it (not "use --force", which would leave its rows held).
    const again = await p.importCsv(file).catch((e: unknown) => e);
    expect(isCashoutError(again, 'batch_exists')).toBe(true);
    expect((again as Error).message).toMatch(
      /its import has not finished; .*refuses it 2 hours after its import began/,
    );
    expect((again as Error).message).not.toContain('--force');

    // Another file paying the same payee meanwhile: not sent, and told to wait for the sweep, not
    // to pay it again (which would pay twice if the import were still running).
    const other = await p.importCsv(await p.writeCsv('other.csv', [walletRow(9000, '55.00')]));
    const { rows: otherRows } = await p.report(other.batchId);
    expect(otherRows[0]!.status).toBe('duplicate');
    expect(otherRows[0]!.message).toMatch(/held by batch .* line 2, whose import has not finished/);
    expect(otherRows[0]!.message).toMatch(/not with --pay-again/);
    expect(otherRows[0]!.message).not.toMatch(/to pay it again on purpose/);
  });
});
