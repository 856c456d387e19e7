/**
 * The never-pay-twice table: what one POST's result means for the money. Pure; one row of tests
 * per case (test/submit/classify-outcome.test.ts).
 *
 * Proven "nothing was created" — and so safe to send again — are only:
 *  - an error raised before the request was written (connection refused, DNS failure, connect
 *    timeout, TLS failure);
 *  - HTTP 422, which the interface doc §7 rule 1 says creates nothing;
 *  - HTTP 200 whose body is the §7 failure with `status_code: 422`: §7 says clients check the
 *    body's `status_code`, so such an answer is the same rejection (on both endpoints).
 * Everything else that is not a §2.5 success is an unknown outcome: the request may or may not have
 * been created, and it is parked for a person, never sent again by itself.
 *
 * The document does not show 401, 403 or 429 (§7 rule 2). The assumptions made about them are the
 * `UNDOCUMENTED_STATUS_ASSUMPTIONS` table below, the one place to change them.
 */
import { ValidationFailure, WithdrawalCreated } from '../contract/withdrawal-api.js';
import type { HttpResult } from './payment-client.js';

/**
 * A refusal that created nothing (interface doc §7 rule 1): HTTP 422, or HTTP 200 with the §7 body
 * whose `status_code` is 422. `errors` maps each §7 key to its reason texts.
 */
export interface Rejected {
  readonly kind: 'rejected';
  readonly httpStatus: 200 | 422;
  readonly message: string;
  readonly errors: Readonly<Record<string, readonly string[]>>;
}

/** What a result means. */
export type Classified =
  | { readonly kind: 'created'; readonly httpStatus: number; readonly message: string }
  | Rejected
  | {
      readonly kind: 'not_sent';
      readonly reason: 'connect' | 'rate_limited' | 'auth';
      readonly httpStatus?: number;
      readonly retryAfterMs?: number;
      readonly message: string;
    }
  | { readonly kind: 'unknown'; readonly httpStatus?: number; readonly message: string };

/**
 * Status codes the interface doc does not show, and what we assume they mean, on both endpoints
 * (cashouts and card charges). Both assumptions are that such an answer comes before anything is
 * created (an auth layer or a rate limiter in front of the service). Change them here if the
 * service says otherwise; any status not listed here, 200 or 422 is an unknown outcome.
 */
export const UNDOCUMENTED_STATUS_ASSUMPTIONS: Readonly<Record<number, 'auth' | 'rate_limited'>> = {
  401: 'auth',
  403: 'auth',
  429: 'rate_limited',
};

/** Error codes raised before any byte of the request was written: provably not sent. */
export const NOT_SENT_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'EPROTO',
]);

/** Default wait after a 429 without a usable Retry-After, in milliseconds. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

/** Parses Retry-After (seconds or an HTTP date) into milliseconds from `now`, capped at 10 minutes. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number {
  if (value === undefined) return DEFAULT_RETRY_AFTER_MS;
  const cap = 600_000;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.min(cap, Math.ceil(Number(v) * 1000));
  if (!/[A-Za-z]/.test(v)) return DEFAULT_RETRY_AFTER_MS;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(cap, Math.max(0, at - now));
}

/** Parses a response body as JSON; undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The §7 failure in a parsed body, as a rejection answered with `httpStatus`; undefined when the
 * body is not the §7 layout with `status_code: 422`. Each `errors` value becomes a list of texts.
 */
export function rejectionIn(body: unknown, httpStatus: 200 | 422): Rejected | undefined {
  const failure = ValidationFailure.safeParse(body);
  if (!failure.success) return undefined;
  const errors: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(failure.data.errors)) errors[k] = Array.isArray(v) ? v : [v];
  return { kind: 'rejected', httpStatus, message: failure.data.message, errors };
}

/** Classifies one POST result of the withdrawal endpoint (see the module comment for the rules). */
export function classifyOutcome(result: HttpResult): Classified {
  if (result.kind === 'response' && result.status === 200) {
    const json = parseJson(result.body);
    const ok = WithdrawalCreated.safeParse(json);
    if (ok.success) return { kind: 'created', httpStatus: 200, message: ok.data.message };
    return (
      rejectionIn(json, 200) ?? {
        kind: 'unknown',
        httpStatus: 200,
        message:
          'the service answered 200 with a body that is not the documented success body; ' +
          'it may or may not have been created',
      }
    );
  }
  return classifyNotOk(result);
}

/**
 * What any result but an HTTP 200 means, on either endpoint (the 200 bodies differ per endpoint):
 * an error before sending is not_sent, after sending unknown; 422 is rejected; 401, 403 and 429
 * follow `UNDOCUMENTED_STATUS_ASSUMPTIONS`; any other status is unknown.
 */
export function classifyNotOk(result: HttpResult): Exclude<Classified, { kind: 'created' }> {
  if (result.kind === 'error') {
    if (NOT_SENT_ERROR_CODES.has(result.code)) {
      const message = `the service could not be reached (${result.code}); nothing was sent`;
      return { kind: 'not_sent', reason: 'connect', message };
    }
    return {
      kind: 'unknown',
      message: `no answer from the service after the request was sent (${result.code}); it may or may not have been created`,
    };
  }
  const { status } = result;
  if (status === 422) {
    return (
      rejectionIn(parseJson(result.body), 422) ?? {
        kind: 'rejected',
        httpStatus: 422,
        message: 'the service refused the request as invalid (HTTP 422) without saying why',
        errors: {},
      }
    );
  }
  const assumed = UNDOCUMENTED_STATUS_ASSUMPTIONS[status];
  if (assumed === 'auth') {
    const message = `the access token was refused (HTTP ${status}); no further requests of this batch are sent`;
    return { kind: 'not_sent', reason: 'auth', httpStatus: status, message };
  }
  if (assumed === 'rate_limited') {
    return {
      kind: 'not_sent',
      reason: 'rate_limited',
      httpStatus: status,
      retryAfterMs: parseRetryAfter(result.retryAfter),
      message: `the service asked to slow down (HTTP ${status}); the request is sent again later`,
    };
  }
  const message = `the service answered HTTP ${status}; the request may or may not have been created`;
  return { kind: 'unknown', httpStatus: status, message };
}

/** Where a §7 `errors` key points: `mobile_wallets.2.mobile_number` → wallet item 2, field mobile_number. */
export function errorKeyTarget(
  key: string,
): { array: 'mobile_wallets' | 'bank_accounts'; index: number; field: string } | undefined {
  const m = /^(mobile_wallets|bank_accounts)\.(\d+)(?:\.(.+))?$/.exec(key);
  if (!m) return undefined;
  return { array: m[1] as 'mobile_wallets' | 'bank_accounts', index: Number(m[2]), field: m[3] ?? '' };
}
