/**
 * Every answer of the sandbox that the interface document does not show, in one labelled table:
 * these are OUR ASSUMPTIONS, not the real service's behaviour. The sandbox takes its texts and
 * statuses from here, and README "What the service's document does not say" lists each entry by
 * its key (a test checks that it does). What the client does with such answers is decided
 * elsewhere (`../submit/classify-outcome.ts`, `../charge/classify-charge.ts`), never from here.
 *
 * `text` is the answer's `message`/`status_description`, or the reason under `errorKey` in a §7
 * body; `:attribute` in it stands for the field's name.
 */

/** One answer the document does not show, and the sandbox's assumed version of it. */
export interface SandboxAssumption {
  /** Which of the sandbox's endpoints give it. */
  readonly endpoints: readonly ('withdrawal' | 'charge' | 'otp dialog')[];
  /** When it is given. */
  readonly when: string;
  /** HTTP status of the answer. */
  readonly status: number;
  /** The text of the answer (see the module comment). */
  readonly text: string;
  /** For an answer in the §7 layout: the key of `errors` that carries `text`. */
  readonly errorKey?: string;
  /** What the interface document says about this case. */
  readonly documentSays: string;
}

/** The sandbox's assumptions, by key. Change an answer here, and its row in the README. */
export const SANDBOX_ASSUMPTIONS = {
  unauthenticated: {
    endpoints: ['withdrawal', 'charge'],
    when: 'the Authorization header is not exactly `Bearer <token>`; nothing is created',
    status: 401,
    text: 'Unauthenticated.',
    documentSays: '§5.1 gives the header; §7 rule 2: the answer to an authentication failure is not shown',
  },
  invalidText: {
    endpoints: ['withdrawal', 'charge'],
    when: 'the `message` and `status_description` of every §7 failure',
    status: 422,
    text: 'The given data was invalid.',
    documentSays: '§7: "text saying the given data was invalid" (the wording is not shown)',
  },
  errorKeys: {
    endpoints: ['withdrawal', 'charge'],
    when: 'the keys of a §7 `errors` object: the field name, with the item path on the withdrawal endpoint',
    status: 422,
    text: 'e.g. bank_accounts.2.bank_name, mobile_wallets.0.amount, card_number, signature',
    documentSays: '§7 rule 3: the exact keys used inside `errors` are not shown',
  },
  notJson: {
    endpoints: ['withdrawal', 'charge'],
    when: 'the body is not sent as `Content-Type: application/json`',
    status: 422,
    errorKey: 'body',
    text: 'The request body must be JSON sent as Content-Type: application/json.',
    documentSays: '§4: both endpoints take a JSON body; the answer to another body is not shown',
  },
  emptyOrBadJson: {
    endpoints: ['withdrawal', 'charge'],
    when: 'the body is empty or not valid JSON',
    status: 422,
    errorKey: 'body',
    text: 'The request body must be valid JSON.',
    documentSays: '§4: both endpoints take a JSON body; the answer to an empty body is not shown',
  },
  notAnObject: {
    endpoints: ['withdrawal', 'charge'],
    when: 'the body is JSON but not an object',
    status: 422,
    errorKey: 'body',
    text: 'The request body must be a JSON object.',
    documentSays: '§2.1, §2.4 describe objects; the answer to anything else is not shown',
  },
  bodyTooLarge: {
    endpoints: ['withdrawal', 'charge'],
    when: 'the body is over the sandbox body limit (CASHOUT_SANDBOX_BODY_LIMIT_BYTES)',
    status: 413,
    errorKey: 'body',
    text: 'The request body is too large.',
    documentSays: '§8: limits are not shown',
  },
  zeroAmount: {
    endpoints: ['withdrawal', 'charge'],
    when: "an `amount` of `0.00` (the right format, but nothing to pay); under the amount's key",
    status: 422,
    text: 'The :attribute field must be greater than 0.',
    documentSays: '§2.1, §2.4: two decimal places; §8: minimum amounts are not shown',
  },
  noItems: {
    endpoints: ['withdrawal'],
    when: "neither `mobile_wallets` nor `bank_accounts` is given; under each array's key",
    status: 422,
    text: 'The :attribute field is required when :other is not present.',
    documentSays: '§2.4: "only mobile_wallets, only bank_accounts, or both"; a request with neither is not shown',
  },
  emptyItems: {
    endpoints: ['withdrawal'],
    when: "both arrays are present and empty; under each array's key",
    status: 422,
    text: 'The :attribute field must have at least 1 item when :other has none.',
    documentSays: '§2.4: a request with no item is not shown',
  },
  withdrawalCreatedText: {
    endpoints: ['withdrawal'],
    when: 'the `status_description` and `message` of the §2.5 success',
    status: 200,
    text: 'Withdrawal request created successfully',
    documentSays: '§2.5: "text saying the withdrawal request was created" (the wording is not shown)',
  },
  chargeType: {
    endpoints: ['charge'],
    when: 'the `type` of both charge answers (§2.2, §2.3)',
    status: 200,
    text: 'Credit Card Charge Request',
    documentSays: '§2.2: "fixed text identifying a credit card charge request" (the text is not shown)',
  },
  chargedText: {
    endpoints: ['charge'],
    when: 'the `status_description` of a card charged in the request (§2.2)',
    status: 200,
    text: 'The card was charged successfully.',
    documentSays: '§2.2: "text describing the outcome" (the wording is not shown)',
  },
  otpRequiredText: {
    endpoints: ['charge'],
    when: 'the `status_description` of a 3-D Secure card (§2.3)',
    status: 200,
    text: 'The card needs 3-D Secure: the customer must enter the OTP.',
    documentSays: '§2.3: "text describing the outcome" (the wording is not shown)',
  },
  signatureMismatch: {
    endpoints: ['charge'],
    when: 'the fields are valid but `signature` is not their §5.2 signature; nothing is created',
    status: 422,
    errorKey: 'signature',
    text: 'The signature does not match the request (interface doc §5.2).',
    documentSays: '§7 rule 2: the answer to a signature mismatch is not shown',
  },
  duplicateReference: {
    endpoints: ['charge'],
    when: 'a `merchant_reference_id` the sandbox has recorded before; nothing is created',
    status: 422,
    errorKey: 'merchant_reference_id',
    text: 'The merchant reference id has already been taken.',
    documentSays: '§2.1: "unique"; §7 rule 2: the answer to a duplicate merchant_reference_id is not shown',
  },
  declinedCard: {
    endpoints: ['charge'],
    when: 'a valid request for a card that is not a test card, or a test card marked `declined`',
    status: 400,
    text: 'The card was declined.',
    documentSays: '§1: staging accepts a designated test card; §7 rule 2: a failed payment is not shown',
  },
  wrongOtp: {
    endpoints: ['otp dialog'],
    when: "the OTP typed in the dialog is not the test card's: the charge settles FAILED at once",
    status: 200,
    text: 'FAILED',
    documentSays: '§6.1: the dialog reports PAID or FAILED; attempts and their limit are not shown',
  },
  tooManyAttempts: {
    endpoints: ['withdrawal', 'charge'],
    when: 'fault injection `http429` (with `Retry-After`); nothing is created',
    status: 429,
    text: 'Too Many Attempts.',
    documentSays: '§8: rate limits are not shown',
  },
  serverError: {
    endpoints: ['withdrawal', 'charge'],
    when: 'fault injection `http500` or `createThen500`, and any error of the sandbox itself',
    status: 500,
    text: 'Server Error',
    documentSays: '§7 rule 2: other statuses are not shown',
  },
  unavailable: {
    endpoints: ['withdrawal', 'charge'],
    when: 'fault injection `http503`; nothing is created',
    status: 503,
    text: 'Service Unavailable',
    documentSays: '§7 rule 2: other statuses are not shown',
  },
  notFound: {
    endpoints: ['withdrawal', 'charge', 'otp dialog'],
    when: 'any path the sandbox does not serve',
    status: 404,
    text: 'Not Found',
    documentSays: 'not shown',
  },
} as const satisfies Record<string, SandboxAssumption>;
