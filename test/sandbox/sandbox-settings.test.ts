/**
 * The sandbox's settings are written down where people look: `cashout sandbox --help`, the README
 * and `.env.example` name every one the sandbox reads; and the fault settings are taken from `.env`
 * like every other setting, not from the environment only.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config.js';
import { FAULT_KINDS } from '../../src/sandbox/faults.js';
import { SANDBOX_FAULT_SETTINGS, SANDBOX_OTHER_SETTINGS } from '../../src/sandbox/settings-help.js';
import { ROOT, runCli } from '../support/cli.js';

const faultNames = SANDBOX_FAULT_SETTINGS.map((s) => s.name);
const otherNames = SANDBOX_OTHER_SETTINGS.map((s) => s.name);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the sandbox settings', () => {
  it('are every SANDBOX_* variable the fault reader reads, and every CASHOUT_SANDBOX_* setting', async () => {
    const source = await readFile(join(ROOT, 'src', 'sandbox', 'faults.ts'), 'utf8');
    const read = new Set([...source.matchAll(/env\.(SANDBOX_[A-Z0-9_]+)/g)].map((m) => m[1]));
    expect(read.size).toBeGreaterThanOrEqual(4);
    expect(new Set(faultNames)).toEqual(read);
    expect(new Set(otherNames)).toEqual(new Set(CONFIG_KEYS.filter((k) => k.startsWith('CASHOUT_SANDBOX_'))));
  });

  it('are listed by `cashout sandbox --help`, with every fault kind', async () => {
    const help = await runCli(['sandbox', '--help']);
    expect(help.code).toBe(0);
    for (const name of [...faultNames, ...otherNames]) expect(help.stdout, name).toContain(`  ${name}\n`);
    for (const kind of FAULT_KINDS) expect(help.stdout, kind).toContain(kind);
    expect(help.stdout).toContain('PUT /__sandbox/faults');
  });

  it('are described in the README and in .env.example', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const envExample = await readFile(join(ROOT, '.env.example'), 'utf8');
    for (const name of faultNames) {
      expect(readme, `README: ${name}`).toContain(`\`${name}\``);
      expect(envExample, `.env.example: ${name}`).toMatch(new RegExp(`^# ${name}=`, 'm'));
    }
    for (const kind of FAULT_KINDS) expect(readme, `README: ${kind}`).toContain(`\`${kind}\``);
  });

  it('are read from .env in the working folder: a sandbox told there to fail every request answers 503', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cashout-sandbox-env-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await writeFile(join(dir, '.env'), 'CASHOUT_SANDBOX_TOKEN=env-file-token\nSANDBOX_FAULT_RATES=http503=1\n');
    const base: Record<string, string> = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k]!;
    const bin = join(ROOT, 'bin', 'cashout.js');
    const child = spawn(process.execPath, [bin, 'sandbox', '--port', '0'], { cwd: dir, env: base });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    });
    let out = '';
    child.stderr.resume();
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`sandbox did not start: ${out}`)), 20_000);
      child.stdout.on('data', (d) => {
        out += d;
        const m = /Sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    expect(out).toContain('token: from CASHOUT_SANDBOX_TOKEN');
    const res = await fetch(`${url}/api/v1/merchant/withdrawal`, {
      method: 'POST',
      headers: { authorization: 'Bearer env-file-token', 'content-type': 'application/json' },
      body: '{}',
      signal: AbortSignal.timeout(10_000),
    });
    expect(res.status).toBe(503);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
