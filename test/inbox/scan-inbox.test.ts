/**
 * One inbox scan against a temporary folder, with a stub import: which files are taken (settle
 * time, .ready markers), which are refused (symbolic links, odd names), where each ends with its
 * note, how a file left in processing/ by a crashed scan is taken again, and that two scans at
 * once never import a file twice. Also the schedule's behaviour at Cairo's daylight-saving changes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Writable } from 'node:stream';
import { getNextMillis } from 'bullmq';
import { createLogger } from '../../src/logger.js';
import { CashoutError } from '../../src/errors.js';
import { scanInbox, type ExistingBatch, type InboxImportResult, type ScanDeps } from '../../src/inbox/scan-inbox.js';
import { claimName, nameProblem, numberedName, staleAfterMs } from '../../src/inbox/inbox-rules.js';
import { checkInboxSchedule, inboxRepeatOptions } from '../../jobs/schedule.js';
import { openScan } from '../../src/import/parallel-scan.js';
import { loadBankList } from '../../src/contract/supported-banks.js';

const CSV = 'channel,amount\nwallet,1.00\n';

let inbox: string;
let outside: string;
let calls: string[];
let logLines: Record<string, unknown>[];

beforeEach(async () => {
  inbox = await mkdtemp(join(tmpdir(), 'cashout-inbox-unit-'));
  outside = await mkdtemp(join(tmpdir(), 'cashout-inbox-outside-'));
  calls = [];
  logLines = [];
});
afterEach(async () => {
  await rm(inbox, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

function queued(name: string, extra: Partial<InboxImportResult> = {}): InboxImportResult {
  const batchId = Buffer.from(name).toString('hex').padEnd(16, '0').slice(0, 16);
  return {
    batchId,
    state: 'queued',
    rows: 2,
    validRows: 2,
    invalidRows: 0,
    duplicateRows: 0,
    requests: 1,
    reportDir: `/reports/${batchId}`,
    ...extra,
  };
}

/** Scan deps with a stub import: `outcomes[name]` decides what importing `name` does (default: queued). */
function deps(
  over: Partial<ScanDeps> & {
    outcomes?: Record<string, (path: string) => Promise<InboxImportResult>>;
    existing?: Record<string, ExistingBatch>;
  } = {},
): ScanDeps {
  const stream = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  const { outcomes = {}, existing = {}, ...rest } = over;
  return {
    inboxDir: inbox,
    settleSeconds: 30,
    log: createLogger({ level: 'debug', stream }),
    async importFile(path) {
      calls.push(path);
      const name = basename(path);
      return outcomes[name] ? outcomes[name](path) : queued(name);
    },
    async existingBatch(id) {
      return existing[id];
    },
    ...rest,
  };
}

async function drop(name: string, content = CSV, ready?: string): Promise<void> {
  await writeFile(join(inbox, name), content);
  if (ready !== undefined) await writeFile(join(inbox, ready), '');
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

const listing = async (dir: string) => (await readdir(join(inbox, dir))).sort();
const note = (dir: string, name: string) => readFile(join(inbox, dir, `${name}.txt`), 'utf8');
const MIN = 60_000;

describe('settle rule and .ready markers', () => {
  it('a fresh file waits; a file with <name>.csv.ready or <name>.ready is taken at once and its marker removed', async () => {
    await drop('fresh.csv');
    await drop('marked.csv', CSV, 'marked.csv.ready');
    await drop('stem.csv', CSV, 'stem.ready');
    const r = await scanInbox(deps());
    expect(r.waiting).toEqual(['fresh.csv']);
    expect(r.taken.map((t) => [t.name, t.result]).sort()).toEqual([
      ['marked.csv', 'done'],
      ['stem.csv', 'done'],
    ]);
    expect(calls.map((c) => basename(c)).sort()).toEqual(['marked.csv', 'stem.csv']);
    expect(await listing('.')).toEqual(['done', 'failed', 'fresh.csv', 'processing']);
    expect(await listing('done')).toEqual(['marked.csv', 'marked.csv.txt', 'stem.csv', 'stem.csv.txt']);
    expect(await listing('processing')).toEqual([]);
  });

  it('a file unchanged for the settle time is taken without a marker', async () => {
    await drop('old.csv');
    expect((await scanInbox(deps({ now: () => Date.now() + 29_000 }))).taken).toEqual([]);
    const r = await scanInbox(deps({ now: () => Date.now() + 31_000 }));
    expect(r.taken.map((t) => t.name)).toEqual(['old.csv']);
    expect(await listing('done')).toEqual(['old.csv', 'old.csv.txt']);
  });

  it('a file whose modification time was set back (cp -p) still waits: its status-change time is recent', async () => {
    await drop('copied.csv');
    const dayAgo = new Date(Date.now() - 24 * 3600_000);
    await utimes(join(inbox, 'copied.csv'), dayAgo, dayAgo);
    const r = await scanInbox(deps());
    expect(r.waiting).toEqual(['copied.csv']);
    expect(calls).toEqual([]);
  });

  it('a settle time of 0 takes every file at once', async () => {
    await drop('now.csv');
    const r = await scanInbox(deps({ settleSeconds: 0 }));
    expect(r.taken.map((t) => t.result)).toEqual(['done']);
  });
});

describe('refused entries stay where they are', () => {
  it('a symbolic link is never followed nor taken, even with a marker', async () => {
    const target = join(outside, 'secret.csv');
    await writeFile(target, CSV);
    await symlink(target, join(inbox, 'link.csv'));
    await writeFile(join(inbox, 'link.csv.ready'), '');
    const r = await scanInbox(deps({ settleSeconds: 0 }));
    expect(calls).toEqual([]);
    expect(r.taken).toEqual([]);
    expect(r.refused).toEqual([{ name: 'link.csv', reason: expect.stringContaining('symbolic link') }]);
    expect((await lstat(join(inbox, 'link.csv'))).isSymbolicLink()).toBe(true);
    expect(await readFile(target, 'utf8')).toBe(CSV);
    expect(await listing('done')).toEqual([]);
    expect(await listing('failed')).toEqual([]);
  });

  it('hidden names, "..", backslashes, control characters and folders are refused', async () => {
    const odd = ['.hidden.csv', 'a..b.csv', 'back\\slash.csv', 'new\nline.csv', 'tab\there.csv'];
    for (const name of odd) await drop(name, CSV, `${name}.ready`);
    await mkdir(join(inbox, 'folder.csv'));
    const r = await scanInbox(deps({ settleSeconds: 0 }));
    expect(calls).toEqual([]);
    expect(r.taken).toEqual([]);
    expect(r.refused.map((x) => x.name).sort()).toEqual([...odd, ...odd.map((n) => `${n}.ready`), 'folder.csv'].sort());
    for (const name of odd) expect(await exists(join(inbox, name))).toBe(true);
    expect(await exists(join(inbox, 'folder.csv'))).toBe(true);
  });

  it('the name rules', () => {
    expect(nameProblem('payouts.csv')).toBeUndefined();
    expect(nameProblem('رواتب نوفمبر.csv')).toBeUndefined();
    expect(nameProblem('.payouts.csv.part')).toMatch(/leading dot/);
    expect(nameProblem('sub/x.csv')).toMatch(/path separator/);
    expect(nameProblem('x..csv')).toMatch(/\.\./);
    expect(nameProblem(`${'a'.repeat(201)}.csv`)).toMatch(/longer/);
    expect(numberedName('payouts.csv', 1)).toBe('payouts.csv');
    expect(numberedName('payouts.csv', 3)).toBe('payouts.3.csv');
    expect(numberedName('junk', 2)).toBe('junk.2');
    expect(staleAfterMs(30)).toBe(10 * MIN);
    expect(staleAfterMs(120)).toBe(20 * MIN);
  });

  it('a file that is not .csv is left alone, or goes to failed/ when someone marked it ready', async () => {
    await drop('readme.txt');
    await drop('junk.bin', 'binary', 'junk.bin.ready');
    const r = await scanInbox(deps({ settleSeconds: 0 }));
    expect(calls).toEqual([]);
    expect(r.taken.map((t) => [t.name, t.result])).toEqual([['junk.bin', 'failed']]);
    expect(await exists(join(inbox, 'readme.txt'))).toBe(true);
    expect(await listing('failed')).toEqual(['junk.bin', 'junk.bin.txt']);
    expect(await note('failed', 'junk.bin')).toMatch(/outcome: failed: not a \.csv file/);
    expect(await exists(join(inbox, 'junk.bin.ready'))).toBe(false);
  });
});

describe('outcomes and notes', () => {
  it('each outcome ends in done/ or failed/ with a note naming the batch, the outcome, the report and the time', async () => {
    const names = [
      'queued.csv',
      'refused.csv',
      'binary.csv',
      'again.csv',
      'staging.csv',
      'none.csv',
      'approval.csv',
      'semicolons.csv',
    ];
    for (const n of names) await drop(n, `${CSV}${n}\n`, `${n}.ready`);
    const r = await scanInbox(
      deps({
        outcomes: {
          'refused.csv': async () => ({
            ...queued('refused.csv'),
            state: 'refused',
            invalidRows: 1,
            validRows: 1,
            requests: 0,
            problems: ['line 3, amount: found "1,500.00"; expected 1500.00'],
          }),
          'binary.csv': async (path) => {
            throw new CashoutError('file_binary', `${path} is not a text file (it holds binary data)`);
          },
          'again.csv': async () => {
            throw new CashoutError('batch_exists', 'already imported', {
              batchId: 'aaaaaaaaaaaaaaaa',
              createdAt: '2026-01-01T00:00:00.000Z',
            });
          },
          'staging.csv': async () => {
            throw new CashoutError('batch_exists', 'already imported', { batchId: 'bbbbbbbbbbbbbbbb' });
          },
          'none.csv': async () => ({
            ...queued('none.csv'),
            state: 'finished',
            requests: 0,
            validRows: 0,
            duplicateRows: 2,
          }),
          'approval.csv': async () => ({ ...queued('approval.csv'), state: 'awaiting_approval' }),
          // The real reader's refusal of a file separated by semicolons.
          'semicolons.csv': async (path) => {
            await writeFile(path, 'channel;amount;type;holder_name\nwallet;1.00;TRANSFER;Mona\n');
            await openScan(path, { banks: loadBankList(), walletCountries: ['EG'], maxFieldLength: 255 }, {});
            return queued('semicolons.csv');
          },
        },
        existing: {
          aaaaaaaaaaaaaaaa: {
            state: 'finished',
            createdAt: '2026-01-01T00:00:00.000Z',
            reportDir: '/reports/aaaaaaaaaaaaaaaa',
          },
          bbbbbbbbbbbbbbbb: { state: 'staging' },
        },
      }),
    );
    const byName = Object.fromEntries(r.taken.map((t) => [t.name, t.result]));
    expect(byName).toEqual({
      'queued.csv': 'done',
      'refused.csv': 'failed',
      'binary.csv': 'failed',
      'again.csv': 'done',
      'staging.csv': 'failed',
      'none.csv': 'done',
      'approval.csv': 'done',
      'semicolons.csv': 'failed',
    });
    expect(await listing('.')).toEqual(['done', 'failed', 'processing']);
    expect(await listing('processing')).toEqual([]);

    const q = await note('done', 'queued.csv');
    const id = queued('queued.csv').batchId;
    const taken = `${CSV}queued.csv\n`;
    const sha = createHash('sha256').update(taken).digest('hex');
    expect(q).toBe(
      `file: queued.csv\nbatch: ${id}\noutcome: queued 2 rows in 1 withdrawal request\nreport: /reports/${id}\n` +
        `bytes: ${taken.length}\nsha256: ${sha}\ntime: ${q.match(/time: (\S+)/)![1]}\n`,
    );
    expect(new Date(q.match(/time: (\S+)/)![1]!).getTime()).toBeGreaterThan(Date.now() - MIN);

    const refused = await note('failed', 'refused.csv');
    expect(refused).toMatch(/outcome: refused: 1 of 2 rows is invalid.*nothing was queued/);
    expect(refused).toContain('line 3, amount: found "1,500.00"');
    expect(await note('failed', 'binary.csv')).toContain('outcome: failed: binary.csv is not a text file');
    expect(await note('failed', 'binary.csv')).toContain('batch: none');
    expect(await note('failed', 'binary.csv')).not.toContain('processing');
    const again = await note('done', 'again.csv');
    expect(again).toContain('batch: aaaaaaaaaaaaaaaa');
    expect(again).toContain(
      'outcome: already imported as batch aaaaaaaaaaaaaaaa on 2026-01-01T00:00:00.000Z (state finished); nothing new was queued',
    );
    expect(again).toContain('report: /reports/aaaaaaaaaaaaaaaa');
    expect(await note('failed', 'staging.csv')).toMatch(/whose import has not finished \(state staging\)/);
    expect(await note('done', 'none.csv')).toMatch(
      /nothing to send.*2 rows not sent because their payee is paid, or to be paid, by another batch/,
    );
    expect(await note('done', 'approval.csv')).toMatch(/outcome: awaiting approval: 2 rows in 1 withdrawal request/);
    // The inbox takes no options: the note says what to change in the file, not which option to give.
    const semicolons = await note('failed', 'semicolons.csv');
    expect(semicolons).toContain('the file seems to be separated by semicolons;');
    expect(semicolons).toContain('save it with commas between the columns');
    expect(semicolons).toContain('and put it in the inbox again');
    expect(semicolons).not.toContain('--delimiter');
  });

  it('logs one line per file taken and one per outcome', async () => {
    await drop('a.csv', CSV, 'a.csv.ready');
    await drop('b.csv', CSV, 'b.csv.ready');
    await scanInbox(
      deps({ outcomes: { 'b.csv': async () => ({ ...queued('b.csv'), state: 'refused', invalidRows: 1 }) } }),
    );
    const msgs = logLines.filter((l) => String(l.msg).startsWith('inbox: ')).map((l) => [l.msg, l.file]);
    expect(msgs).toEqual([
      ['inbox: took file', 'a.csv'],
      ['inbox: file imported', 'a.csv'],
      ['inbox: took file', 'b.csv'],
      ['inbox: file not imported', 'b.csv'],
    ]);
  });

  it('a file of a name already in done/ never replaces it', async () => {
    await mkdir(join(inbox, 'done'), { recursive: true });
    await writeFile(join(inbox, 'done', 'payouts.csv'), 'last week');
    await writeFile(join(inbox, 'done', 'payouts.csv.txt'), 'last week note');
    await drop('payouts.csv', CSV, 'payouts.ready');
    await scanInbox(deps());
    expect(await listing('done')).toEqual(['payouts.2.csv', 'payouts.2.csv.txt', 'payouts.csv', 'payouts.csv.txt']);
    expect(await readFile(join(inbox, 'done', 'payouts.csv'), 'utf8')).toBe('last week');
    expect(await readFile(join(inbox, 'done', 'payouts.2.csv'), 'utf8')).toBe(CSV);
  });

  it("an error that is not the file's fault leaves it in processing/; a scan takes it again once the claim is stale", async () => {
    await drop('later.csv', CSV, 'later.csv.ready');
    let redisUp = false;
    const d = (now?: () => number) =>
      deps({
        ...(now ? { now } : {}),
        outcomes: {
          'later.csv': async () => {
            if (!redisUp) throw new Error('Connection is closed.');
            return queued('later.csv');
          },
        },
      });
    const first = await scanInbox(d());
    expect(first.taken.map((t) => t.result)).toEqual(['retry']);
    const claims = await listing('processing');
    expect(claims).toHaveLength(1);
    expect(await readdir(join(inbox, 'processing', claims[0]!))).toEqual(['later.csv']);

    redisUp = true;
    expect((await scanInbox(d())).taken).toEqual([]); // the claim is fresh: its scan may still be working
    const again = await scanInbox(d(() => Date.now() + 11 * MIN));
    expect(again.taken.map((t) => [t.name, t.from, t.result])).toEqual([['later.csv', 'processing', 'done']]);
    expect(await listing('processing')).toEqual([]);
    expect(await note('done', 'later.csv')).toContain('taken from: processing/');
  });
});

describe('crash safety and concurrent scans', () => {
  it('a stale claim folder is taken over and imported; a fresh one, an unknown folder and a fresh plain file are left', async () => {
    const processing = join(inbox, 'processing');
    const stale = join(processing, claimName(Date.now() - 11 * MIN, 4242, 'abcdef01'));
    const fresh = join(processing, claimName(Date.now() - 1 * MIN, 4243, 'abcdef02'));
    const empty = join(processing, claimName(Date.now() - 60 * MIN, 4244, 'abcdef03'));
    for (const d of [stale, fresh, empty, join(processing, 'whatever')]) await mkdir(d, { recursive: true });
    await writeFile(join(stale, 'crashed.csv'), CSV);
    await writeFile(join(fresh, 'busy.csv'), CSV);
    await writeFile(join(processing, 'loose.csv'), CSV);
    const r = await scanInbox(deps());
    expect(r.taken.map((t) => [t.name, t.from, t.result])).toEqual([['crashed.csv', 'processing', 'done']]);
    expect(calls.map((c) => basename(c))).toEqual(['crashed.csv']);
    expect(await exists(stale)).toBe(false);
    expect(await exists(empty)).toBe(false);
    expect(await exists(join(fresh, 'busy.csv'))).toBe(true);
    expect(await exists(join(processing, 'whatever'))).toBe(true);
    expect(r.refused.map((x) => x.name)).toEqual([join('processing', 'whatever')]);

    // A plain file put straight into processing/ is taken once it has not changed for the stale time.
    const later = await scanInbox(deps({ now: () => Date.now() + 11 * MIN }));
    expect(later.taken.map((t) => [t.name, t.result]).sort()).toEqual([
      ['busy.csv', 'done'],
      ['loose.csv', 'done'],
    ]);
    expect(await listing('processing')).toEqual(['whatever']);
  });

  it('two scans at once import each file exactly once', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `file-${String(i).padStart(2, '0')}.csv`);
    for (const n of names) await drop(n, CSV, `${n}.ready`);
    // Each scan's first import waits until the other scan has begun one too, so the two overlap
    // whatever the timing (after 10 s the first goes on alone, and the test fails below).
    let begun = 0;
    let bothBegun!: () => void;
    const overlapping = new Promise<void>((resolve) => (bothBegun = resolve));
    const deadline = setTimeout(() => bothBegun(), 10_000);
    const d = () => {
      let first = true;
      return {
        ...deps(),
        async importFile(path: string) {
          calls.push(path);
          if (first) {
            first = false;
            if (++begun === 2) bothBegun();
            await overlapping;
          }
          return queued(basename(path));
        },
      };
    };
    const [a, b] = await Promise.all([scanInbox(d()), scanInbox(d())]).finally(() => clearTimeout(deadline));
    // Both scans took part, and no file was taken by both.
    expect(a.taken.length).toBeGreaterThan(0);
    expect(b.taken.length).toBeGreaterThan(0);
    const taken = [...a.taken, ...b.taken].map((t) => t.name).sort();
    expect(taken).toEqual(names);
    expect(calls.map((c) => basename(c)).sort()).toEqual(names);
    expect((await listing('done')).filter((n) => n.endsWith('.csv'))).toEqual(names);
    expect(await listing('processing')).toEqual([]);
  });

  it('stops between files when asked (shutdown)', async () => {
    for (const n of ['a.csv', 'b.csv', 'c.csv']) await drop(n, CSV, `${n}.ready`);
    let stop = false;
    const r = await scanInbox({
      ...deps(),
      shouldStop: () => stop,
      async importFile(path) {
        stop = true;
        calls.push(path);
        return queued(basename(path));
      },
    });
    expect(r.stopped).toBe(true);
    expect(r.taken.map((t) => t.name)).toEqual(['a.csv']);
    expect(await exists(join(inbox, 'b.csv'))).toBe(true);
    expect(await exists(join(inbox, 'b.csv.ready'))).toBe(true);
  });
});

describe('the schedule at daylight-saving changes in Africa/Cairo', () => {
  const cairo = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Africa/Cairo',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  });
  const runs = (pattern: string, fromIso: string, n: number) => {
    const out: string[] = [];
    let t = Date.parse(fromIso);
    for (let i = 0; i < n; i++) {
      t = getNextMillis(t, inboxRepeatOptions({ pattern, tz: 'Africa/Cairo' }))!;
      out.push(`${new Date(t).toISOString().slice(5, 16)}Z ${cairo.format(new Date(t))}`);
    }
    return out;
  };

  it('spring (last Friday of April, 00:00 → 01:00): every-5-minutes runs on without a gap; a time in the skipped hour does not run that day', () => {
    expect(runs('*/5 * * * *', '2026-04-23T21:50:00Z', 3)).toEqual([
      '04-23T21:55Z 23:55 EET',
      '04-23T22:00Z 01:00 EEST',
      '04-23T22:05Z 01:05 EEST',
    ]);
    expect(runs('30 0 * * *', '2026-04-22T12:00:00Z', 2)).toEqual([
      '04-22T22:30Z 00:30 EET',
      '04-24T21:30Z 00:30 EEST',
    ]);
  });

  it('autumn (last Thursday of October, 24:00 → 23:00): the repeated hour is scanned twice by every-5-minutes, once by a daily time in it', () => {
    const five = runs('*/5 * * * *', '2026-10-29T20:50:00Z', 4);
    expect(five).toEqual([
      '10-29T20:55Z 23:55 EEST',
      '10-29T21:00Z 23:00 EET',
      '10-29T21:05Z 23:05 EET',
      '10-29T21:10Z 23:10 EET',
    ]);
    expect(runs('0 * * * *', '2026-10-29T19:30:00Z', 3)).toEqual([
      '10-29T20:00Z 23:00 EEST',
      '10-29T21:00Z 23:00 EET',
      '10-29T22:00Z 00:00 EET',
    ]);
    expect(runs('30 23 * * *', '2026-10-28T12:00:00Z', 3)).toEqual([
      '10-28T20:30Z 23:30 EEST',
      '10-29T20:30Z 23:30 EEST',
      '10-30T21:30Z 23:30 EET',
    ]);
  });

  it('a bad time zone or cron pattern is a configuration error naming the variable', () => {
    expect(checkInboxSchedule({ pattern: '*/5 * * * *', tz: 'Africa/Cairo' }).tz).toBe('Africa/Cairo');
    expect(() => checkInboxSchedule({ pattern: '*/5 * * * *', tz: 'Africa/Kairo' })).toThrow(/CASHOUT_TIMEZONE/);
    expect(() => checkInboxSchedule({ pattern: 'every five minutes', tz: 'UTC' })).toThrow(/CASHOUT_SCHEDULE/);
  });
});
