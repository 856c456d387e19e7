/** EGP amounts as exact integer piasters (src/money.ts): no float ever touches money. */
import { describe, expect, it } from 'vitest';
import { formatPiasters, sumAmounts, toPiasters } from '../src/money.js';

describe('toPiasters', () => {
  it.each([
    ['1500.25', 150025n],
    ['1500.00', 150000n],
    ['0.05', 5n],
    ['0.10', 10n],
    ['0.00', 0n],
    ['1.99', 199n],
    // Beyond Number.MAX_SAFE_INTEGER piasters: still exact.
    ['999999999999999999.99', 99999999999999999999n],
  ])('%s → %i piasters', (amount, piasters) => {
    expect(toPiasters(amount)).toBe(piasters);
  });

  it.each([
    ['one decimal', '1.5'],
    ['three decimals', '1.500'],
    ['no decimals', '1500'],
    ['thousands separator', '1,000.00'],
    ['decimal comma', '1500,00'],
    ['exponent', '1e3'],
    ['negative', '-5.00'],
    ['plus sign', '+5.00'],
    ['leading space', ' 1.00'],
    ['trailing space', '1.00 '],
    ['no integer part', '.50'],
    ['empty', ''],
    ['Arabic-Indic digits', '١٥٠٠.٠٠'],
    ['currency text', '100.00 EGP'],
  ])('throws RangeError on %s (%j)', (_label, amount) => {
    expect(() => toPiasters(amount)).toThrow(RangeError);
  });
});

describe('formatPiasters', () => {
  it.each([
    [0n, '0.00'],
    [5n, '0.05'],
    [10n, '0.10'],
    [99n, '0.99'],
    [100n, '1.00'],
    [150025n, '1500.25'],
    [-5n, '-0.05'],
    [-150025n, '-1500.25'],
    [99999999999999999999n, '999999999999999999.99'],
  ])('%i piasters → %s', (piasters, text) => {
    expect(formatPiasters(piasters)).toBe(text);
  });
});

describe('round trips', () => {
  it.each(['0.00', '0.01', '0.05', '0.10', '1.00', '1500.25', '45000.00', '123456789012.34'])(
    'formatPiasters(toPiasters(%s)) gives the same string back',
    (amount) => {
      expect(formatPiasters(toPiasters(amount))).toBe(amount);
    },
  );

  it.each([0n, 1n, 7n, 10n, 100n, 150025n, 10n ** 20n + 3n])(
    'toPiasters(formatPiasters(%i)) gives the same piasters back',
    (piasters) => {
      expect(toPiasters(formatPiasters(piasters))).toBe(piasters);
    },
  );
});

describe('sumAmounts', () => {
  it.each([
    [['0.10', '0.20'], '0.30'], // 0.1 + 0.2 = 0.30000000000000004 in floats
    [[], '0.00'],
    [['1500.25'], '1500.25'],
    [['0.01', '0.01', '0.01'], '0.03'],
    [Array.from({ length: 10 }, () => '0.10'), '1.00'], // ten float 0.1s are 0.9999999999999999
    [['9007199254740991.99', '0.01'], '9007199254740992.00'], // past the float-safe range
    [['1.05', '2.10', '3.15'], '6.30'],
  ])('%j sums to exactly %s', (amounts, total) => {
    expect(sumAmounts(amounts)).toBe(total);
  });

  it('accepts any iterable (a generator)', () => {
    function* amounts() {
      yield '1.00';
      yield '2.50';
    }
    expect(sumAmounts(amounts())).toBe('3.50');
  });

  it.each([['1.5'], ['1,000.00'], ['1e3']])('throws on a malformed amount (%s) instead of summing a guess', (bad) => {
    expect(() => sumAmounts(['1.00', bad])).toThrow(RangeError);
  });
});
