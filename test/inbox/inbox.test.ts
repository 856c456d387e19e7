/**
 * The scheduled inbox, end to end through the built `cashout` command and the real Redis: two
 * `cashout scheduler --once` processes scanning one inbox at the same moment import each file
 * exactly once; a file left in processing/ by a crashed scan is taken again without a second
 * batch; `cashout scheduler` registers its job scheduler, runs scans from the queue and exits 0 on
 * SIGTERM.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { openLedger, type BatchRecord } from '../../src/ledger/index.js';
import { SUBMIT_QUEUE } from '../../src/queue/queues.js';
import { claimName } from '../../src/inbox/inbox-rules.js';
import { INBOX_QUEUE, INBOX_SCHEDULER_ID } from '../../jobs/schedule.js';
import { ROOT, runCli } from '../support/cli.js';
import { TEST_REDIS_URL, deleteKeys, testPrefix } from '../support/redis.js';

const HEADER =
  'channel,amount,type,holder_name,mobile_number,bank_name,bank_address,account_number,description,reference';
const wallet = (n: number, amount = '100.00') =>
  `wallet,${amount},TRANSFER,Holder ${n},+2010${String(10_000_000 + n).slice(-8)},,,,Payout ${n},REF-${n}`;
const csv = (rows: readonly string[]) => `${HEADER}\n${rows.join('\n')}\n`;

const prefix = testPrefix('inbox');
const temps: string[] = [];
let redis: Redis;
const children: ChildProcess[] = [];

async function temp(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `cashout-inbox-${label}-`));
  temps.push(dir);
  return dir;
}

function env(inbox: string, reports: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: TEST_REDIS_URL,
    CASHOUT_REDIS_PREFIX: prefix,
    CASHOUT_INBOX_DIR: inbox,
    CASHOUT_REPORTS_DIR: reports,
    CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
    CASHOUT_API_TOKEN: 'x',
    CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
    CASHOUT_LOG_LEVEL: 'error',
    ...extra,
  };
}

async function batches(): Promise<BatchRecord[]> {
  return openLedger(redis, prefix).listBatches(1000);
}

const ls = async (dir: string) => (await readdir(dir)).sort();
const batchOf = (note: string) => /^batch: ([0-9a-f]{16})$/m.exec(note)?.[1];

/** Lines of `--once` output that report a file taken: "done   name: …" / "failed name: …". */
function takenNames(stdout: string): string[] {
  return stdout
    .split('\n')
    .map((l) => /^(done|failed|retry)\s+([^:]+):/.exec(l)?.[2])
    .filter((n): n is string => n !== undefined);
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(() => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  redis.disconnect();
  await deleteKeys(prefix);
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

describe('cashout scheduler --once', () => {
  it('two scans at the same moment import every file exactly once, and each file ends in done/ or failed/ with its note', async () => {
    const inbox = await temp('race');
    const reports = await temp('race-reports');
    // Enough files that the two scans overlap in time (each proves it took part, below).
    const valid = Array.from({ length: 30 }, (_, i) => `payout-${String(i + 1).padStart(2, '0')}.csv`);
    for (const [i, name] of valid.entries()) {
      await writeFile(join(inbox, name), csv([wallet(100 + 10 * i), wallet(101 + 10 * i, '250.50')]));
    }
    await writeFile(join(inbox, 'invalid.csv'), csv([wallet(900), wallet(901, '"1,500.00"')]));
    await writeFile(join(inbox, 'junk.bin'), Buffer.from([0, 1, 2, 3, 0xff, 0xfe, 0, 0]));
    await writeFile(join(inbox, 'garbage.csv'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 0, 1, 2, 3]));
    const all = [...valid, 'invalid.csv', 'junk.bin', 'garbage.csv'];
    for (const name of all) await writeFile(join(inbox, `${name}.ready`), '');

    const [a, b] = await Promise.all([
      runCli(['scheduler', '--once'], env(inbox, reports)),
      runCli(['scheduler', '--once'], env(inbox, reports)),
    ]);
    for (const r of [a, b]) {
      expect(r.stderr).not.toMatch(/internal error/);
      expect([0, 1]).toContain(r.code);
    }
    // Some file was not imported, so the scan that took it says so.
    expect([a.code, b.code]).toContain(1);
    // Between them the two processes took every file, and no file twice (however the race went).
    expect([...takenNames(a.stdout), ...takenNames(b.stdout)].sort()).toEqual([...all].sort());

    expect(await ls(inbox)).toEqual(['done', 'failed', 'processing']);
    expect(await ls(join(inbox, 'processing'))).toEqual([]);
    expect(await ls(join(inbox, 'done'))).toEqual(valid.flatMap((n) => [n, `${n}.txt`]).sort());
    expect(await ls(join(inbox, 'failed'))).toEqual([
      'garbage.csv',
      'garbage.csv.txt',
      'invalid.csv',
      'invalid.csv.txt',
      'junk.bin',
      'junk.bin.txt',
    ]);

    const doneIds: string[] = [];
    for (const name of valid) {
      const note = await readFile(join(inbox, 'done', `${name}.txt`), 'utf8');
      expect(note).toContain(`file: ${name}`);
      expect(note).toContain('outcome: queued 2 rows in 1 withdrawal request');
      expect(note).toMatch(/^time: \d{4}-\d\d-\d\dT/m);
      const id = batchOf(note)!;
      expect(note).toContain(`report: ${join(reports, id)}`);
      doneIds.push(id);
    }
    expect(new Set(doneIds).size).toBe(valid.length);

    const invalidNote = await readFile(join(inbox, 'failed', 'invalid.csv.txt'), 'utf8');
    expect(invalidNote).toContain('outcome: refused: 1 of 2 rows is invalid');
    expect(invalidNote).toMatch(/line 3, amount: .*1,500\.00/);
    expect(await readFile(join(inbox, 'failed', 'junk.bin.txt'), 'utf8')).toContain('outcome: failed: not a .csv file');
    expect(await readFile(join(inbox, 'failed', 'garbage.csv.txt'), 'utf8')).toMatch(/outcome: failed: .+/);

    // The ledger holds one batch per valid file (and the refused one), the queue one job per request.
    const recorded = await batches();
    const imported = recorded.filter((x) => x.state !== 'refused');
    expect(imported.map((x) => x.id).sort()).toEqual([...doneIds].sort());
    expect(imported.map((x) => x.fileName).sort()).toEqual([...valid].sort());
    expect(recorded.filter((x) => x.state === 'refused').map((x) => x.fileName)).toEqual(['invalid.csv']);
    const submit = new Queue(SUBMIT_QUEUE, { connection: redis.duplicate({ maxRetriesPerRequest: null }), prefix });
    try {
      const counts = await submit.getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized');
      expect(Object.values(counts).reduce((s, n) => s + n, 0)).toBe(valid.length);
    } finally {
      await submit.close();
      await submit.disconnect();
    }
    // The refused file's report folder names its invalid row.
    const refused = recorded.find((x) => x.state === 'refused')!;
    expect(await ls(join(reports, refused.id))).toContain('results.csv');
  });

  it('a file left in processing/ by a crashed scan is taken again: imported content ends in done/ without a second batch', async () => {
    const inbox = await temp('crash');
    const reports = await temp('crash-reports');
    const content = csv([wallet(500), wallet(501)]);
    await writeFile(join(inbox, 'weekly.csv'), content);
    await writeFile(join(inbox, 'weekly.ready'), '');
    const first = await runCli(['scheduler', '--once'], env(inbox, reports));
    expect(first.code).toBe(0);
    const firstId = batchOf(await readFile(join(inbox, 'done', 'weekly.csv.txt'), 'utf8'))!;
    const before = (await batches()).length;

    // A scan that died after importing weekly.csv, another that died before importing interrupted.csv,
    // and one still working (its claim is a minute old).
    const processing = join(inbox, 'processing');
    const dead1 = join(processing, claimName(Date.now() - 30 * 60_000, 999_991, 'dead0001'));
    const dead2 = join(processing, claimName(Date.now() - 30 * 60_000, 999_992, 'dead0002'));
    const alive = join(processing, claimName(Date.now() - 60_000, 999_993, 'a11e0003'));
    for (const d of [dead1, dead2, alive]) await mkdir(d);
    await writeFile(join(dead1, 'weekly.csv'), content);
    await writeFile(join(dead2, 'interrupted.csv'), csv([wallet(600)]));
    await writeFile(join(alive, 'busy.csv'), csv([wallet(700)]));

    const second = await runCli(['scheduler', '--once'], env(inbox, reports));
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(takenNames(second.stdout).sort()).toEqual(['interrupted.csv', 'weekly.csv']);

    expect(await ls(join(inbox, 'done'))).toEqual([
      'interrupted.csv',
      'interrupted.csv.txt',
      'weekly.2.csv',
      'weekly.2.csv.txt',
      'weekly.csv',
      'weekly.csv.txt',
    ]);
    const again = await readFile(join(inbox, 'done', 'weekly.2.csv.txt'), 'utf8');
    expect(again).toContain(`batch: ${firstId}`);
    expect(again).toMatch(
      new RegExp(`outcome: already imported as batch ${firstId} on .* \\(state queued\\); nothing new was queued`),
    );
    expect(again).toContain('taken from: processing/');
    expect(await readFile(join(inbox, 'done', 'interrupted.csv.txt'), 'utf8')).toContain(
      'outcome: queued 1 row in 1 withdrawal request',
    );

    // Only interrupted.csv made a batch; the live claim was not touched.
    const after = await batches();
    expect(after.length).toBe(before + 1);
    expect(after.filter((x) => x.fileName === 'weekly.csv').map((x) => x.id)).toEqual([firstId]);
    expect(await ls(processing)).toEqual([alive.split('/').pop()!]);
    expect(await ls(alive)).toEqual(['busy.csv']);
  });
});

describe('cashout scheduler', () => {
  /** Starts `cashout scheduler` as a child process, as a service manager would. */
  function start(e: Record<string, string>) {
    const base: Record<string, string> = {};
    for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k]!;
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'cashout.js'), 'scheduler'], {
      cwd: ROOT,
      env: { ...base, ...e },
    });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.resume();
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { child, exited, stderr: () => stderr };
  }

  it('registers its cron job scheduler (pattern and time zone) once, scans when a job comes, and exits 0 on SIGTERM', async () => {
    const inbox = await temp('sched');
    const reports = await temp('sched-reports');
    const e = env(inbox, reports, {
      CASHOUT_SCHEDULE: '15 3 * * *',
      CASHOUT_TIMEZONE: 'Africa/Cairo',
      CASHOUT_LOG_LEVEL: 'info',
    });
    const queue = new Queue(INBOX_QUEUE, { connection: redis.duplicate({ maxRetriesPerRequest: null }), prefix });
    try {
      const one = start(e);
      const scheduler = await waitFor('the job scheduler', async () => queue.getJobScheduler(INBOX_SCHEDULER_ID));
      expect(scheduler).toMatchObject({ pattern: '15 3 * * *', tz: 'Africa/Cairo' });
      await waitFor('the first scheduler to start', async () => one.stderr().includes('scheduler started'));

      // A second scheduler process registers the same scheduler again: still one.
      const two = start(e);
      await waitFor('the second scheduler to start', async () => two.stderr().includes('scheduler started'));
      expect(await queue.getJobSchedulersCount()).toBe(1);

      // A scan job (as the scheduler adds one per tick) makes one of the workers scan the inbox.
      await writeFile(join(inbox, 'tick.csv'), csv([wallet(800)]));
      await writeFile(join(inbox, 'tick.csv.ready'), '');
      await queue.add('scan-inbox', {});
      await waitFor('tick.csv in done/', async () =>
        (await ls(join(inbox, 'done')).catch((): string[] => [])).includes('tick.csv.txt'),
      );
      // The scan logs the import after writing the note: wait for that line before counting lines.
      await waitFor('the import in the log', async () =>
        /"msg":"inbox: file imported"/.test(one.stderr() + two.stderr()),
      );
      expect(await readFile(join(inbox, 'done', 'tick.csv.txt'), 'utf8')).toContain(
        'outcome: queued 1 row in 1 withdrawal request',
      );
      const logs = one.stderr() + two.stderr();
      expect(logs.match(/"msg":"inbox: took file"/g)).toHaveLength(1);
      expect(logs.match(/"msg":"inbox: file imported"/g)).toHaveLength(1);

      one.child.kill('SIGTERM');
      two.child.kill('SIGTERM');
      const codes = await Promise.race([
        Promise.all([one.exited, two.exited]),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('schedulers did not stop within 15 s of SIGTERM')), 15_000),
        ),
      ]);
      expect(codes).toEqual([0, 0]);
      // The schedule stays registered for the next scheduler process.
      expect(await queue.getJobScheduler(INBOX_SCHEDULER_ID)).toMatchObject({
        pattern: '15 3 * * *',
        tz: 'Africa/Cairo',
      });
    } finally {
      await queue.close();
      await queue.disconnect();
    }
  }, 60_000);
});
