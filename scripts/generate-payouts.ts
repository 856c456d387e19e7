/**
 * Writes a large, realistic, all-valid payout CSV for benchmarks: about 60 % wallet rows and 40 %
 * bank rows, Arabic and Latin names, bank addresses with commas (quoted), banks from the supported
 * bank list, valid Egyptian mobile numbers, domestic account numbers and some Egyptian IBANs with
 * correct MOD-97 check digits, two-decimal amounts, TRANSFER and REFUND, unique references.
 * The same seed and row count always give the same bytes (mulberry32).
 *
 *   node dist/scripts/generate-payouts.js --rows 1000000 --seed 42 --out /tmp/payouts.csv
 *
 * Without `--out` the file goes to standard output. Rows are produced one at a time and written
 * in chunks that wait for the stream to drain, so memory stays flat whatever the row count.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { rename, rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import type { Writable } from 'node:stream';
import { mulberry32 } from '../src/sandbox/faults.js';
import { loadBankList } from '../src/contract/supported-banks.js';
import { COLUMNS } from '../src/import/columns.js';
import { AR_FAMILY, AR_FEMALE, AR_MALE, EN_FAMILY, EN_FEMALE, EN_MALE } from './payee-names.js';

/** Columns of the generated file, in order: the payout CSV template's. */
export const PAYOUT_HEADER = COLUMNS;

/** What to generate. */
export interface GenerateOptions {
  /** Data rows (the header is extra). */
  readonly rows: number;
  /** PRNG seed (32-bit unsigned). */
  readonly seed: number;
  /** Bank names to draw from; default: the bundled supported bank list. */
  readonly banks?: readonly string[];
}

/** What was generated. */
export interface GenerateStats {
  rows: number;
  walletRows: number;
  bankRows: number;
  ibanRows: number;
  arabicNames: number;
  /** Rows with at least one quoted field. */
  quotedRows: number;
  bytes: number;
}

const STREETS = [
  'Talaat Harb St',
  '26 July St',
  'Corniche El Nil',
  '90 Street',
  'Gameat El Dowal El Arabeya St',
  'Abbas El Akkad St',
  'Salah Salem St',
  'El Horreya Rd',
  'El Gomhoreya St',
  'Saad Zaghloul St',
  'El Geish St',
  'Makram Ebeid St',
  'El Merghany St',
  'Port Said St',
];
const DISTRICTS = [
  'Downtown',
  'Zamalek',
  'Maadi',
  'Fifth Settlement',
  'Mohandessin',
  'Nasr City',
  'Heliopolis',
  'Sidi Gaber',
  'Smouha',
  'Dokki',
  'Shubra',
  'Sheraton',
];
const CITIES = [
  'Cairo',
  'Giza',
  'Alexandria',
  'Mansoura',
  'Tanta',
  'Port Said',
  'Assiut',
  'Ismailia',
  'Zagazig',
  '6th of October City',
];
const AR_ADDRESSES = [
  'شارع الجمهورية، أسيوط',
  'ميدان التحرير، القاهرة',
  'شارع الهرم، الجيزة',
  'شارع النصر، المنصورة',
  'طريق الحرية، الإسكندرية',
];
/** The banks most payees use, drawn more often when they are on the list. */
const POPULAR_BANKS = [
  'National Bank of Egypt',
  'Banque Misr',
  'Commercial International Bank',
  'Qatar National Bank Alahli',
  'Banque Du Caire',
  'Bank of Alexandria',
];
const MONTHS_EN = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const MONTHS_AR = [
  'يناير',
  'فبراير',
  'مارس',
  'أبريل',
  'مايو',
  'يونيو',
  'يوليو',
  'أغسطس',
  'سبتمبر',
  'أكتوبر',
  'نوفمبر',
  'ديسمبر',
];

/** An Egyptian IBAN with correct ISO 7064 MOD-97 check digits: EG, 2 check digits, 25-digit BBAN. */
export function egyptianIban(bban: string): string {
  if (!/^\d{25}$/.test(bban)) throw new RangeError('an Egyptian BBAN is 25 digits');
  // "EG00" moved to the end with letters as numbers (E = 14, G = 16), then 98 - (n mod 97).
  let remainder = 0;
  for (const d of `${bban}141600`) remainder = (remainder * 10 + (d.charCodeAt(0) - 48)) % 97;
  return `EG${String(98 - remainder).padStart(2, '0')}${bban}`;
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) || value.trim() !== value ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * A row generator: each call to `next()` gives one CSV line (without line end) and counts it in
 * `stats`. Everything comes from one mulberry32 stream, so the output is reproducible.
 */
export function createRowMaker(opts: GenerateOptions): { next(): string; readonly stats: GenerateStats } {
  const rnd = mulberry32(opts.seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)]!;
  const int = (min: number, max: number) => min + Math.floor(rnd() * (max - min + 1));
  const digits = (n: number) => {
    let s = '';
    for (let i = 0; i < n; i++) s += String.fromCharCode(48 + Math.floor(rnd() * 10));
    return s;
  };
  const banks = opts.banks ?? loadBankList().names;
  if (banks.length === 0) throw new RangeError('the bank list is empty');
  const popular = POPULAR_BANKS.filter((b) => banks.includes(b));
  // A made-up 4-digit bank code per bank, only for building IBANs.
  const bankCode = new Map(banks.map((b, i) => [b, String(i + 1).padStart(4, '0')]));
  const stats: GenerateStats = {
    rows: 0,
    walletRows: 0,
    bankRows: 0,
    ibanRows: 0,
    arabicNames: 0,
    quotedRows: 0,
    bytes: 0,
  };
  let order = 100_000;

  /** A two-decimal amount between min and max; `whole` rounds to pounds (salaries). */
  const amount = (min: number, max: number, whole: boolean) => {
    // Skewed towards the low end, like real payouts.
    const x = rnd();
    const pounds = Math.floor(min + (max - min) * x * x);
    return `${pounds}.${whole ? '00' : String(int(0, 99)).padStart(2, '0')}`;
  };

  const name = (arabic: boolean): string => {
    const female = rnd() < 0.4;
    if (arabic) {
      const first = pick(female ? AR_FEMALE : AR_MALE);
      return rnd() < 0.6
        ? `${first} ${pick(AR_MALE)} ${pick(AR_MALE)} ${pick(AR_FAMILY)}`
        : `${first} ${pick(AR_MALE)} ${pick(AR_FAMILY)}`;
    }
    const first = pick(female ? EN_FEMALE : EN_MALE);
    return rnd() < 0.5 ? `${first} ${pick(EN_MALE)} ${pick(EN_FAMILY)}` : `${first} ${pick(EN_FAMILY)}`;
  };

  const description = (kind: number, arabic: boolean): string => {
    const m = int(0, 11);
    switch (kind) {
      case 0:
        return arabic ? `مرتب شهر ${MONTHS_AR[m]}` : `${MONTHS_EN[m]} salary`;
      case 1:
        return arabic ? `عمولة مبيعات ${MONTHS_AR[m]}` : `${MONTHS_EN[m]} sales commission`;
      case 2: {
        order += int(1, 40);
        if (arabic) return `استرداد طلب رقم ${order}`;
        return rnd() < 0.1 ? `Refund order ${order} ("damaged item")` : `Refund order ${order}`;
      }
      case 3:
        return arabic ? 'بدل انتقالات' : 'Travel expense reimbursement, field visit';
      default:
        return arabic ? 'مكافأة ربع سنوية' : 'Quarterly performance bonus';
    }
  };

  return {
    stats,
    next(): string {
      const i = ++stats.rows;
      const wallet = rnd() < 0.6;
      const arabic = rnd() < 0.5;
      if (arabic) stats.arabicNames++;
      // 0 salary, 1 commission, 2 refund, 3 expense, 4 bonus
      const k = rnd();
      const kind = wallet
        ? k < 0.3
          ? 2
          : k < 0.65
            ? 1
            : k < 0.85
              ? 0
              : 3
        : k < 0.6
          ? 0
          : k < 0.75
            ? 1
            : k < 0.9
              ? 4
              : 2;
      const type = kind === 2 ? 'REFUND' : 'TRANSFER';
      const holder = name(arabic);
      const desc = description(kind, arabic);
      const reference = `PAY-${opts.seed}-${String(i).padStart(8, '0')}`;
      let cells: string[];
      if (wallet) {
        stats.walletRows++;
        const amt = kind === 0 ? amount(3_000, 15_000, true) : amount(50, 9_000, false);
        const mobile = `+201${pick(['0', '1', '2', '5'])}${digits(8)}`;
        cells = ['wallet', amt, type, holder, mobile, '', '', '', desc, reference];
      } else {
        stats.bankRows++;
        const bank = popular.length > 0 && rnd() < 0.7 ? pick(popular) : pick(banks);
        const address =
          rnd() < 0.1 ? pick(AR_ADDRESSES) : `${int(1, 250)} ${pick(STREETS)}, ${pick(DISTRICTS)}, ${pick(CITIES)}`;
        let account: string;
        if (rnd() < 0.25) {
          stats.ibanRows++;
          account = egyptianIban(`${bankCode.get(bank)}${digits(4)}${digits(17)}`);
        } else {
          account = `${int(1, 9)}${digits(int(9, 15))}`;
        }
        const amt = kind === 0 ? amount(6_000, 60_000, true) : amount(500, 40_000, false);
        cells = ['bank', amt, type, holder, '', bank, address, account, desc, reference];
      }
      const line = cells.map(csvField).join(',');
      if (line.includes('"')) stats.quotedRows++;
      return line;
    },
  };
}

/** Writes header and rows to `out`, waiting for `drain` whenever the stream asks to; does not end `out`. */
export async function writePayouts(out: Writable, opts: GenerateOptions): Promise<GenerateStats> {
  if (!Number.isInteger(opts.rows) || opts.rows < 1) throw new RangeError('rows must be a positive whole number');
  const maker = createRowMaker(opts);
  let chunk = `${PAYOUT_HEADER.join(',')}\n`;
  let bytes = 0;
  for (let i = 0; i < opts.rows; i++) {
    chunk += `${maker.next()}\n`;
    if (chunk.length >= 64 * 1024) {
      bytes += Buffer.byteLength(chunk);
      const ok = out.write(chunk);
      chunk = '';
      if (!ok) await once(out, 'drain');
    }
  }
  if (chunk !== '') {
    bytes += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  maker.stats.bytes = bytes;
  return maker.stats;
}

/** Writes the file at `path` (through `<path>.partial`, renamed when complete). */
export async function generatePayoutFile(path: string, opts: GenerateOptions): Promise<GenerateStats> {
  const partial = `${path}.partial`;
  const out = createWriteStream(partial);
  try {
    const stats = await writePayouts(out, opts);
    out.end();
    await once(out, 'close');
    await rename(partial, path);
    return stats;
  } catch (err) {
    out.destroy();
    await rm(partial, { force: true });
    throw err;
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '1000000' },
      seed: { type: 'string', default: '42' },
      out: { type: 'string' },
    },
  });
  const rows = Number(values.rows);
  const seed = Number(values.seed);
  if (!Number.isInteger(rows) || rows < 1) throw new Error('--rows needs a positive whole number');
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error('--seed needs a whole number from 0 to 4294967295');
  const started = Date.now();
  if (values.out === undefined) {
    await writePayouts(process.stdout, { rows, seed });
    return;
  }
  const s = await generatePayoutFile(values.out, { rows, seed });
  process.stderr.write(
    `${values.out}: ${s.rows} rows (${s.walletRows} wallet, ${s.bankRows} bank, ${s.ibanRows} IBANs, ${s.arabicNames} Arabic names, ` +
      `${s.quotedRows} with quoted fields), ${(s.bytes / 1e6).toFixed(1)} MB in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`generate-payouts: ${(err as Error).message}\n`);
    process.exitCode = 2;
  });
}
