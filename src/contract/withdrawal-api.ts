/**
 * The wire contract of `POST /api/v1/merchant/withdrawal` (interface doc §2.4, §2.5, §7), as zod
 * schemas and the types inferred from them. Only what the document shows is encoded here; what it
 * leaves out ("not shown") is configurable elsewhere, never guessed here.
 */
import { z } from 'zod';
import { AMOUNT_PATTERN } from '../money.js';

/** Path of the withdrawal endpoint (interface doc §4), appended to the configured base address. */
export const WITHDRAWAL_PATH = '/api/v1/merchant/withdrawal';

/** `TRANSFER` or `REFUND` (interface doc §2.4.1, §2.4.2). */
export const TRANSFER_TYPES = ['TRANSFER', 'REFUND'] as const;
export type TransferType = (typeof TRANSFER_TYPES)[number];

const required = z.string().min(1);
const amount = z.string().regex(AMOUNT_PATTERN);

/** Mobile wallet item (interface doc §2.4.1). `amount` is an EGP decimal string with two places. */
export const MobileWalletItem = z.object({
  amount,
  type: z.enum(TRANSFER_TYPES),
  holder_name: required,
  mobile_number: required,
  description: required,
});
export type MobileWalletItem = z.infer<typeof MobileWalletItem>;

/** Bank account item (interface doc §2.4.2). `number` is the receiver's account number or IBAN. */
export const BankAccountItem = z.object({
  amount,
  type: z.enum(TRANSFER_TYPES),
  holder_name: required,
  bank_name: required,
  bank_address: required,
  number: required,
  description: required,
});
export type BankAccountItem = z.infer<typeof BankAccountItem>;

/** Cashout request body (interface doc §2.4): either array or both; we never send an empty array. */
export const WithdrawalRequestBody = z.object({
  mobile_wallets: z.array(MobileWalletItem).optional(),
  bank_accounts: z.array(BankAccountItem).optional(),
});
export type WithdrawalRequestBody = z.infer<typeof WithdrawalRequestBody>;

/** Success body, HTTP 200 (interface doc §2.5). Extra fields are tolerated. */
export const WithdrawalCreated = z.object({
  success: z.literal(true),
  status_code: z.literal(200),
  status_description: z.string(),
  message: z.string(),
});
export type WithdrawalCreated = z.infer<typeof WithdrawalCreated>;

/** Validation failure body, HTTP 422 (interface doc §7). `errors` maps a name to a reason text. */
export const ValidationFailure = z.object({
  success: z.literal(false),
  message: z.string(),
  status_code: z.literal(422),
  status_description: z.string(),
  errors: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
});
export type ValidationFailure = z.infer<typeof ValidationFailure>;
