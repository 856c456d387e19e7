/**
 * Payout items → withdrawal requests (src/batch/group-items.ts) and the deterministic ids
 * (src/batch/batch-id.ts). Every valid row must end up in exactly one request, with its amount
 * string untouched and its file line remembered.
 */
import { describe, expect, it } from 'vitest';
import { batchIdFromSha256, isBatchId, requestJobId } from '../../src/batch-id.js';
import { buildRequest, createGrouper, groupItems, type WithdrawalRequest } from '../../src/batch/group-items.js';
import type { PayoutItem } from '../../src/import/validate-row.js';

const walletItem = (line: number, amount: string): PayoutItem => ({
  line,
  reference: `ref-${line}`,
  channel: 'wallet',
  wallet: {
    amount,
    type: 'TRANSFER',
    holder_name: `Holder ${line}`,
    mobile_number: `+2010012345${String(line).padStart(2, '0')}`,
    description: `Row ${line}`,
  },
});
const bankItem = (line: number, amount: string): PayoutItem => ({
  line,
  reference: `ref-${line}`,
  channel: 'bank',
  bank: {
    amount,
    type: 'REFUND',
    holder_name: `Holder ${line}`,
    bank_name: 'National Bank of Egypt',
    bank_address: 'Cairo',
    number: `EG3800190005000000002631800${String(line).padStart(2, '0')}`,
    description: `Row ${line}`,
  },
});

/** Lines 2..8 of a file, channels mixed. */
const SEVEN: PayoutItem[] = [
  walletItem(2, '100.00'),
  bankItem(3, '2500.50'),
  walletItem(4, '0.10'),
  walletItem(5, '0.20'),
  bankItem(6, '99999999.99'),
  bankItem(7, '1.00'),
  walletItem(8, '007.50'),
];

const amountOf = (i: PayoutItem) => (i.channel === 'wallet' ? i.wallet.amount : i.bank.amount);
const linesOf = (r: WithdrawalRequest) => [...r.walletLines, ...r.bankLines].sort((a, b) => a - b);

describe('groupItems', () => {
  it.each([
    [1, [1, 1, 1, 1, 1, 1, 1]],
    [3, [3, 3, 1]],
    [7, [7]],
    [50, [7]],
  ])('7 items with itemsPerRequest %i → request sizes %j, seq 1..n', (perRequest, sizes) => {
    const requests = groupItems(SEVEN, perRequest);
    expect(requests.map((r) => r.walletLines.length + r.bankLines.length)).toEqual(sizes);
    expect(requests.map((r) => r.seq)).toEqual(sizes.map((_, i) => i + 1));
  });

  it.each([1, 2, 3, 4, 7])(
    'with itemsPerRequest %i every item is in exactly one request, file order kept',
    (perRequest) => {
      const requests = groupItems(SEVEN, perRequest);
      // Request k holds exactly the next items of the file, and nothing twice.
      expect(requests.flatMap(linesOf)).toEqual(SEVEN.map((i) => i.line));
      for (const r of requests) {
        expect([...r.walletLines]).toEqual([...r.walletLines].sort((a, b) => a - b));
        expect([...r.bankLines]).toEqual([...r.bankLines].sort((a, b) => a - b));
      }
    },
  );

  it('no items → no requests', () => {
    expect(groupItems([], 3)).toEqual([]);
  });

  it.each([0, -1, 1.5, Number.NaN])('itemsPerRequest %s throws RangeError', (perRequest) => {
    expect(() => groupItems(SEVEN, perRequest)).toThrow(RangeError);
    expect(() => createGrouper(perRequest)).toThrow(RangeError);
  });
});

describe('buildRequest', () => {
  it.each([
    ['only wallets', [walletItem(2, '1.00'), walletItem(3, '2.00')], 'mobile_wallets', 'bank_accounts'],
    ['only banks', [bankItem(2, '1.00'), bankItem(3, '2.00')], 'bank_accounts', 'mobile_wallets'],
  ] as const)(
    'a request with %s carries only %s; the %s key is absent, not an empty array',
    (_label, items, present, absent) => {
      const { body } = buildRequest(1, items);
      expect(Object.keys(body)).toEqual([present]);
      expect(body).not.toHaveProperty(absent);
      expect(JSON.stringify(body)).not.toContain(absent);
    },
  );

  it('walletLines/bankLines align index by index with the body arrays', () => {
    const r = buildRequest(4, SEVEN);
    expect(r.seq).toBe(4);
    expect(r.walletLines).toEqual([2, 4, 5, 8]);
    expect(r.bankLines).toEqual([3, 6, 7]);
    const byLine = new Map(SEVEN.map((i) => [i.line, i]));
    r.body.mobile_wallets!.forEach((w, k) => {
      const src = byLine.get(r.walletLines[k]!)!;
      expect(src.channel).toBe('wallet');
      expect(w).toStrictEqual(src.channel === 'wallet' ? src.wallet : undefined);
    });
    r.body.bank_accounts!.forEach((b, k) => {
      const src = byLine.get(r.bankLines[k]!)!;
      expect(src.channel).toBe('bank');
      expect(b).toStrictEqual(src.channel === 'bank' ? src.bank : undefined);
    });
  });

  it.each(SEVEN.map((i) => [i.line, amountOf(i)] as const))(
    'line %i: amount %j reaches the JSON body byte for byte',
    (line, amount) => {
      const r = buildRequest(1, SEVEN);
      const json = JSON.parse(JSON.stringify(r.body)) as typeof r.body;
      const wi = r.walletLines.indexOf(line);
      const bi = r.bankLines.indexOf(line);
      const sent = wi >= 0 ? json.mobile_wallets![wi]!.amount : json.bank_accounts![bi]!.amount;
      expect(sent).toBe(amount);
    },
  );

  it.each([
    [['0.10', '0.20'], 30n],
    [['0.01'], 1n],
    [['100.00', '2500.50'], 260050n],
    [['99999999.99', '99999999.99', '0.02'], 20000000000n],
    [['0.10', '0.10', '0.10'], 30n],
  ])('total of %j is exactly %i piasters', (amounts, total) => {
    const items = amounts.map((a, i) => (i % 2 === 0 ? walletItem(i + 2, a) : bankItem(i + 2, a)));
    expect(buildRequest(1, items).totalPiasters).toBe(total);
  });

  it('request totals add up to the total of all items', () => {
    const requests = groupItems(SEVEN, 3);
    expect(requests.map((r) => r.totalPiasters)).toEqual([10000n + 250050n + 10n, 20n + 9999999999n + 100n, 750n]);
  });
});

describe('createGrouper', () => {
  it.each([
    [3, 1, [[1], [2], [3]]],
    [3, 10, [[10], [11], [12]]],
  ])('itemsPerRequest %i from seq %i hands out requests as soon as they fill', (perRequest, firstSeq, expectedSeqs) => {
    const g = createGrouper(perRequest, firstSeq);
    const handed: number[][] = [];
    SEVEN.forEach((item, i) => {
      const r = g.add(item);
      if ((i + 1) % perRequest === 0) {
        expect(r).toBeDefined();
        handed.push([r!.seq]);
      } else {
        expect(r).toBeUndefined();
      }
    });
    const last = g.finish();
    expect(last).toBeDefined();
    handed.push([last!.seq]);
    expect(handed).toEqual(expectedSeqs);
    expect(g.finish()).toBeUndefined();
  });
});

describe('batch ids', () => {
  const SHA_A = 'a'.repeat(8) + '0123456789abcdef'.repeat(3) + 'b'.repeat(8);
  const SHA_B = 'b'.repeat(64);

  it.each([
    [SHA_A, SHA_A, true],
    [SHA_A, SHA_B, false],
  ])('batchIdFromSha256: same content → same id (%#)', (x, y, same) => {
    const idX = batchIdFromSha256(x);
    const idY = batchIdFromSha256(y);
    expect(idX === idY).toBe(same);
    expect(isBatchId(idX)).toBe(true);
    expect(idX).toHaveLength(16);
  });

  it.each([
    ['too short', 'abc'],
    ['upper-case hex', 'A'.repeat(64)],
    ['not hex', 'g'.repeat(64)],
    ['65 digits', 'a'.repeat(65)],
  ])('batchIdFromSha256 refuses %s', (_label, sha) => {
    expect(() => batchIdFromSha256(sha)).toThrow(RangeError);
  });

  it.each([
    ['0123456789abcdef', 1, '0123456789abcdef-1'],
    ['0123456789abcdef', 12, '0123456789abcdef-12'],
  ])('requestJobId(%s, %i) = %s (same request → same job, so enqueuing twice is a no-op)', (batchId, seq, expected) => {
    expect(requestJobId(batchId, seq)).toBe(expected);
  });

  it('different seqs of a batch get different job ids', () => {
    expect(requestJobId('0123456789abcdef', 1)).not.toBe(requestJobId('0123456789abcdef', 11));
  });
});
