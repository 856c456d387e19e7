/**
 * One scan of the inbox folder: take each complete payout file, import it, and move it to
 * `done/` or `failed/` with a short note next to it (`<name>.csv.txt`).
 *
 * Folder layout (created when missing):
 *
 *   <inbox>/payouts.csv                      dropped by a person or a transfer job
 *   <inbox>/payouts.csv.ready                optional marker: "the file is complete" (or payouts.ready)
 *   <inbox>/processing/<claim>/payouts.csv   taken by a scan, being imported
 *   <inbox>/processing/<claim>/.copy/payouts.csv   the private copy the import reads (deleted after)
 *   <inbox>/done/payouts.csv (+ .txt)        imported (queued, nothing to send, awaiting approval,
 *                                            or the same content was imported before)
 *   <inbox>/failed/payouts.csv (+ .txt)      not imported: invalid rows, a file-level problem,
 *                                            not a .csv file, no final line break, changed
 *                                            after it was taken
 *
 * Rules:
 * - A `.csv` file is taken when it has a marker (`<name>.csv.ready` or `<name>.ready`), or when it
 *   has not changed for the settle time (its modification and status-change times are both older),
 *   and, either way, its last byte is a line break (`fileEnd` in inbox-rules.ts): a writer that
 *   paused inside a line (a cut account number still passes the rules) leaves a file that is not
 *   taken. One left without a final line break for `unfinishedAfterMs` (ten times the settle time,
 *   at least ten minutes) is moved to `failed/` with a note and never imported. The marker is
 *   removed before the file is taken, so it cannot vouch for a later file of the same name. A
 *   file with another extension is taken only with a marker, and goes to `failed/`; without one
 *   it is left alone (it may be an upload still being written under a temporary name).
 * - Never taken, only logged and left where they are: symbolic links (checked with lstat, never
 *   followed), names with a leading dot (upload tools write such temporary files), names holding
 *   a path separator, "..", control characters or more than 200 bytes, and anything not a
 *   regular file. Nothing is moved for them, because moving is only safe for what we own.
 * - Taking a file is one `rename` into a fresh claim folder `processing/<ms>-<pid>-<random>/`:
 *   when two scans race for a file, exactly one rename succeeds and the other scan skips it, so a
 *   file is never imported by two scans. The claim folder keeps the file's own name (which the
 *   ledger records) and can never collide with another claim.
 * - The bytes imported are the bytes claimed: right after the claim the file is copied into
 *   `processing/<claim>/.copy/` (hashing it, see claimed-file.ts) and the copy is imported. Just
 *   before the batch is released (`ImportOptions.beforeRelease`), and again after the import, the claimed file
 *   must still have the size, modification time and SHA-256 of the copy: a writer holding the file
 *   open writes on into the claimed file. A file that changed goes to `failed/` with a note saying
 *   how, and its batch is refused before release, so nothing of it is queued. The copy is deleted
 *   whatever happens; a claim folder holds the claimed file only. (A file changed after the
 *   release, in the moment between the check and the end of the import, still goes to `failed/`,
 *   its note naming the batch queued from the bytes taken.)
 * - Moving to `done/` or `failed/` never replaces a file there: a later file of the same name
 *   becomes `payouts.2.csv` (see move-file.ts).
 * - Crash safety: a claim folder older than `staleAfterMs` (ten times the settle time, at least
 *   ten minutes) was left by a scan that died; the next scan takes it over (one atomic rename of
 *   the folder, so again only one scan wins) and imports the file again. The batch id is derived
 *   from the content and the ledger refuses content imported before (`batch_exists`), so when the
 *   first import got through, the second is a no-op and the file goes to `done/` with a note
 *   naming the earlier batch. A file placed directly in `processing/` is taken the same way once
 *   it has not changed for that long.
 * - When the earlier batch of the same content never finished importing (state `staging`: an
 *   import of it is running right now, or one was interrupted), nothing of it was queued: the
 *   file goes to `failed/` with a note saying so, rather than `done/`, so no row is reported as
 *   imported when it was not.
 * - An error that is not the file's fault (Redis away, say) leaves the file in its claim folder:
 *   a scan takes it again once the claim is stale.
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Logger } from 'pino';
import { CashoutError, isCashoutError, type ErrorCode } from '../errors.js';
import {
  COPY_FOLDER,
  INBOX_FOLDERS,
  NOTE_SUFFIX,
  claimName,
  claimTime,
  hasSettled,
  isCsvName,
  isMarkerName,
  lastChangeMs,
  markerNames,
  nameProblem,
  staleAfterMs,
  unfinishedAfterMs,
} from './inbox-rules.js';
import { changeSince, copyClaimed, readFileEnd, requireUnchanged, type ClaimedBytes } from './claimed-file.js';
import { moveWithoutReplacing } from './move-file.js';
import { uploadMessage } from '../uploads/upload-message.js';

/** What the scan needs to know of an import (an `ImportResult` fits). */
export interface InboxImportResult {
  readonly batchId: string;
  /** 'queued' | 'refused' | 'finished' | 'awaiting_approval' (any other state counts as imported). */
  readonly state: string;
  readonly rows: number;
  readonly validRows: number;
  readonly invalidRows: number;
  readonly duplicateRows: number;
  readonly requests: number;
  readonly reportDir: string;
  readonly refusalReason?: string;
  /** The first invalid rows, as "line 3, amount: …", for the note. */
  readonly problems?: readonly string[];
}

/** The ledger's record of a batch imported before. */
export interface ExistingBatch {
  readonly state: string;
  readonly createdAt?: string;
  readonly reportDir?: string;
}

/** What a scan needs. */
export interface ScanDeps {
  readonly inboxDir: string;
  readonly settleSeconds: number;
  readonly log: Logger;
  /**
   * Imports one file (throws `CashoutError` as `importBatch` does). The import must call
   * `checkBeforeRelease`, when given, after reading every row and before its batch is released,
   * and refuse the batch when it throws (`createInboxImporter` does, through `ImportOptions.beforeRelease`).
   */
  importFile(path: string, checkBeforeRelease?: () => Promise<void>): Promise<InboxImportResult>;
  /** Looks up the batch named by a `batch_exists` refusal. */
  existingBatch?(batchId: string): Promise<ExistingBatch | undefined>;
  /** Clock (ms since epoch); tests move it. */
  now?(): number;
  /** Checked before each file: true stops the scan after the file in hand (shutdown). */
  shouldStop?(): boolean;
}

/** Where a taken file ended. `retry`: left in `processing/`, a later scan takes it again. */
export type FileResult = 'done' | 'failed' | 'retry';

/** One file the scan took. */
export interface TakenFile {
  readonly name: string;
  /** Taken from the inbox, or over from `processing/` after an interrupted scan. */
  readonly from: 'inbox' | 'processing';
  readonly result: FileResult;
  /** What happened, in words (the note's outcome line). */
  readonly outcome: string;
  readonly batchId?: string;
  readonly reportDir?: string;
  /** Where the file is now. */
  readonly path: string;
}

/** What one scan did. */
export interface ScanReport {
  readonly taken: TakenFile[];
  /** Entries never taken (symbolic links, unsafe names, not a file, not a .csv), with why. */
  readonly refused: { readonly name: string; readonly reason: string }[];
  /** Files not complete yet (no marker and changed within the settle time, or no final line break). */
  readonly waiting: string[];
  /** Those of `waiting` whose last line has no line break yet (or that are empty). */
  readonly unfinished: string[];
  /** The scan stopped early on `shouldStop`. */
  readonly stopped: boolean;
}

/** File-level refusals of `importBatch`: the file goes to `failed/`. Any other error is retried. */
const FILE_ERRORS: readonly ErrorCode[] = [
  'file_not_found',
  'file_unreadable',
  'file_empty',
  'file_too_large',
  'too_many_rows',
  'file_binary',
  'file_encoding',
  'file_delimiter',
  'csv_malformed',
  'header_missing',
  'column_unknown',
  'column_missing',
  'column_duplicated',
  'no_data_rows',
];

function errno(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Runs one scan. Never throws for one file's trouble; throws only when the inbox itself cannot be read. */
export async function scanInbox(deps: ScanDeps): Promise<ScanReport> {
  const now = deps.now ?? Date.now;
  const log = deps.log;
  const inbox = deps.inboxDir;
  const processingDir = join(inbox, INBOX_FOLDERS.processing);
  const doneDir = join(inbox, INBOX_FOLDERS.done);
  const failedDir = join(inbox, INBOX_FOLDERS.failed);
  let mode: number;
  try {
    await mkdir(inbox, { recursive: true });
    // The sub-folders get the inbox's own permissions: whoever may see the inbox may see the notes.
    mode = (await stat(inbox)).mode & 0o777;
    for (const dir of [processingDir, doneDir, failedDir]) await mkdir(dir, { recursive: true, mode });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'a file of that name is in the way' : code;
    const text = `setting CASHOUT_INBOX_DIR: ${inbox} (or its ${Object.values(INBOX_FOLDERS).join(', ')} folders) cannot be used as the inbox (${why})`;
    throw new CashoutError('config_invalid', text, { key: 'CASHOUT_INBOX_DIR' }, err);
  }

  const report = {
    taken: [] as TakenFile[],
    refused: [] as { name: string; reason: string }[],
    waiting: [] as string[],
    unfinished: [] as string[],
    stopped: false,
  };
  const stopping = () => {
    if (deps.shouldStop?.()) report.stopped = true;
    return report.stopped;
  };
  const staleMs = staleAfterMs(deps.settleSeconds);
  const refuse = (name: string, reason: string, level: 'warn' | 'debug' = 'warn') => {
    report.refused.push({ name, reason });
    log[level]({ file: name, reason }, 'inbox: file refused; left where it is');
  };
  const newClaimDir = () => join(processingDir, claimName(now(), process.pid, randomBytes(4).toString('hex')));
  const shown = (path: string) => relative(inbox, path) || path;

  /** Imports a file we own in `claimDir` and moves it to done/ or failed/ with its note. */
  const processClaimed = async (claimDir: string, name: string, from: TakenFile['from']): Promise<void> => {
    const path = join(claimDir, name);
    const copyDir = join(claimDir, COPY_FOLDER);
    let decided: Decided;
    let claimed: ClaimedBytes | undefined;
    try {
      if (!isCsvName(name)) {
        decided = { result: 'failed', outcome: 'failed: not a .csv file; only payout CSV files (.csv) are imported' };
      } else {
        // The copy is what gets imported: the claimed file may still be written to by its writer.
        await rm(copyDir, { recursive: true, force: true });
        await mkdir(copyDir, { mode: 0o700 });
        const copy = join(copyDir, name);
        claimed = await copyClaimed(path, copy);
        const bytes = claimed;
        const end = await readFileEnd(copy);
        if (end === 'unfinished' || end === 'empty') {
          // Still being written (it changed since the claim), or left so: never imported either way.
          const change = await changeSince(path, bytes);
          decided =
            change === undefined
              ? { result: 'failed', outcome: describeUnfinished(end, deps.settleSeconds) }
              : describeChanged(change, undefined);
        } else {
          let released = false;
          const checkBeforeRelease = async () => {
            await requireUnchanged(path, name, bytes);
            released = true;
          };
          try {
            decided = describeImport(await deps.importFile(copy, checkBeforeRelease));
          } catch (err) {
            if (isCashoutError(err, 'file_changed')) {
              const batchId = typeof err.context.batchId === 'string' ? err.context.batchId : undefined;
              decided = describeChanged(String(err.context.change ?? err.message), batchId);
            } else if (isCashoutError(err, 'batch_exists')) {
              const batchId = String(err.context.batchId ?? '');
              const earlier = batchId && deps.existingBatch ? await deps.existingBatch(batchId) : undefined;
              const createdAt = typeof err.context.createdAt === 'string' ? err.context.createdAt : undefined;
              decided = describeEarlier(batchId, earlier, createdAt);
            } else if (isCashoutError(err) && FILE_ERRORS.includes(err.code)) {
              // The message names the copy's path and the command line's options; the note names
              // the file as it was dropped, and what to change in it (the inbox takes no options).
              const named = err.message.split(copy).join(name).split(path).join(name);
              const message = uploadMessage(named, [], name, 'inbox');
              decided = { result: 'failed', outcome: `failed: ${message}` };
            } else {
              const reason = (err as Error)?.message ?? String(err);
              log.error(
                { file: name, err: reason, at: shown(path) },
                'inbox: import did not complete; the file stays in processing/ and a later scan takes it again',
              );
              report.taken.push({ name, from, result: 'retry', outcome: `not imported yet: ${reason}`, path });
              return;
            }
          }
          // Checked again after the import, whatever its outcome: the note must not call a file
          // imported whose bytes are not the bytes read.
          if (decided.changed !== true) {
            const change = await changeSince(path, bytes);
            if (change !== undefined) {
              const before = decided;
              decided = released
                ? describeChangedAfterRelease(change, before)
                : describeChanged(change, before.batchId);
            }
          }
        }
      }
    } finally {
      await rm(copyDir, { recursive: true, force: true });
    }
    const dest = await moveWithoutReplacing(path, decided.result === 'done' ? doneDir : failedDir, name);
    try {
      const taken = claimed ? { bytes: claimed.size, sha256: claimed.sha256 } : {};
      const time = new Date(now()).toISOString();
      await writeFile(`${dest}${NOTE_SUFFIX}`, formatNote({ name, from, ...decided, ...taken, time }));
    } catch (err) {
      log.error({ file: name, err: (err as Error).message }, 'inbox: the note could not be written');
    }
    await rmdir(claimDir).catch(() => undefined);
    const entry = {
      file: name,
      result: decided.result,
      outcome: decided.outcome,
      batchId: decided.batchId,
      movedTo: shown(dest),
    };
    if (decided.result === 'done') log.info(entry, 'inbox: file imported');
    else log.warn(entry, 'inbox: file not imported');
    report.taken.push({
      name,
      from,
      result: decided.result,
      outcome: decided.outcome,
      path: dest,
      ...(decided.batchId ? { batchId: decided.batchId } : {}),
      ...(decided.reportDir ? { reportDir: decided.reportDir } : {}),
    });
  };

  /** Runs one file's step; trouble with one file never stops the scan. */
  const guarded = async (name: string, where: string, step: () => Promise<void>) => {
    try {
      await step();
    } catch (err) {
      const reason = (err as Error)?.message ?? String(err);
      log.error(
        { file: name, err: reason },
        'inbox: file could not be handled; it stays where it is and a later scan tries again',
      );
      report.taken.push({
        name,
        from: where.startsWith(INBOX_FOLDERS.processing) ? 'processing' : 'inbox',
        result: 'retry',
        outcome: `not handled: ${reason}`,
        path: join(inbox, where),
      });
    }
  };

  // 1. Files left in processing/ by a scan that died.
  for (const entry of (await readdir(processingDir, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (stopping()) return report;
    const where = join(INBOX_FOLDERS.processing, entry.name);
    await guarded(entry.name, where, async () => {
      const p = join(processingDir, entry.name);
      const st = await lstat(p).catch((err: unknown) => (errno(err) === 'ENOENT' ? undefined : Promise.reject(err)));
      if (!st) return;
      if (st.isDirectory()) {
        const claimedAt = claimTime(entry.name);
        if (claimedAt === undefined) return refuse(where, 'a folder in processing/ that no scan made');
        if (now() - claimedAt < staleMs) return; // its scan may still be working on it
        const mine = newClaimDir();
        try {
          await rename(p, mine); // atomic: of two scans taking it over, one wins
        } catch (err) {
          if (errno(err) === 'ENOENT') return;
          throw err;
        }
        // A copy left by the interrupted scan is ours: it is made again from the claimed file.
        await rm(join(mine, COPY_FOLDER), { recursive: true, force: true });
        const inside = await readdir(mine);
        if (inside.length === 0) {
          await rmdir(mine).catch(() => undefined);
          return;
        }
        const name = inside[0]!;
        const fst = await lstat(join(mine, name));
        if (inside.length > 1 || !fst.isFile() || nameProblem(name))
          return refuse(shown(mine), 'a claim folder that does not hold exactly one payout file; left for a person');
        log.info(
          { file: name, claimedAt: new Date(claimedAt).toISOString() },
          'inbox: took a file left in processing/ by an interrupted scan',
        );
        await processClaimed(mine, name, 'processing');
        return;
      }
      const problem = nameProblem(entry.name);
      if (st.isSymbolicLink() || !st.isFile() || problem) {
        return refuse(
          where,
          st.isSymbolicLink() ? 'symbolic link' : (problem ?? 'not a regular file'),
          entry.name.startsWith('.') ? 'debug' : 'warn',
        );
      }
      if (!hasSettled(lastChangeMs(st), now(), staleMs / 1000)) return;
      const mine = newClaimDir();
      await mkdir(mine);
      try {
        await rename(p, join(mine, entry.name));
      } catch (err) {
        await rmdir(mine).catch(() => undefined);
        if (errno(err) === 'ENOENT') return;
        throw err;
      }
      log.info({ file: entry.name }, 'inbox: took a file left in processing/');
      await processClaimed(mine, entry.name, 'processing');
    });
  }

  // 2. New files in the inbox.
  const entries = (await readdir(inbox, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const present = new Set(entries.filter((e) => e.isFile()).map((e) => e.name));
  const ours: readonly string[] = Object.values(INBOX_FOLDERS);
  for (const entry of entries) {
    if (stopping()) return report;
    const name = entry.name;
    if (ours.includes(name)) continue;
    await guarded(name, name, async () => {
      const problem = nameProblem(name);
      if (problem) return refuse(name, problem, name.startsWith('.') ? 'debug' : 'warn');
      if (isMarkerName(name)) return;
      const p = join(inbox, name);
      const st = await lstat(p).catch((err: unknown) => (errno(err) === 'ENOENT' ? undefined : Promise.reject(err)));
      if (!st) return; // taken by another scan meanwhile
      if (st.isSymbolicLink()) return refuse(name, 'symbolic link; links are never followed');
      if (!st.isFile()) return refuse(name, 'not a regular file', 'debug');
      const markers = markerNames(name).filter((m) => present.has(m));
      if (!isCsvName(name) && markers.length === 0)
        return refuse(name, 'not a .csv file (taken to failed/ only with a .ready marker)', 'debug');
      if (markers.length === 0 && !hasSettled(lastChangeMs(st), now(), deps.settleSeconds)) {
        report.waiting.push(name);
        log.debug({ file: name }, 'inbox: file changed within the settle time; waiting');
        return;
      }
      if (isCsvName(name)) {
        const gone = (err: unknown) => (errno(err) === 'ENOENT' ? undefined : Promise.reject(err));
        const end = await readFileEnd(p).catch(gone);
        if (end === undefined) return; // taken by another scan meanwhile
        // Without a final line break a writer may be inside the last line: wait, and report the
        // file (claimed below, then failed/ with a note) once it has stayed so for a long time.
        const reportAfterSeconds = unfinishedAfterMs(deps.settleSeconds) / 1000;
        if ((end === 'unfinished' || end === 'empty') && !hasSettled(lastChangeMs(st), now(), reportAfterSeconds)) {
          report.waiting.push(name);
          report.unfinished.push(name);
          log.info({ file: name, end }, 'inbox: file does not end with a line break yet; waiting');
          return;
        }
      }
      // The marker goes first: left behind, it would vouch for a later, incomplete file of the same name.
      for (const m of markers)
        await unlink(join(inbox, m)).catch((err: unknown) =>
          errno(err) === 'ENOENT' ? undefined : Promise.reject(err),
        );
      const mine = newClaimDir();
      await mkdir(mine);
      try {
        await rename(p, join(mine, name)); // atomic: of two scans taking it, one wins
      } catch (err) {
        await rmdir(mine).catch(() => undefined);
        if (errno(err) === 'ENOENT') {
          log.debug({ file: name }, 'inbox: file taken by another scan');
          return;
        }
        throw err;
      }
      log.info({ file: name, by: markers.length > 0 ? 'ready marker' : 'settled' }, 'inbox: took file');
      await processClaimed(mine, name, 'inbox');
    });
  }
  return report;
}

/** Where a taken file goes and what its note says. `changed`: the file changed after it was taken. */
interface Decided {
  readonly result: 'done' | 'failed';
  readonly outcome: string;
  readonly batchId?: string;
  readonly reportDir?: string;
  readonly details?: readonly string[];
  readonly changed?: boolean;
}

/** The outcome of a file whose last line has no line break, or that is empty (`fileEnd`). */
function describeUnfinished(end: 'unfinished' | 'empty', settleSeconds: number): string {
  const minutes = Math.round(unfinishedAfterMs(settleSeconds) / 60_000);
  const what =
    end === 'empty'
      ? 'the file is empty'
      : 'the file does not end with a line break, so its last line may be cut short ' +
        '(a writer may have stopped inside it)';
  return (
    `not imported: ${what}, and it was not completed within ${minutes} minutes; nothing of it was queued. ` +
    'If the file is complete, end its last line with a line break and drop it in the inbox again'
  );
}

/** The outcome of a file that changed after it was taken, before its batch was released (or with no batch). */
function describeChanged(change: string, batchId: string | undefined): Decided {
  return {
    result: 'failed',
    changed: true,
    ...(batchId ? { batchId } : {}),
    outcome:
      `not imported: the file changed after it was taken (${change}), so the rows read are not the file's rows; ` +
      `nothing of it was queued${batchId ? ` (batch ${batchId} was refused before release)` : ''}. ` +
      'Drop the complete file in the inbox again once its writer has finished',
  };
}

/** The outcome of a file that changed after its batch (imported from the bytes taken) was released. */
function describeChangedAfterRelease(change: string, imported: Decided): Decided {
  return {
    ...imported,
    result: 'failed',
    changed: true,
    outcome:
      `imported from the bytes taken, but the file changed after its batch was released (${change}): ` +
      `${imported.outcome}. ` +
      `Whatever was written to the file since is not imported: check the file against batch ${imported.batchId ?? ''}`,
  };
}

/** The outcome of an import that returned. */
function describeImport(r: InboxImportResult): {
  result: 'done' | 'failed';
  outcome: string;
  batchId: string;
  reportDir: string;
  details?: readonly string[];
} {
  const base = { batchId: r.batchId, reportDir: r.reportDir };
  const notSent =
    r.duplicateRows > 0
      ? `; ${plural(r.duplicateRows, 'row')} not sent because their payee is paid, or to be paid, by another batch`
      : '';
  const leftOut = r.invalidRows > 0 ? `; ${plural(r.invalidRows, 'invalid row')} left out` : '';
  switch (r.state) {
    case 'queued':
      return {
        ...base,
        result: 'done',
        outcome: `queued ${plural(r.validRows, 'row')} in ${plural(r.requests, 'withdrawal request')}${leftOut}${notSent}`,
      };
    case 'finished':
      return {
        ...base,
        result: 'done',
        outcome: `imported, nothing to send: ${plural(r.rows, 'row')}, none needs sending${leftOut}${notSent}`,
      };
    case 'awaiting_approval':
      return {
        ...base,
        result: 'done',
        outcome: `awaiting approval: ${plural(r.validRows, 'row')} in ${plural(r.requests, 'withdrawal request')}; nothing is sent before someone other than the importer approves the batch${notSent}`,
      };
    case 'refused': {
      const why =
        r.invalidRows > 0
          ? `${r.invalidRows} of ${plural(r.rows, 'row')} ${r.invalidRows === 1 ? 'is' : 'are'} invalid and nothing is sent unless every row is valid; nothing was queued. ` +
            'Fix the invalid rows (rejected-rows.csv in the report folder holds them) and drop the corrected file in the inbox again'
          : `${r.refusalReason ?? 'the batch was refused'}; nothing was queued`;
      return {
        ...base,
        result: 'failed',
        outcome: `refused: ${why}`,
        ...(r.problems && r.problems.length > 0 ? { details: r.problems } : {}),
      };
    }
    default:
      return {
        ...base,
        result: 'done',
        outcome: `imported (${r.state}): ${plural(r.validRows, 'row')} in ${plural(r.requests, 'withdrawal request')}${notSent}`,
      };
  }
}

/** The outcome when the same content was imported before. */
function describeEarlier(
  batchId: string,
  earlier: ExistingBatch | undefined,
  createdAt: string | undefined,
): { result: 'done' | 'failed'; outcome: string; batchId?: string; reportDir?: string } {
  const when = earlier?.createdAt ?? createdAt;
  const base = { ...(batchId ? { batchId } : {}), ...(earlier?.reportDir ? { reportDir: earlier.reportDir } : {}) };
  if (earlier?.state === 'staging') {
    return {
      ...base,
      result: 'failed',
      outcome:
        `not imported: the same content is batch ${batchId}, whose import has not finished (state staging): an import of it is running right now, ` +
        `or one was interrupted and nothing of it was queued. If no import is running, check the batch (cashout report ${batchId}) before importing this file again with cashout import --force`,
    };
  }
  return {
    ...base,
    result: 'done',
    outcome: `already imported as batch ${batchId}${when ? ` on ${when}` : ''}${earlier ? ` (state ${earlier.state})` : ''}; nothing new was queued`,
  };
}

/** The text of a note: a few "key: value" lines, no personal data beyond the file's own rows. */
export function formatNote(n: {
  name: string;
  from: TakenFile['from'];
  result: 'done' | 'failed';
  outcome: string;
  batchId?: string;
  reportDir?: string;
  details?: readonly string[];
  /** Size in bytes and SHA-256 of the bytes taken (the copy imported), when the file was copied. */
  bytes?: number;
  sha256?: string;
  time: string;
}): string {
  const lines = [
    `file: ${n.name}`,
    `batch: ${n.batchId ?? 'none'}`,
    `outcome: ${n.outcome}`,
    `report: ${n.reportDir ?? 'none'}`,
    ...(n.sha256 === undefined ? [] : [`bytes: ${String(n.bytes)}`, `sha256: ${n.sha256}`]),
    `time: ${n.time}`,
  ];
  if (n.from === 'processing') lines.push('taken from: processing/ (an earlier scan took it and did not finish)');
  if (n.details && n.details.length > 0)
    lines.push('problems (results.csv in the report folder lists every row):', ...n.details.map((d) => `  ${d}`));
  return `${lines.join('\n')}\n`;
}
