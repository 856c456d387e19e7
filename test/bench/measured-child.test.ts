/**
 * The benchmarks' measured child (`bench/lib.ts`): the time, exit code and CPU seconds of a
 * process it runs. CPU seconds are what the import benchmark compares two builds by when the
 * machine is busy, so they must be the child's own, all its threads together.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMeasured } from '../../bench/lib.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cashout-measured-'));
  // Busy for 400 ms in its main thread and in a worker thread at once, then idle for 300 ms; prints
  // the CPU seconds it used so far, all threads (getrusage), as it ends.
  await writeFile(
    join(dir, 'busy.mjs'),
    [
      "import { Worker } from 'node:worker_threads';",
      'const spin = (ms) => { const t = Date.now(); while (Date.now() - t < ms); };',
      "const w = new Worker('const t = Date.now(); while (Date.now() - t < 400);', { eval: true });",
      'spin(400);',
      "await new Promise((r) => w.once('exit', r));",
      'await new Promise((r) => setTimeout(r, 300));',
      'const u = process.cpuUsage();',
      'process.stdout.write(String((u.user + u.system) / 1e6));',
      'process.exit(3);',
    ].join('\n'),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a measured child', () => {
  it('gives its exit code, its time, and its CPU seconds across its threads (with /usr/bin/time)', async () => {
    const m = await runMeasured([], { env: {}, cwd: dir, timeoutMs: 20_000, bin: join(dir, 'busy.mjs') });
    expect(m.code).toBe(3);
    expect(m.seconds).toBeGreaterThan(0.6);
    const used = Number(m.stdout);
    expect(used).toBeGreaterThan(0);
    if (existsSync('/usr/bin/time')) {
      // What the child counted of itself as it ended, its worker thread's included, plus its exit.
      expect(m.cpuSeconds).toBeGreaterThanOrEqual(used - 0.021);
      expect(m.cpuSeconds).toBeLessThan(used + 0.25);
    } else expect(m.cpuSeconds).toBeUndefined();
  });
});
