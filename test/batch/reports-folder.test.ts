/**
 * An import whose reports folder (CASHOUT_REPORTS_DIR) cannot be used: named with its reason
 * (config_invalid, exit 2) before anything is recorded, also for a folder whose parents cannot be
 * made (a recursive mkdir under /proc never returns); and a batch whose own report folder cannot
 * be made is refused at once, not left "being imported" for hours, so its file can be imported again.
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
});
