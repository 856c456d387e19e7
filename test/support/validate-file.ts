/**
 * Test helper: validates a whole payout CSV with the project's row rules, the way the import does,
 * so sample files can be checked end to end. Reads with csv-parse (BOM stripped, empty lines
 * skipped, ragged rows kept so the row rules can report `field_count`), indexes the header and runs
 * one row validator over every record with the file line where that record starts (header = 1).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { indexHeader, type HeaderIndex } from '../../src/import/columns.js';
import { createRowValidator, type RowOutcome } from '../../src/import/validate-row.js';
import { loadBankList } from '../../src/contract/supported-banks.js';

/** Row rules used for the samples: the bundled bank list, Egyptian wallets, 255 characters per field. */
export const SAMPLE_RULES = { walletCountries: ['EG'], maxFieldLength: 255 } as const;

/** A validated file: its header index and one outcome per data record, in file order. */
export interface ValidatedFile {
  readonly header: HeaderIndex;
  readonly outcomes: readonly RowOutcome[];
}

interface ParsedRecord {
  readonly record: string[];
  readonly info: { readonly lines: number };
}

/** The file line where a record starts. `info.lines` is the line where it ends, which is the same for single-line records. */
function startLine(parsed: ParsedRecord): number {
  // A quoted field may span lines; csv-parse advances its line count on each CR and LF inside it.
  const breaks = parsed.record.reduce((n, field) => n + (field.match(/[\r\n]/g)?.length ?? 0), 0);
  return parsed.info.lines - breaks;
}

/** Validates CSV text. Throws the header's `CashoutError` (column_unknown, column_missing, ...) as the import does. */
export function validateCsvText(text: string | Buffer): ValidatedFile {
  const parsed = parse(text, {
    bom: true,
    skip_empty_lines: true,
    relax_column_count: true,
    info: true,
  }) as unknown as ParsedRecord[];
  const [first, ...rest] = parsed;
  if (first === undefined) throw new Error('the CSV has no header row');
  const header = indexHeader(first.record);
  const validate = createRowValidator(header, { banks: loadBankList(), ...SAMPLE_RULES });
  return { header, outcomes: rest.map((r) => validate(r.record, startLine(r))) };
}

/** Reads and validates a CSV file. */
export function validateFile(path: string): ValidatedFile {
  return validateCsvText(readFileSync(path));
}

/** The line of an outcome, valid or not. */
export function outcomeLine(outcome: RowOutcome): number {
  return outcome.ok ? outcome.item.line : outcome.line;
}
