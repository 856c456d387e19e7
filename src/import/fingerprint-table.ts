/**
 * Compact hash tables keyed by 64-bit fingerprints (`../import/fingerprint.ts`), for the checks
 * that span a whole file: a reference used twice, a possible duplicate payment, the running total
 * of one wallet. Keys and values live in typed arrays, no object per row: 8 bytes a slot when one
 * key word is kept, 12 when both are. Linear probing; the slot comes from the high word.
 *
 * A table is sized for the rows the file is expected to hold (`expected`, asked at the first
 * insert) and never rehashes: when it is 80 % full another level, twice the size of what is
 * held, is added and lookups look in every level. So memory stays near 1.25 slots per key and
 * the high word need not be kept for tables of warnings.
 *
 * False matches: with both words kept, two keys match only when 64 bits agree (about 1 in 10^7
 * for a file of a million rows); with one word, when the low words agree within one probe run
 * (about 1 in 10^9 lookups). Refusals use both words; warnings one.
 */

const MAX_LOAD = 0.8;
const MIN_SLOTS = 1024;

interface Level {
  readonly capacity: number;
  /**
   * The slots, one after the other: the key word(s) then the value, so that a lookup touches one
   * cache line. A value of 0 marks an empty slot (values are ≥ 1).
   */
  readonly slots: Uint32Array;
  size: number;
}

function slotOf(hi: number, capacity: number): number {
  const s = Math.floor((hi / 4294967296) * capacity);
  return s >= capacity ? capacity - 1 : s;
}

/** A fingerprint table with one 32-bit value (≥ 1) per key. */
export interface FingerprintTable {
  /**
   * The value of the key (`hi`, `lo`: the words of its fingerprint), or 0 when the key is new,
   * in which case `value` (≥ 1) is recorded for it.
   */
  getOrAdd(hi: number, lo: number, value: number): number;
  /** Adds `amount` to the key's value (0 when new), saturating at 2^32 − 1; returns the new value. */
  addTo(hi: number, lo: number, amount: number): number;
  /** Keys held. */
  readonly size: number;
  /** Bytes held by the table's arrays. */
  readonly bytes: number;
}

/**
 * Creates an empty table. `fullKey` keeps both words of each fingerprint (for refusals);
 * `expected` tells, at the first insert, about how many keys the table will hold.
 */
export function createFingerprintTable(fullKey: boolean, expected: () => number = () => MIN_SLOTS): FingerprintTable {
  const words = fullKey ? 2 : 1;
  const stride = words + 1;
  const levels: Level[] = [];
  let size = 0;

  const addLevel = (keys: number) => {
    const capacity = Math.max(MIN_SLOTS, Math.ceil(keys / MAX_LOAD));
    levels.push({ capacity, slots: new Uint32Array(capacity * stride), size: 0 });
  };
  // The result of `find`, kept in variables instead of an object: no allocation per lookup.
  let foundLevel: Level | undefined;
  /** Index in `foundLevel.slots` of the found (or free) slot's value word. */
  let foundAt = 0;
  /** True when the key is held (`foundLevel`/`foundAt` point at it); else they point at the newest level's free slot for it. */
  const find = (hi: number, lo: number): boolean => {
    for (let i = 0; i < levels.length; i++) {
      const level = levels[i]!;
      const slots = level.slots;
      const capacity = level.capacity;
      let s = slotOf(hi, capacity);
      for (;;) {
        const at = s * stride;
        if (slots[at + words] === 0) break;
        if (words === 2 ? slots[at] === hi && slots[at + 1] === lo : slots[at] === lo) {
          foundLevel = level;
          foundAt = at + words;
          return true;
        }
        s = s + 1 === capacity ? 0 : s + 1;
      }
    }
    if (levels.length === 0) addLevel(Math.max(MIN_SLOTS, expected()));
    let level = levels[levels.length - 1]!;
    if (level.size + 1 > level.capacity * MAX_LOAD) {
      addLevel(2 * size);
      level = levels[levels.length - 1]!;
    }
    let s = slotOf(hi, level.capacity);
    while (level.slots[s * stride + words] !== 0) s = s + 1 === level.capacity ? 0 : s + 1;
    foundLevel = level;
    foundAt = s * stride + words;
    return false;
  };
  const put = (level: Level, at: number, hi: number, lo: number, value: number) => {
    if (words === 2) {
      level.slots[at - 2] = hi;
      level.slots[at - 1] = lo;
    } else level.slots[at - 1] = lo;
    level.slots[at] = value;
    level.size++;
    size++;
  };

  return {
    getOrAdd(hi, lo, value) {
      if (find(hi, lo)) return foundLevel!.slots[foundAt]!;
      put(foundLevel!, foundAt, hi, lo, value);
      return 0;
    },
    addTo(hi, lo, amount) {
      if (!(amount >= 1)) throw new RangeError('addTo takes an amount of at least 1');
      if (find(hi, lo))
        return (foundLevel!.slots[foundAt] = Math.min(0xffffffff, foundLevel!.slots[foundAt]! + amount));
      const v = Math.min(0xffffffff, amount);
      put(foundLevel!, foundAt, hi, lo, v);
      return v;
    },
    get size() {
      return size;
    },
    get bytes() {
      return levels.reduce((n, l) => n + l.slots.byteLength, 0);
    },
  };
}
