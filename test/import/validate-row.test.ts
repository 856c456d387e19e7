/** One CSV record → a payout item or every issue of the row (interface doc §2.4.1 wallet rows, §2.4.2 bank rows). */
import { describe, expect, it } from 'vitest';
import { COLUMNS, indexHeader, type ColumnName } from '../../src/import/columns.js';
import { createRowValidator, type RowOutcome, type RowRules } from '../../src/import/validate-row.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { describeIssue, describeIssues } from '../../src/import/reasons.js';
import type { RowIssue } from '../../src/import/row-issues.js';

const RULES: RowRules = { banks: loadBankList(), walletCountries: ['EG'], maxFieldLength: 255 };
const HEADER = indexHeader([...COLUMNS]);

type Row = Partial<Record<ColumnName, string>>;

const WALLET: Row = {
  channel: 'wallet',
  amount: '1500.00',
  type: 'TRANSFER',
  holder_name: 'محمد أحمد السيد',
  mobile_number: '+201001234567',
  description: 'November commission',
  reference: 'PAY-2026-11-0001',
};

const BANK: Row = {
  channel: 'bank',
  amount: '18500.00',
  type: 'TRANSFER',
  holder_name: 'Mona Hassan Fahmy',
  bank_name: 'National Bank of Egypt',
  bank_address: '12 Talaat Harb St, Cairo',
  account_number: '100234567812',
  description: 'November salary',
  reference: 'PAY-2026-11-0002',
};

/** The record of `row` in template column order. */
function record(row: Row): string[] {
  return COLUMNS.map((c) => row[c] ?? '');
}

/** Validates one row with a fresh validator (no references seen before). */
function check(row: Row, line = 2): RowOutcome {
  return createRowValidator(HEADER, RULES)(record(row), line);
}

function issuesOf(outcome: RowOutcome): readonly RowIssue[] {
  return outcome.ok ? [] : outcome.issues;
}

/** The only issue of a row, failing the test when there are none or several. */
function onlyIssue(row: Row): RowIssue {
  const issues = issuesOf(check(row));
  expect(issues, JSON.stringify(row)).toHaveLength(1);
  return issues[0]!;
}

describe('createRowValidator: valid rows', () => {
  it('turns a wallet row into a mobile wallet item', () => {
    const outcome = check(WALLET, 7);
    expect(outcome).toEqual({
      ok: true,
      item: {
        line: 7,
        reference: 'PAY-2026-11-0001',
        channel: 'wallet',
        wallet: {
          amount: '1500.00',
          type: 'TRANSFER',
          holder_name: 'محمد أحمد السيد',
          mobile_number: '+201001234567',
          description: 'November commission',
        },
      },
    });
  });

  it('turns a bank row into a bank account item with the account in `number`', () => {
    const outcome = check(BANK, 3);
    expect(outcome).toEqual({
      ok: true,
      item: {
        line: 3,
        reference: 'PAY-2026-11-0002',
        channel: 'bank',
        bank: {
          amount: '18500.00',
          type: 'TRANSFER',
          holder_name: 'Mona Hassan Fahmy',
          bank_name: 'National Bank of Egypt',
          bank_address: '12 Talaat Harb St, Cairo',
          number: '100234567812',
          description: 'November salary',
        },
      },
    });
  });

  it.each([
    [{ ...BANK, account_number: 'EG380019000500000000263180002' }],
    [{ ...BANK, bank_name: 'Al Ahli Bank of Kuwait \u2013 Egypt' }],
    [{ ...BANK, bank_name: 'Abu Dhabi Islamic Bank \u2013 Egypt' }],
    [{ ...BANK, bank_name: 'Nasser social Bank', type: 'REFUND' }],
    [{ ...WALLET, type: 'REFUND', amount: '0.50', reference: '' }],
    [{ ...WALLET, mobile_number: '+201512345678', description: 'صرف مرتب نوفمبر' }],
  ])('accepts %j', (row) => {
    expect(check(row).ok).toBe(true);
  });

  it('trims free text and keeps the rest as written', () => {
    const outcome = check({
      ...WALLET,
      holder_name: '  Mona Hassan ',
      description: ' Refund order 18342 ',
      reference: ' R-1 ',
    });
    expect(outcome.ok && outcome.item.channel === 'wallet' && outcome.item.wallet.holder_name).toBe('Mona Hassan');
    expect(outcome.ok && outcome.item.reference).toBe('R-1');
  });

  it('works with a header without the reference column', () => {
    const header = indexHeader(COLUMNS.filter((c) => c !== 'reference'));
    const validate = createRowValidator(header, RULES);
    const outcome = validate(
      COLUMNS.filter((c) => c !== 'reference').map((c) => WALLET[c] ?? ''),
      2,
    );
    expect(outcome.ok && outcome.item.reference).toBe('');
  });

  it('accepts trailing empty cells beyond the header', () => {
    const validate = createRowValidator(HEADER, RULES);
    expect(validate([...record(WALLET), '', ' '], 2).ok).toBe(true);
  });
});

describe('createRowValidator: channel and type', () => {
  it.each([
    ['', 'required', undefined],
    ['Wallet', 'channel_invalid', 'wallet'],
    ['BANK', 'channel_invalid', 'bank'],
    [' wallet', 'channel_invalid', 'wallet'],
    ['mobile', 'channel_invalid', undefined],
  ])('channel %j → %s, suggestion %j', (channel, code, suggestion) => {
    const issue = onlyIssue({ ...WALLET, channel });
    expect(issue).toMatchObject({ column: 'channel', code });
    expect(issue.suggestion).toBe(suggestion);
  });

  it.each([
    ['', 'required', undefined],
    ['transfer', 'type_invalid', 'TRANSFER'],
    ['Refund', 'type_invalid', 'REFUND'],
    ['TRANSFER ', 'type_invalid', 'TRANSFER'],
    ['PAYMENT', 'type_invalid', undefined],
  ])('type %j → %s, suggestion %j', (type, code, suggestion) => {
    const issue = onlyIssue({ ...WALLET, type });
    expect(issue).toMatchObject({ column: 'type', code });
    expect(issue.suggestion).toBe(suggestion);
  });
});

describe('createRowValidator: amount', () => {
  it.each([
    ['', 'required', undefined],
    ['1,500.00', 'amount_thousands_separator', '1500.00'],
    ['100.5', 'amount_decimal_places', '100.50'],
    ['100', 'amount_decimal_places', '100.00'],
    ['-5.00', 'amount_not_positive', undefined],
    ['0.00', 'amount_not_positive', undefined],
    ['100.00 EGP', 'amount_currency_text', '100.00'],
    ['١٥٠٠.٠٠', 'amount_non_latin_digits', '1500.00'],
  ])('amount %j → %s, suggestion %j', (amount, code, suggestion) => {
    const issue = onlyIssue({ ...BANK, amount });
    expect(issue).toMatchObject({ column: 'amount', code });
    expect(issue.suggestion).toBe(suggestion);
  });
});

describe('createRowValidator: required cells', () => {
  it.each([
    [WALLET, 'holder_name'],
    [WALLET, 'description'],
    [WALLET, 'mobile_number'],
    [BANK, 'holder_name'],
    [BANK, 'description'],
    [BANK, 'bank_name'],
    [BANK, 'bank_address'],
    [BANK, 'account_number'],
  ] as const)('%j without %s → required', (row, column) => {
    expect(onlyIssue({ ...row, [column]: '' })).toMatchObject({ column, code: 'required' });
  });

  it('treats a cell of spaces as empty for free text', () => {
    expect(onlyIssue({ ...WALLET, description: '   ' })).toMatchObject({ column: 'description', code: 'required' });
  });

  it('does not require the reference', () => {
    expect(check({ ...BANK, reference: '' }).ok).toBe(true);
  });
});

describe('createRowValidator: columns of the other channel', () => {
  it.each(['bank_name', 'bank_address', 'account_number'] as const)(
    'wallet row with %s filled → not_for_channel',
    (column) => {
      const issue = onlyIssue({ ...WALLET, [column]: BANK[column] });
      expect(issue).toMatchObject({
        column,
        code: 'not_for_channel',
        found: BANK[column],
        params: { channel: 'wallet' },
      });
    },
  );

  it('reports every bank column filled on a wallet row', () => {
    const issues = issuesOf(
      check({ ...WALLET, bank_name: 'Banque Misr', bank_address: 'Cairo', account_number: '205566778899' }),
    );
    expect(issues.map((i) => `${i.column}:${i.code}`)).toEqual([
      'bank_name:not_for_channel',
      'bank_address:not_for_channel',
      'account_number:not_for_channel',
    ]);
  });

  it('bank row with mobile_number filled → not_for_channel', () => {
    const issue = onlyIssue({ ...BANK, mobile_number: '+201287654321' });
    expect(issue).toMatchObject({ column: 'mobile_number', code: 'not_for_channel', params: { channel: 'bank' } });
  });
});

describe('createRowValidator: mobile_number', () => {
  it.each([
    ['01001234567', 'mobile_not_international', '+201001234567'],
    ['00201001234567', 'mobile_not_international', '+201001234567'],
    ['+20225791234', 'mobile_not_mobile', undefined],
    ['+971501234567', 'mobile_country', undefined],
    ['+2010012345', 'mobile_invalid', undefined],
    ['+2001001234567', 'mobile_invalid', '+201001234567'],
    ['+2010012345678', 'mobile_invalid', undefined],
  ])('%j → %s, suggestion %j', (mobile_number, code, suggestion) => {
    const issue = onlyIssue({ ...WALLET, mobile_number });
    expect(issue).toMatchObject({ column: 'mobile_number', code });
    expect(issue.suggestion).toBe(suggestion);
  });

  it('follows the configured wallet countries', () => {
    const validate = createRowValidator(HEADER, { ...RULES, walletCountries: ['EG', 'AE'] });
    expect(validate(record({ ...WALLET, mobile_number: '+971501234567' }), 2).ok).toBe(true);
  });
});

describe('createRowValidator: bank_name', () => {
  it.each([
    ['national bank of egypt', 'National Bank of Egypt'],
    ['NATIONAL BANK OF EGYPT', 'National Bank of Egypt'],
    ['National Bank of Egypt ', 'National Bank of Egypt'],
    [' Banque Misr', 'Banque Misr'],
    ['Banque  Misr', 'Banque Misr'],
    ['Al Ahli Bank of Kuwait - Egypt', 'Al Ahli Bank of Kuwait \u2013 Egypt'],
    ['Al Ahli Bank of Kuwait-Egypt', 'Al Ahli Bank of Kuwait \u2013 Egypt'],
    ['Abu Dhabi Islamic Bank \u2014 Egypt', 'Abu Dhabi Islamic Bank \u2013 Egypt'],
    ['Nasser Social Bank', 'Nasser social Bank'],
  ])('%j → bank_near_match with %j', (bank_name, listed) => {
    const issue = onlyIssue({ ...BANK, bank_name });
    expect(issue).toMatchObject({ column: 'bank_name', code: 'bank_near_match', found: bank_name });
    expect(issue.params?.banks).toEqual([listed]);
  });

  it.each([
    ['\uFEFFHSBC', 'HSBC', 'U+FEFF ZERO WIDTH NO-BREAK SPACE (byte-order mark)'],
    ['Banque\u200bMisr', 'Banque Misr', 'U+200B ZERO WIDTH SPACE'],
    ['Banque Misr\u200e', 'Banque Misr', 'U+200E LEFT-TO-RIGHT MARK'],
  ])('%j → text_invisible_chars suggesting %j and naming %s', (bank_name, fixed, name) => {
    const issue = onlyIssue({ ...BANK, bank_name });
    expect(issue).toMatchObject({ column: 'bank_name', code: 'text_invisible_chars', found: bank_name });
    expect(describeIssue(issue)).toContain(name);
    if (fixed === 'HSBC') expect(issue.suggestion).toBe('HSBC');
  });

  it('a no-break space where the listed name has a space → bank_no_break_space, the character named', () => {
    const issue = onlyIssue({ ...BANK, bank_name: 'Banque\u00a0Misr' });
    expect(issue).toMatchObject({ column: 'bank_name', code: 'bank_no_break_space', suggestion: 'Banque Misr' });
    expect(describeIssue(issue)).toContain('found "Banque\\u00a0Misr", which holds U+00A0 NO-BREAK SPACE');
  });

  it.each([
    ['holder_name', 'Omar\u200dKhaled', 'U+200D ZERO WIDTH JOINER'],
    ['holder_name', '\u0645\u062d\u0645\u062f\u200c\u0639\u0644\u064a', 'U+200C ZERO WIDTH NON-JOINER'],
    ['description', 'Payout\u2028May', 'U+2028 LINE SEPARATOR'],
    ['amount', '100.00\u200f', 'U+200F RIGHT-TO-LEFT MARK'],
    ['mobile_number', '+20\u200b1001234567', 'U+200B ZERO WIDTH SPACE'],
    ['type', 'TRANSFER\u2060', 'U+2060 WORD JOINER'],
  ] as const)('%s %j → text_invisible_chars naming %s', (column, value, name) => {
    const issue = onlyIssue({ ...WALLET, [column]: value });
    expect(issue).toMatchObject({ column, code: 'text_invisible_chars', found: value });
    expect(describeIssue(issue)).toContain(name);
  });

  it.each([
    ['Banqe Misr', 'Banque Misr'],
    ['Natonal Bank of Egypt', 'National Bank of Egypt'],
    ['Suez Canal Bnk', 'Suez Canal Bank'],
  ])('typo %j → bank_unknown suggesting %j', (bank_name, listed) => {
    const issue = onlyIssue({ ...BANK, bank_name });
    expect(issue).toMatchObject({ column: 'bank_name', code: 'bank_unknown', found: bank_name });
    expect(issue.params?.banks).toContain(listed);
  });

  it.each(['CIB', 'NBE', 'QNB', 'AlAhly', 'bank Misr', 'Misr Bank', 'Default Bank'])(
    'alias or unknown name %j → bank_unknown with no suggestion',
    (bank_name) => {
      const issue = onlyIssue({ ...BANK, bank_name });
      expect(issue).toMatchObject({ column: 'bank_name', code: 'bank_unknown' });
      expect(issue.suggestion).toBeUndefined();
      expect(issue.params?.banks).toEqual([]);
      expect(describeIssue(issue)).not.toContain('did you mean');
    },
  );
});

describe('createRowValidator: account_number', () => {
  it.each([
    ['1002 3456 7890 12', 'account_format', '10023456789012'],
    ['EG38 0019 0005 0000 0000 2631 8000 2', 'account_format', 'EG380019000500000000263180002'],
    ['12345', 'account_invalid', undefined],
    ['EG390019000500000000263180002', 'iban_checksum', undefined],
    ['EG3800190005', 'iban_invalid', undefined],
  ])('%j → %s, suggestion %j', (account_number, code, suggestion) => {
    const issue = onlyIssue({ ...BANK, account_number });
    expect(issue).toMatchObject({ column: 'account_number', code });
    expect(issue.suggestion).toBe(suggestion);
  });
});

describe('createRowValidator: free text', () => {
  it('refuses a value longer than maxFieldLength', () => {
    const issue = onlyIssue({ ...WALLET, description: 'x'.repeat(256) });
    expect(issue).toMatchObject({ column: 'description', code: 'text_too_long', params: { length: 256, max: 255 } });
    expect(check({ ...WALLET, description: 'x'.repeat(255) }).ok).toBe(true);
  });

  it.each([
    ['holder_name', 'Mona\u0007Hassan'],
    ['holder_name', 'Mona\nHassan'],
    ['description', 'Refund\torder'],
  ] as const)('%s %j → text_control_chars', (column, value) => {
    expect(onlyIssue({ ...WALLET, [column]: value })).toMatchObject({ column, code: 'text_control_chars' });
  });

  it('allows a line break inside a bank address', () => {
    expect(check({ ...BANK, bank_address: '12 Talaat Harb St\nCairo' }).ok).toBe(true);
  });

  it.each([
    '\u200fمحمد أحمد',
    'Mona\u202eHassan',
    'Mona\ufeffHassan',
    'Omar\u200bKhaled',
    'Omar\u2060Khaled',
    'Sa\u00adra',
  ])('holder_name %j → text_invisible_chars', (holder_name) => {
    expect(onlyIssue({ ...WALLET, holder_name })).toMatchObject({
      column: 'holder_name',
      code: 'text_invisible_chars',
    });
  });
});

describe('createRowValidator: field count', () => {
  it('reports a row with fewer fields than the header as field_count', () => {
    const validate = createRowValidator(HEADER, RULES);
    const outcome = validate(record(WALLET).slice(0, 9), 4);
    expect(outcome).toEqual({
      ok: false,
      line: 4,
      issues: [{ column: 'row', code: 'field_count', params: { found: 9, expected: 10 } }],
    });
  });

  it('reports a row with a filled extra field as field_count', () => {
    const validate = createRowValidator(HEADER, RULES);
    const outcome = validate([...record(WALLET), 'extra'], 5);
    expect(issuesOf(outcome)).toEqual([{ column: 'row', code: 'field_count', params: { found: 11, expected: 10 } }]);
  });

  it('describes the field counts', () => {
    const validate = createRowValidator(HEADER, RULES);
    const sentence = describeIssues(issuesOf(validate(record(WALLET).slice(0, 9), 4)));
    expect(sentence).toContain('9 fields');
    expect(sentence).toContain('10');
  });
});

describe('createRowValidator: references', () => {
  it('refuses a reference used earlier in the file, naming the first line', () => {
    const validate = createRowValidator(HEADER, RULES);
    expect(validate(record(WALLET), 2).ok).toBe(true);
    expect(validate(record({ ...BANK, reference: 'OTHER' }), 3).ok).toBe(true);
    const second = validate(record({ ...BANK, reference: WALLET.reference }), 4);
    expect(issuesOf(second)).toEqual([
      { column: 'reference', code: 'reference_duplicate', found: WALLET.reference, params: { firstLine: 2 } },
    ]);
    const third = validate(record({ ...BANK, reference: ` ${WALLET.reference!} ` }), 9);
    expect(issuesOf(third)[0]?.params).toEqual({ firstLine: 2 });
  });

  it('never counts empty references as duplicates', () => {
    const validate = createRowValidator(HEADER, RULES);
    expect(validate(record({ ...WALLET, reference: '' }), 2).ok).toBe(true);
    expect(validate(record({ ...WALLET, reference: '' }), 3).ok).toBe(true);
  });

  it('starts afresh for each file', () => {
    expect(check(WALLET).ok).toBe(true);
    expect(check(WALLET).ok).toBe(true);
  });
});

describe('createRowValidator: several problems at once', () => {
  it('reports every issue of the row, not only the first', () => {
    const issues = issuesOf(
      check({ ...BANK, amount: '100', type: 'transfer', bank_name: 'CIB', account_number: '12345', description: '' }),
    );
    expect(issues.map((i) => `${i.column}:${i.code}`).sort()).toEqual(
      [
        'account_number:account_invalid',
        'amount:amount_decimal_places',
        'bank_name:bank_unknown',
        'description:required',
        'type:type_invalid',
      ].sort(),
    );
  });
});

describe('describeIssue', () => {
  it.each([
    [{ ...WALLET, amount: '1,500.00' }, ['"1,500.00"', '"1500.00"']],
    [{ ...WALLET, mobile_number: '01001234567' }, ['"01001234567"', '"+201001234567"']],
    [{ ...WALLET, channel: 'Wallet' }, ['"Wallet"', 'did you mean "wallet"']],
    [{ ...WALLET, type: 'transfer' }, ['"transfer"', 'TRANSFER']],
    [
      { ...BANK, bank_name: 'Al Ahli Bank of Kuwait - Egypt' },
      ['"Al Ahli Bank of Kuwait - Egypt"', '"Al Ahli Bank of Kuwait \u2013 Egypt"'],
    ],
    [{ ...BANK, bank_name: 'CIB' }, ['"CIB"', 'not on the supported bank list']],
    [{ ...BANK, account_number: 'EG390019000500000000263180002' }, ['"EG390019000500000000263180002"']],
    [{ ...WALLET, bank_name: 'Banque Misr' }, ['"Banque Misr"', 'wallet row']],
    [{ ...WALLET, holder_name: '\u200fمحمد' }, ['\\u200f']],
  ])('for %j mentions what was found', (row, parts) => {
    const sentence = describeIssue(onlyIssue(row));
    for (const part of parts) expect(sentence).toContain(part);
  });

  it('names the first line of a duplicate reference', () => {
    const validate = createRowValidator(HEADER, RULES);
    validate(record(WALLET), 12);
    const sentence = describeIssue(issuesOf(validate(record(WALLET), 30))[0]!);
    expect(sentence).toContain('line 12');
    expect(sentence).toContain(`"${WALLET.reference!}"`);
  });

  it('prefixes each issue with its column in describeIssues', () => {
    const text = describeIssues(issuesOf(check({ ...WALLET, amount: '100', description: '' })));
    expect(text).toMatch(/^amount: .*; description: /);
  });
});
