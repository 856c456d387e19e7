/**
 * The import that an inbox scan runs for each file it takes: `importBatch` with the command's
 * dependencies, then the report of a batch no worker will finish (refused, awaiting approval,
 * nothing to send), and the first problems of a file with invalid rows for the note next to it.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { BATCH_FILES, importBatch, type ImportDeps, type ImportOptions, type RowNote } from '../batch/import-batch.js';
import { describeIssues } from '../import/reasons.js';
import type { Ledger } from '../submit/ledger.js';
import { writeReport } from '../results/write-report.js';
import type { ExistingBatch, InboxImportResult } from './scan-inbox.js';

/** Most row problems copied into a note; the report folder has them all. */
export const NOTE_PROBLEMS = 10;

/** What a scan needs from the ledger and the import. */
export interface InboxImporter {
  importFile(path: string): Promise<InboxImportResult>;
  existingBatch(batchId: string): Promise<ExistingBatch | undefined>;
}

/** Builds the scan's import from the same dependencies as `cashout import`. */
export function createInboxImporter(deps: ImportDeps & { readonly ledger: Ledger; readonly log: Logger }, options: ImportOptions = {}): InboxImporter {
  return {
    async importFile(path) {
      const r = await importBatch(deps, path, options);
      if (r.state !== 'queued') {
        // No worker will finish this batch, so its report is written now (as `cashout import` does).
        try {
          await writeReport(deps.ledger, r.batchId);
        } catch (err) {
          deps.log.warn({ batchId: r.batchId, err: (err as Error).message }, 'inbox: the report could not be written; run cashout report for it');
        }
      }
      const problems = r.invalidRows > 0 ? await firstProblems(join(r.reportDir, BATCH_FILES.notes), NOTE_PROBLEMS) : [];
      return { ...r, problems };
    },
    async existingBatch(batchId) {
      const b = await deps.ledger.getBatch(batchId);
      return b ? { state: b.state, createdAt: b.createdAt, reportDir: b.reportDir } : undefined;
    },
  };
}

/** The first `limit` invalid rows of a batch's row notes, as "line 3, amount: …". */
export async function firstProblems(notesPath: string, limit: number): Promise<string[]> {
  const out: string[] = [];
  let file;
  try {
    file = await open(notesPath, 'r');
    for await (const line of file.readLines({ encoding: 'utf8' })) {
      if (line.trim() === '') continue;
      const note = JSON.parse(line) as RowNote;
      if (note.status !== 'invalid') continue;
      out.push(`line ${note.line}, ${describeIssues(note.issues ?? [])}`);
      if (out.length >= limit) break;
    }
  } catch {
    // The notes are a convenience for the note; the report folder stays the reference.
  } finally {
    await file?.close().catch(() => undefined);
  }
  return out;
}
