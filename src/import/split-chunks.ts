/**
 * Cuts a UTF-8 payout file into pieces of about `chunkBytes` that start and end on record
 * boundaries, so that several threads can parse them at once. A cut is made just after a line
 * break at which the number of quote characters (") since the start of the file is even: outside
 * any quoted value in a well-formed file. A quote kept as written inside an unquoted value
 * (relax_quotes) can make that count lie; the piece before such a cut then ends inside a quoted
 * value, csv-parse refuses it, and the reader reads the file on from there in one stream
 * (`./parallel-scan.ts`), so a wrong cut costs time, never a row.
 */
import { open } from 'node:fs/promises';

/** One piece: its bytes (a buffer of its own) and its byte offset in the file. */
export interface FileChunk {
  readonly bytes: Buffer;
  readonly start: number;
}

function countByte(
  buf: Uint8Array & { indexOf(v: number, from: number): number },
  byte: number,
  from: number,
  to: number,
): number {
  let n = 0;
  for (let i = buf.indexOf(byte, from); i !== -1 && i < to; i = buf.indexOf(byte, i + 1)) n++;
  return n;
}

/**
 * The offset just after the last line break of `data` that is outside quotes (an even number of
 * quote characters before it), or -1. LF breaks are used when there is one; otherwise CR breaks,
 * never the last byte (it may be the CR of a CRLF whose LF comes next).
 */
export function findCut(data: Buffer): number {
  let breakByte = 0x0a;
  let at = data.lastIndexOf(0x0a);
  if (at === -1) {
    breakByte = 0x0d;
    at = data.length >= 2 ? data.lastIndexOf(0x0d, data.length - 2) : -1;
  }
  if (at === -1) return -1;
  let quotes = countByte(data, 0x22, 0, at + 1);
  while (quotes % 2 !== 0) {
    const before = at === 0 ? -1 : data.lastIndexOf(breakByte, at - 1);
    if (before === -1) return -1;
    quotes -= countByte(data, 0x22, before + 1, at + 1);
    at = before;
  }
  return at + 1;
}

/**
 * Reads `path` and yields its pieces in order. A piece is at least `chunkBytes` long unless it is
 * the last, unless no cut is found within `maxPieceBytes` (a record longer than any accepted one):
 * that piece is yielded whole and fails to parse, which sends the reader to its careful path.
 */
export async function* splitChunks(path: string, chunkBytes: number, maxPieceBytes: number): AsyncGenerator<FileChunk> {
  const handle = await open(path, 'r');
  try {
    // One read buffer for the whole file: the carried tail of the last read moves to its front.
    let buf = Buffer.allocUnsafe(2 * chunkBytes);
    let held = 0;
    let start = 0;
    for (;;) {
      if (held + chunkBytes > buf.length) {
        const bigger = Buffer.allocUnsafe(held + 2 * chunkBytes);
        buf.copy(bigger, 0, 0, held);
        buf = bigger;
      }
      const { bytesRead } = await handle.read(buf, held, chunkBytes, start + held);
      held += bytesRead;
      const data = buf.subarray(0, held);
      if (bytesRead === 0) {
        if (held > 0) yield { bytes: Buffer.from(data), start };
        return;
      }
      const cut = findCut(data);
      if (cut <= 0 && held <= maxPieceBytes) continue;
      const end = cut <= 0 ? held : cut;
      yield { bytes: Buffer.from(data.subarray(0, end)), start };
      start += end;
      buf.copy(buf, 0, end, held);
      held -= end;
    }
  } finally {
    await handle.close();
  }
}
