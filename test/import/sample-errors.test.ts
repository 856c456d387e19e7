/**
 * The sample files under `samples/`: the valid payout file passes every row rule, and the file
 * with mistakes gives exactly the issues its sidecar `payouts-with-errors.expected.csv` lists.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { describeIssue } from '../../src/import/reasons.js';
import { makeEgyptianIban, makeSampleCsv } from '../../scripts/make-sample.js';
import { ibanChecksumOk } from '../../src/import/check-account.js';
import { outcomeLine, validateCsvText, validateFile } from '../support/validate-file.js';

const SAMPLES = join(PACKAGE_ROOT, 'samples');
const VALID_FILE = join(SAMPLES, 'payouts.csv');
const ERRORS_FILE = join(SAMPLES, 'payouts-with-errors.csv');
const SIDECAR_FILE = join(SAMPLES, 'payouts-with-errors.expected.csv');

interface Expected {
  line: string;
  column: string;
  code: string;
  note: string;
}

const key = (line: number | string, column: string, code: string): string => `${line}|${column}|${code}`;

function fileLineCount(path: string): number {
  return readFileSync(path, 'utf8').replace(/\n$/, '').split('\n').length;
}

describe('samples/payouts-with-errors.csv', () => {
  const { outcomes } = validateFile(ERRORS_FILE);
  const expected = parse(readFileSync(SIDECAR_FILE), {
    columns: true,
    bom: true,
    skip_empty_lines: true,
  }) as Expected[];

  it('has one outcome per data line, numbered from line 2', () => {
    const lines = outcomes.map(outcomeLine);
    const last = fileLineCount(ERRORS_FILE);
    expect(lines).toEqual(Array.from({ length: last - 1 }, (_, i) => i + 2));
    expect(outcomes.length).toBeGreaterThanOrEqual(25);
    expect(outcomes.length).toBeLessThanOrEqual(40);
  });

  it('has a sidecar with the columns line,column,code,note, a note on every row and no repeated issue', () => {
    const headerLine = readFileSync(SIDECAR_FILE, 'utf8').split('\n')[0];
    expect(headerLine).toBe('line,column,code,note');
    for (const e of expected) {
      expect(e.line).toMatch(/^\d+$/);
      expect(e.note.trim(), `note of line ${e.line}`).not.toBe('');
    }
    const keys = expected.map((e) => key(e.line, e.column, e.code));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('gives exactly the (line, column, code) issues the sidecar lists', () => {
    const found = outcomes.flatMap((o) => (o.ok ? [] : o.issues.map((i) => key(o.line, i.column, i.code))));
    expect([...found].sort()).toEqual(expected.map((e) => key(e.line, e.column, e.code)).sort());
  });

  it('accepts every line the sidecar does not list, and at least 8 of them', () => {
    const listed = new Set(expected.map((e) => Number(e.line)));
    const valid = outcomes.filter((o) => o.ok).map(outcomeLine);
    const unlisted = outcomes.map(outcomeLine).filter((line) => !listed.has(line));
    expect(valid).toEqual(unlisted);
    expect(valid.length).toBeGreaterThanOrEqual(8);
  });

  it('describes every issue with a sentence', () => {
    for (const o of outcomes) {
      if (o.ok) continue;
      for (const issue of o.issues) expect(describeIssue(issue).length, `${o.line} ${issue.code}`).toBeGreaterThan(10);
    }
  });

  it('points the duplicate reference at the line that used it first', () => {
    const dup = outcomes.flatMap((o) => (o.ok ? [] : o.issues)).find((i) => i.code === 'reference_duplicate');
    expect(dup?.params?.firstLine).toBe(2);
  });
});

describe('samples/payouts.csv', () => {
  const text = readFileSync(VALID_FILE, 'utf8');
  const { outcomes } = validateCsvText(text);
  const items = outcomes.flatMap((o) => (o.ok ? [o.item] : []));

  it('has between 150 and 250 rows, every one valid', () => {
    expect(outcomes.length).toBeGreaterThanOrEqual(150);
    expect(outcomes.length).toBeLessThanOrEqual(250);
    const invalid = outcomes.filter((o) => !o.ok);
    expect(invalid).toEqual([]);
    expect(outcomes.map(outcomeLine)).toEqual(Array.from({ length: outcomes.length }, (_, i) => i + 2));
  });

  it('is about 60% wallet rows and 40% bank rows, with both types', () => {
    const wallets = items.filter((i) => i.channel === 'wallet').length;
    expect(wallets / items.length).toBeGreaterThanOrEqual(0.55);
    expect(wallets / items.length).toBeLessThanOrEqual(0.65);
    const types = new Set(items.map((i) => (i.channel === 'wallet' ? i.wallet.type : i.bank.type)));
    expect([...types].sort()).toEqual(['REFUND', 'TRANSFER']);
  });

  it('spreads bank rows over at least 10 banks, including an en-dash name and "Nasser social Bank"', () => {
    const banks = new Set(items.flatMap((i) => (i.channel === 'bank' ? [i.bank.bank_name] : [])));
    expect(banks.size).toBeGreaterThanOrEqual(10);
    expect([...banks].some((b) => b.includes('\u2013'))).toBe(true);
    expect(banks.has('Nasser social Bank')).toBe(true);
  });

  it('uses domestic account numbers of 12-16 digits and valid Egyptian IBANs', () => {
    const numbers = items.flatMap((i) => (i.channel === 'bank' ? [i.bank.number] : []));
    const ibans = numbers.filter((n) => n.startsWith('EG'));
    expect(ibans.length).toBeGreaterThanOrEqual(5);
    for (const iban of ibans) expect(ibanChecksumOk(iban), iban).toBe(true);
    for (const n of numbers.filter((x) => !x.startsWith('EG'))) expect(n).toMatch(/^[1-9]\d{11,15}$/);
  });

  it('has distinct wallet numbers, Arabic and Latin names, and amounts from 250.00 to 45000.00', () => {
    const mobiles = items.flatMap((i) => (i.channel === 'wallet' ? [i.wallet.mobile_number] : []));
    expect(new Set(mobiles).size).toBe(mobiles.length);
    const names = items.map((i) => (i.channel === 'wallet' ? i.wallet.holder_name : i.bank.holder_name));
    expect(names.some((n) => /[\u0600-\u06ff]/.test(n))).toBe(true);
    expect(names.some((n) => /^[A-Za-z]/.test(n))).toBe(true);
    const amounts = items.map((i) => Number(i.channel === 'wallet' ? i.wallet.amount : i.bank.amount));
    expect(Math.min(...amounts)).toBeGreaterThanOrEqual(250);
    expect(Math.max(...amounts)).toBeLessThanOrEqual(45000);
  });

  it('has quoted bank addresses holding commas', () => {
    expect(text).toMatch(/,"[^",]+, [^"]+",/);
    const addresses = items.flatMap((i) => (i.channel === 'bank' ? [i.bank.bank_address] : []));
    expect(addresses.filter((a) => a.includes(',')).length).toBeGreaterThan(5);
  });

  it('is exactly what scripts/make-sample.ts produces (regenerate it rather than editing by hand)', () => {
    expect(makeSampleCsv()).toBe(text);
    expect(makeSampleCsv(7, 20)).toBe(makeSampleCsv(7, 20));
    expect(makeSampleCsv(7, 20)).not.toBe(makeSampleCsv(8, 20));
  });
});

describe('scripts/make-sample.ts makeEgyptianIban', () => {
  it('computes the MOD-97 check digits of the public example', () => {
    expect(makeEgyptianIban('0019', '0005', '00000000263180002')).toBe('EG380019000500000000263180002');
  });
});

describe('test/support/validate-file.ts', () => {
  const HEADER =
    'channel,amount,type,holder_name,mobile_number,bank_name,bank_address,account_number,description,reference';

  it('numbers each record by the line it starts on, across a quoted line break and a blank line', () => {
    const text = [
      HEADER,
      'bank,100.00,TRANSFER,A,,Banque Misr,"1 Nile St,',
      'Cairo",123456789012,x,R1',
      '',
      'wallet,100.00,TRANSFER,B,+201001234567,,,,x,R2',
    ].join('\n');
    const { outcomes } = validateCsvText(text);
    expect(outcomes.map(outcomeLine)).toEqual([2, 5]);
    expect(outcomes.every((o) => o.ok)).toBe(true);
  });
});
