/**
 * What one card charge POST came to (src/charge/classify-charge.ts): which success variant came back
 * (§2.2 charged, §2.3 OTP needed), the §7 rejection (HTTP 422, or a 200 whose body is the §7 failure),
 * and everything else as the cashout side's table says: not sent only when proven, else unknown.
 */
import { describe, expect, it } from 'vitest';
import { classifyCharge } from '../../src/charge/classify-charge.js';
import type { HttpResult } from '../../src/submit/service-http.js';

const response = (status: number, body: unknown): HttpResult => ({
  kind: 'response',
  status,
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** Interface doc §2.2. */
const CHARGED = {
  success: true,
  status_code: 200,
  status_description: 'Charged.',
  type: 'Credit Card Charge Request',
  service_reference_id: 1000242,
  payment_gateway_reference_id: '971498564',
  merchant_reference_id: 'ORDER1001',
};
/** Interface doc §2.3. */
const OTP = {
  success: true,
  status_code: 200,
  status_description: 'OTP needed.',
  type: 'Credit Card Charge Request',
  three_d_secured: true,
  service_reference_id: 1000243,
};
/** Interface doc §7. */
const FAILURE = {
  success: false,
  message: 'The given data was invalid.',
  status_code: 422,
  status_description: 'The given data was invalid.',
  errors: { card_number: 'The card_number field must be 16 digits.' },
};

describe('classifyCharge: HTTP 200', () => {
  it('§2.2: the card was charged, with the gateway reference', () => {
    expect(classifyCharge(response(200, CHARGED))).toEqual({
      kind: 'charged',
      httpStatus: 200,
      serviceReferenceId: 1000242,
      paymentGatewayReferenceId: '971498564',
      merchantReferenceId: 'ORDER1001',
      statusDescription: 'Charged.',
      type: 'Credit Card Charge Request',
    });
  });

  it('§2.2 with three_d_secured false (as some clients default it) is still charged', () => {
    expect(classifyCharge(response(200, { ...CHARGED, three_d_secured: false })).kind).toBe('charged');
  });

  it('§2.3: three_d_secured true means the OTP is needed, with the service reference', () => {
    expect(classifyCharge(response(200, OTP))).toEqual({
      kind: 'otp_required',
      httpStatus: 200,
      serviceReferenceId: 1000243,
      statusDescription: 'OTP needed.',
      type: 'Credit Card Charge Request',
    });
  });

  it('three_d_secured true decides even with a gateway reference (§2.3: told apart by three_d_secured)', () => {
    expect(classifyCharge(response(200, { ...CHARGED, three_d_secured: true })).kind).toBe('otp_required');
  });

  it('a 200 whose body is the §7 failure with status_code 422 is rejected: nothing created', () => {
    expect(classifyCharge(response(200, FAILURE))).toEqual({
      kind: 'rejected',
      httpStatus: 200,
      message: 'The given data was invalid.',
      errors: { card_number: ['The card_number field must be 16 digits.'] },
    });
  });

  it.each([
    ['no gateway reference and no three_d_secured', { ...CHARGED, payment_gateway_reference_id: undefined }],
    ['three_d_secured without a service reference', { ...OTP, service_reference_id: undefined }],
    ['a service reference as a string', { ...OTP, service_reference_id: '1000243' }],
    ['status_code 200 as a string', { ...CHARGED, status_code: '200' }],
    ['success false with status_code 200', { ...CHARGED, success: false }],
    ['a §7-like body with status_code 400', { ...FAILURE, status_code: 400 }],
    ['truncated JSON', JSON.stringify(CHARGED).slice(0, 40)],
    ['an empty body', ''],
  ])('200 with %s is an unknown outcome', (_label, body) => {
    const out = classifyCharge(response(200, body));
    expect(out).toMatchObject({ kind: 'unknown', httpStatus: 200 });
    expect(out.kind === 'unknown' && out.message).toMatch(/may or may not have been charged/);
  });
});

describe('classifyCharge: other answers', () => {
  it('422 with the §7 body is rejected', () => {
    expect(classifyCharge(response(422, FAILURE))).toMatchObject({
      kind: 'rejected',
      httpStatus: 422,
      errors: { card_number: [expect.any(String)] },
    });
  });

  it('the service texts of a rejection never carry a card number', () => {
    const errors = { card_number: 'Card 9000000000000019 is not valid.' };
    const out = classifyCharge(response(422, { ...FAILURE, errors }));
    expect(JSON.stringify(out)).not.toContain('9000000000000019');
    expect(JSON.stringify(out)).toContain('****0019');
  });

  it.each([401, 403])('%i: the token was refused, not charged (the cashout side assumption)', (status) => {
    expect(classifyCharge(response(status, { message: 'Unauthenticated.' }))).toEqual({
      kind: 'not_sent',
      reason: 'auth',
      httpStatus: status,
      message: `the access token was refused (HTTP ${status}); the card was not charged`,
    });
  });

  it('429: not charged, to be tried later by a person', () => {
    const out = classifyCharge(response(429, ''));
    expect(out).toMatchObject({ kind: 'not_sent', reason: 'rate_limited', httpStatus: 429 });
  });

  it.each([400, 402, 500, 503, 201])('HTTP %i is unknown, with the service text (card numbers masked)', (status) => {
    const out = classifyCharge(response(status, { status_description: 'Declined for card 9000 0000 0000 0050.' }));
    expect(out).toMatchObject({ kind: 'unknown', httpStatus: status });
    const message = out.kind === 'unknown' ? out.message : '';
    expect(message).toContain(`HTTP ${status}`);
    expect(message).toContain('****0050');
    expect(message).not.toContain('9000 0000 0000 0050');
  });

  it('a connection refused before sending: not sent', () => {
    const out = classifyCharge({ kind: 'error', code: 'ECONNREFUSED', message: 'refused' });
    expect(out).toMatchObject({ kind: 'not_sent', reason: 'connect' });
  });

  const afterSending = ['UND_ERR_HEADERS_TIMEOUT', 'ECONNRESET', 'UND_ERR_SOCKET'];
  it.each(afterSending)('%s after sending: unknown, never sent again', (code) => {
    const out = classifyCharge({ kind: 'error', code, message: 'x' });
    expect(out.kind).toBe('unknown');
    expect(out.kind === 'unknown' && out.message).toContain(code);
  });
});
