/** Runs the built `cashout` command as a child process, as a user would. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';

/** The project folder. */
export const ROOT = PACKAGE_ROOT;

/** What a run printed and returned. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/cashout.js ...args` in the project folder with `env` added to a clean environment. */
export function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const base: Record<string, string> = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k]!;
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'cashout.js'), ...args], {
      cwd: ROOT,
      env: { ...base, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs `node bin/cashout.js ...args` on a terminal (a pseudo-terminal made by util-linux `script`),
 * typing each answer once its prompt has been printed. Returns all the terminal showed (what the
 * command printed, and whatever the terminal echoed of the typing) and the exit code.
 */
export function runCliOnTerminal(
  args: readonly string[],
  env: Record<string, string>,
  answers: readonly { readonly prompt: string; readonly text: string }[],
  timeoutMs = 60_000,
): Promise<{ code: number | null; screen: string }> {
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, join(ROOT, 'bin', 'cashout.js'), ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const base: Record<string, string> = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k]!;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: ROOT, env: { ...base, ...env } });
    let screen = '';
    let next = 0;
    let typedUpTo = 0;
    child.stdout.on('data', (d: Buffer) => {
      screen += d.toString('utf8');
      const answer = answers[next];
      if (answer && screen.indexOf(answer.prompt, typedUpTo) !== -1) {
        typedUpTo = screen.length;
        next++;
        child.stdin.write(`${answer.text}\r`);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    });
  });
}
