/** The files of a batch's report folder, and the shape of its row notes. */
import type { RowIssue } from '../import/row-issues.js';

/** Names of the files in a batch's report folder. */
export const BATCH_FILES = {
  input: 'input.csv',
  notes: 'row-notes.jsonl',
  rejected: 'rejected-rows.csv',
  results: 'results.csv',
  summary: 'summary.json',
  summaryHtml: 'summary.html',
} as const;

/**
 * One line of `row-notes.jsonl`, in file order: an invalid row with its issues, a row not sent
 * because its reference was paid before (`duplicate`), or a valid row with warnings.
 */
export interface RowNote {
  readonly line: number;
  readonly status?: 'invalid' | 'duplicate';
  readonly issues?: readonly RowIssue[];
  readonly message?: string;
  readonly warnings?: readonly string[];
}
