/**
 * After a 422 (interface doc §7): which rows the service named (`mapRejection`) and which items are
 * sent again as a new request (`remainderOf`). A wrong mapping blames the wrong person's row or,
 * worse, resends an item the service refused.
 */
import { describe, expect, it } from 'vitest';
import type { BankAccountItem, MobileWalletItem } from '../../src/contract/withdrawal-api.js';
import type { LedgerRequest } from '../../src/ledger/index.js';
import { mapRejection, remainderOf } from '../../src/submit/submit-request.js';

const wallet = (amount: string, mobile: string): MobileWalletItem => ({
  amount,
  type: 'TRANSFER',
  holder_name: `Holder ${mobile}`,
  mobile_number: mobile,
  description: `Payout to ${mobile}`,
});
const bank = (amount: string, number: string): BankAccountItem => ({
  amount,
  type: 'TRANSFER',
  holder_name: `Holder ${number}`,
  bank_name: 'National Bank of Egypt',
  bank_address: 'Cairo',
  number,
  description: `Payout to ${number}`,
});

/** Wallet items come from file lines 2 and 5, bank items from lines 3 and 4. */
const W2 = wallet('150.00', '+201001234562');
const W5 = wallet('0.10', '+201001234565');
const B3 = bank('1500.25', 'EG380019000500000000263180003');
const B4 = bank('0.20', 'EG380019000500000000263180004');

const REQUEST: LedgerRequest = {
  batchId: '0123456789abcdef',
  seq: 1,
  state: 'sending',
  body: { mobile_wallets: [W2, W5], bank_accounts: [B3, B4] },
  walletLines: [2, 5],
  bankLines: [3, 4],
  references: { '2': 'R-2', '4': 'R-4' },
  payees: '2\tr:R-2\n5\tf:00000000000000000000000000000005#1\n3\tf:00000000000000000000000000000003#1\n4\tr:R-4\n',
  totalPiasters: 15000n + 10n + 150025n + 20n,
  attempts: 1,
};

describe('mapRejection', () => {
  it.each([
    [
      'bank_accounts.1.bank_name names bank item 1 (line 4), prefixed by its column',
      { 'bank_accounts.1.bank_name': ['The selected bank name is invalid.'] },
      { 4: ['bank_name: The selected bank name is invalid.'] },
      [],
    ],
    [
      'bank_accounts.0.number is reported under the CSV column account_number (line 3)',
      { 'bank_accounts.0.number': ['The number is invalid.'] },
      { 3: ['account_number: The number is invalid.'] },
      [],
    ],
    [
      'mobile_wallets.1.mobile_number names wallet item 1 (line 5), not bank item 1',
      { 'mobile_wallets.1.mobile_number': ['The mobile number is invalid.'] },
      { 5: ['mobile_number: The mobile number is invalid.'] },
      [],
    ],
    [
      'mobile_wallets.0 without a field names line 2 under the array name',
      { 'mobile_wallets.0': ['The item is invalid.'] },
      { 2: ['mobile_wallets: The item is invalid.'] },
      [],
    ],
    [
      'a bare array key (mobile_wallets) names no row: general',
      { mobile_wallets: ['Too many items.'] },
      {},
      ['mobile_wallets: Too many items.'],
    ],
    ['an unknown key (foo) names no row: general', { foo: ['Bad.'] }, {}, ['foo: Bad.']],
    [
      'an index beyond the bank array names no row: general',
      { 'bank_accounts.2.bank_name': ['Invalid.'] },
      {},
      ['bank_accounts.2.bank_name: Invalid.'],
    ],
    [
      'an index beyond the wallet array names no row: general',
      { 'mobile_wallets.7.amount': ['Invalid.'] },
      {},
      ['mobile_wallets.7.amount: Invalid.'],
    ],
    [
      'several reasons for one row all land on that row, in order',
      { 'bank_accounts.1.bank_name': ['First.'], 'bank_accounts.1.number': ['Second.', 'Third.'] },
      { 4: ['bank_name: First.', 'account_number: Second.', 'account_number: Third.'] },
      [],
    ],
    [
      'named and general errors together are kept apart',
      { 'mobile_wallets.0.amount': ['Too small.'], amount: ['Total too large.'] },
      { 2: ['amount: Too small.'] },
      ['amount: Total too large.'],
    ],
    ['no errors: nothing named, nothing general', {}, {}, []],
  ])('%s', (_label, errors, rowErrors, general) => {
    expect(mapRejection(REQUEST, errors)).toEqual({ rowErrors, general });
  });
});

describe('remainderOf', () => {
  it.each([
    [
      'line 4 named: lines 2, 5 (wallet) and 3 (bank) stay, in order',
      [4],
      {
        body: { mobile_wallets: [W2, W5], bank_accounts: [B3] },
        walletLines: [2, 5],
        bankLines: [3],
        totalPiasters: 15000n + 10n + 150025n,
      },
    ],
    [
      'both wallet lines named: no mobile_wallets key at all',
      [2, 5],
      { body: { bank_accounts: [B3, B4] }, walletLines: [], bankLines: [3, 4], totalPiasters: 150025n + 20n },
    ],
    [
      'both bank lines named: no bank_accounts key at all',
      [3, 4],
      { body: { mobile_wallets: [W2, W5] }, walletLines: [2, 5], bankLines: [], totalPiasters: 15010n },
    ],
    [
      'lines 2 and 3 named: line 5 wallet and line 4 bank stay',
      [2, 3],
      { body: { mobile_wallets: [W5], bank_accounts: [B4] }, walletLines: [5], bankLines: [4], totalPiasters: 30n },
    ],
    [
      'a line not in the request named: everything stays',
      [99],
      { body: REQUEST.body, walletLines: [2, 5], bankLines: [3, 4], totalPiasters: REQUEST.totalPiasters },
    ],
  ])('%s', (_label, named, expected) => {
    const rest = remainderOf(REQUEST, new Set(named));
    // Strict: no extra keys, no empty arrays; resent items equal the originals field for field.
    const { references, payees, ...withoutReferences } = rest!;
    expect(withoutReferences).toStrictEqual(expected);
    // References travel with their rows only.
    expect(references).toStrictEqual(
      Object.fromEntries(Object.entries(REQUEST.references).filter(([line]) => !named.includes(Number(line)))),
    );
    // So do payee keys (the new request holds them): one per resent item, in the new body's order.
    const kept = [...expected.walletLines, ...expected.bankLines];
    expect(
      payees
        .split('\n')
        .filter(Boolean)
        .map((e) => Number(e.split('\t')[0])),
    ).toEqual(kept);
  });

  it.each([
    ['every line named', [2, 5, 3, 4]],
    ['every line named plus others', [1, 2, 3, 4, 5, 6]],
  ])('%s → undefined (nothing left to send)', (_label, named) => {
    expect(remainderOf(REQUEST, new Set(named))).toBeUndefined();
  });

  it('does not change the original request', () => {
    const before = structuredClone(REQUEST);
    remainderOf(REQUEST, new Set([4]));
    expect(REQUEST).toEqual(before);
  });
});
