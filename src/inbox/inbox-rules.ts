/**
 * The rules of the inbox folder, without any file-system access: which names may be taken, which
 * marker files say a file is complete, when a file has settled, whether its bytes end with a line
 * break, and how a claim folder in `processing/` is named and when it counts as abandoned.
 */

/** Sub-folders of the inbox that the scan owns. */
export const INBOX_FOLDERS = { processing: 'processing', done: 'done', failed: 'failed' } as const;

/** Suffix of a marker file saying "this file is complete": `<name>.csv.ready` or `<name>.ready`. */
export const READY_SUFFIX = '.ready';

/** Suffix of the note written next to a file in `done/` or `failed/`: `<name>.csv.txt`. */
export const NOTE_SUFFIX = '.txt';

/** Longest file name taken (bytes), so that `<name>.txt` and a numbered copy still fit the usual 255. */
export const MAX_NAME_BYTES = 200;

/** Why a directory entry is not a plain file name the scan may take; undefined when it may. */
export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'empty name';
  if (name.startsWith('.'))
    return 'hidden name (leading dot); upload tools use such names for files still being written';
  if (name.includes('/') || name.includes('\\')) return 'not a plain file name (contains a path separator)';
  if (name.includes('..')) return 'not a plain file name (contains "..")';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'not a plain file name (contains control characters)';
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) return `name longer than ${MAX_NAME_BYTES} bytes`;
  return undefined;
}

/** True for a payout file name (`.csv`, any case). */
export function isCsvName(name: string): boolean {
  return /\.csv$/i.test(name);
}

/** True for a marker file name. */
export function isMarkerName(name: string): boolean {
  return name.endsWith(READY_SUFFIX);
}

/** The marker names that make `name` complete: `<name>.ready`, and for `x.csv` also `x.ready`. */
export function markerNames(name: string): string[] {
  const names = [`${name}${READY_SUFFIX}`];
  if (isCsvName(name)) names.push(`${name.slice(0, -4)}${READY_SUFFIX}`);
  return names;
}

/**
 * When a file last changed, in ms: the later of its modification and status-change times. The
 * status-change time cannot be set back by copy tools that keep the source's modification time
 * (`cp -p`, `rsync -t`), so a file still being copied that way does not look old.
 */
export function lastChangeMs(st: { mtimeMs: number; ctimeMs: number }): number {
  return Math.max(st.mtimeMs, st.ctimeMs);
}

/** True when a file unchanged since `changedMs` has settled at `nowMs`. */
export function hasSettled(changedMs: number, nowMs: number, settleSeconds: number): boolean {
  return nowMs - changedMs >= settleSeconds * 1000;
}

/**
 * How long a file may sit in `processing/` before a scan takes it as abandoned by a crashed scan
 * and imports it again: ten times the settle time, and at least ten minutes. A live scan holds a
 * file for seconds (the import only stages and queues), so this is far beyond any live claim.
 */
export function staleAfterMs(settleSeconds: number): number {
  return Math.max(10 * settleSeconds * 1000, 10 * 60_000);
}

/**
 * How long a payout file whose last line has no line break may stay so before a scan reports it
 * (moves it to `failed/` with a note, never importing it), in ms since it last changed: the same
 * span as `staleAfterMs`, far beyond any pause of a live writer the settle time allows for.
 */
export function unfinishedAfterMs(settleSeconds: number): number {
  return staleAfterMs(settleSeconds);
}

/**
 * What the bytes of a file say about its end (README "The scheduled inbox"):
 * - `complete`: the last character is a line break (LF or CR, in UTF-16 too when the file starts
 *   with a UTF-16 byte-order mark): every line, the last one included, was written to its end;
 * - `unfinished`: the last line has no line break: a writer may have paused inside it (a cut
 *   account number still passes the rules), so the file is not taken yet;
 * - `empty`: no byte at all, which is how a writer's file starts;
 * - `binary`: a NUL byte in the first bytes (and no UTF-16 byte-order mark): not text, so the rule
 *   does not apply; the import refuses such a file as a whole, and nothing of it is queued.
 */
export type FileEnd = 'complete' | 'unfinished' | 'empty' | 'binary';

/**
 * Judges a file by its first bytes (`head`, up to a few KiB), its last two bytes (`tail`) and its
 * size in bytes. UTF-16 is recognised by its byte-order mark only, as the import reads it
 * (src/import/encoding.ts); its line break is one 2-byte code unit, LF or CR.
 */
export function fileEnd(head: Uint8Array, tail: Uint8Array, size: number): FileEnd {
  if (size === 0) return 'empty';
  const last = tail[tail.length - 1];
  const before = tail.length >= 2 ? tail[tail.length - 2] : undefined;
  const isBreak = (b: number | undefined) => b === 0x0a || b === 0x0d;
  const even = size % 2 === 0;
  if (head[0] === 0xff && head[1] === 0xfe) return even && last === 0 && isBreak(before) ? 'complete' : 'unfinished';
  if (head[0] === 0xfe && head[1] === 0xff) return even && before === 0 && isBreak(last) ? 'complete' : 'unfinished';
  if (head.includes(0)) return 'binary';
  return isBreak(last) ? 'complete' : 'unfinished';
}

/** Folder inside a claim folder holding the private copy that is imported (hidden: never a payout file's name). */
export const COPY_FOLDER = '.copy';

/** A claim folder in `processing/` is named `<ms since epoch>-<pid>-<8 hex>`; one file inside. */
const CLAIM_NAME = /^(\d{13})-(\d{1,10})-([0-9a-f]{8})$/;

/** The name of a new claim folder. */
export function claimName(nowMs: number, pid: number, random: string): string {
  return `${String(Math.trunc(nowMs)).padStart(13, '0')}-${pid}-${random}`;
}

/** When a claim folder was made (ms), or undefined for a name that is not a claim folder's. */
export function claimTime(name: string): number | undefined {
  const m = CLAIM_NAME.exec(name);
  return m ? Number(m[1]) : undefined;
}

/** `payouts.csv` → `payouts.2.csv`: the name of the n-th file of the same name in `done/` or `failed/`. */
export function numberedName(name: string, n: number): string {
  if (n <= 1) return name;
  const dot = name.lastIndexOf('.');
  return dot > 0 ? `${name.slice(0, dot)}.${n}${name.slice(dot)}` : `${name}.${n}`;
}
