/**
 * Validation of a cashout request body as the sandbox of the payment service performs it
 * (interface doc §2.4, §4 rules 2-3, §7). Every problem gives one entry keyed the way Laravel
 * names fields (`mobile_wallets.0.mobile_number`, `bank_accounts.2.bank_name`, `mobile_wallets`),
 * with a plain reason text as value. The field lists come from the contract schemas in
 * `../contract/withdrawal-api.ts`, so a field added there becomes required here too.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { BankAccountItem, MobileWalletItem, TRANSFER_TYPES } from '../contract/withdrawal-api.js';
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import type { BankList } from '../contract/supported-banks.js';
import { AMOUNT_PATTERN } from '../money.js';
import { checkMobile } from '../import/check-mobile.js';
import type { FieldErrors } from './answers.js';
import { SANDBOX_ASSUMPTIONS } from './assumptions.js';

export type { FieldErrors } from './answers.js';

/**
 * True when `value` is a valid phone number in international format by libphonenumber-js's full
 * metadata. An Egyptian mobile number passing the import's own check (a fast path on the same
 * metadata, proven equal to the full parse) is valid without a second parse; anything else is
 * parsed in full. Only the speed differs, not the answer.
 */
export function isValidInternational(value: string): boolean {
  if (checkMobile(value, ['EG']) === undefined) return true;
  const phone = parsePhoneNumberFromString(value);
  return phone !== undefined && phone.isValid();
}

const NON_ZERO_DIGIT = /[1-9]/;

/** True when an amount already matching `NN.NN` is above zero: some digit is not 0 (our assumption `zeroAmount`). */
export function isAboveZero(amount: string): boolean {
  return NON_ZERO_DIGIT.test(amount);
}

/** Outcome of `validateWithdrawalBody`: the body typed as the contract when there is no problem. */
export type BodyCheck = { ok: true; body: WithdrawalRequestBody } | { ok: false; errors: FieldErrors };

const ARRAYS = ['mobile_wallets', 'bank_accounts'] as const;
type ArrayKey = (typeof ARRAYS)[number];

const FIELDS: Record<ArrayKey, readonly string[]> = {
  mobile_wallets: Object.keys(MobileWalletItem.shape),
  bank_accounts: Object.keys(BankAccountItem.shape),
};

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Where a field's name (`mobile_wallets.0.amount`) goes in a reason returned by `fieldProblem`. */
const KEY = '\u0000';

/**
 * The reason a single item field fails, with `KEY` standing for the field's name (filled in only
 * for a problem, so a valid item builds no strings), or undefined when it is fine.
 */
function fieldProblem(field: string, value: unknown, banks: BankList): string | undefined {
  if (value === undefined || value === null) return `The ${KEY} field is required.`;
  if (typeof value !== 'string') return `The ${KEY} field must be a string.`;
  if (value.trim() === '') return `The ${KEY} field is required.`;
  switch (field) {
    case 'amount':
      // §2.4.1/§2.4.2: decimal with two decimal places; a payout of nothing is not a payout.
      if (!AMOUNT_PATTERN.test(value))
        return `The ${KEY} field must be a decimal with exactly two decimal places (NN.NN).`;
      return isAboveZero(value) ? undefined : SANDBOX_ASSUMPTIONS.zeroAmount.text.replace(':attribute', KEY);
    case 'type':
      return (TRANSFER_TYPES as readonly string[]).includes(value)
        ? undefined
        : `The selected ${KEY} is invalid (TRANSFER or REFUND).`;
    case 'mobile_number': {
      // §2.4.1: international format.
      if (!value.startsWith('+'))
        return `The ${KEY} field must be a mobile number in international format (+ and country code).`;
      return isValidInternational(value)
        ? undefined
        : `The ${KEY} field must be a valid mobile number in international format.`;
    }
    case 'bank_name':
      // §2.4.2: must match an entry of the published list exactly.
      return banks.exact.has(value) ? undefined : `The selected ${KEY} is invalid (not on the supported bank list).`;
    default:
      return undefined;
  }
}

function checkItems(name: ArrayKey, items: readonly unknown[], banks: BankList, errors: FieldErrors): void {
  items.forEach((item, i) => {
    const prefix = `${name}.${i}`;
    if (!isPlainObject(item)) {
      errors[prefix] = `The ${prefix} field must be an object.`;
      return;
    }
    for (const field of FIELDS[name]) {
      const problem = fieldProblem(field, item[field], banks);
      if (problem !== undefined) {
        const key = `${prefix}.${field}`;
        errors[key] = problem.replaceAll(KEY, key);
      }
    }
  });
}

/**
 * Validates a parsed JSON body (interface doc §2.4): it must be an object; at least one of
 * `mobile_wallets` / `bank_accounts` must be a non-empty array and a present one must be an
 * array; each item needs every field of its kind as a non-blank string; `amount` matches
 * `NN.NN` and is above zero; `type` is `TRANSFER` or `REFUND`; `mobile_number` starts with `+`
 * and is a valid number; `bank_name` is exactly on `banks`. Extra keys are ignored.
 */
export function validateWithdrawalBody(body: unknown, banks: BankList): BodyCheck {
  const errors: FieldErrors = {};
  if (!isPlainObject(body)) {
    return { ok: false, errors: { body: SANDBOX_ASSUMPTIONS.notAnObject.text } };
  }
  const present = (k: ArrayKey): unknown => body[k];
  const nonEmpty = ARRAYS.filter((k) => {
    const v = present(k);
    return Array.isArray(v) && v.length > 0;
  });
  for (const k of ARRAYS) {
    const v = present(k);
    const other = k === 'mobile_wallets' ? 'bank_accounts' : 'mobile_wallets';
    if (v !== undefined && !Array.isArray(v)) errors[k] = `The ${k} field must be an array.`;
    else if (nonEmpty.length === 0) {
      const text = v === undefined ? SANDBOX_ASSUMPTIONS.noItems.text : SANDBOX_ASSUMPTIONS.emptyItems.text;
      errors[k] = text.replace(':attribute', k).replace(':other', other);
    }
  }
  for (const k of nonEmpty) checkItems(k, present(k) as unknown[], banks, errors);
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, body: body as WithdrawalRequestBody };
}
