/**
 * The supported bank list (interface doc §2.4.2: "one of the service's published list of supported
 * bank names"; a `bank_name` must match an entry exactly). The bundled default is
 * `supported-banks.json` beside this file; `CASHOUT_BANKS_FILE` replaces it with the service's
 * current list. Exact duplicates are collapsed with a warning (the published list has one name twice).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { distance } from 'fastest-levenshtein';
import { CashoutError } from '../errors.js';
import { PACKAGE_ROOT } from '../paths.js';

/** A loaded bank list: `names` in file order without exact duplicates, `duplicates` that were collapsed. */
export interface BankList {
  readonly names: readonly string[];
  readonly exact: ReadonlySet<string>;
  readonly duplicates: readonly string[];
  readonly source: string;
}

/** Path of the bundled default list. */
export const DEFAULT_BANKS_FILE = join(PACKAGE_ROOT, 'src', 'contract', 'supported-banks.json');

const BankFile = z.union([
  z.array(z.string()),
  z.object({ source: z.string().optional(), banks: z.array(z.string()) }),
]);

/**
 * Builds a bank list from names. Blank entries are an error; exact duplicates are collapsed and
 * reported in `duplicates` (the caller logs a warning).
 */
export function makeBankList(names: readonly string[], source = 'inline'): BankList {
  const seen = new Set<string>();
  const out: string[] = [];
  const duplicates: string[] = [];
  for (const n of names) {
    if (n.trim() === '') throw new CashoutError('banks_file_invalid', `the bank list ${source} has a blank entry`);
    if (seen.has(n)) duplicates.push(n);
    else {
      seen.add(n);
      out.push(n);
    }
  }
  if (out.length === 0) throw new CashoutError('banks_file_invalid', `the bank list ${source} is empty`);
  return { names: out, exact: seen, duplicates, source };
}

/**
 * Loads the bank list from a JSON file: either an array of names or `{ "source", "banks": [...] }`.
 * Throws `CashoutError('banks_file_invalid')` when the file is missing, not JSON or of another shape.
 */
export function loadBankList(file: string = DEFAULT_BANKS_FILE): BankList {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (cause) {
    throw new CashoutError(
      'banks_file_invalid',
      `cannot read the bank list ${file}: ${(cause as Error).message}`,
      { file },
      cause,
    );
  }
  const parsed = BankFile.safeParse(raw);
  if (!parsed.success) {
    throw new CashoutError(
      'banks_file_invalid',
      `the bank list ${file} must be a JSON array of names or {"banks": [...]}`,
      { file },
    );
  }
  const names = Array.isArray(parsed.data) ? parsed.data : parsed.data.banks;
  return makeBankList(names, file);
}

/** Folds the differences a person cannot see or does not mean: BOM, case, spacing, dash kinds. */
export function foldBankName(name: string): string {
  return name
    .replace(/\uFEFF/g, '')
    .replace(/[\u2010-\u2015\u2212-]/g, '-')
    .replace(/\s+/g, ' ')
    .replace(/\s*-\s*/g, ' - ')
    .trim()
    .toLowerCase();
}

/**
 * Suggestions for a `bank_name` that is not on the list: first the entries that differ only in
 * invisible ways (case, spaces, hyphen vs en dash, BOM), else up to three entries within a small
 * edit distance. Never guesses from an alias ("CIB", "NBE"): those get no suggestion.
 */
export function suggestBanks(list: BankList, name: string): string[] {
  const folded = foldBankName(name);
  if (folded === '') return [];
  const same = list.names.filter((n) => foldBankName(n) === folded);
  if (same.length > 0) return same;
  const limit = Math.max(2, Math.floor(folded.length * 0.25));
  return list.names
    .map((n) => ({ n, d: distance(foldBankName(n), folded) }))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map((x) => x.n);
}
