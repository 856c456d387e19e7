/**
 * The never-pay-twice table (src/submit/classify-outcome.ts): what one POST's result means for the
 * money. Only "not_sent" and "rejected" may ever lead to sending the same items again, so every row
 * here pins down which side of that line a result falls on.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  classifyOutcome,
  errorKeyTarget,
  NOT_SENT_ERROR_CODES,
  parseRetryAfter,
  UNDOCUMENTED_STATUS_ASSUMPTIONS,
} from '../../src/submit/classify-outcome.js';
import type { HttpResult } from '../../src/submit/payment-client.js';

const error = (code: string): HttpResult => ({ kind: 'error', code, message: `boom ${code}` });
const response = (status: number, body: string, retryAfter?: string): HttpResult => ({
  kind: 'response',
  status,
  body,
  ...(retryAfter === undefined ? {} : { retryAfter }),
});

/** Interface doc §2.5. */
const CREATED_BODY = JSON.stringify({
  success: true,
  status_code: 200,
  status_description: 'Withdrawal request created successfully',
  message: 'Withdrawal request created successfully',
});

/** Interface doc §7, with `errors` values in both shapes seen in the wild. */
const failureBody = (errors: Record<string, string | string[]>) =>
  JSON.stringify({
    success: false,
    message: 'The given data was invalid.',
    status_code: 422,
    status_description: 'The given data was invalid.',
    errors,
  });

describe('classifyOutcome: transport errors', () => {
  it.each([
    ['ECONNREFUSED', 'connection refused'],
    ['ENOTFOUND', 'DNS name not found'],
    ['EAI_AGAIN', 'DNS temporary failure'],
    ['UND_ERR_CONNECT_TIMEOUT', 'connect timeout'],
    ['CERT_HAS_EXPIRED', 'TLS certificate expired'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'TLS certificate for another host'],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'TLS certificate chain not trusted'],
  ])('%s (%s) happens before the request is written: not_sent, reason connect', (code) => {
    const out = classifyOutcome(error(code));
    expect(out).toMatchObject({ kind: 'not_sent', reason: 'connect' });
    expect(out.message).toContain(code);
  });

  it.each([
    ['UND_ERR_HEADERS_TIMEOUT', 'no response headers in time'],
    ['UND_ERR_BODY_TIMEOUT', 'response body stalled'],
    ['UND_ERR_SOCKET', 'socket closed mid-exchange'],
    ['ECONNRESET', 'connection reset'],
    ['EPIPE', 'broken pipe while writing'],
    ['AbortError', 'request aborted'],
    ['UND_ERR_ABORTED', 'undici abort'],
    ['ERROR', 'error without a code'],
  ])('%s (%s) may come after the service got the request: unknown, never resent', (code) => {
    const out = classifyOutcome(error(code));
    expect(out.kind).toBe('unknown');
    expect(out).not.toHaveProperty('reason');
    expect(out.message).toContain(code);
  });

  it.each([...NOT_SENT_ERROR_CODES])('every listed not-sent code (%s) is classified not_sent/connect', (code) => {
    expect(classifyOutcome(error(code))).toMatchObject({ kind: 'not_sent', reason: 'connect' });
  });
});

describe('classifyOutcome: HTTP 200', () => {
  it('the documented §2.5 body is created, carrying the service message', () => {
    expect(classifyOutcome(response(200, CREATED_BODY))).toEqual({
      kind: 'created',
      httpStatus: 200,
      message: 'Withdrawal request created successfully',
    });
  });

  it('the §2.5 body with extra fields is still created', () => {
    const body = JSON.stringify({ ...JSON.parse(CREATED_BODY), id: 991 });
    expect(classifyOutcome(response(200, body)).kind).toBe('created');
  });

  it.each([
    ['a body that is not the §2.5 layout', '{"ok":1}'],
    ['truncated JSON', CREATED_BODY.slice(0, CREATED_BODY.length - 10)],
    ['an empty body', ''],
    ['success:false', JSON.stringify({ ...JSON.parse(CREATED_BODY), success: false })],
    ['status_code other than 200', JSON.stringify({ ...JSON.parse(CREATED_BODY), status_code: 201 })],
    ['an HTML page', '<html><body>OK</body></html>'],
    ['JSON null', 'null'],
  ])('200 with %s is unknown (may or may not be created)', (_label, body) => {
    expect(classifyOutcome(response(200, body))).toMatchObject({ kind: 'unknown', httpStatus: 200 });
  });

  it('200 whose body is the §7 failure with status_code 422 is rejected: nothing created (§7 clients check it)', () => {
    const body = failureBody({ 'bank_accounts.0.bank_name': 'The selected bank name is invalid.' });
    expect(classifyOutcome(response(200, body))).toEqual({
      kind: 'rejected',
      httpStatus: 200,
      message: 'The given data was invalid.',
      errors: { 'bank_accounts.0.bank_name': ['The selected bank name is invalid.'] },
    });
  });

  it.each([
    ['status_code 400', { status_code: 400 }],
    ['success true', { success: true }],
    ['no errors object', { errors: undefined }],
  ])('200 with a §7-like body but %s is unknown, not a rejection', (_label, change) => {
    const body = JSON.stringify({ ...JSON.parse(failureBody({ amount: 'x' })), ...change });
    expect(classifyOutcome(response(200, body))).toMatchObject({ kind: 'unknown', httpStatus: 200 });
  });
});

describe('classifyOutcome: HTTP 422 (nothing created, §7 rule 1)', () => {
  it.each([
    [
      'string values',
      { 'mobile_wallets.0.mobile_number': 'The mobile number is invalid.', amount: 'The amount is required.' },
      { 'mobile_wallets.0.mobile_number': ['The mobile number is invalid.'], amount: ['The amount is required.'] },
    ],
    [
      'array values',
      { 'bank_accounts.1.bank_name': ['The selected bank name is invalid.', 'Second reason.'] },
      { 'bank_accounts.1.bank_name': ['The selected bank name is invalid.', 'Second reason.'] },
    ],
    ['mixed string and array values', { a: 'one', b: ['two', 'three'] }, { a: ['one'], b: ['two', 'three'] }],
  ])('the §7 body with %s is rejected, errors normalised to arrays', (_label, errors, expected) => {
    expect(classifyOutcome(response(422, failureBody(errors)))).toEqual({
      kind: 'rejected',
      httpStatus: 422,
      message: 'The given data was invalid.',
      errors: expected,
    });
  });

  it.each([
    ['garbage text', 'Unprocessable'],
    ['empty body', ''],
    ['JSON without errors', '{"message":"nope"}'],
    ['truncated §7 body', failureBody({ amount: 'x' }).slice(0, 30)],
  ])('422 with %s is still rejected, with no row errors', (_label, body) => {
    const out = classifyOutcome(response(422, body));
    expect(out).toMatchObject({ kind: 'rejected', httpStatus: 422, errors: {} });
    expect(out.message).toMatch(/422/);
  });
});

describe('classifyOutcome: undocumented statuses', () => {
  it.each([401, 403])('%i means the access token was refused: not_sent, reason auth', (status) => {
    const out = classifyOutcome(response(status, '{"message":"Unauthenticated."}'));
    expect(out).toMatchObject({ kind: 'not_sent', reason: 'auth', httpStatus: status });
    expect(out.message).toMatch(/access token was refused/);
    expect(out.message).toContain(String(status));
  });

  describe('429', () => {
    const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
    beforeEach(() => {
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(NOW);
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it.each([
      ['Retry-After "3" (seconds)', '3', 3_000],
      ['Retry-After as an HTTP-date 7 s ahead', new Date(NOW + 7_000).toUTCString(), 7_000],
      ['no Retry-After header (default)', undefined, 1_000],
      ['an unreadable Retry-After (default)', 'soon', 1_000],
      ['Retry-After far in the future (capped at 10 min)', '86400', 600_000],
    ])('with %s is not_sent/rate_limited and waits %s', (_label, header, waitMs) => {
      expect(classifyOutcome(response(429, '', header))).toEqual({
        kind: 'not_sent',
        reason: 'rate_limited',
        httpStatus: 429,
        retryAfterMs: waitMs,
        message: expect.stringContaining('429'),
      });
    });
  });

  it.each([500, 502, 503, 504, 404, 400, 201, 302, 301, 409, 202, 204])(
    'HTTP %i may or may not have created the request: unknown',
    (status) => {
      const out = classifyOutcome(response(status, CREATED_BODY));
      expect(out).toMatchObject({ kind: 'unknown', httpStatus: status });
      expect(out.message).toContain(String(status));
    },
  );

  it('the assumption table covers exactly 401, 403 (auth) and 429 (rate_limited)', () => {
    expect(UNDOCUMENTED_STATUS_ASSUMPTIONS).toEqual({ 401: 'auth', 403: 'auth', 429: 'rate_limited' });
  });
});

describe('parseRetryAfter', () => {
  const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);
  it.each([
    ['undefined', undefined, 1_000],
    ['"0"', '0', 0],
    ['"3"', '3', 3_000],
    ['" 5 " (whitespace trimmed)', ' 5 ', 5_000],
    ['"600" (exactly the cap)', '600', 600_000],
    ['"601" (over the cap)', '601', 600_000],
    ['a huge number', '99999999999999999999', 600_000],
    ['an HTTP-date 30 s ahead', new Date(NOW + 30_000).toUTCString(), 30_000],
    ['an HTTP-date one hour ahead (capped)', new Date(NOW + 3_600_000).toUTCString(), 600_000],
    ['an HTTP-date in the past', new Date(NOW - 60_000).toUTCString(), 0],
    ['garbage', 'later please', 1_000],
    ['empty string', '', 1_000],
    ['"3.5" (fractional seconds, rounded up)', '3.5', 3_500],
    ['"-1" (negative: not a delay)', '-1', 1_000],
  ])('%s → %i ms', (_label, value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });
});

describe('errorKeyTarget', () => {
  it.each([
    ['bank_accounts.2.bank_name', { array: 'bank_accounts', index: 2, field: 'bank_name' }],
    ['mobile_wallets.0.mobile_number', { array: 'mobile_wallets', index: 0, field: 'mobile_number' }],
    ['bank_accounts.10.number', { array: 'bank_accounts', index: 10, field: 'number' }],
    ['mobile_wallets.0', { array: 'mobile_wallets', index: 0, field: '' }],
    ['amount', undefined],
    ['mobile_wallets', undefined],
    ['bank_accounts.x.number', undefined],
    ['bank_accounts.-1.number', undefined],
    ['cards.0.number', undefined],
    ['', undefined],
  ])('%j → %j', (key, expected) => {
    expect(errorKeyTarget(key)).toEqual(expected);
  });
});
