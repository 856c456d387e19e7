/**
 * A payout file sent as the raw body of an HTTP request (text/csv or application/octet-stream),
 * streamed to a private temporary folder, never held in memory, and cut off as soon as it passes
 * CASHOUT_MAX_FILE_BYTES (checked again by the import itself).
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CashoutError } from '../errors.js';

/** A received file: where it is, and how to remove it with its folder. */
export interface ReceivedFile {
  readonly path: string;
  readonly bytes: number;
  remove(): Promise<void>;
}

/**
 * The name the batch records for an uploaded file: `wanted` with anything but letters, digits,
 * `.`, `_` and `-` replaced by `_`, ending in `.csv` ("upload.csv" when none is given).
 */
export function uploadFileName(wanted: string | undefined): string {
  const base = (wanted ?? '')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 100);
  if (base === '') return 'upload.csv';
  return base.toLowerCase().endsWith('.csv') ? base : `${base}.csv`;
}

/**
 * Streams `body` into a new private folder as `name`. Throws `CashoutError('file_too_large')`
 * naming the limit when it passes `maxBytes` (the partial file is removed).
 */
export async function receiveUpload(body: Readable, name: string, maxBytes: number): Promise<ReceivedFile> {
  const dir = await mkdtemp(join(tmpdir(), 'cashout-upload-'));
  const path = join(dir, name);
  const remove = () => rm(dir, { recursive: true, force: true });
  let bytes = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        const message = `the file is larger than ${maxBytes} bytes (CASHOUT_MAX_FILE_BYTES); nothing was imported`;
        cb(new CashoutError('file_too_large', message, { maxBytes }));
        return;
      }
      cb(null, chunk);
    },
  });
  try {
    await pipeline(body, limit, createWriteStream(path, { mode: 0o600 }));
  } catch (err) {
    await remove();
    throw err;
  }
  return { path, bytes, remove };
}
