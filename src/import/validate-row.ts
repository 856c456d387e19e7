/**
 * One CSV record → a payout item or the reasons it is not one. The validator is built once per
 * file; each column rule lives in its own `check-*.ts` (interface doc §2.4.1 for wallet rows,
 * §2.4.2 for bank rows) and reports `RowIssue`s, never throws.
 */
import {
  TRANSFER_TYPES,
  type BankAccountItem,
  type MobileWalletItem,
  type TransferType,
} from '../contract/withdrawal-api.js';
import { suggestBanks, foldBankName, type BankList } from '../contract/supported-banks.js';
import { BANK_ONLY, COLUMNS, WALLET_ONLY, type ColumnName, type HeaderIndex } from './columns.js';
import { checkAmount } from './check-amount.js';
import { toPiasters } from '../money.js';
import { checkMobile } from './check-mobile.js';
import { checkAccount } from './check-account.js';
import type { RowIssue } from './row-issues.js';
import { CONTROL_ANY, INVISIBLE, SUSPECT, namedInvisibles, withoutInvisibles } from './invisible.js';
import { fieldCountIssue } from './field-count.js';

/** A valid row, ready for a withdrawal request. `line` is the file line where the record starts (header = 1). */
export type PayoutItem =
  | { readonly line: number; readonly reference: string; readonly channel: 'wallet'; readonly wallet: MobileWalletItem }
  | { readonly line: number; readonly reference: string; readonly channel: 'bank'; readonly bank: BankAccountItem };

/** The outcome of validating one record. */
export type RowOutcome =
  | { readonly ok: true; readonly item: PayoutItem }
  | { readonly ok: false; readonly line: number; readonly issues: readonly RowIssue[] };

/** What the row rules need besides the record itself. */
export interface RowRules {
  readonly banks: BankList;
  /** ISO countries accepted for wallet numbers (default `['EG']`). */
  readonly walletCountries: readonly string[];
  /** Longest accepted free-text value, in characters. */
  readonly maxFieldLength: number;
  /** Largest amount of one item (EGP decimal string, CASHOUT_MAX_ITEM_AMOUNT); undefined = no limit. */
  readonly maxItemAmount?: string | undefined;
}

/** Control characters refused in an address: every one but tab and line breaks (an address may span lines). */
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
/**
 * Free text is taken as written, also when it starts with "=", "+", "-" or "@" ("-" and "+" start
 * ordinary names and descriptions, "=" and "@" are legal text for the service): it is sent to the
 * service unchanged and never evaluated. Where it could act as a spreadsheet formula — our CSV
 * reports — `neutraliseCell` (src/results/csv-out.ts) writes it with a leading apostrophe. Amounts
 * and mobile numbers starting with these characters are refused by their own rules.
 */
const FREE_TEXT: readonly ColumnName[] = ['holder_name', 'description', 'bank_address', 'reference'];

type Cells = Record<ColumnName, string>;

/**
 * `text_invisible_chars` for a value holding invisible characters (`./invisible.ts`), naming each
 * by its Unicode name, with the value without them as the suggestion when that leaves a value.
 */
export function invisibleIssue(column: ColumnName, value: string): RowIssue {
  const cleaned = withoutInvisibles(value).trim();
  const params = { chars: namedInvisibles(value) };
  return cleaned === ''
    ? { column, code: 'text_invisible_chars', found: value, params }
    : { column, code: 'text_invisible_chars', found: value, suggestion: cleaned, params };
}

/** The issue of a value sent to the service whose own rule failed: its invisible characters first, when it has any. */
function failed(column: ColumnName, value: string, issue: RowIssue): RowIssue {
  return INVISIBLE.test(value) ? invisibleIssue(column, value) : issue;
}

function checkText(column: ColumnName, value: string, max: number): RowIssue | undefined {
  if (value.length > max) return { column, code: 'text_too_long', params: { length: value.length, max } };
  if (!SUSPECT.test(value)) return undefined;
  if ((column === 'bank_address' ? CONTROL : CONTROL_ANY).test(value))
    return { column, code: 'text_control_chars', found: value };
  if (INVISIBLE.test(value)) return invisibleIssue(column, value);
  return undefined;
}

function checkCells(row: Cells, rules: RowRules, issues: RowIssue[]): void {
  const channel = row.channel;
  if (channel !== 'wallet' && channel !== 'bank') {
    const lower = channel.trim().toLowerCase();
    issues.push(
      channel === ''
        ? { column: 'channel', code: 'required' }
        : lower === 'wallet' || lower === 'bank'
          ? { column: 'channel', code: 'channel_invalid', found: channel, suggestion: lower }
          : failed('channel', channel, { column: 'channel', code: 'channel_invalid', found: channel }),
    );
  }
  const amountIssue = row.amount === '' ? ({ column: 'amount', code: 'required' } as const) : checkAmount(row.amount);
  if (amountIssue) issues.push(failed('amount', row.amount, amountIssue));
  else if (rules.maxItemAmount !== undefined && toPiasters(row.amount) > toPiasters(rules.maxItemAmount)) {
    issues.push({
      column: 'amount',
      code: 'amount_over_limit',
      found: row.amount,
      params: { limit: rules.maxItemAmount },
    });
  }

  if (!(TRANSFER_TYPES as readonly string[]).includes(row.type)) {
    const upper = row.type.trim().toUpperCase();
    issues.push(
      row.type === ''
        ? { column: 'type', code: 'required' }
        : (TRANSFER_TYPES as readonly string[]).includes(upper)
          ? { column: 'type', code: 'type_invalid', found: row.type, suggestion: upper }
          : failed('type', row.type, { column: 'type', code: 'type_invalid', found: row.type }),
    );
  }
  for (const column of FREE_TEXT) {
    const value = row[column];
    if (value === '') {
      if (column === 'holder_name' || column === 'description' || (column === 'bank_address' && channel === 'bank')) {
        issues.push({ column, code: 'required' });
      }
      continue;
    }
    const textIssue = checkText(column, value, rules.maxFieldLength);
    if (textIssue) issues.push(textIssue);
  }

  if (channel === 'wallet') {
    for (const column of BANK_ONLY)
      if (row[column] !== '') issues.push({ column, code: 'not_for_channel', found: row[column], params: { channel } });
    if (row.mobile_number === '') issues.push({ column: 'mobile_number', code: 'required' });
    else {
      const m = checkMobile(row.mobile_number, rules.walletCountries);
      if (m) issues.push(failed('mobile_number', row.mobile_number, m));
    }
  } else if (channel === 'bank') {
    for (const column of WALLET_ONLY)
      if (row[column] !== '') issues.push({ column, code: 'not_for_channel', found: row[column], params: { channel } });
    const bank = row.bank_name;
    if (bank === '') issues.push({ column: 'bank_name', code: 'required' });
    else if (!rules.banks.exact.has(bank)) {
      const spaced = bank.replace(/\u00a0/g, ' ');
      if (INVISIBLE.test(bank)) issues.push(invisibleIssue('bank_name', bank));
      else if (spaced !== bank && rules.banks.exact.has(spaced)) {
        // Looks the same as a listed name: the no-break space is named, never a "did you mean" alone.
        issues.push({ column: 'bank_name', code: 'bank_no_break_space', found: bank, suggestion: spaced });
      } else {
        const suggestions = suggestBanks(rules.banks, bank);
        const near = suggestions.length > 0 && foldBankName(suggestions[0]!) === foldBankName(bank);
        // One suggested name is also the row's `suggestion` (the value to write instead); several
        // are only named in the message.
        issues.push({
          column: 'bank_name',
          code: near ? 'bank_near_match' : 'bank_unknown',
          found: bank,
          ...(suggestions.length === 1 ? { suggestion: suggestions[0]! } : {}),
          params: { banks: suggestions },
        });
      }
    }
    if (row.account_number === '') issues.push({ column: 'account_number', code: 'required' });
    else {
      const a = checkAccount(row.account_number);
      if (a) issues.push(failed('account_number', row.account_number, a));
    }
  }
}

/**
 * Builds the validator for one file. The returned function takes a record (the cells in file
 * order) and the line where it starts, and returns the payout item or every issue of the row.
 * Unless `checkReferences` is false, it keeps the references seen so far to refuse a reference
 * used twice in the file (the parallel reader checks references in file order itself, with a
 * compact table: `../batch/fingerprint-table.ts`).
 */
export function createRowValidator(
  header: HeaderIndex,
  rules: RowRules,
  { checkReferences = true, delimiter = ',' }: { readonly checkReferences?: boolean; readonly delimiter?: string } = {},
): (record: readonly string[], line: number) => RowOutcome {
  const width = Math.max(...COLUMNS.map((c) => header[c])) + 1;
  const firstLineOfReference = new Map<string, number>();

  const at = (c: ColumnName) => header[c];
  const iChannel = at('channel');
  const iAmount = at('amount');
  const iType = at('type');
  const iHolder = at('holder_name');
  const iMobile = at('mobile_number');
  const iBankName = at('bank_name');
  const iBankAddress = at('bank_address');
  const iAccount = at('account_number');
  const iDescription = at('description');
  const iReference = at('reference');
  const cell = (record: readonly string[], i: number): string => (i < 0 ? '' : (record[i] ?? ''));
  const scratch: RowIssue[] = [];

  return (record, line) => {
    if (record.length < width || (record.length > width && record.slice(width).some((v) => v.trim() !== ''))) {
      return { ok: false, line, issues: [fieldCountIssue(record, width, delimiter)] };
    }
    // One fixed-shape object per row; free text (FREE_TEXT) trimmed.
    const cells: Cells = {
      channel: cell(record, iChannel),
      amount: cell(record, iAmount),
      type: cell(record, iType),
      holder_name: cell(record, iHolder).trim(),
      mobile_number: cell(record, iMobile),
      bank_name: cell(record, iBankName),
      bank_address: cell(record, iBankAddress).trim(),
      account_number: cell(record, iAccount),
      description: cell(record, iDescription).trim(),
      reference: cell(record, iReference).trim(),
    };
    // The column rules write into one scratch array; a row with issues gets its own copy.
    scratch.length = 0;
    checkCells(cells, rules, scratch);
    const issues: RowIssue[] = scratch.length > 0 ? [...scratch] : [];
    const reference = cells.reference;
    if (checkReferences && reference !== '') {
      const first = firstLineOfReference.get(reference);
      if (first !== undefined)
        issues.push({
          column: 'reference',
          code: 'reference_duplicate',
          found: reference,
          params: { firstLine: first },
        });
      else firstLineOfReference.set(reference, line);
    }
    if (issues.length > 0) return { ok: false, line, issues };
    const type = cells.type as TransferType;
    return cells.channel === 'wallet'
      ? {
          ok: true,
          item: {
            line,
            reference,
            channel: 'wallet',
            wallet: {
              amount: cells.amount,
              type,
              holder_name: cells.holder_name,
              description: cells.description,
              mobile_number: cells.mobile_number,
            },
          },
        }
      : {
          ok: true,
          item: {
            line,
            reference,
            channel: 'bank',
            bank: {
              amount: cells.amount,
              type,
              holder_name: cells.holder_name,
              description: cells.description,
              bank_name: cells.bank_name,
              bank_address: cells.bank_address,
              number: cells.account_number,
            },
          },
        };
  };
}
