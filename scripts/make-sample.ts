/**
 * Writes `samples/payouts.csv`: a deterministic, all-valid payout file for an Egyptian company
 * (payroll, commissions, expense claims and customer refunds), about 60% wallet rows and 40% bank
 * rows. The same seed always gives the same bytes; `test/import/sample-errors.test.ts` checks that the
 * committed sample is exactly what this script produces.
 *
 * Node 20 does not run TypeScript directly, so compile this one file first:
 *
 *   npx tsc scripts/make-sample.ts --outDir /tmp/make-sample --module nodenext \
 *     --moduleResolution nodenext --target es2023 --types node --strict --skipLibCheck
 *   node /tmp/make-sample/make-sample.js samples/payouts.csv
 *
 * Options: `--seed N` (default 20261101), `--rows N` (default 200); without a path it prints to stdout.
 * The script depends on nothing else in the project, so it compiles on its own.
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { COLUMNS } from '../src/import/columns.js';
import { mulberry32 } from '../src/sandbox/faults.js';
import * as NAMES from './payee-names.js';

/** Seed and row count of the committed sample. */
export const SAMPLE_SEED = 20261101;
export const SAMPLE_ROWS = 200;

const HEADER = COLUMNS;

/** The project's seeded PRNG (mulberry32): same seed, same sequence, on every platform. */
const prng = mulberry32;

const AR_MALE = NAMES.AR_MALE.slice(0, 20);
const AR_FEMALE = NAMES.AR_FEMALE.slice(0, 15);
const AR_FAMILY = NAMES.AR_FAMILY.slice(0, 20);
const EN_MALE = NAMES.EN_MALE.slice(0, 16);
const EN_FEMALE = NAMES.EN_FEMALE.slice(0, 12);
const EN_FAMILY = NAMES.EN_FAMILY.slice(0, 16);

/** Bank names exactly as the supported list gives them, with a made-up 4-digit code for the IBANs. */
const BANKS: readonly { name: string; code: string }[] = [
  { name: 'National Bank of Egypt', code: '0003' },
  { name: 'Banque Misr', code: '0002' },
  { name: 'Commercial International Bank', code: '0010' },
  { name: 'Qatar National Bank Alahli', code: '0037' },
  { name: 'Banque Du Caire', code: '0012' },
  { name: 'Bank of Alexandria', code: '0014' },
  { name: 'Al Ahli Bank of Kuwait – Egypt', code: '0033' },
  { name: 'Nasser social Bank', code: '0034' },
  { name: 'Housing And Development Bank', code: '0025' },
  { name: 'Faisal Islamic Bank of Egypt', code: '0024' },
  { name: 'Credit Agricole Egypt', code: '0015' },
  { name: 'HSBC', code: '0026' },
  { name: 'Suez Canal Bank', code: '0039' },
  { name: 'Abu Dhabi Islamic Bank – Egypt', code: '0004' },
  { name: 'Egyptian Gulf Bank', code: '0021' },
  { name: 'The United Bank', code: '0040' },
];

const ADDRESSES = [
  '12 Talaat Harb St, Downtown, Cairo',
  '26 July St, Zamalek, Cairo',
  'Corniche El Nil, Maadi, Cairo',
  '90 Street, Fifth Settlement, New Cairo',
  'Gameat El Dowal El Arabeya St, Mohandessin, Giza',
  'Abbas El Akkad St, Nasr City, Cairo',
  'Salah Salem St, Heliopolis, Cairo',
  'El Horreya Rd, Sidi Gaber, Alexandria',
  'Smouha Branch Alexandria',
  'El Gomhoreya St, Mansoura',
  'Saad Zaghloul St, Tanta',
  'El Geish St, Port Said',
  'Central Axis, 6th of October City, Giza',
  'Sheikh Zayed City Branch',
  'شارع الجمهورية، أسيوط',
  'ميدان التحرير، القاهرة',
  'شارع الهرم، الجيزة',
];

const MONTH_EN = 'November';
const MONTH_AR = 'نوفمبر';

type Kind = 'salary' | 'commission' | 'refund' | 'expense' | 'bonus';

/** Row purposes per channel, with weights: wallets are mostly refunds and commissions, banks mostly payroll. */
const WALLET_KINDS: readonly [Kind, number][] = [
  ['refund', 30],
  ['commission', 35],
  ['salary', 20],
  ['expense', 15],
];
const BANK_KINDS: readonly [Kind, number][] = [
  ['salary', 60],
  ['commission', 15],
  ['bonus', 15],
  ['refund', 10],
];

function pick<T>(rnd: () => number, list: readonly T[]): T {
  return list[Math.floor(rnd() * list.length)]!;
}

function weighted(rnd: () => number, table: readonly [Kind, number][]): Kind {
  const total = table.reduce((s, [, w]) => s + w, 0);
  let x = rnd() * total;
  for (const [k, w] of table) {
    x -= w;
    if (x < 0) return k;
  }
  return table[table.length - 1]![0];
}

function int(rnd: () => number, min: number, max: number): number {
  return min + Math.floor(rnd() * (max - min + 1));
}

function digits(rnd: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String(Math.floor(rnd() * 10));
  return s;
}

/** An EGP amount string with two decimals; `round` to whole pounds (salaries) or to any piaster. */
function amount(rnd: () => number, min: number, max: number, step: 'pound' | 'fifty' | 'piaster'): string {
  if (step === 'pound') return `${int(rnd, min / 50, max / 50) * 50}.00`;
  const pounds = int(rnd, min, max - 1);
  const piasters = step === 'fifty' ? pick(rnd, ['00', '50']) : String(int(rnd, 0, 99)).padStart(2, '0');
  return `${pounds}.${piasters}`;
}

/** An Egyptian IBAN with correct ISO 7064 MOD-97 check digits: EG, 2 check digits, bank, branch, 17-digit account. */
export function makeEgyptianIban(bankCode: string, branch: string, account: string): string {
  const bban = `${bankCode}${branch}${account}`;
  if (!/^\d{25}$/.test(bban)) throw new RangeError('an Egyptian BBAN is 25 digits');
  // Move "EG00" to the end, letters as numbers (E = 14, G = 16), then 98 - (n mod 97).
  let remainder = 0;
  for (const d of `${bban}141600`) remainder = (remainder * 10 + Number(d)) % 97;
  return `EG${String(98 - remainder).padStart(2, '0')}${bban}`;
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) || value.trim() !== value ? `"${value.replace(/"/g, '""')}"` : value;
}

interface Person {
  readonly name: string;
  readonly arabic: boolean;
}

/** A father's name for `first`: Egyptian names are given name, father's name, family name. */
function father(rnd: () => number, first: string, males: readonly string[]): string {
  let name: string;
  do name = pick(rnd, males);
  while (name === first);
  return name;
}

function person(rnd: () => number): Person {
  const arabic = rnd() < 0.55;
  const female = rnd() < 0.4;
  if (arabic) {
    const first = pick(rnd, female ? AR_FEMALE : AR_MALE);
    return { name: `${first} ${father(rnd, first, AR_MALE)} ${pick(rnd, AR_FAMILY)}`, arabic };
  }
  const first = pick(rnd, female ? EN_FEMALE : EN_MALE);
  const name =
    rnd() < 0.5
      ? `${first} ${father(rnd, first, EN_MALE)} ${pick(rnd, EN_FAMILY)}`
      : `${first} ${pick(rnd, EN_FAMILY)}`;
  return { name, arabic };
}

function description(rnd: () => number, kind: Kind, arabic: boolean, order: number): string {
  switch (kind) {
    case 'salary':
      return arabic ? `صرف مرتب ${MONTH_AR}` : `${MONTH_EN} salary`;
    case 'commission':
      return arabic
        ? pick(rnd, [`عمولة مبيعات ${MONTH_AR}`, `عمولة ${MONTH_AR}`])
        : pick(rnd, [`${MONTH_EN} commission`, `${MONTH_EN} sales commission`]);
    case 'refund':
      return arabic ? `استرداد طلب رقم ${order}` : `Refund order ${order}`;
    case 'expense':
      return arabic
        ? pick(rnd, [`بدل انتقالات ${MONTH_AR}`, 'تسوية عهدة'])
        : pick(rnd, ['Travel expense reimbursement', 'Field visit expenses']);
    case 'bonus':
      return arabic ? 'مكافأة الربع الرابع' : 'Q4 performance bonus';
  }
}

function walletAmount(rnd: () => number, kind: Kind): string {
  // Kept well below the Central Bank of Egypt's EGP 60,000 daily limit for an individual's wallet.
  switch (kind) {
    case 'salary':
      return amount(rnd, 3500, 15000, 'pound');
    case 'commission':
      return amount(rnd, 250, 9000, 'fifty');
    case 'refund':
      return amount(rnd, 250, 6000, 'piaster');
    default:
      return amount(rnd, 250, 2500, 'fifty');
  }
}

function bankAmount(rnd: () => number, kind: Kind): string {
  switch (kind) {
    case 'salary':
      return amount(rnd, 6000, 45000, 'pound');
    case 'commission':
      return amount(rnd, 1500, 20000, 'fifty');
    case 'bonus':
      return amount(rnd, 2000, 30000, 'pound');
    default:
      return amount(rnd, 1000, 12000, 'piaster');
  }
}

/** The sample file's text (header, `rows` records, LF line ends, final newline). */
export function makeSampleCsv(seed: number = SAMPLE_SEED, rows: number = SAMPLE_ROWS): string {
  const rnd = prng(seed);
  const mobiles = new Set<string>();
  const accounts = new Set<string>();
  const walletRows = Math.round(rows * 0.6);
  // Wallet and bank rows interleaved in a fixed, shuffled order.
  const channels: ('wallet' | 'bank')[] = Array.from({ length: rows }, (_, i) => (i < walletRows ? 'wallet' : 'bank'));
  for (let i = channels.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [channels[i], channels[j]] = [channels[j]!, channels[i]!];
  }
  const lines = [HEADER.join(',')];
  let order = 18342;
  let bankRows = 0;
  channels.forEach((channel, i) => {
    const who = person(rnd);
    const kind = weighted(rnd, channel === 'wallet' ? WALLET_KINDS : BANK_KINDS);
    if (kind === 'refund') order += int(rnd, 3, 140);
    const cells: Record<(typeof HEADER)[number], string> = {
      channel,
      amount: channel === 'wallet' ? walletAmount(rnd, kind) : bankAmount(rnd, kind),
      type: kind === 'refund' ? 'REFUND' : 'TRANSFER',
      holder_name: who.name,
      mobile_number: '',
      bank_name: '',
      bank_address: '',
      account_number: '',
      description: description(rnd, kind, who.arabic, order),
      reference: `PAY-2026-11-${String(i + 1).padStart(4, '0')}`,
    };
    if (channel === 'wallet') {
      let mobile: string;
      do mobile = `+201${pick(rnd, ['0', '1', '2', '5'])}${digits(rnd, 8)}`;
      while (mobiles.has(mobile));
      mobiles.add(mobile);
      cells.mobile_number = mobile;
    } else {
      // The first bank rows go through the whole bank table once, so every bank appears; the rest are drawn at random.
      const bankIndex = bankRows < BANKS.length ? bankRows : int(rnd, 0, BANKS.length - 1);
      bankRows++;
      const bank = BANKS[bankIndex]!;
      cells.bank_name = bank.name;
      cells.bank_address = pick(rnd, ADDRESSES);
      let account: string;
      do
        account =
          rnd() < 0.25
            ? makeEgyptianIban(bank.code, digits(rnd, 4), digits(rnd, 17))
            : `${int(rnd, 1, 9)}${digits(rnd, int(rnd, 11, 15))}`;
      while (accounts.has(account));
      accounts.add(account);
      cells.account_number = account;
    }
    lines.push(HEADER.map((c) => csvField(cells[c])).join(','));
  });
  return `${lines.join('\n')}\n`;
}

function main(argv: readonly string[]): void {
  let seed = SAMPLE_SEED;
  let rows = SAMPLE_ROWS;
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--seed' || arg === '--rows') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n <= 0) throw new Error(`${arg} needs a positive whole number`);
      if (arg === '--seed') seed = n;
      else rows = n;
    } else out = arg;
  }
  const text = makeSampleCsv(seed, rows);
  if (out === undefined) process.stdout.write(text);
  else writeFileSync(out, text, 'utf8');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  main(process.argv.slice(2));
