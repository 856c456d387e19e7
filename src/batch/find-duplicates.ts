/**
 * Possible duplicates within one file: two rows paying the same amount to the same holder, or to
 * the same mobile number or account number, are likely one payment entered twice. They are
 * flagged as a warning (or refused with --strict-duplicates); they are never merged or dropped.
 * Holds one short key per valid row.
 */
import type { PayoutItem } from '../import/validate-row.js';

/** An earlier row a new row looks like. */
export interface PossibleDuplicate {
  readonly firstLine: number;
  readonly same: 'holder' | 'mobile_number' | 'account_number';
}

/** Creates a finder for one file; `check` returns the earlier row a payout item repeats, if any. */
export function createDuplicateFinder(): { check(item: PayoutItem): PossibleDuplicate | undefined } {
  const seen = new Map<string, number>();
  const remember = (key: string, line: number): number | undefined => {
    const first = seen.get(key);
    if (first === undefined) seen.set(key, line);
    return first;
  };
  return {
    check(item) {
      const fields = item.channel === 'wallet' ? item.wallet : item.bank;
      const amount = fields.amount;
      const numberKey = item.channel === 'wallet' ? `m\u0000${item.wallet.mobile_number}\u0000${amount}` : `a\u0000${item.bank.number}\u0000${amount}`;
      const holderKey = `h\u0000${fields.holder_name.toLowerCase()}\u0000${amount}`;
      const byNumber = remember(numberKey, item.line);
      const byHolder = remember(holderKey, item.line);
      if (byNumber !== undefined) return { firstLine: byNumber, same: item.channel === 'wallet' ? 'mobile_number' : 'account_number' };
      if (byHolder !== undefined) return { firstLine: byHolder, same: 'holder' };
      return undefined;
    },
  };
}

/** The warning text for a possible duplicate. */
export function describeDuplicate(d: PossibleDuplicate): string {
  const what = d.same === 'holder' ? 'holder' : d.same.replace('_', ' ');
  return `possible duplicate of line ${d.firstLine} (same ${what} and amount)`;
}
