/**
 * Request bodies built without objects (src/contract/item-json.ts, the JSON grouper of
 * src/batch/group-items.ts) and key fingerprints built without joining strings
 * (src/import/fingerprint.ts) must be exactly what the plain way gives: the bytes sent are the
 * bytes that were checked, and a key means the same whichever way it was hashed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bankItemJson, jsonString, walletItemJson } from '../../src/contract/item-json.js';
import { createGrouper, createJsonGrouper } from '../../src/batch/group-items.js';
import { fingerprintInto, fingerprintKeyInto } from '../../src/import/fingerprint.js';
import type { PayoutItem } from '../../src/import/validate-row.js';
import { toPiasters } from '../../src/money.js';

/** Any text, lone surrogates, controls, quotes, backslashes and Arabic letters included. */
const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u2028', 'م', 'é', '😀', '\ud800', '\udc00', ' '),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 40,
});
const amount = fc
  .integer({ min: 1, max: 99_999_999 })
  .map((c) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`);

const item: fc.Arbitrary<PayoutItem> = fc.oneof(
  fc
    .record({
      amount,
      type: fc.constantFrom('TRANSFER' as const, 'REFUND' as const),
      holder_name: text,
      description: text,
      mobile_number: text,
      reference: text,
    })
    .map(({ reference, ...w }) => ({
      line: 0,
      reference,
      channel: 'wallet' as const,
      wallet: {
        amount: w.amount,
        type: w.type,
        holder_name: w.holder_name,
        description: w.description,
        mobile_number: w.mobile_number,
      },
    })),
  fc
    .record({
      amount,
      type: fc.constantFrom('TRANSFER' as const, 'REFUND' as const),
      holder_name: text,
      description: text,
      bank_name: text,
      bank_address: text,
      number: text,
      reference: text,
    })
    .map(({ reference, ...b }) => ({
      line: 0,
      reference,
      channel: 'bank' as const,
      bank: {
        amount: b.amount,
        type: b.type,
        holder_name: b.holder_name,
        description: b.description,
        bank_name: b.bank_name,
        bank_address: b.bank_address,
        number: b.number,
      },
    })),
);

describe('item JSON', () => {
  it('jsonString is JSON.stringify for any string', () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(jsonString(s)).toBe(JSON.stringify(s));
      }),
      { numRuns: 1000 },
    );
  });

  it('wallet and bank items are written as JSON.stringify writes them', () => {
    fc.assert(
      fc.property(item, (i) => {
        if (i.channel === 'wallet') expect(walletItemJson(i.wallet)).toBe(JSON.stringify(i.wallet));
        else expect(bankItemJson(i.bank)).toBe(JSON.stringify(i.bank));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('JSON grouper', () => {
  it('gives the same requests, byte for byte, as grouping the items and stringifying the bodies', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 60 }), fc.integer({ min: 1, max: 7 }), (items, per) => {
        const lined = items.map((it, n) => ({ ...it, line: n + 2 }));
        const plain = createGrouper(per);
        const json = createJsonGrouper(per);
        const expected = lined
          .map((it) => plain.add(it))
          .concat(plain.finish())
          .filter((r) => r !== undefined);
        // Items sit in one shared buffer, as the import threads send them.
        const parts = lined.map((it) =>
          Buffer.from(it.channel === 'wallet' ? walletItemJson(it.wallet) : bankItemJson(it.bank)),
        );
        const shared = Buffer.concat(parts);
        let at = 0;
        const got = lined
          .map((it, n) => {
            const start = at;
            at += parts[n]!.length;
            const a = it.channel === 'wallet' ? it.wallet.amount : it.bank.amount;
            return json.add(it.channel, it.line, shared, start, at, it.reference, toPiasters(a));
          })
          .concat(json.finish())
          .filter((r) => r !== undefined);
        expect(got.length).toBe(expected.length);
        got.forEach((g, n) => {
          const e = expected[n]!;
          expect(Buffer.isBuffer(g.bodyJson) ? g.bodyJson.toString('utf8') : g.bodyJson).toBe(JSON.stringify(e.body));
          expect(g).toMatchObject({
            seq: e.seq,
            walletLines: e.walletLines,
            bankLines: e.bankLines,
            totalPiasters: e.totalPiasters,
          });
          expect(g.referencesJson).toBe(JSON.stringify(e.references));
        });
      }),
      { numRuns: 300 },
    );
  });
});

describe('key fingerprints', () => {
  it('fingerprintKeyInto(tag, a, b) equals fingerprintInto of the text tag NUL a NUL b', () => {
    fc.assert(
      fc.property(text, text, text, (tag, a, b) => {
        const joined = new Uint32Array(2);
        const parts = new Uint32Array(4);
        fingerprintInto(`${tag}\u0000${a}\u0000${b}`, joined, 0);
        fingerprintKeyInto(tag, a, b, parts, 2);
        expect([parts[2], parts[3]]).toEqual([joined[0], joined[1]]);
      }),
      { numRuns: 1000 },
    );
  });
});
