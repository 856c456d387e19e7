/**
 * Validation of a card charge body as the sandbox performs it (interface doc §2.1, §4 rule 1,
 * §5.2, §7): every §2.1 field is a required string matching its rule (`CHARGE_FIELD_RULES`), the
 * mobile number is also a valid number by libphonenumber-js, a zero amount is refused (our
 * assumption `zeroAmount`), and the signature must be the §5.2 signature of the fields (our
 * assumption `signatureMismatch` for the answer). Each problem gives one §7 `errors` entry keyed by
 * the field's name (our assumption `errorKeys`); reasons never echo a value.
 */
import { CHARGE_FIELDS, CHARGE_FIELD_RULES, type ChargeRequestBody } from '../contract/charge-api.js';
import { signatureMatches } from '../charge/signature.js';
import type { FieldErrors } from './answers.js';
import { SANDBOX_ASSUMPTIONS } from './assumptions.js';
import { isAboveZero, isValidInternational } from './item-rules.js';

/** Outcome of `validateChargeBody`: the body typed as the contract when there is no problem. */
export type ChargeBodyCheck = { ok: true; body: ChargeRequestBody } | { ok: false; errors: FieldErrors };

/** The merchant secrets the sandbox checks signatures with (interface doc §5.2 rule 2). */
export interface SandboxMerchant {
  readonly code: string;
  readonly hashKey: string;
}

function fieldProblem(field: (typeof CHARGE_FIELDS)[number], value: unknown): string | undefined {
  if (value === undefined || value === null) return `The ${field} field is required.`;
  if (typeof value !== 'string') return `The ${field} field must be a string.`;
  if (value.trim() === '') return `The ${field} field is required.`;
  const { pattern, rule } = CHARGE_FIELD_RULES[field];
  if (!pattern.test(value)) return `The ${field} field must be ${rule}.`;
  if (field === 'amount' && !isAboveZero(value)) {
    return SANDBOX_ASSUMPTIONS.zeroAmount.text.replace(':attribute', field);
  }
  if (field === 'customer_mobile' && !isValidInternational(value)) {
    return `The ${field} field must be a valid mobile number in international format.`;
  }
  return undefined;
}

/**
 * Validates a parsed JSON body against §2.1, then (when every field is valid) its signature against
 * `merchant`. Extra keys are ignored.
 */
export function validateChargeBody(body: unknown, merchant: SandboxMerchant): ChargeBodyCheck {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, errors: { body: SANDBOX_ASSUMPTIONS.notAnObject.text } };
  }
  const fields = body as Record<string, unknown>;
  const errors: FieldErrors = {};
  for (const field of CHARGE_FIELDS) {
    const problem = fieldProblem(field, fields[field]);
    if (problem !== undefined) errors[field] = problem;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const checked = fields as ChargeRequestBody;
  const signed = {
    merchantCode: merchant.code,
    merchantReferenceId: checked.merchant_reference_id,
    customerMerchantProfileId: checked.customer_merchant_profile_id,
    amount: checked.amount,
    hashKey: merchant.hashKey,
  };
  if (!signatureMatches(checked.signature, signed)) {
    const { errorKey, text } = SANDBOX_ASSUMPTIONS.signatureMismatch;
    return { ok: false, errors: { [errorKey]: text } };
  }
  return { ok: true, body: checked };
}
