/**
 * Properties of the import, checked with fast-check over 1,000 generated cases each:
 * 1. for any record (arbitrary text in every column, near-valid values, ragged rows, any column
 *    order), the row validator never throws and gives either a payout item or at least one issue;
 * 2. a valid row's values reach the withdrawal request body unchanged (the amount byte for byte);
 * 3. grouping keeps every valid row exactly once and in file order, for any request size;
 * 4. a scanned file accounts for every data row exactly once, at the line it starts on:
 *    rows = valid + invalid, each non-blank record's line reported once (the simpler form of "one
 *    report row per input row": the report is written from exactly these outcomes).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'csv-stringify/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { COLUMNS, indexHeader, type ColumnName } from '../../src/import/columns.js';
import { createRowValidator, type PayoutItem, type RowRules } from '../../src/import/validate-row.js';
import { scanFile } from '../../src/import/scan-file.js';
import { SUSPECT } from '../../src/import/invisible.js';
import { buildRequest, groupItems } from '../../src/batch/group-items.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { CashoutError } from '../../src/errors.js';

const RUNS = { numRuns: 1000 } as const;
const banks = loadBankList();
const RULES: RowRules = { banks, walletCountries: ['EG'], maxFieldLength: 255 };
const BANK_NAMES = [...banks.exact];

// ---- valid values -------------------------------------------------------------------------

const validAmount = fc
  .bigInt({ min: 1n, max: 10n ** 14n - 1n })
  .map((cents) => `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`);
const validMobile = fc
  .tuple(fc.constantFrom('10', '11', '12', '15'), fc.integer({ min: 0, max: 99_999_999 }))
  .map(([op, n]) => `+20${op}${String(n).padStart(8, '0')}`);
/** An Egyptian IBAN with correct check digits (ISO 7064 MOD-97-10). */
const validIban = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 25, maxLength: 25 }).map((d) => {
  const bban = d.join('');
  const check = 98n - (BigInt(`${bban}1416` + '00') % 97n);
  return `EG${String(check).padStart(2, '0')}${bban}`;
});
const validAccount = fc.oneof(fc.stringMatching(/^[0-9]{6,30}$/), validIban);
/** Characters the text rules refuse: the one definition the rules use (src/import/invisible.ts). */
const REFUSED_TEXT = SUSPECT;
const validText = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom('a', 'Z', ' ', '-', '=', '+', '@', '"', ',', 'م', 'ح', '٠', 'é', '😀'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    ),
    minLength: 1,
    maxLength: 60,
  })
  .map((s) => s.trim())
  .filter((s) => s !== '' && s.length <= 255 && !REFUSED_TEXT.test(s));

type Cells = Record<ColumnName, string>;

const validWallet: fc.Arbitrary<Cells> = fc.record({
  channel: fc.constant('wallet'),
  amount: validAmount,
  type: fc.constantFrom('TRANSFER', 'REFUND'),
  holder_name: validText,
  mobile_number: validMobile,
  bank_name: fc.constant(''),
  bank_address: fc.constant(''),
  account_number: fc.constant(''),
  description: validText,
  reference: fc.constant(''),
});
const validBank: fc.Arbitrary<Cells> = fc.record({
  channel: fc.constant('bank'),
  amount: validAmount,
  type: fc.constantFrom('TRANSFER', 'REFUND'),
  holder_name: validText,
  mobile_number: fc.constant(''),
  bank_name: fc.constantFrom(...BANK_NAMES),
  bank_address: validText,
  account_number: validAccount,
  description: validText,
  reference: fc.constant(''),
});
const validRow = fc.oneof(validWallet, validBank);

// ---- near-valid and arbitrary values ---------------------------------------------------------

const anyText = fc.string({ unit: 'binary', maxLength: 40 });
const nearAmount = fc.oneof(
  validAmount,
  fc.constantFrom(
    '100',
    '100.5',
    '100.555',
    '1,000.00',
    '1.000,00',
    '-5.00',
    '0.00',
    '1e3',
    ' 100.00 ',
    '100.00 EGP',
    '١٠٠٫٠٠',
    '=1+2',
    '+100.00',
    '.50',
    '100.',
    '00.10',
    '',
  ),
  fc.tuple(validAmount, fc.constantFrom(' ', ',', 'EGP', '٫', '\u200f', '0')).map(([a, s]) => `${a}${s}`),
  fc.stringMatching(/^[-+ ]?[0-9]{0,16}([.,][0-9]{0,4})?$/),
);
const nearMobile = fc.oneof(
  validMobile,
  validMobile.map((m) => m.slice(3)),
  validMobile.map((m) => `0${m.slice(3)}`),
  validMobile.map((m) => `00${m.slice(1)}`),
  validMobile.map((m) => m.replace(/(\d{3})(?=\d)/g, '$1 ')),
  validMobile.map((m) => m.slice(0, -2)),
  fc.constantFrom('+20223456789', '+966501234567', '+447911123456', '٠١٠٠١٢٣٤٥٦٧', '=HYPERLINK("x")', '+', ''),
  fc.stringMatching(/^\+?[0-9 ]{0,18}$/),
);
const nearBank = fc.oneof(
  fc.constantFrom(...BANK_NAMES),
  fc.constantFrom(...BANK_NAMES).map((b) => b.toLowerCase()),
  fc.constantFrom(...BANK_NAMES).map((b) => ` ${b.replace(/ /g, '  ')} `),
  fc.constantFrom(...BANK_NAMES).map((b) => b.replace('–', '-')),
  fc.constantFrom('CIB', 'NBE', 'QNB', 'AlAhly', 'bank Misr', ''),
);
const nearAccount = fc.oneof(
  validAccount,
  validIban.map((i) => i.toLowerCase()),
  validIban.map((i) => `${i.slice(0, 2)}${(Number(i[2]) + 1) % 10}${i.slice(3)}`),
  validIban.map((i) => i.replace(/(.{4})/g, '$1 ')),
  fc.stringMatching(/^[A-Z]{0,2}[0-9 -]{0,34}$/),
);
const nearText = fc.oneof(
  validText,
  anyText,
  fc.constantFrom('\u200fمحمد', 'Ali\u0007', 'x'.repeat(300), '=SUM(A1)', ''),
);

/** A record in the template's column order, near-valid or arbitrary in every column. */
const anyCells: fc.Arbitrary<Cells> = fc.record({
  channel: fc.oneof(fc.constantFrom('wallet', 'bank', 'Wallet', ' bank', 'cash', ''), anyText),
  amount: fc.oneof(nearAmount, anyText),
  type: fc.oneof(fc.constantFrom('TRANSFER', 'REFUND', 'transfer', 'Refund', ''), anyText),
  holder_name: nearText,
  mobile_number: fc.oneof(nearMobile, anyText),
  bank_name: fc.oneof(nearBank, anyText),
  bank_address: nearText,
  account_number: fc.oneof(nearAccount, anyText),
  description: nearText,
  reference: fc.oneof(fc.constant(''), anyText),
});

/** Any column order of the template, with or without `reference`. */
const anyHeader = fc
  .tuple(fc.shuffledSubarray([...COLUMNS], { minLength: COLUMNS.length, maxLength: COLUMNS.length }), fc.boolean())
  .map(([cols, withRef]) => (withRef ? cols : cols.filter((c) => c !== 'reference')));

function recordFor(header: readonly ColumnName[], cells: Cells): string[] {
  return header.map((c) => cells[c]);
}

const TEMPLATE = [...COLUMNS];

describe('properties of the import', () => {
  it('the row validator never throws and gives an item or at least one issue, for any record', () => {
    fc.assert(
      fc.property(
        anyHeader,
        fc.array(fc.oneof(anyCells, validRow), { minLength: 1, maxLength: 3 }),
        fc.oneof(fc.constant(0), fc.integer({ min: -3, max: 3 })),
        (header, rows, ragged) => {
          const validate = createRowValidator(indexHeader(header), RULES);
          rows.forEach((cells, i) => {
            let record = recordFor(header, cells);
            if (ragged < 0) record = record.slice(0, Math.max(0, record.length + ragged));
            if (ragged > 0) record = [...record, ...Array.from({ length: ragged }, (_, k) => (k % 2 ? '' : 'x'))];
            const outcome = validate(record, i + 2);
            if (outcome.ok) {
              expect(outcome.item.line).toBe(i + 2);
              expect(['wallet', 'bank']).toContain(outcome.item.channel);
            } else {
              expect(outcome.line).toBe(i + 2);
              expect(outcome.issues.length).toBeGreaterThan(0);
              for (const issue of outcome.issues) expect([...COLUMNS, 'row']).toContain(issue.column);
            }
          });
        },
      ),
      RUNS,
    );
  });

  it('a valid row reaches the request body unchanged, the amount byte for byte', () => {
    fc.assert(
      fc.property(
        fc.array(validRow, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 8 }),
        anyHeader,
        (rows, perRequest, header) => {
          const validate = createRowValidator(indexHeader(header), RULES);
          const items = rows.map((cells, i) => {
            const outcome = validate(
              recordFor(header, { ...cells, reference: header.includes('reference') ? `R-${i}` : '' }),
              i + 2,
            );
            if (!outcome.ok) throw new Error(`a valid row was refused: ${JSON.stringify(outcome.issues)}`);
            return outcome.item;
          });
          const requests = groupItems(items, perRequest);
          const sent = requests.flatMap((r) => [
            ...(r.body.mobile_wallets ?? []).map((w, k) => ({
              line: r.walletLines[k]!,
              item: w as Record<string, string>,
            })),
            ...(r.body.bank_accounts ?? []).map((b, k) => ({
              line: r.bankLines[k]!,
              item: b as Record<string, string>,
            })),
          ]);
          expect(sent).toHaveLength(rows.length);
          for (const { line, item } of sent) {
            const cells = rows[line - 2]!;
            const expected: Record<string, string> =
              cells.channel === 'wallet'
                ? {
                    amount: cells.amount,
                    type: cells.type,
                    holder_name: cells.holder_name,
                    mobile_number: cells.mobile_number,
                    description: cells.description,
                  }
                : {
                    amount: cells.amount,
                    type: cells.type,
                    holder_name: cells.holder_name,
                    bank_name: cells.bank_name,
                    bank_address: cells.bank_address,
                    number: cells.account_number,
                    description: cells.description,
                  };
            expect(item).toStrictEqual(expected);
            expect(Buffer.from(item.amount!, 'utf8').equals(Buffer.from(cells.amount, 'utf8'))).toBe(true);
          }
          // And as it goes on the wire.
          for (const r of requests) {
            const json = JSON.stringify(r.body);
            for (const w of r.body.mobile_wallets ?? []) expect(json).toContain(`"amount":"${w.amount}"`);
          }
        },
      ),
      RUNS,
    );
  });

  it('grouping keeps every valid row exactly once and in file order, for any request size', () => {
    const item = (line: number, cells: Cells): PayoutItem =>
      cells.channel === 'wallet'
        ? {
            line,
            reference: cells.reference,
            channel: 'wallet',
            wallet: {
              amount: cells.amount,
              type: 'TRANSFER',
              holder_name: cells.holder_name,
              mobile_number: cells.mobile_number,
              description: cells.description,
            },
          }
        : {
            line,
            reference: cells.reference,
            channel: 'bank',
            bank: {
              amount: cells.amount,
              type: 'REFUND',
              holder_name: cells.holder_name,
              bank_name: cells.bank_name,
              bank_address: cells.bank_address,
              number: cells.account_number,
              description: cells.description,
            },
          };
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), validRow), { minLength: 0, maxLength: 120 }),
        fc.integer({ min: 1, max: 60 }),
        (gaps, perRequest) => {
          let line = 1;
          const items = gaps.map(([gap, cells]) => item((line += gap), cells));
          const requests = groupItems(items, perRequest);
          expect(requests.length).toBe(Math.ceil(items.length / perRequest));
          requests.forEach((r, k) => {
            expect(r.seq).toBe(k + 1);
            const slice = items.slice(k * perRequest, (k + 1) * perRequest);
            expect([...r.walletLines, ...r.bankLines].sort((a, b) => a - b)).toEqual(slice.map((i) => i.line));
            expect(r.walletLines).toEqual(slice.filter((i) => i.channel === 'wallet').map((i) => i.line));
            expect(r.bankLines).toEqual(slice.filter((i) => i.channel === 'bank').map((i) => i.line));
            expect(r.body.mobile_wallets ?? []).toEqual(
              slice.flatMap((i) => (i.channel === 'wallet' ? [i.wallet] : [])),
            );
            expect(r.body.bank_accounts ?? []).toEqual(slice.flatMap((i) => (i.channel === 'bank' ? [i.bank] : [])));
            expect(r.body.mobile_wallets?.length === 0 || r.body.bank_accounts?.length === 0).toBe(false);
            expect(r).toEqual(buildRequest(k + 1, slice));
          });
        },
      ),
      RUNS,
    );
  });

  describe('scanning a generated file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cashout-properties-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    let n = 0;

    it('accounts for every data row exactly once, at the line it starts on', async () => {
      const noNul = (c: Cells): Cells =>
        Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v.replace(/\u0000/g, '')])) as Cells;
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.oneof(validRow, anyCells, fc.constant(null)), { minLength: 0, maxLength: 12 }),
          fc.constantFrom('\n', '\r\n'),
          async (generated, eol) => {
            // null stands for a blank line.
            const rows = generated.map((r) => (r === null ? null : recordFor(TEMPLATE, noNul(r))));
            let text = `${TEMPLATE.join(',')}${eol}`;
            let line = 2;
            const expectedLines: number[] = [];
            for (const cells of rows) {
              if (cells === null) {
                text += eol;
                line += 1;
                continue;
              }
              text += stringify([cells], { quoted: true, record_delimiter: eol === '\n' ? 'unix' : 'windows' });
              if (cells.some((c) => c.trim() !== '')) expectedLines.push(line);
              line += 1 + cells.reduce((k, c) => k + (c.match(/\r\n|\r|\n/g)?.length ?? 0), 0);
            }
            const path = join(dir, `f${++n}.csv`);
            writeFileSync(path, text);
            const seen: number[] = [];
            let counts;
            try {
              counts = await scanFile(path, RULES, {
                onItem: (item) => void seen.push(item.line),
                onInvalid: (row) => void seen.push(row.line),
              });
            } catch (err) {
              expect(err).toBeInstanceOf(CashoutError);
              expect(expectedLines).toEqual([]);
              expect((err as CashoutError).code).toBe('no_data_rows');
              return;
            }
            expect(counts.rows).toBe(counts.validRows + counts.invalidRows);
            expect(counts.rows).toBe(expectedLines.length);
            expect(seen).toEqual(expectedLines);
          },
        ),
        RUNS,
      );
    }, 120_000);
  });
});
