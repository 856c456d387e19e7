/**
 * The reports folder (CASHOUT_REPORTS_DIR) made and checked before an import records anything:
 * a folder that cannot be made or written is named with its reason (exit 2), and no batch is left
 * half recorded in the ledger.
 */
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { CashoutError } from '../errors.js';

/**
 * Makes `dir` and its missing parents, one level at a time (a recursive mkdir never returns under
 * some system folders, e.g. /proc), and checks that it is a folder this process may write.
 * Throws `CashoutError('config_invalid')` naming CASHOUT_REPORTS_DIR, the folder and the reason.
 */
export async function ensureReportsFolder(dir: string): Promise<void> {
  const full = resolve(dir);
  const fail = (why: string, cause?: unknown) =>
    new CashoutError(
      'config_invalid',
      `setting CASHOUT_REPORTS_DIR: the reports folder ${full} cannot be used (${why}); nothing was imported`,
      { key: 'CASHOUT_REPORTS_DIR' },
      cause,
    );
  const missing: string[] = [];
  let at = full;
  for (;;) {
    try {
      if (!(await stat(at)).isDirectory()) throw fail(`${at} is not a folder`);
      break;
    } catch (err) {
      if (err instanceof CashoutError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' || dirname(at) === at) throw fail(code ?? String(err), err);
      missing.unshift(at);
      at = dirname(at);
    }
  }
  for (const folder of missing) {
    try {
      await mkdir(folder, { mode: 0o700 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw fail(`${folder} cannot be made: ${code ?? String(err)}`, err);
    }
  }
  try {
    await access(full, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw fail(`it cannot be written: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, err);
  }
}
