/**
 * "Did you mean …?" for names a person typed: the known name nearest by edit distance
 * (Levenshtein, fastest-levenshtein), when near enough to be a typo.
 */
import { distance } from 'fastest-levenshtein';

/**
 * The name of `known` closest to `name` when at most `maxDistance` edits (inserted, removed or
 * changed characters) away; the first of equally close ones; undefined when none is that near.
 */
export function closestName<T extends string>(name: string, known: readonly T[], maxDistance: number): T | undefined {
  let best: T | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const d = distance(k, name);
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return bestD <= maxDistance ? best : undefined;
}
