/**
 * The sandbox's table of test cards. The interface document says staging accepts a designated test
 * card and omits its values (§1), so these cards are the sandbox's own: a card charged in the
 * request (§2.2), a 3-D Secure card whose OTP settles the charge PAID (§2.3, §6.1), and a card
 * that is declined. Any other card number is declined too (assumption `declinedCard`). The
 * table can be replaced with a JSON file (CASHOUT_SANDBOX_TEST_CARDS_FILE).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { CHARGE_FIELD_RULES } from '../contract/charge-api.js';
import { CashoutError } from '../errors.js';

/** What the sandbox does with a charge on a card. */
export const TEST_CARD_BEHAVIOURS = ['direct', 'three_d_secure', 'declined'] as const;
export type TestCardBehaviour = (typeof TEST_CARD_BEHAVIOURS)[number];

/**
 * One test card: its 16-digit number, what a charge on it does, and for `three_d_secure` the OTP
 * that settles it PAID (any other OTP settles it FAILED). Any CVV and expiry of the right form
 * are accepted.
 */
export interface TestCard {
  readonly number: string;
  readonly behaviour: TestCardBehaviour;
  /** 4 to 8 digits; only for `three_d_secure`. */
  readonly otp?: string;
  /** What the card is for, in words. */
  readonly label: string;
}

/** The default table (the numbers pass the Luhn check, so card forms that check it accept them). */
export const DEFAULT_TEST_CARDS: readonly TestCard[] = Object.freeze([
  { number: '9000000000000019', behaviour: 'direct', label: 'charged in the request (§2.2)' },
  {
    number: '9000000000000035',
    behaviour: 'three_d_secure',
    otp: '123456',
    label: '3-D Secure: OTP 123456 pays, any other fails',
  },
  { number: '9000000000000050', behaviour: 'declined', label: 'declined' },
]);

const TestCardSchema = z
  .object({
    number: z.string().regex(CHARGE_FIELD_RULES.card_number.pattern, 'must be 16 digits'),
    behaviour: z.enum(TEST_CARD_BEHAVIOURS),
    otp: z
      .string()
      .regex(/^\d{4,8}$/, 'must be 4 to 8 digits')
      .optional(),
    label: z.string().min(1).optional(),
  })
  .strict()
  .refine((c) => (c.behaviour === 'three_d_secure') === (c.otp !== undefined), {
    message: 'otp is required for a three_d_secure card, and only for it',
  });

const TableSchema = z
  .array(TestCardSchema)
  .refine((cards) => cards.length > 0, { message: 'the table holds no card' })
  .refine((cards) => new Set(cards.map((c) => c.number)).size === cards.length, {
    message: 'a card number is listed twice',
  });

/**
 * Checks a test card table: an array of `{ number, behaviour, otp?, label? }`, or `{ cards: [...] }`.
 * Throws `CashoutError('config_invalid')` naming the first problem (card numbers are not echoed).
 */
export function parseTestCards(input: unknown, source = 'the test card table'): readonly TestCard[] {
  const wrapped = input !== null && typeof input === 'object' && !Array.isArray(input) && 'cards' in input;
  const cards = wrapped ? input.cards : input;
  const parsed = TableSchema.safeParse(cards);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? ` at ${issue.path.map(String).join('.')}` : '';
    throw new CashoutError('config_invalid', `${source} is invalid${where}: ${issue.message}`);
  }
  return Object.freeze(
    parsed.data.map((c) => {
      const otp = c.otp ? { otp: c.otp } : {};
      const card: TestCard = { number: c.number, behaviour: c.behaviour, ...otp, label: c.label ?? c.behaviour };
      return Object.freeze(card);
    }),
  );
}

/** Reads a test card table from a JSON file (see `parseTestCards`). Throws `CashoutError('config_invalid')`. */
export function loadTestCardsFile(path: string): readonly TestCard[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    const key = 'CASHOUT_SANDBOX_TEST_CARDS_FILE';
    throw new CashoutError('config_invalid', `setting ${key} names a file that cannot be read as JSON`, { key });
  }
  return parseTestCards(json, 'CASHOUT_SANDBOX_TEST_CARDS_FILE');
}
