/**
 * EGP amounts. An amount travels as a decimal string with exactly two places ("1500.00", interface
 * doc §2.4.1/§2.4.2) and is summed as an integer number of piasters held in a bigint. No float
 * ever touches money.
 */

/** The only amount shape the project accepts and sends: digits, one dot, two decimals. */
export const AMOUNT_PATTERN = /^\d+\.\d{2}$/;

/** Converts a validated amount string ("1500.25") to piasters (150025n). Throws on any other shape. */
export function toPiasters(amount: string): bigint {
  if (!AMOUNT_PATTERN.test(amount)) throw new RangeError(`not an EGP amount with two decimals`);
  const dot = amount.length - 3;
  return BigInt(amount.slice(0, dot) + amount.slice(dot + 1));
}

/** Formats piasters (150025n) as an EGP decimal string ("1500.25"); negative values keep their sign. */
export function formatPiasters(piasters: bigint): string {
  const negative = piasters < 0n;
  const abs = negative ? -piasters : piasters;
  const digits = abs.toString().padStart(3, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** Sums EGP amount strings exactly; returns a two-decimal string ("0.00" for none). */
export function sumAmounts(amounts: Iterable<string>): string {
  let total = 0n;
  for (const a of amounts) total += toPiasters(a);
  return formatPiasters(total);
}

/** Groups digits of an EGP amount string: "1234567.50" → "1,234,567.50". */
export function groupDigits(amount: string): string {
  const [int = '0', dec = '00'] = amount.split('.');
  return `${int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${dec}`;
}
