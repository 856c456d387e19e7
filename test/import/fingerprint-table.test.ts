import { describe, expect, it } from 'vitest';
import { createFingerprintTable } from '../../src/import/fingerprint-table.js';
import { fingerprintInto } from '../../src/import/fingerprint.js';

const fp = (text: string): [number, number] => {
  const out = new Uint32Array(2);
  fingerprintInto(text, out, 0);
  return [out[0]!, out[1]!];
};

describe('fingerprint tables', () => {
  it('answer like a Map of first lines, also past the expected size (added levels), with one or both key words', () => {
    for (const fullKey of [true, false]) {
      const table = createFingerprintTable(fullKey, () => 1000);
      const first = new Map<string, number>();
      for (let line = 2; line < 60_000; line++) {
        const key = `PAY-${(line * 7919) % 20_000}`;
        const [hi, lo] = fp(key);
        const got = table.getOrAdd(hi, lo, line);
        expect(got).toBe(first.get(key) ?? 0);
        if (!first.has(key)) first.set(key, line);
      }
      expect(table.size).toBe(first.size);
      // Near 1.25 slots a key: levels never rehash, so a few levels hold a little more.
      expect(table.bytes).toBeLessThan(first.size * (fullKey ? 12 : 8) * 3);
    }
  });

  it('keeps running totals that saturate instead of wrapping', () => {
    const table = createFingerprintTable(false);
    const [hi, lo] = fp('+201001234567');
    expect(table.addTo(hi, lo, 150_00)).toBe(150_00);
    expect(table.addTo(hi, lo, 250_00)).toBe(400_00);
    expect(table.addTo(hi, lo, 0xffffffff)).toBe(0xffffffff);
    expect(() => table.addTo(hi, lo, 0)).toThrow(RangeError);
  });

  it('gives different strings different fingerprints and the same string the same one', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200_000; i++) seen.add(fp(`m\u0000+2010${String(i).padStart(8, '0')}\u0000100.00`).join(':'));
    expect(seen.size).toBe(200_000);
    expect(fp('PAY-1')).toEqual(fp('PAY-1'));
  });
});
