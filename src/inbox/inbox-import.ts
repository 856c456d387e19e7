/**
 * The import that an inbox scan runs for each file it takes: `importBatch` with the command's
 * dependencies, then the report of a batch no worker will finish (refused, awaiting approval,
 * nothing to send), and the first problems of a file with invalid rows for the note next to it.
 * The scan's check that the claimed file is unchanged runs just before the batch is released
 * (`ImportOptions.beforeRelease`): a file that changed makes the batch refused, never queued.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { BATCH_FILES, importBatch, type ImportDeps, type ImportOptions, type RowNote } from '../batch/import-batch.js';
import { describeIssues } from '../import/reasons.js';
import type { Ledger } from '../ledger/index.js';
import { writeReport } from '../results/write-report.js';
import { isCashoutError } from '../errors.js';
import type { ExistingBatch, InboxImportResult } from './scan-inbox.js';

/** Most row problems copied into a note; the report folder has them all. */
export const NOTE_PROBLEMS = 10;

/** What a scan needs from the ledger and the import. */
export interface InboxImporter {
  /** Imports `path`; `checkBeforeRelease` (see `ScanDeps.importFile`) runs before the batch is released. */
  importFile(path: string, checkBeforeRelease?: () => Promise<void>): Promise<InboxImportResult>;
  existingBatch(batchId: string): Promise<ExistingBatch | undefined>;
}

/** Builds the scan's import from the same dependencies as `cashout import`. */
export function createInboxImporter(
  deps: ImportDeps & { readonly ledger: Ledger; readonly log: Logger },
  options: ImportOptions = {},
): InboxImporter {
  return {
    async importFile(path, checkBeforeRelease) {
      let r;
      try {
        r = await importBatch(deps, path, {
          ...options,
          ...(checkBeforeRelease ? { beforeRelease: checkBeforeRelease } : {}),
        });
      } catch (err) {
        // A batch refused at its release (the file changed) gets its report like any refused batch.
        const batchId = isCashoutError(err, 'file_changed') ? err.context.batchId : undefined;
        if (typeof batchId === 'string') {
          await writeReport(deps.ledger, batchId, { bom: deps.csvBom }).catch((e: unknown) => {
            const msg = 'inbox: the report could not be written; run cashout report for it';
            deps.log.warn({ batchId, err: (e as Error).message }, msg);
          });
        }
        throw err;
      }
      // A batch not queued (refused, ended, awaiting approval) had its report written by the import.
      const problems =
        r.invalidRows > 0 ? await firstProblems(join(r.reportDir, BATCH_FILES.notes), NOTE_PROBLEMS) : [];
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
