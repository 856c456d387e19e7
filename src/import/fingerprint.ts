/**
 * 64-bit fingerprints of short strings (references, mobile and account numbers, holder names),
 * so that cross-row checks over a million rows keep a few bytes per row instead of the strings.
 * Two independent 32-bit hashes over the UTF-16 code units: FNV-1a and a multiply-xorshift mix
 * (both with `Math.imul`, no allocation). Not cryptographic; two different strings share a
 * fingerprint with a probability of about 2^-64 per pair.
 */

/**
 * Writes the fingerprint of `text` into `out[at]` (high word, used to place it in a table) and
 * `out[at + 1]` (low word, stored to tell keys apart). `out` is a `Uint32Array`.
 */
export function fingerprintInto(text: string, out: Uint32Array, at: number): void {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x85ebca6b);
    b ^= b >>> 13;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x7feb352d);
  a ^= a >>> 15;
  b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
  b ^= b >>> 16;
  out[at] = a >>> 0;
  out[at + 1] = b >>> 0;
}

/**
 * Writes the fingerprint of the key `tag`, NUL, `a`, NUL, `b` into `out[at]` and `out[at + 1]`:
 * the same words `fingerprintInto` gives for that text joined, without building it.
 */
export function fingerprintKeyInto(tag: string, a: string, b: string, out: Uint32Array, at: number): void {
  let x = 0x811c9dc5;
  let y = 0x9e3779b9 ^ (tag.length + a.length + b.length + 2);
  for (let part = 0; part < 3; part++) {
    const text = part === 0 ? tag : part === 1 ? a : b;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      x = Math.imul(x ^ c, 0x01000193);
      y = Math.imul(y ^ c, 0x85ebca6b);
      y ^= y >>> 13;
    }
    if (part < 2) {
      // The NUL between parts.
      x = Math.imul(x, 0x01000193);
      y = Math.imul(y, 0x85ebca6b);
      y ^= y >>> 13;
    }
  }
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  y = Math.imul(y ^ (y >>> 16), 0xc2b2ae35);
  y ^= y >>> 16;
  out[at] = x >>> 0;
  out[at + 1] = y >>> 0;
}
