/**
 * Runs the `cashout` command's `main` inside the test process: the same command tree, options,
 * messages and exit codes as `node bin/cashout.js`, without a process start-up per call (about
 * half a second of CPU each). What `main` writes on stdout and stderr is captured; log lines
 * (pino, straight to file descriptor 2) are not. `process.env` is the clean environment plus
 * `env` for the call's duration, and calls run one at a time, since both are the process's own.
 * Tests that are about the process itself (signals, exit, logs) use `runCli` instead.
 */
import { main } from '../../src/cli.js';
import type { CliResult } from './cli.js';

let queue: Promise<unknown> = Promise.resolve();

/** Runs `cashout ...args` in this process with `env` added to a clean environment. */
export function runCliInProcess(args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  const call = queue.then(() => runOnce(args, env));
  queue = call.catch(() => undefined);
  return call;
}

async function runOnce(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  const savedEnv = process.env;
  const out = process.stdout.write;
  const err = process.stderr.write;
  let stdout = '';
  let stderr = '';
  const base: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (savedEnv[k]) base[k] = savedEnv[k]!;
  process.env = { ...base, ...env };
  const capture =
    (append: (s: string) => void) =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((r): r is () => void => typeof r === 'function');
      if (done) queueMicrotask(done);
      return true;
    };
  process.stdout.write = capture((s) => (stdout += s)) as typeof process.stdout.write;
  process.stderr.write = capture((s) => (stderr += s)) as typeof process.stderr.write;
  try {
    const code = await main(args);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
    process.env = savedEnv;
  }
}
