/**
 * The wire contract of `POST /api/v1/charge/card` (interface doc §2.1, §2.2, §2.3, §4, §7) and of
 * the OTP dialog's browser message (§6.1), as zod schemas and the types inferred from them. Only
 * what the document shows is encoded here; the sandbox's answers to what it does not show live in
 * `../sandbox/assumptions.ts`.
 */
import { z } from 'zod';
import { AMOUNT_PATTERN } from '../money.js';

/** Path of the charge endpoint (interface doc §4), appended to the configured base address. */
export const CHARGE_PATH = '/api/v1/charge/card';

/** Path of the OTP dialog's browser script (interface doc §4, §6.1), on the same base address. */
export const OTP_PLUGIN_PATH = '/js/plugins/OTPPaymentPlugin.js';

/** Id of the page element the OTP dialog mounts on (interface doc §6.1 step 2). */
export const OTP_CONTAINER_ID = 'service-otp-container';

/** Name of the global object the OTP script creates (interface doc §6.1 step 3). */
export const OTP_GLOBAL = 'SERVICEOTPDIALOG';

/** One §2.1 field rule: the pattern a value must match, and the rule in words for messages. */
export interface ChargeFieldRule {
  readonly pattern: RegExp;
  /** What the value must be, e.g. "16 digits"; used in the client's and the sandbox's messages. */
  readonly rule: string;
}

const NOT_BLANK = /\S/;

/**
 * The §2.1 request fields in document order, each with its rule. Every field is a required JSON
 * string (§4 rule 1). Where §2.1 only names a kind of value, the rule is the plain reading of it:
 * "internationally formatted mobile number" is `+` and 7 to 15 digits (E.164), "valid e-mail
 * address" is `name@domain.tld`, `MM` is a month 01 to 12.
 */
export const CHARGE_FIELD_RULES = {
  merchant_reference_id: { pattern: /^[A-Za-z0-9]+$/, rule: 'letters and digits only (alphanumeric)' },
  customer_merchant_profile_id: { pattern: NOT_BLANK, rule: 'not empty' },
  amount: { pattern: AMOUNT_PATTERN, rule: 'a decimal with two places (NN.NN)' },
  customer_name: { pattern: NOT_BLANK, rule: 'not empty' },
  customer_mobile: {
    pattern: /^\+[1-9]\d{6,14}$/,
    rule: 'a mobile number in international format (+ and 7 to 15 digits)',
  },
  customer_email: { pattern: /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/, rule: 'a valid e-mail address' },
  card_number: { pattern: /^\d{16}$/, rule: '16 digits' },
  cvv: { pattern: /^\d{3}$/, rule: '3 digits' },
  expiry_year: { pattern: /^\d{2}$/, rule: '2 digits (YY)' },
  expiry_month: { pattern: /^(0[1-9]|1[0-2])$/, rule: '2 digits (MM, 01 to 12)' },
  description: { pattern: NOT_BLANK, rule: 'not empty' },
  signature: { pattern: /^[0-9a-f]{64}$/, rule: '64 lowercase hexadecimal characters (SHA-256)' },
} as const satisfies Record<string, ChargeFieldRule>;

/** A §2.1 field name. */
export type ChargeField = keyof typeof CHARGE_FIELD_RULES;

/** The §2.1 field names in document order. */
export const CHARGE_FIELDS = Object.keys(CHARGE_FIELD_RULES) as ChargeField[];

const field = (name: ChargeField) => z.string().regex(CHARGE_FIELD_RULES[name].pattern, CHARGE_FIELD_RULES[name].rule);

/**
 * Card charge request body (interface doc §2.1). `amount` is an EGP decimal string with two places,
 * sent exactly as signed (§5.2 rule 3). `card_number` and `cvv` are never logged or reported.
 */
export const ChargeRequestBody = z.object(
  Object.fromEntries(CHARGE_FIELDS.map((name) => [name, field(name)])) as Record<ChargeField, z.ZodString>,
);
export type ChargeRequestBody = Record<ChargeField, string>;

/**
 * Success body without 3-D Secure, HTTP 200 (interface doc §2.2): the customer has been charged.
 * Extra fields are tolerated.
 */
export const ChargedDirectly = z.object({
  success: z.literal(true),
  status_code: z.literal(200),
  status_description: z.string(),
  type: z.string(),
  service_reference_id: z.number().int(),
  payment_gateway_reference_id: z.string().min(1),
  merchant_reference_id: z.string(),
});
export type ChargedDirectly = z.infer<typeof ChargedDirectly>;

/**
 * Success body with 3-D Secure, HTTP 200 (interface doc §2.3): nothing is charged until the
 * customer enters the OTP in the dialog opened with `service_reference_id` (§6.1).
 */
export const ThreeDSecureRequired = z.object({
  success: z.literal(true),
  status_code: z.literal(200),
  status_description: z.string(),
  type: z.string(),
  three_d_secured: z.literal(true),
  service_reference_id: z.number().int(),
});
export type ThreeDSecureRequired = z.infer<typeof ThreeDSecureRequired>;

/** `payment_status` of the browser message (interface doc §3, §6.1). */
export const PAYMENT_STATUSES = ['PAID', 'FAILED'] as const;

/**
 * The browser message the OTP dialog posts to the page when the OTP was entered and the charge
 * settled (interface doc §6.1): exactly these six string fields.
 */
export const OtpBrowserMessage = z
  .object({
    callback_type: z.literal('order_status_update'),
    service_reference_id: z.string(),
    message_source: z.literal('service'),
    message_type: z.literal('service_browser_callback'),
    payment_gateway_reference_id: z.string(),
    payment_status: z.enum(PAYMENT_STATUSES),
  })
  .strict();
export type OtpBrowserMessage = z.infer<typeof OtpBrowserMessage>;
