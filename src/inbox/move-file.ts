/**
 * Moving a file into `done/` or `failed/` without ever replacing a file already there: finance
 * teams drop `payouts.csv` week after week, and each one must stay on record. A plain `rename`
 * silently replaces its target, so the move is a hard link (which fails when the name is taken)
 * followed by removing the source; the next free name is `payouts.2.csv`, `payouts.3.csv`, ….
 */
import { access, link, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { NOTE_SUFFIX, numberedName } from './inbox-rules.js';

const MAX_COPIES = 10_000;

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Moves `src` into `destDir` under `name`, or the first free numbered variant of it whose note
 * name is free too. Returns the new path. On a file system without hard links, falls back to
 * checking the name and renaming (only scans that already own the file race there).
 */
export async function moveWithoutReplacing(src: string, destDir: string, name: string): Promise<string> {
  for (let n = 1; n <= MAX_COPIES; n++) {
    const dest = join(destDir, numberedName(name, n));
    if (await exists(`${dest}${NOTE_SUFFIX}`)) continue;
    try {
      await link(src, dest);
    } catch (err) {
      if (code(err) === 'EEXIST') continue;
      if (!['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK'].includes(code(err) ?? '')) throw err;
      if (await exists(dest)) continue;
      await rename(src, dest);
      return dest;
    }
    await unlink(src);
    return dest;
  }
  throw new Error(`more than ${MAX_COPIES} files named ${name} in ${destDir}`);
}
