/**
 * The sandbox's card charge parts that need no server: the test card table (and its file), the
 * charge desk (what each card does, the OTP settling a charge, references used once), the labelled
 * assumptions table against the README, and the masking of card numbers and charge secrets.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChargeRequestBody } from '../../src/contract/charge-api.js';
import { isCashoutError } from '../../src/errors.js';
import { maskCardNumber, maskDeep, scrubCardNumbers } from '../../src/mask.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { SANDBOX_ASSUMPTIONS } from '../../src/sandbox/assumptions.js';
import { createChargeDesk } from '../../src/sandbox/charge-desk.js';
import { sandboxStaticFile } from '../../src/sandbox/otp-routes.js';
import { DEFAULT_TEST_CARDS, loadTestCardsFile, parseTestCards } from '../../src/sandbox/test-cards.js';

const README = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
const DIRECT = '9000000000000019';
const THREE_DS = '9000000000000035';

const body = (card: string, ref: string): ChargeRequestBody => ({
  merchant_reference_id: ref,
  customer_merchant_profile_id: 'cust-17',
  amount: '250.00',
  customer_name: 'Mona Said',
  customer_mobile: '+201001234567',
  customer_email: 'mona@example.com',
  card_number: card,
  cvv: '731',
  expiry_year: '29',
  expiry_month: '05',
  description: 'Order',
  signature: 'f'.repeat(64),
});

function thrown(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a throw');
}

describe('test card table', () => {
  it('the default table has a direct card, a 3-D Secure card with an OTP, and a declined card', () => {
    expect(DEFAULT_TEST_CARDS.map((c) => c.behaviour)).toEqual(['direct', 'three_d_secure', 'declined']);
    expect(DEFAULT_TEST_CARDS[1]!.otp).toMatch(/^\d{6}$/);
    expect(parseTestCards(DEFAULT_TEST_CARDS)).toEqual(DEFAULT_TEST_CARDS);
  });

  it.each([
    ['a 15-digit number', [{ number: '900000000000001', behaviour: 'direct' }], 'must be 16 digits'],
    ['a 3-D Secure card without an OTP', [{ number: THREE_DS, behaviour: 'three_d_secure' }], 'otp is required'],
    ['an OTP on a direct card', [{ number: DIRECT, behaviour: 'direct', otp: '1234' }], 'otp is required'],
    [
      'a number listed twice',
      [
        { number: DIRECT, behaviour: 'direct' },
        { number: DIRECT, behaviour: 'declined' },
      ],
      'listed twice',
    ],
    ['no card', [], 'holds no card'],
    ['an unknown behaviour', [{ number: DIRECT, behaviour: 'refund' }], 'behaviour'],
  ])('refuses %s, without echoing card numbers', (_label, table, reason) => {
    const err = thrown(() => parseTestCards(table));
    expect(isCashoutError(err, 'config_invalid')).toBe(true);
    expect(err.message).toContain(reason);
    expect(err.message).not.toMatch(/\d{15}/);
  });

  it('reads a table from a JSON file, as an array or { cards: [...] }', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cards-'));
    const file = join(dir, 'cards.json');
    const ours = { number: '1111222233334444', behaviour: 'three_d_secure', otp: '4321', label: 'ours' };
    await writeFile(file, JSON.stringify({ cards: [ours] }));
    expect(loadTestCardsFile(file)).toEqual([ours]);
    await writeFile(file, JSON.stringify([ours]));
    expect(loadTestCardsFile(file)).toEqual([ours]);
    await writeFile(file, 'not json');
    expect(thrown(() => loadTestCardsFile(file)).message).toContain('CASHOUT_SANDBOX_TEST_CARDS_FILE');
  });
});

describe('charge desk', () => {
  const [direct, otp, declined] = DEFAULT_TEST_CARDS.map((c) => c.number) as [string, string, string];

  it('direct: PAID with a gateway reference; 3-D Secure: waits; declined or unknown card: FAILED', () => {
    const desk = createChargeDesk(DEFAULT_TEST_CARDS);
    expect(desk.create(body(direct, 'A1'))).toMatchObject({
      outcome: 'charged',
      charge: { status: 'PAID', payment_gateway_reference_id: '700000001' },
    });
    expect(desk.create(body(otp, 'A2'))).toMatchObject({
      outcome: 'otp_required',
      charge: { status: 'AWAITING_OTP', three_d_secured: true },
    });
    expect(desk.create(body(declined, 'A3'))).toMatchObject({ outcome: 'declined', charge: { status: 'FAILED' } });
    const unknownCard = desk.create(body('1234123412341234', 'A4'));
    expect(unknownCard).toMatchObject({ outcome: 'declined', charge: { status: 'FAILED' } });
    expect(desk.list().map((c) => c.service_reference_id)).toEqual([1, 2, 3, 4]);
    const kept = JSON.stringify(desk.list());
    for (const card of [direct, otp, declined, '1234123412341234', '731']) expect(kept).not.toContain(card);
  });

  it('a merchant_reference_id is used once', () => {
    const desk = createChargeDesk(DEFAULT_TEST_CARDS);
    expect(desk.create(body(direct, 'SAME')).outcome).toBe('charged');
    expect(desk.create(body(otp, 'SAME'))).toEqual({ outcome: 'duplicate' });
    expect(desk.list()).toHaveLength(1);
  });

  it('the OTP settles a 3-D Secure charge once: the right one PAID, any other FAILED, with the §6.1 message', () => {
    const desk = createChargeDesk(DEFAULT_TEST_CARDS);
    desk.create(body(otp, 'B1'));
    desk.create(body(otp, 'B2'));
    desk.create(body(direct, 'B3')); // charged at once: gateway reference 700000001
    expect(desk.settle(1, DEFAULT_TEST_CARDS[1]!.otp!)).toEqual({
      ok: true,
      message: {
        callback_type: 'order_status_update',
        service_reference_id: '1',
        message_source: 'service',
        message_type: 'service_browser_callback',
        payment_gateway_reference_id: '700000002',
        payment_status: 'PAID',
      },
      charge: expect.objectContaining({ status: 'PAID' }),
    });
    expect(desk.settle(2, '000000')).toMatchObject({ ok: true, message: { payment_status: 'FAILED' } });
    expect(desk.settle(1, DEFAULT_TEST_CARDS[1]!.otp!)).toEqual({ ok: false, reason: 'not_awaiting_otp' });
    expect(desk.settle(3, '123456')).toEqual({ ok: false, reason: 'not_awaiting_otp' });
    expect(desk.settle(9, '123456')).toEqual({ ok: false, reason: 'not_found' });
    desk.reset();
    expect(desk.list()).toEqual([]);
  });
});

describe('the assumptions table and the README', () => {
  it('the README lists every assumption of the sandbox by its key', () => {
    const missing = Object.keys(SANDBOX_ASSUMPTIONS).filter((key) => !README.includes(`\`${key}\``));
    expect(missing).toEqual([]);
  });

  it('every assumption says what the document says about its case', () => {
    for (const a of Object.values(SANDBOX_ASSUMPTIONS)) expect(a.documentSays).toMatch(/not shown/);
  });

  it('the README holds the page helper exactly as the sandbox serves it', () => {
    const helper = sandboxStaticFile('page-helper.js');
    const fn = helper.slice(helper.indexOf('function listenForServicePayment'));
    expect(fn.length).toBeGreaterThan(100);
    expect(README).toContain(fn.trimEnd());
  });
});

describe('masking card data', () => {
  it.each([
    ['9000000000000019', '****0019'],
    ['123', '****'],
  ])('maskCardNumber(%s) = %s', (value, expected) => {
    expect(maskCardNumber(value)).toBe(expected);
  });

  it('scrubCardNumbers masks 12 to 19 digits, grouped or not, and leaves shorter numbers', () => {
    const text = 'card 9000000000000019, 9000 0000 0000 0035 or 9000-0000-0000-0050; order 123456; +201001234567';
    expect(scrubCardNumbers(text)).toBe('card ****0019, ****0035 or ****0050; order 123456; +****4567');
  });

  it('maskDeep shows card numbers as their last four digits and removes the CVV, hash key and merchant code', () => {
    const charge = { card_number: DIRECT, cvv: '731', hash_key: 'k', merchantCode: 'm', hashKey: 'h' };
    const hidden = '[redacted]';
    expect(maskDeep({ charge })).toEqual({
      charge: { card_number: '****0019', cvv: hidden, hash_key: hidden, merchantCode: hidden, hashKey: hidden },
    });
  });
});
