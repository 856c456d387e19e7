/**
 * The bytes of a file the inbox claimed, and whether they are still the file's bytes (README "The
 * scheduled inbox"). A writer that holds the file open keeps writing to it after the scan renamed
 * it into `processing/`, so the scan imports a private copy made right after the claim and checks,
 * before the batch is released and again after the import, that the claimed file still has the
 * size, modification time and SHA-256 the copy was made from. Copies, reads and hashes; never
 * moves or deletes.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CashoutError } from '../errors.js';
import { hashFile } from '../import/read-rows.js';
import { fileEnd, type FileEnd } from './inbox-rules.js';

/** First bytes read to tell a text file from a binary one. */
const HEAD_BYTES = 8192;

/** What was claimed: the file's size and modification time at the claim, and its copy. */
export interface ClaimedBytes {
  /** Size of the claimed file when the copy started, in bytes. */
  readonly size: number;
  /** Modification time of the claimed file when the copy started, in ms since the epoch. */
  readonly mtimeMs: number;
  /** SHA-256 (hex) of the copy: the bytes imported. */
  readonly sha256: string;
  /** Bytes in the copy (more than `size` when the file grew while it was copied). */
  readonly copied: number;
}

/** Reads the first and last bytes of `path` and judges its end (`fileEnd` in ./inbox-rules.ts). */
export async function readFileEnd(path: string): Promise<FileEnd> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const head = Buffer.alloc(Math.min(size, HEAD_BYTES));
    const tail = Buffer.alloc(Math.min(size, 2));
    await file.read(head, 0, head.length, 0);
    await file.read(tail, 0, tail.length, size - tail.length);
    return fileEnd(head, tail, size);
  } finally {
    await file.close();
  }
}

/**
 * Copies the claimed file `src` to `dest` (a new file, readable by its owner only), hashing the
 * bytes as they are copied: the copy is what gets imported, and its SHA-256 what the file is
 * compared with later. The size and modification time are those of `src` before the copy started.
 */
export async function copyClaimed(src: string, dest: string): Promise<ClaimedBytes> {
  const before = await stat(src);
  const hash = createHash('sha256');
  let copied = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      copied += chunk.length;
      cb(null, chunk);
    },
  });
  const from = createReadStream(src, { highWaterMark: 1024 * 1024 });
  await pipeline(from, tap, createWriteStream(dest, { flags: 'wx', mode: 0o600 }));
  return { size: before.size, mtimeMs: before.mtimeMs, sha256: hash.digest('hex'), copied };
}

/**
 * How the claimed file at `path` differs from what was claimed, in words ("its size went from 812
 * to 2430 bytes"), or undefined when its size, modification time and SHA-256 are unchanged and
 * the copy held exactly `claimed.size` bytes (else the file grew while it was being copied).
 */
export async function changeSince(path: string, claimed: ClaimedBytes): Promise<string | undefined> {
  let now;
  try {
    now = await stat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'it is no longer where the scan put it';
    throw err;
  }
  if (now.size !== claimed.size) return `its size went from ${claimed.size} to ${now.size} bytes`;
  if (claimed.copied !== claimed.size) {
    return `it grew from ${claimed.size} to ${claimed.copied} bytes while it was being copied`;
  }
  if (now.mtimeMs !== claimed.mtimeMs) {
    const [was, is] = [claimed.mtimeMs, now.mtimeMs].map((ms) => new Date(ms).toISOString());
    return `its modification time went from ${was} to ${is}`;
  }
  const { sha256, bytes } = await hashFile(path);
  if (bytes !== claimed.size) return `its size went from ${claimed.size} to ${bytes} bytes`;
  if (sha256 !== claimed.sha256) return `its content (SHA-256) changed from ${claimed.sha256} to ${sha256}`;
  return undefined;
}

/**
 * Throws `CashoutError('file_changed')` naming `name` and the change when the claimed file is not
 * the bytes claimed any more (`changeSince`); returns when it is.
 */
export async function requireUnchanged(path: string, name: string, claimed: ClaimedBytes): Promise<void> {
  const change = await changeSince(path, claimed);
  if (change !== undefined) {
    throw new CashoutError('file_changed', `${name} changed after it was taken: ${change}`, { file: name, change });
  }
}
