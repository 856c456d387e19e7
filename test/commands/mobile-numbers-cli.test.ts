/**
 * The wallet number rule through the built `cashout validate` command, as a user runs it: a
 * mobile number that is not `+20` and exactly 10 digits (README "The CSV template") — the national
 * 0 kept after +20, one digit too many, the country code written twice — makes its row invalid:
 * the command exits 1 and names the line, the column, what was found and, where it is plain, the
 * number to write instead. Needs the build (`npx tsc -p .`); neither Redis nor the service.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const HEADER = [
  'channel,amount,type,holder_name,mobile_number',
  'bank_name,bank_address,account_number,description,reference',
].join(',');
const wallet = (mobile: string, n: number) => `wallet,25000.00,TRANSFER,Holder ${n},${mobile},,,,Payout ${n},REF-${n}`;
const dir = mkdtempSync(join(tmpdir(), 'cashout-mobile-cli-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes a payout file of the given wallet numbers (line 2 onwards) and validates it with the command. */
async function validate(name: string, mobiles: readonly string[]) {
  const path = join(dir, `${name}.csv`);
  writeFileSync(path, `${[HEADER, ...mobiles.map((m, i) => wallet(m, i + 1))].join('\n')}\n`);
  return runCli(['validate', path]);
}

describe('cashout validate on wallet numbers of the wrong length', () => {
  it('refuses +2001001234567 (11 digits after +20), naming its line and suggesting +201001234567', async () => {
    const r = await validate('zero-after-country-code', ['+201001234567', '+2001001234567']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('line '));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^line 3, mobile_number: found "\+2001001234567", which is not a valid mobile number/);
    expect(lines[0]).toContain('it has 11 digits after +20, starting with 0');
    expect(lines[0]).toContain('expected +20 and exactly 10 digits');
    expect(lines[0]).toContain('(did you mean "+201001234567"?)');
    expect(r.stdout).toContain('2 rows, 1 valid, 1 invalid');
  });

  it('refuses 11 and 12 digits, a 0 after +20 and the country code twice, each on its own line', async () => {
    const mobiles = ['+2010012345678', '+20010012345678', '+200100123456', '+20201001234567', '+201512345678'];
    const r = await validate('wrong-lengths', mobiles);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('line '));
    expect(lines.map((l) => l.slice(0, l.indexOf(':')))).toEqual([2, 3, 4, 5].map((n) => `line ${n}, mobile_number`));
    expect(lines[0]).toContain('it has 11 digits after +20');
    expect(lines[1]).toContain('it has 12 digits after +20, starting with 0');
    expect(lines[2]).toContain('the national 0 is not written after +20');
    expect(lines[3]).toContain('(did you mean "+201001234567"?)');
  });

  it('still accepts +20 and 10 digits (exit 0)', async () => {
    const r = await validate('valid', ['+201001234567', '+201123456789', '+201234567890', '+201512345678']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });
});
