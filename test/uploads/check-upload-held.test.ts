/**
 * The upload check counts apart the valid rows whose payee another batch holds (as the payout
 * register answers for the import's own payee keys): what Send pays is the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkUpload } from '../../src/uploads/check-upload.js';
import { payableOf } from '../../src/uploads/upload-store.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import type { PayeeHolder } from '../../src/ledger/payout-register.js';
import { HEADER, bankRow, walletRow } from '../support/pipeline.js';

describe('checkUpload with the payout register', () => {
  let dir: string;
  const rules = { banks: loadBankList(), walletCountries: ['EG'], maxFieldLength: 255 };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cashout-check-held-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('counts the held rows apart, names the first, and leaves the rest payable', async () => {
    const path = join(dir, 'held.csv');
    // A row without reference gets a fingerprint key, the others their reference's.
    const noReference = walletRow(3, '30.00').replace(/,REF-3$/, ',');
    await writeFile(path, `${[HEADER, walletRow(1, '10.00'), bankRow(2, '20.00'), noReference].join('\n')}\n`);
    const asked: string[][] = [];
    const holder: PayeeHolder = {
      batchId: 'abcdefabcdef0003',
      seq: 1,
      line: 7,
      state: 'accepted',
      batchState: 'finished',
      finishedAt: '2026-11-20T10:00:00.000Z',
    };
    const check = await checkUpload(
      dir,
      path,
      rules,
      {},
      {
        heldPayees: async (keys) => {
          asked.push([...keys]);
          // The bank row's payee is held.
          return new Map([[keys.indexOf('r:BREF-2'), holder]]);
        },
      },
    );
    expect(asked).toHaveLength(1);
    expect(asked[0]!.slice(0, 2)).toEqual(['r:REF-1', 'r:BREF-2']);
    expect(asked[0]![2]).toMatch(/^f:[0-9a-f]{32}#1$/);
    expect(check.total).toEqual({ rows: 3, amount: '60.00' });
    expect(check.held).toEqual({
      rows: 1,
      amount: '20.00',
      first: 'line 3: not sent: reference BREF-2 was already paid in batch abcdefabcdef0003 line 7 on 2026-11-20',
    });
    expect(payableOf(check)).toEqual({ rows: 2, amount: '40.00' });
  });

  it('without the register, nothing is held', async () => {
    const path = join(dir, 'plain.csv');
    await writeFile(path, `${[HEADER, walletRow(1, '10.00')].join('\n')}\n`);
    const check = await checkUpload(dir, path, rules, {});
    expect(check.held).toEqual({ rows: 0, amount: '0.00' });
    expect(payableOf(check)).toEqual({ rows: 1, amount: '10.00' });
  });
});
