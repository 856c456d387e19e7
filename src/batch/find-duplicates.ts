/**
 * Possible duplicates within one file: two rows paying the same amount to the same holder, or to
 * the same mobile number or account number, are likely one payment entered twice. They are
 * flagged as a warning (or refused with --strict-duplicates); they are never merged or dropped.
 * The import keeps one fingerprint per key (`./fingerprint-table.ts`): mobile or account number
 * with amount, and lower-cased holder with amount.
 */

/** An earlier row a new row looks like. */
export interface PossibleDuplicate {
  readonly firstLine: number;
  readonly same: 'holder' | 'mobile_number' | 'account_number';
}

/** The warning text for a possible duplicate. */
export function describeDuplicate(d: PossibleDuplicate): string {
  const what = d.same === 'holder' ? 'holder' : d.same.replace('_', ' ');
  return `possible duplicate of line ${d.firstLine} (same ${what} and amount)`;
}
