/**
 * The check of an uploaded file, before anything touches the ledger: the same reading and row
 * checks as `cashout validate` and the import (`scanFile`), giving the counts, the valid rows'
 * EGP totals per channel (what Send would pay), the first problems and `rejected-rows.csv`.
 */
import { join } from 'node:path';
import { scanFile } from '../import/scan-file.js';
import type { ScanOptions } from '../import/parallel-scan.js';
import type { RowRules } from '../import/validate-row.js';
import { describeIssue, showValue } from '../import/reasons.js';
import { formatPiasters, toPiasters } from '../money.js';
import { openRejectedRows, type RejectedRowsOut } from '../batch/rejected-rows.js';
import type { UploadCheck, UploadProblem } from './upload-store.js';
import { createRowChecks } from '../batch/row-checks.js';
import { partRows, ROW_INVALID } from '../import/check-chunk.js';
import { describeHeld, type PayeeHolder } from '../ledger/payout-register.js';

/** Most problems kept for the page; every invalid row is in rejected-rows.csv. */
export const MAX_PROBLEMS_SHOWN = 1000;

/** Name of the check's file of invalid rows in the upload's folder. */
export const UPLOAD_REJECTED = 'rejected-rows.csv';

/**
 * Checks `csvPath` (in folder `dir`). `onRows` is told the rows read, every 500 rows. Throws
 * `CashoutError` for a file that cannot be read as a payout file (as `cashout validate` does).
 */
export async function checkUpload(
  dir: string,
  csvPath: string,
  rules: RowRules,
  read: ScanOptions,
  options: {
    readonly bom?: boolean;
    readonly onRows?: (rows: number) => void;
    /**
     * Which of a part's payee keys another batch holds (`Ledger.checkPayees`): those rows are
     * counted as held, apart from what Send would pay. Without it, no row is held.
     */
    readonly heldPayees?: (keys: readonly string[]) => Promise<Map<number, PayeeHolder>>;
  } = {},
): Promise<UploadCheck> {
  let header: readonly string[] = [];
  let rejected: RejectedRowsOut | undefined;
  const problems: UploadProblem[] = [];
  let problemCount = 0;
  let seen = 0;
  const sums = { wallet: { rows: 0, piasters: 0n }, bank: { rows: 0, piasters: 0n } };
  const held = { rows: 0, piasters: 0n, first: undefined as string | undefined };
  // The payee keys of the import (`../batch/row-checks.ts`), so that held means what Send will find.
  const checks = options.heldPayees ? createRowChecks(() => 1024, undefined) : undefined;
  const tick = () => {
    seen++;
    if (seen % 500 === 0) options.onRows?.(seen);
  };
  try {
    const counts = await scanFile(
      csvPath,
      rules,
      {
        onHeader(h) {
          header = h;
        },
        async onPart(s) {
          if (!checks || !options.heldPayees) return;
          const holders = await options.heldPayees(checks.payeeKeys(s));
          if (holders.size === 0) return;
          for (const row of partRows(s.part, s.baseLine)) {
            if (row.kind === ROW_INVALID) continue;
            const holder = holders.get(row.valid);
            if (!holder) continue;
            held.rows++;
            held.piasters += s.part.piasters[row.valid]!;
            const reference = s.references[row.valid]!;
            held.first ??= `line ${row.line}: ${describeHeld(reference ? `reference ${reference}` : 'this payee', holder)}`;
          }
        },
        onItem(item) {
          tick();
          const sum = sums[item.channel];
          sum.rows++;
          sum.piasters += toPiasters(item.channel === 'wallet' ? item.wallet.amount : item.bank.amount);
        },
        async onInvalid(row) {
          tick();
          for (const issue of row.issues) {
            problemCount++;
            if (problems.length >= MAX_PROBLEMS_SHOWN) continue;
            problems.push({
              line: row.line,
              column: issue.column,
              code: issue.code,
              found: issue.found === undefined ? '' : showValue(issue.found),
              expected: describeIssue(issue),
              suggestion: issue.suggestion ?? '',
            });
          }
          rejected ??= openRejectedRows(join(dir, UPLOAD_REJECTED), header, { bom: options.bom });
          await rejected.write(row.line, row.cells, row.issues);
        },
      },
      read,
    );
    const amount = (p: bigint) => formatPiasters(p);
    return {
      rows: counts.rows,
      validRows: counts.validRows,
      invalidRows: counts.invalidRows,
      byChannel: {
        wallet: { rows: sums.wallet.rows, amount: amount(sums.wallet.piasters) },
        bank: { rows: sums.bank.rows, amount: amount(sums.bank.piasters) },
      },
      total: { rows: counts.validRows, amount: amount(sums.wallet.piasters + sums.bank.piasters) },
      held: { rows: held.rows, amount: amount(held.piasters), ...(held.first ? { first: held.first } : {}) },
      problems,
      problemCount,
    };
  } finally {
    await rejected?.close();
  }
}
