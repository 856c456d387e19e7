/**
 * What can be wrong with one row, as data: `{ column, code, found, suggestion, params }`.
 * Wording lives in `reasons.ts`; tests assert codes, not sentences.
 */
import type { ColumnName } from './columns.js';

/** Every row-level problem code. */
export type RowIssueCode =
  | 'required'
  | 'not_for_channel'
  | 'field_count'
  | 'channel_invalid'
  | 'type_invalid'
  | 'amount_format'
  | 'amount_decimal_places'
  | 'amount_thousands_separator'
  | 'amount_decimal_comma'
  | 'amount_not_positive'
  | 'amount_whitespace'
  | 'amount_currency_text'
  | 'amount_non_latin_digits'
  | 'amount_leading_zero'
  | 'amount_too_large'
  | 'amount_over_limit'
  | 'mobile_not_international'
  | 'mobile_invalid'
  | 'mobile_not_mobile'
  | 'mobile_country'
  | 'bank_near_match'
  | 'bank_unknown'
  | 'bank_no_break_space'
  | 'account_format'
  | 'account_non_latin_digits'
  | 'number_scientific'
  | 'account_invalid'
  | 'iban_invalid'
  | 'iban_checksum'
  | 'text_too_long'
  | 'text_control_chars'
  | 'text_invisible_chars'
  | 'reference_duplicate'
  | 'possible_duplicate';

/** One problem found in one cell (or the whole row for `field_count`). */
export interface RowIssue {
  readonly column: ColumnName | 'row';
  readonly code: RowIssueCode;
  /** The value as found (shortened for display by the wording table). */
  readonly found?: string;
  /** A corrected value a person can paste, when one can be derived without guessing. */
  readonly suggestion?: string;
  /** Extra facts for the wording: e.g. `{ firstLine: 12 }`, `{ banks: [...] }`, `{ max: 255 }`. */
  readonly params?: Readonly<Record<string, unknown>>;
}
