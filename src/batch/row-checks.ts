/**
 * The checks of an import across its valid rows, kept in fingerprint tables of 12 to 16 bytes a
 * row (`../import/fingerprint-table.ts`), never the rows: each row's payee key for the payout
 * register (`../ledger/payout-register.ts`), possible duplicates within the file
 * (`./find-duplicates.ts`) and each wallet's running total against the daily wallet limit. Rows
 * are read from their part (`ChunkPart`) as `partRows` gives them.
 */
import {
  fingerprintAt,
  FP_DESTINATION,
  FP_HOLDER,
  FP_WALLET,
  ROW_WALLET,
  type ChunkPart,
  type PartRow,
} from '../import/check-chunk.js';
import { createFingerprintTable, type FingerprintTable } from '../import/fingerprint-table.js';
import type { ScannedPart } from '../import/parallel-scan.js';
import { fingerprintKey, referenceKey } from '../ledger/payout-register.js';
import { formatPiasters, toPiasters } from '../money.js';
import type { PossibleDuplicate } from './find-duplicates.js';

/** Largest wallet total kept exactly, in piasters (2^32 − 1). */
const MAX_TOTAL = 0xffffffffn;

/** The checks across the rows of one import. */
export interface RowChecks {
  /**
   * The payee key of each valid row of a part, in the order of its valid rows: `r:<reference>`, or
   * for a row without reference `f:<fingerprint>#<n>`, n counting the file's rows with the same
   * fingerprint so far. A row whose reference repeats an earlier row of the file gets '' (it is
   * refused as invalid).
   */
  payeeKeys(s: ScannedPart): string[];
  /**
   * The earlier row a valid row looks like: the same mobile or account number and amount, else the
   * same holder and amount; undefined when none. The row is remembered either way.
   */
  possibleDuplicate(part: ChunkPart, row: PartRow): PossibleDuplicate | undefined;
  /**
   * For a wallet row: adds its amount to its wallet's total, and returns a warning when the total
   * is over the daily wallet limit. Undefined for a bank row, under the limit, or with no limit.
   */
  walletWarning(part: ChunkPart, row: PartRow): string | undefined;
  /** Bytes the tables hold. */
  readonly bytes: number;
}

/**
 * Creates the checks of one import: `estimatedRows` sizes the tables at their first row;
 * `walletDailyLimit` is an EGP amount (decimal string); no wallet warnings when undefined.
 */
export function createRowChecks(estimatedRows: () => number, walletDailyLimit: string | undefined): RowChecks {
  const sameNumber = createFingerprintTable(false, estimatedRows);
  const sameHolder = createFingerprintTable(false, estimatedRows);
  const walletTotals = createFingerprintTable(false, estimatedRows);
  // Rows without reference: how many rows of the file so far share a payee fingerprint (its key's #n).
  let payeeCounts: FingerprintTable | undefined;
  const walletLimit = walletDailyLimit === undefined ? undefined : toPiasters(walletDailyLimit);
  return {
    payeeKeys: (s) => payeeKeys(s, () => (payeeCounts ??= createFingerprintTable(true, estimatedRows))),
    possibleDuplicate(part, row) {
      const fp = part.fingerprints;
      const number = fingerprintAt(row.valid, FP_DESTINATION);
      const holder = fingerprintAt(row.valid, FP_HOLDER);
      const byNumber = sameNumber.getOrAdd(fp[number]!, fp[number + 1]!, row.line);
      const byHolder = sameHolder.getOrAdd(fp[holder]!, fp[holder + 1]!, row.line);
      if (byNumber !== 0)
        return { firstLine: byNumber, same: row.kind === ROW_WALLET ? 'mobile_number' : 'account_number' };
      return byHolder !== 0 ? { firstLine: byHolder, same: 'holder' } : undefined;
    },
    walletWarning(part, row) {
      if (row.kind !== ROW_WALLET || walletLimit === undefined) return undefined;
      const amount = part.piasters[row.valid]!;
      const wallet = fingerprintAt(row.valid, FP_WALLET);
      // Totals are kept in 32 bits of piasters: exact up to EGP 42,949,672.95, then "more than".
      const sum = walletTotals.addTo(
        part.fingerprints[wallet]!,
        part.fingerprints[wallet + 1]!,
        Number(amount > MAX_TOTAL ? MAX_TOTAL : amount),
      );
      if (BigInt(sum) <= walletLimit) return undefined;
      const what =
        sum === Number(MAX_TOTAL) ? `more than EGP ${formatPiasters(MAX_TOTAL)}` : `EGP ${formatPiasters(BigInt(sum))}`;
      return `this wallet receives ${what} in this batch up to this row, over the Central Bank of Egypt's daily wallet limit of EGP ${formatPiasters(walletLimit)}`;
    },
    get bytes() {
      return sameNumber.bytes + sameHolder.bytes + walletTotals.bytes + (payeeCounts?.bytes ?? 0);
    },
  };
}

/** `RowChecks.payeeKeys`, with the count of rows per payee fingerprint (`counts`, made at its first use). */
function payeeKeys(s: ScannedPart, counts: () => FingerprintTable): string[] {
  const valid = s.part.piasters.length;
  const fp = s.part.fingerprints;
  const keys = new Array<string>(valid);
  for (let j = 0; j < valid; j++) {
    const reference = s.references[j]!;
    if (s.earlierReference[j] !== 0) keys[j] = '';
    else if (reference !== '') keys[j] = referenceKey(reference);
    else {
      // Destination+amount and holder+amount, folded to 64 bits to count.
      const number = fingerprintAt(j, FP_DESTINATION);
      const holder = fingerprintAt(j, FP_HOLDER);
      const hi = (fp[number]! ^ Math.imul(fp[holder]!, 0x9e3779b1)) >>> 0;
      const lo = (fp[number + 1]! ^ Math.imul(fp[holder + 1]!, 0x85ebca6b)) >>> 0;
      keys[j] = fingerprintKey(fp, number, counts().addTo(hi, lo, 1));
    }
  }
  return keys;
}
