/** The header check: known columns in any order and case, reference optional, clear file-level errors. */
import { describe, expect, it } from 'vitest';
import { closestColumn, COLUMNS, indexHeader, normaliseHeaderName } from '../../src/import/columns.js';
import { CashoutError, isCashoutError } from '../../src/errors.js';

const TEMPLATE = [...COLUMNS];

/** The error indexHeader throws for `record` (fails the test when it throws none). */
function headerError(record: readonly string[]): CashoutError {
  try {
    indexHeader(record);
  } catch (err) {
    if (err instanceof CashoutError) return err;
    throw err;
  }
  throw new Error(`indexHeader accepted ${JSON.stringify(record)}`);
}

describe('COLUMNS', () => {
  it('lists the template columns in the documented order', () => {
    expect(COLUMNS).toEqual([
      'channel',
      'amount',
      'type',
      'holder_name',
      'mobile_number',
      'bank_name',
      'bank_address',
      'account_number',
      'description',
      'reference',
    ]);
  });
});

describe('indexHeader', () => {
  it('maps each column to its position', () => {
    const index = indexHeader(TEMPLATE);
    TEMPLATE.forEach((c, i) => expect(index[c]).toBe(i));
  });

  it('accepts any order, any case, surrounding spaces and a byte-order mark', () => {
    const record = [
      '\uFEFFReference',
      ' AMOUNT ',
      'Channel',
      'type',
      'holder_name',
      'Mobile_Number',
      'bank_name',
      'bank_address',
      'account_number',
      'description',
    ];
    const index = indexHeader(record);
    expect(index.reference).toBe(0);
    expect(index.amount).toBe(1);
    expect(index.channel).toBe(2);
    expect(index.description).toBe(9);
  });

  it('accepts a header without the optional reference column, with position -1', () => {
    const index = indexHeader(TEMPLATE.filter((c) => c !== 'reference'));
    expect(index.reference).toBe(-1);
    expect(index.description).toBe(8);
  });

  it.each([
    ['acount_number', 'account_number'],
    ['holder name', 'holder_name'],
    ['descripton', 'description'],
    ['chanel', 'channel'],
    ['Bank_Nme', 'bank_name'],
  ])('refuses the unknown column %j with code column_unknown and suggests %j', (wrong, near) => {
    const record = TEMPLATE.map((c) => (c === near ? wrong : c));
    const err = headerError(record);
    expect(err.code).toBe('column_unknown');
    expect(err.context).toMatchObject({
      column: wrong,
      position: TEMPLATE.indexOf(near as (typeof COLUMNS)[number]) + 1,
      suggestion: near,
    });
    expect(err.message).toContain(wrong);
    expect(err.message).toContain(`did you mean "${near}"`);
  });

  it('refuses an unrelated column with no suggestion but the list of known columns', () => {
    const err = headerError([...TEMPLATE, 'employee_grade']);
    expect(err.code).toBe('column_unknown');
    expect(err.context.suggestion).toBeUndefined();
    expect(err.message).toContain('known columns are');
  });

  it.each([
    [['amount'], ['amount']],
    [
      ['mobile_number', 'bank_name'],
      ['mobile_number', 'bank_name'],
    ],
    [['description'], ['description']],
  ])('refuses a header lacking %j with code column_missing', (drop, missing) => {
    const err = headerError(TEMPLATE.filter((c) => !drop.includes(c)));
    expect(err.code).toBe('column_missing');
    expect(err.context.columns).toEqual(missing);
    for (const m of missing) expect(err.message).toContain(`"${m}"`);
  });

  it.each([['amount'], ['Amount'], [' amount']])(
    'refuses a second amount column written %j with code column_duplicated',
    (second) => {
      const err = headerError([...TEMPLATE, second]);
      expect(err.code).toBe('column_duplicated');
      expect(err.context.column).toBe('amount');
    },
  );

  it.each([
    [['wallet', '1500.00', 'TRANSFER', 'Mona', '+201001234567', '', '', '', 'November salary', 'PAY-1']],
    [['', '', '']],
  ])('refuses a first line that is no header (%j) with code header_missing', (record) => {
    const err = headerError(record);
    expect(isCashoutError(err, 'header_missing')).toBe(true);
  });
});

describe('indexHeader on a file read with the wrong delimiter', () => {
  it.each([
    [';', 'semicolons', 'semicolon'],
    ['\t', 'tabs', 'tab'],
    ['|', 'pipes (|)', 'pipe'],
  ])('a header joined by %j → file_delimiter naming --delimiter %s', (d, plural, name) => {
    const err = headerError([TEMPLATE.join(d)]);
    expect(err.code).toBe('file_delimiter');
    expect(err.message).toContain(`the file seems to be separated by ${plural}; run again with --delimiter ${name}`);
  });

  it('a comma-separated header read with another delimiter → file_delimiter naming comma', () => {
    const err = headerError([TEMPLATE.join(',')]);
    expect(err.code).toBe('file_delimiter');
    expect(err.message).toContain('--delimiter comma');
  });

  it('an unknown column that merely holds a semicolon is still column_unknown', () => {
    expect(headerError([...TEMPLATE, 'notes;comments']).code).toBe('column_unknown');
  });
});

describe('closestColumn', () => {
  it.each([
    ['amout', 'amount'],
    ['refrence', 'reference'],
    ['mobile_numbr', 'mobile_number'],
    ['xyz', undefined],
    ['salary_grade', undefined],
  ])('%j → %j', (name, near) => {
    expect(closestColumn(name)).toBe(near);
  });
});

describe('normaliseHeaderName', () => {
  it('drops a byte-order mark, trims and lower-cases', () => {
    expect(normaliseHeaderName('\uFEFF Holder_Name ')).toBe('holder_name');
  });
});
