/**
 * What one card charge POST came to (interface doc §2.2, §2.3, §7), as data. Pure; tested row by row
 * (test/charge/classify-charge.test.ts).
 *
 * - HTTP 200 with `three_d_secured: true` and a `service_reference_id` (§2.3): the customer must
 *   enter the OTP in the dialog (§6.1); nothing is charged yet. §2.3 says a client tells the
 *   variants apart by whether `three_d_secured` is present and true, so it is checked first.
 * - HTTP 200 with the §2.2 body (a `payment_gateway_reference_id`): the customer has been charged.
 * - HTTP 422, or HTTP 200 whose body is the §7 failure with `status_code: 422`: rejected, nothing
 *   created (§7 rule 1).
 * - Every other answer, and every error, follows the cashout side's table (`classifyNotOk` in
 *   `../submit/classify-outcome.ts`, with its `UNDOCUMENTED_STATUS_ASSUMPTIONS`): not sent when it
 *   provably never reached the service or was refused before anything was created, otherwise an
 *   unknown outcome: the card may or may not have been charged.
 * A charge is never sent again by itself, whatever the outcome.
 */
import { ChargedDirectly, ThreeDSecureRequired } from '../contract/charge-api.js';
import { scrubCardNumbers } from '../mask.js';
import { classifyNotOk, parseJson, rejectionIn, type Rejected } from '../submit/classify-outcome.js';
import type { HttpResult } from '../submit/service-http.js';

/** The customer has been charged in the request (interface doc §2.2). */
export interface Charged {
  readonly kind: 'charged';
  readonly httpStatus: 200;
  /** The service's own reference of the charge (an integer). */
  readonly serviceReferenceId: number;
  readonly paymentGatewayReferenceId: string;
  readonly merchantReferenceId: string;
  readonly statusDescription: string;
  /** The §2.2 `type` text. */
  readonly type: string;
}

/** 3-D Secure: the customer must enter the OTP in the dialog opened with `serviceReferenceId` (§2.3, §6.1). */
export interface OtpRequired {
  readonly kind: 'otp_required';
  readonly httpStatus: 200;
  readonly serviceReferenceId: number;
  readonly statusDescription: string;
  readonly type: string;
}

/** The request provably never reached the service, or was refused before anything was created. */
export interface ChargeNotSent {
  readonly kind: 'not_sent';
  readonly reason: 'connect' | 'auth' | 'rate_limited';
  readonly httpStatus?: number;
  readonly message: string;
}

/** No valid answer after the request was sent: the card may or may not have been charged. */
export interface ChargeUnknown {
  readonly kind: 'unknown';
  readonly httpStatus?: number;
  readonly message: string;
}

/** What a charge came to. `rejected` is the §7 refusal (nothing created). */
export type ChargeResult = Charged | OtpRequired | Rejected | ChargeNotSent | ChargeUnknown;

const UNKNOWN_ADVICE =
  'the card may or may not have been charged; ' +
  'look the merchant reference up in the merchant dashboard before charging again';

/** A short text the service gave with an unexpected answer, if any (card-like numbers masked). */
function serviceText(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const o = body as Record<string, unknown>;
  const text = [o.status_description, o.message].find((v): v is string => typeof v === 'string' && v.trim() !== '');
  return text === undefined ? undefined : scrubCardNumbers(text.trim().slice(0, 200));
}

/** A rejection with anything card-like in the service's texts masked (they come from outside). */
function scrubbed(r: Rejected): Rejected {
  const errors: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(r.errors)) errors[scrubCardNumbers(k)] = v.map(scrubCardNumbers);
  return { ...r, message: scrubCardNumbers(r.message), errors };
}

/** Classifies one charge POST result (see the module comment for the rules). */
export function classifyCharge(result: HttpResult): ChargeResult {
  if (result.kind === 'response' && result.status === 200) {
    const json = parseJson(result.body);
    const otp = ThreeDSecureRequired.safeParse(json);
    if (otp.success) {
      const d = otp.data;
      return {
        kind: 'otp_required',
        httpStatus: 200,
        serviceReferenceId: d.service_reference_id,
        statusDescription: d.status_description,
        type: d.type,
      };
    }
    const charged = ChargedDirectly.safeParse(json);
    if (charged.success) {
      const d = charged.data;
      return {
        kind: 'charged',
        httpStatus: 200,
        serviceReferenceId: d.service_reference_id,
        paymentGatewayReferenceId: d.payment_gateway_reference_id,
        merchantReferenceId: d.merchant_reference_id,
        statusDescription: d.status_description,
        type: d.type,
      };
    }
    const rejected = rejectionIn(json, 200);
    return (
      (rejected && scrubbed(rejected)) ?? {
        kind: 'unknown',
        httpStatus: 200,
        message: `the service answered 200 with a body that is neither documented charge answer; ${UNKNOWN_ADVICE}`,
      }
    );
  }
  const other = classifyNotOk(result);
  switch (other.kind) {
    case 'rejected':
      return scrubbed(other);
    case 'not_sent': {
      const { retryAfterMs: _wait, ...rest } = other;
      const message =
        other.reason === 'connect'
          ? other.message
          : other.reason === 'auth'
            ? `the access token was refused (HTTP ${other.httpStatus}); the card was not charged`
            : `the service asked to slow down (HTTP ${other.httpStatus}); the card was not charged, try again later`;
      return { ...rest, message };
    }
    case 'unknown': {
      if (result.kind === 'error') {
        const message = `no answer from the service after the request was sent (${result.code}); ${UNKNOWN_ADVICE}`;
        return { kind: 'unknown', message };
      }
      const said = serviceText(parseJson(result.body));
      const what = `the service answered HTTP ${result.status}${said ? ` ("${said}")` : ''}`;
      return { kind: 'unknown', httpStatus: result.status, message: `${what}; ${UNKNOWN_ADVICE}` };
    }
  }
}
