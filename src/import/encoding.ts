/**
 * Text encodings of payout files. The template asks for UTF-8 (a byte-order mark is fine); what
 * finance teams actually export also includes UTF-16 with a byte-order mark ("Unicode text" from
 * Excel) and Windows-1256 (Arabic Windows, older Excel "CSV"). This module decides how to read a
 * file from its first bytes and the `--encoding` option, and checks every byte on the way in:
 *
 * - UTF-8, with or without a byte-order mark: read as is; every byte must be valid UTF-8.
 * - UTF-16 LE/BE with a byte-order mark: decoded (iconv-lite) without being asked.
 * - Anything else (Windows-1256, Windows-1252, UTF-16 without a mark …) is never guessed silently:
 *   the file is refused with a message naming the likely encoding and the `--encoding` option,
 *   and read with that encoding only when the user asks for it.
 * - `--encoding windows-1256` on a file that reads as UTF-8 with non-ASCII text is refused, since
 *   decoding it would turn every Arabic name into different letters.
 * - A NUL character anywhere means binary data (an .xlsx, a database dump), never a CSV.
 *
 * `InputChecker` turns the file's bytes into checked UTF-8 for the CSV parser, counting lines so
 * that every refusal names the line where the problem is.
 */
import { isUtf8 } from 'node:buffer';
import iconv from 'iconv-lite';
import { analyse } from 'chardet';
import { CashoutError } from '../errors.js';

/** How the bytes of a file are turned into text. */
export type TextEncoding =
  | { readonly kind: 'utf-8' }
  | { readonly kind: 'decode'; readonly name: string; readonly label: string; readonly bom: boolean };

const UTF8: TextEncoding = { kind: 'utf-8' };

/** Human names of the encodings users meet, for messages. */
const LABELS: Record<string, string> = {
  'windows-1256': 'Windows-1256 (Arabic)',
  'iso-8859-6': 'ISO-8859-6 (Arabic)',
  'windows-1252': 'Windows-1252 (Western European)',
  'iso-8859-1': 'ISO-8859-1 (Western European)',
  'utf-16le': 'UTF-16 little-endian',
  'utf-16be': 'UTF-16 big-endian',
};

function canonical(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** The spelling used in messages and with iconv-lite: "windows-1256", "utf-16le", … */
function displayName(name: string): string {
  const c = canonical(name);
  const known: Record<string, string> = {
    utf8: 'utf-8',
    utf16le: 'utf-16le',
    utf16be: 'utf-16be',
    utf16: 'utf-16',
    ucs2: 'utf-16le',
    cp1256: 'windows-1256',
    windows1256: 'windows-1256',
    win1256: 'windows-1256',
    cp1252: 'windows-1252',
    windows1252: 'windows-1252',
    win1252: 'windows-1252',
    latin1: 'iso-8859-1',
    iso88591: 'iso-8859-1',
    iso88596: 'iso-8859-6',
  };
  return known[c] ?? name.toLowerCase();
}

/**
 * Checks an `--encoding` value. Throws `CashoutError('usage')` for a name iconv-lite does not
 * know; returns the canonical name ("utf-8" for every spelling of UTF-8).
 */
export function checkEncodingName(name: string): string {
  const shown = displayName(name.trim());
  if (shown === 'utf-8') return shown;
  if (!iconv.encodingExists(shown)) {
    throw new CashoutError(
      'usage',
      `unknown encoding "${name}"; use utf-8 (the default), utf-16le, utf-16be or windows-1256`,
      { encoding: name },
    );
  }
  return shown;
}

/** The byte-order mark at the start of `head`, if any. */
export function byteOrderMark(head: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' | undefined {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return undefined;
}

/**
 * UTF-16 written without a byte-order mark: mostly ASCII text, so every other byte is zero.
 * Returns the likely byte order, or undefined.
 */
export function utf16WithoutMark(head: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  const n = Math.min(head.length, 4096) & ~1;
  if (n < 4) return undefined;
  let evenZero = 0;
  let oddZero = 0;
  for (let i = 0; i < n; i += 2) {
    if (head[i] === 0) evenZero++;
    if (head[i + 1] === 0) oddZero++;
  }
  const pairs = n / 2;
  if (oddZero >= pairs * 0.6 && evenZero <= pairs * 0.05) return 'utf-16le';
  if (evenZero >= pairs * 0.6 && oddZero <= pairs * 0.05) return 'utf-16be';
  return undefined;
}

/** A file format other than text recognised by its first bytes, for a clearer refusal. */
function binaryKind(head: Uint8Array): string | undefined {
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
  if (starts(0x50, 0x4b, 0x03, 0x04)) return 'an Excel workbook (.xlsx) or another zip archive';
  if (starts(0xd0, 0xcf, 0x11, 0xe0)) return 'an Excel 97-2003 workbook (.xls)';
  if (starts(0x25, 0x50, 0x44, 0x46)) return 'a PDF document';
  return undefined;
}

function fractionOf(text: string, test: (code: number) => boolean): { share: number; count: number } {
  let nonAscii = 0;
  let hits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    nonAscii++;
    if (test(c)) hits++;
  }
  return { share: nonAscii === 0 ? 0 : hits / nonAscii, count: nonAscii };
}

/**
 * The most likely legacy encoding of bytes that are not UTF-8: Windows-1256 when they decode to
 * Arabic letters, Windows-1252 when they decode to accented Latin letters, else chardet's best
 * guess when it is confident. Only ever used to word a message, never to read the file.
 */
export function guessLegacyEncoding(sample: Uint8Array): string | undefined {
  const buf = Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength);
  const arabic = fractionOf(iconv.decode(buf, 'windows-1256'), (c) => (c >= 0x0600 && c <= 0x06ff) || c === 0x00a0);
  if (arabic.count > 0 && arabic.share >= 0.8) return 'windows-1256';
  const latin = fractionOf(iconv.decode(buf, 'windows-1252'), (c) => (c >= 0x00c0 && c <= 0x024f) || c === 0x00a0);
  if (latin.count > 0 && latin.share >= 0.8) return 'windows-1252';
  const best = analyse(sample)[0];
  if (best && best.confidence >= 50 && canonical(best.name) !== 'utf8') return displayName(best.name);
  return undefined;
}

/** "it looks like Windows-1256 (Arabic): run again with --encoding windows-1256, or save it as "CSV UTF-8"" */
function encodingAdvice(guess: string | undefined): string {
  if (guess === undefined)
    return 'save it as "CSV UTF-8" (or run again with --encoding <name> if you know its encoding)';
  return `it looks like ${LABELS[guess] ?? guess}: run again with --encoding ${guess}, or save it as "CSV UTF-8"`;
}

/**
 * Decides how to read a file from its first bytes (`head`, ideally 64 KiB; `whole` when that is
 * the entire file) and the requested encoding. Throws `file_encoding` when the request contradicts
 * the file or the file is UTF-16 without a byte-order mark, and `usage` for an unknown name.
 */
export function chooseEncoding(
  path: string,
  head: Uint8Array,
  requested: string | undefined,
  whole: boolean,
): TextEncoding {
  const bom = byteOrderMark(head);
  const asked = requested === undefined || requested.trim() === '' ? undefined : checkEncodingName(requested);
  if (asked === undefined || asked === 'utf-8') {
    if (bom === 'utf-16le' || bom === 'utf-16be') {
      if (asked === 'utf-8') {
        throw new CashoutError(
          'file_encoding',
          `${path} starts with a UTF-16 byte-order mark, but --encoding utf-8 was given; run again without --encoding`,
          { path },
        );
      }
      return { kind: 'decode', name: bom, label: LABELS[bom]!, bom: true };
    }
    if (bom === undefined && asked === undefined) {
      const order = utf16WithoutMark(head);
      if (order) {
        throw new CashoutError(
          'file_encoding',
          `${path} looks like ${LABELS[order]} text without a byte-order mark: run again with --encoding ${order}, or save it as "CSV UTF-8"`,
          { path, guess: order },
        );
      }
    }
    return UTF8;
  }
  // An explicit other encoding.
  if (bom !== undefined) {
    const same = (asked === 'utf-16' && bom !== 'utf-8') || asked === bom;
    if (!same) {
      throw new CashoutError(
        'file_encoding',
        `${path} starts with a ${LABELS[bom] ?? 'UTF-8'} byte-order mark, but --encoding ${asked} was given; run again without --encoding`,
        { path },
      );
    }
    if (bom === 'utf-8') return UTF8;
    return { kind: 'decode', name: bom, label: LABELS[bom]!, bom: true };
  }
  const wide = asked.startsWith('utf-16') || asked.startsWith('utf-32') || asked === 'ucs-2';
  if (!wide) {
    // Single-byte encodings decode any bytes; make sure the file is not UTF-8 text already.
    const complete = whole ? head.length : completeUtf8Length(head);
    const body = head.subarray(0, complete);
    if (body.some((b) => b >= 0x80) && isUtf8(body)) {
      throw new CashoutError(
        'file_encoding',
        `${path} is UTF-8 text, but --encoding ${asked} was given: reading it as ${asked} would change its names and descriptions; run again without --encoding`,
        { path, encoding: asked },
      );
    }
  }
  return { kind: 'decode', name: asked, label: LABELS[asked] ?? asked, bom: false };
}

/** Length of the part of `buf` that ends on a whole UTF-8 character (an incomplete last one is left out). */
export function completeUtf8Length(buf: Uint8Array): number {
  const len = buf.length;
  for (let i = len - 1; i >= 0 && i >= len - 3; i--) {
    const b = buf[i]!;
    if ((b & 0xc0) === 0x80) continue;
    if (b < 0xc0) return len;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
    return len - i < need ? i : len;
  }
  return len;
}

/** Offset of the first byte that is not part of valid UTF-8 in `buf`, or -1. Slow; used to place an error. */
export function firstInvalidUtf8(buf: Uint8Array): number {
  let i = 0;
  while (i < buf.length) {
    const b = buf[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return i;
    if (i + need >= buf.length) return i;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = buf[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += need + 1;
  }
  return -1;
}

/** Limits and context of one `InputChecker`. */
export interface InputCheckerOptions {
  readonly path: string;
  /** Requested encoding (`--encoding`); undefined = UTF-8, or UTF-16 with its byte-order mark. */
  readonly encoding?: string | undefined;
  /** Most bytes read from the file before it is refused as too large. */
  readonly maxBytes: number;
  /** Reading on from a record boundary in the middle of a UTF-8 file: its byte offset and line. */
  readonly continueAt?: { readonly start: number; readonly line: number };
  /** Longest physical line accepted, in UTF-8 bytes (guards against a value of many megabytes). */
  readonly maxLineBytes: number;
  /** Words for the line-length refusal: what the longest payout value is. */
  readonly describeLineLimit?: (line: number) => string;
}

function mb(bytes: number): string {
  return bytes >= 1_000_000
    ? `${(bytes / 1_000_000).toFixed(1)} MB`
    : bytes >= 1_000
      ? `${(bytes / 1_000).toFixed(1)} kB`
      : `${bytes} bytes`;
}

/** "200.0 MB" for messages. */
export function formatBytes(bytes: number): string {
  return mb(bytes);
}

/**
 * Turns a file's bytes, chunk by chunk, into checked UTF-8: decodes non-UTF-8 encodings, refuses
 * invalid UTF-8 (`file_encoding`), NUL characters (`file_binary`), more than `maxBytes` bytes
 * (`file_too_large`) and any line longer than `maxLineBytes` (`csv_malformed`), each naming the
 * line. `push` may return an empty buffer (bytes held back until the encoding is known or a
 * character is complete); call `end` after the last chunk.
 */
export class InputChecker {
  private readonly opts: InputCheckerOptions;
  private encoding: TextEncoding | undefined;
  private head: Buffer[] = [];
  private headBytes = 0;
  private bytesIn = 0;
  private carry: Buffer = Buffer.alloc(0);
  private decoder: { write(b: Buffer): string; end(): string | undefined } | undefined;
  /** 1-based line of the next output byte. */
  private line = 1;
  private lineBytes = 0;
  private lastWasCR = false;
  private started = false;
  private pendingText = '';

  constructor(opts: InputCheckerOptions) {
    this.opts = opts;
    if (opts.continueAt) {
      this.encoding = UTF8;
      this.started = true;
      this.line = opts.continueAt.line;
      this.bytesIn = opts.continueAt.start;
    }
  }

  /** The encoding chosen, once known. */
  get chosen(): TextEncoding | undefined {
    return this.encoding;
  }

  /** Feeds one chunk; returns the UTF-8 bytes ready for the parser. */
  push(chunk: Buffer): Buffer {
    this.bytesIn += chunk.length;
    if (this.bytesIn > this.opts.maxBytes) {
      throw new CashoutError(
        'file_too_large',
        `${this.opts.path} is larger than ${mb(this.opts.maxBytes)}, the largest payout file accepted (CASHOUT_MAX_FILE_BYTES); split it into smaller files`,
        { path: this.opts.path, maxBytes: this.opts.maxBytes },
      );
    }
    if (this.encoding === undefined) {
      this.head.push(chunk);
      this.headBytes += chunk.length;
      if (this.headBytes < 64 * 1024) return Buffer.alloc(0);
      return this.start(false);
    }
    return this.convert(chunk, false);
  }

  /** Ends the input; returns the last UTF-8 bytes. */
  end(): Buffer {
    if (this.encoding === undefined) {
      const out = this.start(true);
      return Buffer.concat([out, this.convert(Buffer.alloc(0), true)]);
    }
    return this.convert(Buffer.alloc(0), true);
  }

  private start(whole: boolean): Buffer {
    const head = Buffer.concat(this.head);
    this.head = [];
    const kind = binaryKind(head);
    if (kind) {
      throw new CashoutError(
        'file_binary',
        `${this.opts.path} is ${kind}, not a CSV text file; open it and save it as "CSV UTF-8"`,
        { path: this.opts.path },
      );
    }
    this.encoding = chooseEncoding(this.opts.path, head, this.opts.encoding, whole);
    if (this.encoding.kind === 'decode') {
      this.decoder = iconv.getDecoder(this.encoding.name, { stripBOM: true });
    }
    this.started = true;
    return this.convert(head, whole);
  }

  private convert(chunk: Buffer, last: boolean): Buffer {
    if (!this.started) return Buffer.alloc(0);
    let out: Buffer;
    if (this.encoding!.kind === 'utf-8') {
      const data = this.carry.length > 0 ? Buffer.concat([this.carry, chunk]) : chunk;
      const upTo = last ? data.length : completeUtf8Length(data);
      out = data.subarray(0, upTo);
      this.carry = Buffer.from(data.subarray(upTo));
      if (!isUtf8(out)) this.refuseUtf8(out);
    } else {
      let text =
        this.pendingText +
        (chunk.length > 0 ? this.decoder!.write(chunk) : '') +
        (last ? (this.decoder!.end() ?? '') : '');
      this.pendingText = '';
      // Keep a high surrogate whose pair is still to come, so the pair is encoded together.
      const tail = text.charCodeAt(text.length - 1);
      if (!last && tail >= 0xd800 && tail <= 0xdbff) {
        this.pendingText = text.slice(-1);
        text = text.slice(0, -1);
      }
      out = Buffer.from(text, 'utf8');
      const bad = text.indexOf('\ufffd');
      if (bad !== -1) {
        const at = this.line + countBreaks(Buffer.from(text.slice(0, bad), 'utf8'));
        throw new CashoutError(
          'file_encoding',
          `${this.opts.path}, line ${at}: holds bytes that are not ${this.encoding!.kind === 'decode' ? this.encoding!.label : 'UTF-8'} text; check the --encoding option, or save the file as "CSV UTF-8"`,
          { path: this.opts.path, line: at },
        );
      }
    }
    this.scan(out);
    return out;
  }

  private refuseUtf8(out: Buffer): never {
    const at = firstInvalidUtf8(out);
    const line = this.line + countBreaks(out.subarray(0, Math.max(0, at)));
    const from = Math.max(0, at - 4096);
    const guess = guessLegacyEncoding(out.subarray(from, Math.min(out.length, at + 4096)));
    throw new CashoutError(
      'file_encoding',
      `${this.opts.path} is not UTF-8 text (line ${line} holds bytes that are not UTF-8); ${encodingAdvice(guess)}`,
      { path: this.opts.path, line, ...(guess ? { guess } : {}) },
    );
  }

  /** Counts lines, checks line lengths and NUL characters. */
  private scan(out: Buffer): void {
    const max = this.opts.maxLineBytes;
    for (let i = 0; i < out.length; i++) {
      const b = out[i]!;
      if (b === 0x0a) {
        if (!this.lastWasCR) this.line++;
        this.lastWasCR = false;
        this.lineBytes = 0;
        continue;
      }
      if (b === 0x0d) {
        this.line++;
        this.lastWasCR = true;
        this.lineBytes = 0;
        continue;
      }
      this.lastWasCR = false;
      if (b === 0) {
        throw new CashoutError(
          'file_binary',
          `${this.opts.path}, line ${this.line}: holds binary data (a NUL character), not CSV text; export the sheet as "CSV UTF-8"`,
          { path: this.opts.path, line: this.line },
        );
      }
      if (++this.lineBytes > max) {
        const why = this.opts.describeLineLimit?.(this.line) ?? '';
        throw new CashoutError(
          'csv_malformed',
          `${this.opts.path}, line ${this.line}: the line is longer than ${mb(max)}${why ? `; ${why}` : ''}`,
          { path: this.opts.path, line: this.line, maxLineBytes: max },
        );
      }
    }
  }
}

/** Line breaks (CRLF, CR or LF, each counted once) in `buf`. */
export function countBreaks(buf: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < buf.length; i++) {
    const b = buf[i];
    if (b === 0x0d) n++;
    else if (b === 0x0a && buf[i - 1] !== 0x0d) n++;
  }
  return n;
}
