/**
 * `cashout validate <file>`: checks a payout file without Redis or the service. Prints the first
 * `SHOWN_PROBLEMS` problems one per line ("line 5, amount: …"), then, when there are more, how
 * many were left out and the problems grouped by column and reason with their counts; with
 * `--errors-file <path>` every problem is written there as CSV. Exit 0 all valid, 1 some
 * invalid, 2 file-level problem (README "Exit codes").
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { scanFile } from '../import/scan-file.js';
import { readOptionsFrom } from '../import/read-rows.js';
import { describeIssue } from '../import/reasons.js';
import { openCsvOut, type CsvOut } from '../results/csv-out.js';
import { createProblemGroups, formatProblemGroups } from '../results/problem-groups.js';
import { CashoutError, EXIT } from '../errors.js';
import type { AppContext } from './context.js';

/** Problems printed one per line before the grouped summary. */
export const SHOWN_PROBLEMS = 50;

/** Columns of the `--errors-file` CSV. */
export const ERRORS_FILE_COLUMNS = ['line', 'column', 'code', 'found', 'suggestion', 'message'] as const;

/** Options of `cashout validate`. */
export interface ValidateOptions {
  readonly delimiter?: string;
  readonly encoding?: string;
  /** Where to write every problem as CSV (`ERRORS_FILE_COLUMNS`); written only when the file is read to its end. */
  readonly errorsFile?: string;
}

/**
 * Throws `CashoutError('usage')` (exit 2) unless `path` can be written as the `--errors-file`: its
 * folder exists and may be written, and `path` is not a folder. Checked before the file is read.
 */
async function checkErrorsFile(path: string): Promise<void> {
  const refuse = (why: string) => new CashoutError('usage', `--errors-file ${path}: ${why}; nothing was checked`);
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) throw refuse('is a folder; give a file name, e.g. problems.csv');
  const folder = dirname(resolve(path));
  const parent = await stat(folder).catch(() => undefined);
  if (!parent?.isDirectory()) throw refuse(`the folder ${folder} does not exist`);
  await access(folder, constants.W_OK).catch(() => {
    throw refuse(`the folder ${folder} may not be written`);
  });
}

/** Checks `file`, prints the problems and their summary on stdout; returns the exit code. */
export async function validateCommand(ctx: AppContext, file: string, opts: ValidateOptions): Promise<number> {
  if (opts.errorsFile !== undefined) await checkErrorsFile(opts.errorsFile);
  const out: string[] = [];
  let problems = 0;
  const groups = createProblemGroups(describeIssue);
  let errorsOut: CsvOut | undefined;
  const flush = () => {
    if (out.length > 0) process.stdout.write(`${out.join('\n')}\n`);
    out.length = 0;
  };
  try {
    const counts = await scanFile(
      file,
      ctx.rules,
      {
        async onInvalid(row) {
          for (const issue of row.issues) {
            problems++;
            const sentence = describeIssue(issue);
            groups.add(row.line, issue);
            if (problems <= SHOWN_PROBLEMS) out.push(`line ${row.line}, ${issue.column}: ${sentence}`);
            if (opts.errorsFile !== undefined) {
              errorsOut ??= openCsvOut(opts.errorsFile, ERRORS_FILE_COLUMNS, { bom: ctx.config.csvBom });
              const cells = [row.line, issue.column, issue.code, issue.found, issue.suggestion, sentence];
              const writing = errorsOut.write(cells);
              if (writing) await writing;
            }
          }
        },
      },
      readOptionsFrom(ctx.config, opts),
    );
    flush();
    if (problems > SHOWN_PROBLEMS) {
      const left = problems - SHOWN_PROBLEMS;
      process.stdout.write(
        `… and ${left.toLocaleString('en-US')} more ${left === 1 ? 'problem' : 'problems'}` +
          (opts.errorsFile === undefined ? ' (--errors-file <path> writes them all as CSV)\n' : '\n'),
      );
      process.stdout.write(`${formatProblemGroups(groups.list()).join('\n')}\n`);
    }
    if (opts.errorsFile !== undefined) {
      // Also written when there is no problem: a file holding only the header says so.
      errorsOut ??= openCsvOut(opts.errorsFile, ERRORS_FILE_COLUMNS, { bom: ctx.config.csvBom });
      await errorsOut.close();
      errorsOut = undefined;
      process.stdout.write(`Problems written to ${opts.errorsFile} (${problems.toLocaleString('en-US')})\n`);
    }
    process.stdout.write(
      `${file}: ${counts.rows} rows, ${counts.validRows} valid, ${counts.invalidRows} invalid` +
        (counts.invalidRows > 0 ? ' (nothing is sent unless every row is valid, or with --partial)\n' : '\n'),
    );
    return counts.invalidRows > 0 ? EXIT.notAllAccepted : EXIT.ok;
  } finally {
    flush();
    // A file refused part-way (exit 2): the problems found before the refusal are still written.
    if (errorsOut) await errorsOut.close().catch(() => undefined);
  }
}
