/**
 * The refusal of a file uploaded on the dashboard's page, from the real check of real files: the
 * file named by its name (never the server's folder) and what to change in it, since the page
 * has no --encoding or --delimiter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { checkUpload } from '../../src/uploads/check-upload.js';
import { uploadMessage } from '../../src/uploads/upload-message.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { isCashoutError } from '../../src/errors.js';
import { HEADER } from '../support/pipeline.js';

describe('uploadMessage on the upload page', () => {
  let dir: string;
  const rules = { banks: loadBankList(), walletCountries: ['EG'], maxFieldLength: 255 };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cashout-upload-message-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The page's message for `bytes` uploaded as `name`. */
  const refusal = async (name: string, bytes: Buffer) => {
    const path = join(dir, name);
    await writeFile(path, bytes);
    const err = await checkUpload(dir, path, rules, {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCashoutError(err), String(err)).toBe(true);
    return { raw: (err as Error).message, shown: uploadMessage((err as Error).message, [path], name, 'page') };
  };

  it('an Arabic Windows-1256 export: named by its file name, and saved as CSV UTF-8', async () => {
    const row = 'wallet,10.00,TRANSFER,منى ياسر عثمان,+201001112233,,,,مكافأة,AR-1';
    const { raw, shown } = await refusal('رواتب.csv', iconv.encode(`${HEADER}\n${row}\n`, 'windows-1256'));
    expect(raw).toContain(dir);
    expect(raw).toContain('--encoding windows-1256');
    expect(shown).toMatch(/^"رواتب\.csv" is not UTF-8 text .*Windows-1256/);
    expect(shown).toMatch(/save it as "CSV UTF-8" .*and upload it again$/);
    expect(shown).not.toContain(dir);
    expect(shown).not.toContain('--encoding');
  });

  it('a file separated by semicolons: saved with commas', async () => {
    const { shown } = await refusal('semi.csv', Buffer.from(`${HEADER.replaceAll(',', ';')}\n`));
    expect(shown).toMatch(/separated by semicolons; save it with commas between the columns .*and upload it again$/);
    expect(shown).not.toContain('--delimiter');
  });

  it("Excel's separator line: the aside it opens is closed", async () => {
    const { shown } = await refusal('sep.csv', Buffer.from(`sep=;\n${HEADER.replaceAll(',', ';')}\n`));
    expect(shown).toMatch(/^line 1 is "sep=;", the separator line Excel writes/);
    expect(shown).not.toContain('--delimiter');
    expect((shown.match(/\(/g) ?? []).length).toBe((shown.match(/\)/g) ?? []).length);
  });

  it('leaves a message that names neither the file nor an option as it is', () => {
    const text = 'line 1 must be a header row naming the columns (see the CSV template in the README)';
    expect(uploadMessage(text, [join(dir, 'x.csv')], 'x.csv', 'page')).toBe(text);
    expect(uploadMessage(text, [join(dir, 'x.csv')], 'x.csv', 'api')).toBe(text);
  });
});
