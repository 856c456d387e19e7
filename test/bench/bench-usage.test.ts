/**
 * `npm run bench` as a user types it: `--help` lists every option and exits 0; an unknown option
 * or a wrong value is named with exit code 2 before any benchmark starts (no payout file made, no
 * Redis started).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/paths.js';

const RUN_ALL = join(PACKAGE_ROOT, 'dist', 'bench', 'run-all.js');

async function bench(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [RUN_ALL, ...args], { timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('npm run bench: usage', () => {
  it('--help names every option and the exit codes', async () => {
    const r = await bench('--help');
    expect(r.code).toBe(0);
    for (const option of ['--seed', '--import-rows', '--import-rounds', '--memory-rows', '--workers', '--drop-files'])
      expect(r.stdout).toContain(option);
    expect(r.stdout).toMatch(/Exit codes: 0 .*, 1 .*, 2 wrong usage/);
  });

  it('an unknown option or a wrong value exits 2, naming it, before anything runs', async () => {
    const unknown = await bench('import', '--import-row', '5000');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("'--import-row'");
    const wrong = await bench('import', '--import-rows', 'many');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--import-rows needs a whole number');
    expect(wrong.stdout).toBe('');
    // Sizes, rounds, worker counts and the timeout are whole numbers of at least 1.
    const checked: [string[], string][] = [
      [['submit', '--submit-rows', '1.5'], '--submit-rows needs a whole number of at least 1'],
      [['workers', '--workers', '2,0'], '--workers needs whole numbers of at least 1'],
      [['import', '--import-timeout=0'], '--import-timeout needs a whole number of at least 1'],
    ];
    for (const [args, message] of checked) {
      const r = await bench(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stdout).toBe('');
    }
    for (const r of [unknown, wrong]) expect(r.stderr).not.toMatch(/\n\s+at /);
    const name = await bench('imports');
    expect(name.code).toBe(2);
    expect(name.stderr).toContain('unknown benchmark imports');
  });
});
