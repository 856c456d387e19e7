/** `cashout validate <file>`: checks a payout file without Redis or the service. Exit 0 all valid, 1 some invalid, 2 file-level problem. */
import { scanFile } from '../import/scan-file.js';
import { readOptionsFrom } from '../import/read-rows.js';
import { describeIssue } from '../import/reasons.js';
import { EXIT } from '../errors.js';
import type { AppContext } from './context.js';

/** Prints one line per problem ("line 5, amount: …") on stdout and a count; returns the exit code. */
export async function validateCommand(ctx: AppContext, file: string, opts: { delimiter?: string; encoding?: string }): Promise<number> {
  const out: string[] = [];
  const counts = await scanFile(
    file,
    ctx.rules,
    {
      onInvalid(row) {
        for (const issue of row.issues) out.push(`line ${row.line}, ${issue.column}: ${describeIssue(issue)}`);
        if (out.length >= 1000) {
          process.stdout.write(`${out.join('\n')}\n`);
          out.length = 0;
        }
      },
    },
    readOptionsFrom(ctx.config, opts),
  );
  if (out.length > 0) process.stdout.write(`${out.join('\n')}\n`);
  process.stdout.write(
    `${file}: ${counts.rows} rows, ${counts.validRows} valid, ${counts.invalidRows} invalid` +
      (counts.invalidRows > 0 ? ' (nothing is sent unless every row is valid, or with --partial)\n' : '\n'),
  );
  return counts.invalidRows > 0 ? EXIT.notAllAccepted : EXIT.ok;
}
