/**
 * An import whose reports folder (CASHOUT_REPORTS_DIR) cannot be used: named with its reason
 * (config_invalid, exit 2) before anything is recorded, also for a folder whose parents cannot be
 * made (a recursive mkdir under /proc never returns); and a batch whose own report folder cannot
 * be made is refused at once, not left "being imported" for hours, so its file can be imported again.
 * A reports folder that holds a batch's report the ledger does not know (another ledger writes
 * there, or this one lost its data) refuses the import instead of overwriting that report.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { importBatch } from '../../src/batch/import-batch.js';
import { batchIdFromSha256 } from '../../src/batch-id.js';
import { isCashoutError } from '../../src/errors.js';
import { openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';

describe('an import whose reports folder cannot be used', () => {
  let p: TestPipeline;
  beforeAll(async () => {
    p = await openTestPipeline('reports-folder');
  });
  afterAll(async () => {
    await p.close();
  });

  const importInto = (reportsDir: string, file: string) =>
    importBatch(p.importDeps({ itemsPerRequest: 10, serviceUrl: 'http://127.0.0.1:9', reportsDir }), file);

  it.each([
    ['a file, not a folder', (f: string) => f, 'is not a folder'],
    ['under a file', (f: string) => join(f, 'reports'), 'ENOTDIR'],
    [
      'under /proc, where no folder can be made',
      () => `/proc/cashout-${randomBytes(4).toString('hex')}/reports`,
      'cannot be made: ENOENT',
    ],
  ])('is refused when it is %s, and nothing is recorded', async (_label, dirOf, why) => {
    const file = await p.writeCsv(`folder-${randomBytes(3).toString('hex')}.csv`, [walletRow(7200)]);
    const err = await importInto(dirOf(file), file).catch((e: unknown) => e);
    expect(isCashoutError(err, 'config_invalid')).toBe(true);
    expect((err as Error).message).toMatch(/^setting CASHOUT_REPORTS_DIR: the reports folder .* cannot be used/);
    expect((err as Error).message).toContain(why);
    expect(await p.ledger.listBatches()).toEqual([]);
  });

  it('refuses at once a batch whose own report folder cannot be made; the file is then imported again', async () => {
    const file = await p.writeCsv('own-folder.csv', [walletRow(7201)]);
    const id = batchIdFromSha256(
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex'),
    );
    const reportsDir = join(p.reportsDir, 'taken');
    await mkdir(reportsDir, { recursive: true });
    await writeFile(join(reportsDir, id), 'not a folder');
    const err = await importInto(reportsDir, file).catch((e: unknown) => e);
    expect(isCashoutError(err, 'config_invalid')).toBe(true);
    expect((err as Error).message).toContain(`batch ${id}: its report folder`);
    const batch = await p.ledger.getBatch(id);
    expect(batch?.state).toBe('refused');
    expect(batch?.refusalReason).toContain('could not be written');
    const again = await importInto(reportsDir, file);
    expect(again.state).toBe('queued');
    expect((await p.ledger.getBatch(again.batchId))?.follows).toBe(id);
  });

  it('refuses a file whose batch report another ledger wrote in the same folder, and leaves that report as it was', async () => {
    const other = await openTestPipeline('reports-folder-other');
    try {
      const file = await p.writeCsv('shared-folder.csv', [walletRow(7202), walletRow(7203)]);
      const first = await importInto(p.reportsDir, file);
      expect(first.state).toBe('queued');
      const before = await readFile(join(first.reportDir, 'input.csv'), 'utf8');
      const refused = await importBatch(
        other.importDeps({ itemsPerRequest: 10, serviceUrl: 'http://127.0.0.1:9', reportsDir: p.reportsDir }),
        file,
      ).catch((e: unknown) => e);
      expect(isCashoutError(refused, 'config_invalid')).toBe(true);
      expect((refused as Error).message).toContain(`the reports folder already holds batch ${first.batchId}`);
      expect((refused as Error).message).toContain('give each its own CASHOUT_REPORTS_DIR');
      expect(await other.ledger.listBatches()).toEqual([]);
      expect(await readFile(join(first.reportDir, 'input.csv'), 'utf8')).toBe(before);
      // A sandbox rehearsal (replaceReports) may replace the report its removed ledger left.
      const rehearsal = await importBatch(
        other.importDeps({
          itemsPerRequest: 10,
          serviceUrl: 'http://127.0.0.1:9',
          reportsDir: p.reportsDir,
          replaceReports: true,
        }),
        file,
      );
      expect(rehearsal.batchId).toBe(first.batchId);
    } finally {
      await other.close();
    }
  });
});
