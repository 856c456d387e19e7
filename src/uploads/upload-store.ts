/**
 * Files uploaded on the dashboard, kept until they are sent: one private folder per upload
 * (`<reports dir>/.uploads/<random id>/`, 0700; files 0600) holding the file as uploaded, the CSV
 * the import reads (the same file for a CSV, the converted first sheet for an .xlsx), the check's
 * `rejected-rows.csv` and `upload.json`, the record below. Uploads older than `UPLOAD_KEEP_DAYS`
 * are removed when a new one arrives. Nothing here touches the ledger.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatPiasters, toPiasters } from '../money.js';

/** Days an upload is kept. */
export const UPLOAD_KEEP_DAYS = 7;

/** One problem of an invalid row, as the dashboard lists it. */
export interface UploadProblem {
  /** Line in the file (the header is line 1); for an .xlsx, the sheet's row number. */
  readonly line: number;
  readonly column: string;
  /** Issue code (../import/row-issues.ts), for filtering. */
  readonly code: string;
  /** The value as found, shown quoted. */
  readonly found: string;
  /** The full sentence: what was found, what is expected. */
  readonly expected: string;
  readonly suggestion: string;
}

/** Rows and EGP total (decimal string) of one part of a file. */
export interface RowsAndTotal {
  readonly rows: number;
  readonly amount: string;
}

/** What Send pays of a checked upload: its valid rows but those another batch held at the check. */
export function payableOf(check: Pick<UploadCheck, 'total' | 'held'>): RowsAndTotal {
  if (!check.held) return check.total;
  const amount = formatPiasters(toPiasters(check.total.amount) - toPiasters(check.held.amount));
  return { rows: check.total.rows - check.held.rows, amount };
}

/** What the check found: counts, totals of the valid rows per channel, the first problems. */
export interface UploadCheck {
  readonly rows: number;
  readonly validRows: number;
  readonly invalidRows: number;
  readonly byChannel: { readonly wallet: RowsAndTotal; readonly bank: RowsAndTotal };
  /** The valid rows. */
  readonly total: RowsAndTotal;
  /**
   * Valid rows whose payee another batch paid, or is to pay, when the file was checked (the
   * payout register): Send does not pay them (they become `duplicate`). Absent in checks made
   * before it was counted.
   */
  readonly held?: RowsAndTotal & { readonly first?: string };
  /** The first `MAX_PROBLEMS_SHOWN` problems, in file order. */
  readonly problems: readonly UploadProblem[];
  /** Problems in all (more may exist than are listed). */
  readonly problemCount: number;
}

/** `upload.json`: one upload and where it is. */
export interface UploadRecord {
  readonly id: string;
  /** The dashboard user who uploaded it: the only one who may see or send it. */
  readonly user: string;
  /** The file's name as uploaded (made safe for the file system). */
  readonly fileName: string;
  readonly kind: 'csv' | 'xlsx';
  readonly createdAt: string;
  /** Name of the CSV the import reads, in the upload's folder. */
  readonly csvFile: string;
  readonly state: 'checking' | 'checked' | 'failed';
  /** Rows read so far by the check. */
  readonly rowsRead: number;
  /** Why the file cannot be read as a payout file (state `failed`). */
  readonly error?: string;
  readonly check?: UploadCheck;
  /** The batch the file was imported as, once sent. */
  readonly batchId?: string;
}

const ID = /^[0-9a-f]{32}$/;

/** The uploads folder of a reports folder. */
export function uploadsRoot(reportsDir: string): string {
  return join(reportsDir, '.uploads');
}

/** Access to the uploads under one reports folder. */
export interface UploadStore {
  /** Makes the folder of a new upload; returns its id and path. */
  create(): Promise<{ id: string; dir: string }>;
  dir(id: string): string;
  /** The record of `id`, or undefined (no such upload, or an id that is not one). */
  load(id: string): Promise<UploadRecord | undefined>;
  /** Writes the record (to a temporary name, then renamed: readers never see half of it). */
  save(record: UploadRecord): Promise<void>;
  remove(id: string): Promise<void>;
}

/** Opens the uploads store under `reportsDir`. */
export function uploadStore(reportsDir: string): UploadStore {
  const root = uploadsRoot(reportsDir);
  const dir = (id: string) => join(root, id);
  return {
    async create() {
      await mkdir(root, { recursive: true, mode: 0o700 });
      await removeOld(root);
      const id = randomBytes(16).toString('hex');
      await mkdir(dir(id), { mode: 0o700 });
      return { id, dir: dir(id) };
    },
    dir,
    async load(id) {
      if (!ID.test(id)) return undefined;
      try {
        return JSON.parse(await readFile(join(dir(id), 'upload.json'), 'utf8')) as UploadRecord;
      } catch {
        return undefined;
      }
    },
    async save(record) {
      const tmp = join(dir(record.id), `upload.json.${randomBytes(4).toString('hex')}.tmp`);
      await writeFile(tmp, `${JSON.stringify(record)}\n`, { mode: 0o600 });
      await rename(tmp, join(dir(record.id), 'upload.json'));
    },
    async remove(id) {
      if (ID.test(id)) await rm(dir(id), { recursive: true, force: true });
    },
  };
}

async function removeOld(root: string): Promise<void> {
  const limit = Date.now() - UPLOAD_KEEP_DAYS * 86_400_000;
  for (const name of await readdir(root)) {
    if (!ID.test(name)) continue;
    const s = await stat(join(root, name)).catch(() => undefined);
    if (s && s.mtimeMs < limit) await rm(join(root, name), { recursive: true, force: true });
  }
}

/** A file name safe to keep: letters (Latin or Arabic), digits, space, dot, dash, underscore, brackets. */
export function safeFileName(name: string, fallback: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const safe = base
    .replace(/[^\w.\-() \u0600-\u06ff]/g, '_')
    .replace(/^[.\s]+/, '')
    .slice(-100);
  return safe === '' ? fallback : safe;
}
