/**
 * Problems of a file grouped by column and reason, for `cashout validate`'s summary: how many
 * rows have each problem, the first line with it and that line's sentence. One entry per
 * column × issue code, so memory stays small however many rows are invalid.
 */
import type { RowIssue } from '../import/row-issues.js';

/** One group: a column, a reason code, how many times it was found, and its first occurrence. */
export interface ProblemGroup {
  readonly column: string;
  readonly code: string;
  count: number;
  readonly firstLine: number;
  /** The sentence of the first occurrence ("found "1,500.00" with a thousands separator…"). */
  readonly example: string;
}

/** Collects problem groups in the order they are first met. */
export function createProblemGroups(describe: (issue: RowIssue) => string) {
  const groups = new Map<string, ProblemGroup>();
  return {
    add(line: number, issue: RowIssue): void {
      const key = `${issue.column}\u0000${issue.code}`;
      const g = groups.get(key);
      if (g) g.count++;
      else {
        const example = describe(issue);
        groups.set(key, { column: issue.column, code: issue.code, count: 1, firstLine: line, example });
      }
    },
    /** The groups, most frequent first (ties in the order first met). */
    list(): ProblemGroup[] {
      return [...groups.values()].sort((a, b) => b.count - a.count);
    },
  };
}

/** The grouped summary as text lines: "  4,980 × amount, amount_thousands_separator (first on line 3: …)". */
export function formatProblemGroups(groups: readonly ProblemGroup[]): string[] {
  if (groups.length === 0) return [];
  const width = Math.max(...groups.map((g) => g.count.toLocaleString('en-US').length));
  return [
    'Problems by column and reason:',
    ...groups.map(
      (g) =>
        `  ${g.count.toLocaleString('en-US').padStart(width)} × ${g.column}, ${g.code} ` +
        `(first on line ${g.firstLine}: ${g.example})`,
    ),
  ];
}
