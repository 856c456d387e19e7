/**
 * 64-bit fingerprints of short strings (references, mobile and account numbers, holder names),
 * so that cross-row checks over a million rows keep a few bytes per row instead of the strings.
 * Two independent 32-bit hashes over the UTF-16 code units: FNV-1a and a multiply-xorshift mix
 * (both with `Math.imul`, no allocation). Not cryptographic; two different strings share a
 * fingerprint with a probability of about 2^-64 per pair.
 */

// The two running hashes of the fingerprint being computed (one at a time; no allocation).
let hx = 0;
let hy = 0;

function begin(length: number): void {
  hx = 0x811c9dc5;
  hy = 0x9e3779b9 ^ length;
}

function feed(text: string): void {
  let x = hx;
  let y = hy;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    x = Math.imul(x ^ c, 0x01000193);
    y = Math.imul(y ^ c, 0x85ebca6b);
    y ^= y >>> 13;
  }
  hx = x;
  hy = y;
}

/** Feeds one NUL character (the separator of a key's parts). */
function feedNul(): void {
  hx = Math.imul(hx, 0x01000193);
  hy = Math.imul(hy, 0x85ebca6b);
  hy ^= hy >>> 13;
}

function end(out: Uint32Array, at: number): void {
  let x = hx;
  let y = hy;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  y = Math.imul(y ^ (y >>> 16), 0xc2b2ae35);
  y ^= y >>> 16;
  out[at] = x >>> 0;
  out[at + 1] = y >>> 0;
}

/**
 * Writes the fingerprint of `text` into `out[at]` (high word, used to place it in a table) and
 * `out[at + 1]` (low word, stored to tell keys apart). `out` is a `Uint32Array`.
 */
export function fingerprintInto(text: string, out: Uint32Array, at: number): void {
  begin(text.length);
  feed(text);
  end(out, at);
}

/**
 * Writes the fingerprint of the key `tag`, NUL, `a`, NUL, `b` into `out[at]` and `out[at + 1]`:
 * the same words `fingerprintInto` gives for that text joined, without building it.
 */
export function fingerprintKeyInto(tag: string, a: string, b: string, out: Uint32Array, at: number): void {
  begin(tag.length + a.length + b.length + 2);
  feed(tag);
  feedNul();
  feed(a);
  feedNul();
  feed(b);
  end(out, at);
}
