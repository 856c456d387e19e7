/**
 * One test per row of the README's exit-code table, through the built `cashout` command as a user
 * runs it (real Redis, a sandbox started here, a key prefix of this file's own):
 * 0 every row accepted, 1 some row not accepted, 2 bad usage (of any subcommand, as for a
 * mistyped command name) or an unreadable file, 3 Redis unreachable, 4 the service unreachable or
 * the token refused. Code 5 belongs to `cashout worker` alone and needs Redis to go away under a
 * running worker: `worker-shutdown.test.ts` runs that and expects `EXIT_LEFT_FOR_RECOVERY`; here
 * the table's 5 is checked to be that constant and that test to assert it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/errors.js';
import { EXIT_LEFT_FOR_RECOVERY } from '../../src/commands/worker.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { freePort } from '../../src/queue/private-redis.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { ROOT, runCli, type CliResult } from '../support/cli.js';
import { HEADER, walletRow } from '../support/pipeline.js';
import { TEST_REDIS_URL, deleteKeys } from '../support/redis.js';

const TOKEN = `exit-${randomBytes(8).toString('hex')}`;
const PREFIX = `{cashout-test-exit-${randomBytes(4).toString('hex')}}`;

/** The codes of the README's "Exit codes" table, in its order. */
function readmeExitCodes(): number[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Exit codes'));
  const table = section.slice(0, section.indexOf('\n## '));
  return [...table.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
}

describe('exit codes of the README table, through the cashout command', () => {
  let dir: string;
  let sandbox: Sandbox;
  let valid: string;
  let invalid: string;
  let fresh: string;
  const shown = (r: CliResult) =>
    `exit ${r.code}\nstdout:\n${r.stdout.slice(0, 1500)}\nstderr:\n${r.stderr.slice(0, 1500)}`;
  const env = (extra: Record<string, string> = {}) => ({
    CASHOUT_API_BASE_URL: sandbox.url,
    CASHOUT_API_TOKEN: TOKEN,
    REDIS_URL: TEST_REDIS_URL,
    CASHOUT_REDIS_PREFIX: PREFIX,
    CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
    CASHOUT_REPORTS_DIR: join(dir, 'reports'),
    CASHOUT_CONNECT_RETRIES: '0',
    CASHOUT_LOG_LEVEL: 'warn',
    ...extra,
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cashout-exit-'));
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    valid = join(dir, 'valid.csv');
    invalid = join(dir, 'invalid.csv');
    // Each file's content is its own (random amounts): a run never meets content imported before.
    const cents = () =>
      `${1 + (randomBytes(2).readUInt16BE(0) % 900)}.${String(randomBytes(1)[0]! % 100).padStart(2, '0')}`;
    writeFileSync(valid, `${[HEADER, walletRow(1, cents()), walletRow(2, cents())].join('\n')}\n`);
    fresh = join(dir, 'fresh.csv');
    writeFileSync(fresh, `${[HEADER, walletRow(5, cents()), walletRow(6, cents())].join('\n')}\n`);
    writeFileSync(invalid, `${[HEADER, walletRow(3, cents()), walletRow(4, '"1,500.00"')].join('\n')}\n`);
  });

  afterAll(async () => {
    await sandbox.close();
    await deleteKeys(PREFIX);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the README lists exactly the codes 0 to 5, and the program uses the same numbers', () => {
    expect(readmeExitCodes()).toEqual([0, 1, 2, 3, 4, 5]);
    const codes = [EXIT.ok, EXIT.notAllAccepted, EXIT.usage, EXIT.redis, EXIT.service, EXIT.leftForRecovery];
    expect(codes).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('0: every row accepted (run) and every row valid (validate)', async () => {
    const ran = await runCli(['run', valid], env());
    expect(ran.code, shown(ran)).toBe(0);
    expect(ran.stdout).toMatch(/^  accepted +2 /m);
    const checked = await runCli(['validate', valid]);
    expect(checked.code, shown(checked)).toBe(0);
  }, 60_000);

  it('1: finished, but some row is not accepted (run and validate)', async () => {
    const ran = await runCli(['run', invalid], env());
    expect(ran.code, shown(ran)).toBe(1);
    expect(ran.stdout).toMatch(/^  invalid +1 /m);
    expect(sandbox.received()).toBe(1); // the valid file's one request; the invalid file sent nothing
    const checked = await runCli(['validate', invalid]);
    expect(checked.code, shown(checked)).toBe(1);
    expect(checked.stdout).toContain('line 3, amount: found "1,500.00"');
  }, 60_000);

  it('1: import of a file with no row left to send (every payee held by another batch), its report written', async () => {
    // walletRow(1) and walletRow(2) were paid by the first test's run; other amounts, same references.
    const held = join(dir, 'held.csv');
    writeFileSync(held, `${[HEADER, walletRow(1, '11.00'), walletRow(2, '12.00')].join('\n')}\n`);
    const r = await runCli(['import', held], env());
    expect(r.code, shown(r)).toBe(1);
    expect(r.stdout).toMatch(/\(finished\)/);
    expect(r.stdout).toMatch(/^  duplicate +2 /m);
    const report = /Report: (.+results\.csv)/.exec(r.stdout)![1]!;
    expect(readFileSync(report, 'utf8')).toMatch(/,duplicate,/);
  }, 60_000);

  it('1: validate of many bad rows prints the first 50, then them grouped; --errors-file has all', async () => {
    const many = join(dir, 'many.csv');
    const rows = Array.from({ length: 120 }, (_, i) => walletRow(100 + i, '"1,500.00"'));
    writeFileSync(many, `${[HEADER, ...rows].join('\n')}\n`);
    const errors = join(dir, 'errors.csv');
    const r = await runCli(['validate', many, '--errors-file', errors]);
    expect(r.code, shown(r)).toBe(1);
    expect(r.stdout.split('\n').filter((l) => /^line \d+, /.test(l))).toHaveLength(50);
    expect(r.stdout).toContain('… and 70 more problems');
    expect(r.stdout).toMatch(
      /^Problems by column and reason:\n  120 × amount, amount_thousands_separator \(first on line 2: /m,
    );
    const written = readFileSync(errors, 'utf8')
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\n');
    expect(written[0]).toBe('line,column,code,found,suggestion,message');
    expect(written).toHaveLength(121);
    expect(written[1]).toMatch(/^2,amount,amount_thousands_separator,"1,500.00",1500.00,"found ""1,500.00"" with/);
  });

  it.each([
    ['a mistyped command', ['validat', 'x.csv'], 'unknown command', 'cashout'],
    ['a subcommand without its argument', ['validate'], "missing required argument 'file'", 'cashout validate'],
    [
      'a subcommand with an argument too many',
      ['validate', 'a.csv', 'b.csv'],
      'too many arguments',
      'cashout validate',
    ],
    [
      'a subcommand without a required option',
      ['resolve', '0123456789abcdef', '1', '--created'],
      "required option '--note <text>'",
      'cashout resolve',
    ],
    ['an unknown option of a subcommand', ['run', 'x.csv', '--partail'], "unknown option '--partail'", 'cashout run'],
    ['a bad option value', ['validate', 'x.csv', '--delimiter', 'xy'], 'expected one character', undefined],
    ['a file that does not exist', ['validate', '/nonexistent/payouts.csv'], 'file not found', undefined],
    [
      'a sub-subcommand without a required option',
      ['api-key', 'create'],
      "required option '--name <who>'",
      'cashout api-key create',
    ],
    [
      'a sub-subcommand without its argument',
      ['api-key', 'revoke'],
      "missing required argument 'id'",
      'cashout api-key revoke',
    ],
    [
      'a sub-subcommand with an argument too many',
      ['api-key', 'list', 'extra'],
      'too many arguments',
      'cashout api-key list',
    ],
  ])('2: %s', async (_what, args, said, help) => {
    const r = await runCli(args);
    expect(r.code, shown(r)).toBe(2);
    expect(r.stderr).toContain(said);
    // A mistake in the command line points to the help of the command it was made in.
    if (help) expect(r.stderr).toContain(`(run "${help} --help" for usage)`);
  });

  it.each([
    ['report', []],
    ['reconcile', []],
    ['retry', ['1']],
    ['approve', []],
    ['cancel', ['--note', 'not ours']],
  ])('2: %s of a batch id that is malformed, or that the ledger does not hold', async (command, rest) => {
    const malformed = await runCli([command, 'b15119ce', ...rest], env());
    expect(malformed.code, shown(malformed)).toBe(2);
    expect(malformed.stderr).toContain('"b15119ce" is not a batch id (16 hexadecimal digits');
    const unknown = await runCli([command, 'ffffffffffffffff', ...rest], env());
    expect(unknown.code, shown(unknown)).toBe(2);
    expect(unknown.stderr).toMatch(/no batch ffffffffffffffff/);
  });

  it('3: Redis cannot be reached', async () => {
    const r = await runCli(['run', valid], env({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` }));
    expect(r.code, shown(r)).toBe(3);
    expect(r.stderr).toMatch(/cashout: .*Redis/);
  }, 60_000);

  it('4: the service cannot be reached', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const r = await runCli(['run', invalid, '--partial', '--force'], env({ CASHOUT_API_BASE_URL: closed }));
    expect(r.code, shown(r)).toBe(4);
    expect(r.stderr).toContain('could not be reached; nothing was sent');
  }, 60_000);

  it('4: the service refused the access token', async () => {
    const before = sandbox.received();
    // Payees no batch has paid yet, so that the rows are sent (and refused), not held as duplicates.
    const r = await runCli(['run', fresh], env({ CASHOUT_API_TOKEN: 'not-the-token' }));
    expect(r.code, shown(r)).toBe(4);
    expect(r.stderr).toMatch(/cashout: .*(token|401|403)/i);
    expect(sandbox.received()).toBeGreaterThan(before);
  }, 60_000);

  it('5: cashout worker only; worker-shutdown.test.ts runs it and expects this code', () => {
    expect(EXIT_LEFT_FOR_RECOVERY).toBe(5);
    const shutdown = readFileSync(join(ROOT, 'test', 'jobs', 'worker-shutdown.test.ts'), 'utf8');
    expect(shutdown).toContain('.toBe(EXIT_LEFT_FOR_RECOVERY)');
  });
});
