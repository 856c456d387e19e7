/**
 * The inbox takes only complete files, and imports exactly the bytes it claimed (README "The
 * scheduled inbox"). Real files in a temporary inbox, the real scan and import code, the real
 * Redis under a prefix of this file's own, and once the real `cashout scheduler --once` process:
 * 1. a file whose last line has no line break is not taken (even with its .ready marker and no
 *    settle time) and nothing is queued; left that way past the longer time, it goes to failed/
 *    with a note, still without anything queued;
 * 2. a file written to after the scan claimed it — appended to while its rows are read, or
 *    rewritten before its import — ends in failed/ with a note saying it changed, and nothing of it
 *    is queued: its batch is refused before release;
 * 3. a complete file is imported as before, and its note names the size and SHA-256 of the bytes
 *    imported, which are the bytes of the file in done/.
 * Writes to a claimed file happen at fixed points of the scan (the import's row callback, or
 * before the import starts), through a descriptor opened before the scan, as a writer that holds
 * the file open would: no timing is involved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { mkdtemp, open, readdir, readFile, rm, utimes, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { SUBMIT_QUEUE, type SubmitJobData } from '../../src/queue/queues.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { createInboxImporter } from '../../src/inbox/inbox-import.js';
import { scanInbox, type ScanDeps, type ScanReport } from '../../src/inbox/scan-inbox.js';
import type { ImportOptions } from '../../src/batch/import-batch.js';
import { memoryLog } from '../support/pipeline.js';
import { runCli } from '../support/cli.js';
import { TEST_REDIS_URL, deleteKeys, testPrefix } from '../support/redis.js';

// The account number is the last column, as in the file of the incident: a line cut inside it
// still has every column, and 6 digits pass the account rule.
const HEADER = [
  'channel,amount,type,holder_name,mobile_number,bank_name,bank_address,description,reference',
  'account_number',
].join(',');
const bank = (n: number, account = String(100_012_345_000 + n)) =>
  `bank,25000.00,TRANSFER,Holder ${n},,National Bank of Egypt,"12 Talaat Harb St, Cairo",` +
  `Salary ${n},PAY-${n},${account}`;
const rows = (from: number, count: number) => Array.from({ length: count }, (_, i) => bank(from + i));
const MIN = 60_000;

const prefix = testPrefix('inbox-complete');
const temps: string[] = [];
let redis: Redis;
let queueRedis: Redis;
let queue: Queue<SubmitJobData>;
let ledger: Ledger;
let reports: string;

async function temp(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `cashout-inbox-complete-${label}-`));
  temps.push(dir);
  return dir;
}

/** One scan of `inbox` with the real import into this file's Redis prefix. */
async function scan(inbox: string, over: Partial<ScanDeps> = {}, options: ImportOptions = {}): Promise<ScanReport> {
  const { log } = memoryLog('warn');
  const rules = { banks: loadBankList(), walletCountries: ['EG'], maxFieldLength: 255 };
  const importer = createInboxImporter(
    { ledger, queue, rules, log, reportsDir: reports, itemsPerRequest: 5, serviceUrl: 'http://127.0.0.1:9' },
    { importedBy: 'scheduler', ...options },
  );
  return scanInbox({
    inboxDir: inbox,
    settleSeconds: 0,
    log,
    importFile: importer.importFile,
    existingBatch: importer.existingBatch,
    ...over,
  });
}

/** Jobs in the submit queue, in any state. */
async function jobs(): Promise<number> {
  const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized');
  return Object.values(counts).reduce((s, n) => s + n, 0);
}

/** This file's batches of one file name. */
async function batchesOf(fileName: string) {
  return (await ledger.listBatches(1000)).filter((b) => b.fileName === fileName);
}

const ls = async (dir: string) => (await readdir(dir)).sort();
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

beforeAll(async () => {
  redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
  queueRedis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  queue = new Queue<SubmitJobData>(SUBMIT_QUEUE, { connection: queueRedis, prefix });
  ledger = openLedger(redis, prefix);
  reports = await temp('reports');
});

afterAll(async () => {
  await queue.close();
  redis.disconnect();
  queueRedis.disconnect();
  await deleteKeys(prefix);
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

describe('a file whose last line has no line break', () => {
  it('is not taken, even with its marker and no settle time; nothing is queued', async () => {
    const inbox = await temp('cut');
    // The writer paused inside the account number of line 3: "100012" of "100012345678".
    const cut = `${HEADER}\n${bank(1)}\n${bank(2, '100012')}`;
    await writeFile(join(inbox, 'salaries.csv'), cut);
    await writeFile(join(inbox, 'salaries.csv.ready'), '');

    const r = await scan(inbox);
    expect(r.taken).toEqual([]);
    expect(r.waiting).toEqual(['salaries.csv']);
    expect(await ls(inbox)).toEqual(['done', 'failed', 'processing', 'salaries.csv', 'salaries.csv.ready']);
    expect(await readFile(join(inbox, 'salaries.csv'), 'utf8')).toBe(cut);
    expect(await batchesOf('salaries.csv')).toEqual([]);
    expect(await jobs()).toBe(0);

    // The real command says so too, and takes nothing.
    const once = await runCli(['scheduler', '--once'], {
      REDIS_URL: TEST_REDIS_URL,
      CASHOUT_REDIS_PREFIX: prefix,
      CASHOUT_INBOX_DIR: inbox,
      CASHOUT_INBOX_SETTLE_SECONDS: '0',
      CASHOUT_REPORTS_DIR: reports,
      CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
      CASHOUT_API_TOKEN: 'x',
      CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
      CASHOUT_LOG_LEVEL: 'error',
    });
    expect(once.code, once.stdout + once.stderr).toBe(0);
    expect(once.stdout).toMatch(/waiting \(no line break at the end yet\): salaries\.csv/);
    expect(await ls(inbox)).toEqual(['done', 'failed', 'processing', 'salaries.csv', 'salaries.csv.ready']);
    expect(await batchesOf('salaries.csv')).toEqual([]);
    expect(await jobs()).toBe(0);

    // Once the writer finishes the line and the 14 rows after it, the whole file is imported.
    await writeFile(join(inbox, 'salaries.csv'), `345678\n${rows(3, 14).join('\n')}\n`, { flag: 'a' });
    const done = await scan(inbox);
    expect(done.taken.map((t) => [t.name, t.result])).toEqual([['salaries.csv', 'done']]);
    const [batch] = await batchesOf('salaries.csv');
    expect(batch).toMatchObject({ state: 'queued', rows: 16, validRows: 16 });
    expect(await jobs()).toBe(4);
    await queue.obliterate({ force: true });
  });

  it('is reported in failed/ with a note once left so past the longer time, never imported', async () => {
    const inbox = await temp('stuck');
    await writeFile(join(inbox, 'stuck.csv'), `${HEADER}\n${bank(40)}\n${bank(41, '100012')}`);
    await writeFile(join(inbox, 'stuck.ready'), '');

    expect((await scan(inbox, { now: () => Date.now() + 9 * MIN })).waiting).toEqual(['stuck.csv']);
    const r = await scan(inbox, { now: () => Date.now() + 11 * MIN });
    expect(r.taken.map((t) => [t.name, t.result])).toEqual([['stuck.csv', 'failed']]);
    expect(await ls(inbox)).toEqual(['done', 'failed', 'processing']);
    expect(await ls(join(inbox, 'failed'))).toEqual(['stuck.csv', 'stuck.csv.txt']);
    expect(await ls(join(inbox, 'processing'))).toEqual([]);
    const note = await readFile(join(inbox, 'failed', 'stuck.csv.txt'), 'utf8');
    expect(note).toContain('batch: none');
    expect(note).toMatch(/outcome: not imported: the file does not end with a line break/);
    expect(note).toContain('nothing of it was queued');
    expect(await batchesOf('stuck.csv')).toEqual([]);
    expect(await jobs()).toBe(0);
  });
});

describe('a file written to after the scan claimed it', () => {
  /** A file held open by its writer, as a transfer tool holds it. */
  async function heldOpen(inbox: string, name: string, content: string): Promise<FileHandle> {
    await writeFile(join(inbox, name), content);
    await writeFile(join(inbox, `${name}.ready`), '');
    return open(join(inbox, name), 'r+');
  }

  it('appended to while its rows are read: failed/ with a note, its batch refused, nothing queued', async () => {
    const inbox = await temp('append');
    const first = `${HEADER}\n${rows(100, 6).join('\n')}\n`;
    const later = `${rows(106, 14).join('\n')}\n`;
    const writer = await heldOpen(inbox, 'payroll.csv', first);
    let appended = 0;
    try {
      const r = await scan(
        inbox,
        {},
        {
          // Called by the import between pieces of rows: the writer adds the rest of the file then.
          onRowsRead: () => {
            if (appended++ === 0) writeSync(writer.fd, later, Buffer.byteLength(first));
          },
        },
      );
      expect(appended).toBeGreaterThan(0);
      expect(r.taken.map((t) => [t.name, t.result])).toEqual([['payroll.csv', 'failed']]);
    } finally {
      await writer.close();
    }
    expect(await ls(join(inbox, 'failed'))).toEqual(['payroll.csv', 'payroll.csv.txt']);
    expect(await ls(join(inbox, 'done'))).toEqual([]);
    expect(await ls(join(inbox, 'processing'))).toEqual([]);
    // The file in failed/ is the whole file as its writer left it.
    expect(await readFile(join(inbox, 'failed', 'payroll.csv'), 'utf8')).toBe(first + later);
    const note = await readFile(join(inbox, 'failed', 'payroll.csv.txt'), 'utf8');
    expect(note).toMatch(/outcome: not imported: the file changed after it was taken/);
    expect(note).toContain(`size went from ${Buffer.byteLength(first)} to ${Buffer.byteLength(first + later)} bytes`);
    expect(note).toContain('nothing of it was queued');

    const batches = await batchesOf('payroll.csv');
    expect(batches.map((b) => b.state)).toEqual(['refused']);
    expect(batches[0]!.sha256).toBe(sha256(first));
    // Refused at its release: the note names the batch, and the ledger holds no request of it.
    expect(note).toContain(`batch: ${batches[0]!.id}`);
    expect(note).toContain(`batch ${batches[0]!.id} was refused before release`);
    expect(batches[0]!.refusalReason).toMatch(/^not released: payroll\.csv changed after it was taken/);
    expect(await ledger.getRequest(batches[0]!.id, 1)).toBeUndefined();
    expect(await jobs()).toBe(0);
  });

  it('rewritten in place, same size and modification time, before its import: failed/, nothing queued', async () => {
    const inbox = await temp('rewrite');
    const content = `${HEADER}\n${rows(200, 3).join('\n')}\n`;
    const writer = await heldOpen(inbox, 'vendors.csv', content);
    // A whole second, so that the time set back below is exactly the time the scan saw.
    const mtime = Math.floor(Date.now() / 1000) - 60;
    await utimes(join(inbox, 'vendors.csv'), mtime, mtime);
    try {
      const r = await scan(inbox, {
        importFile: async (path, checkBeforeRelease) => {
          // 25000.00 becomes 95000.00 on the first row, and the time is set back as a copy tool
          // keeping times would: only the content (SHA-256) tells.
          await writer.write('9', Buffer.byteLength(`${HEADER}\nbank,`));
          await writer.utimes(mtime, mtime);
          const { log } = memoryLog('warn');
          const rules = { banks: loadBankList(), walletCountries: ['EG'], maxFieldLength: 255 };
          const importer = createInboxImporter(
            { ledger, queue, rules, log, reportsDir: reports, itemsPerRequest: 5, serviceUrl: 'http://127.0.0.1:9' },
            { importedBy: 'scheduler' },
          );
          return importer.importFile(path, checkBeforeRelease);
        },
      });
      expect(r.taken.map((t) => [t.name, t.result])).toEqual([['vendors.csv', 'failed']]);
    } finally {
      await writer.close();
    }
    const note = await readFile(join(inbox, 'failed', 'vendors.csv.txt'), 'utf8');
    expect(note).toMatch(/outcome: not imported: the file changed after it was taken/);
    expect(note).toContain('its content (SHA-256) changed');
    expect(note).toContain('nothing of it was queued');
    expect((await batchesOf('vendors.csv')).map((b) => b.state)).toEqual(['refused']);
    expect(await jobs()).toBe(0);
  });
});

describe('a complete file', () => {
  it('is imported as before, from exactly the bytes claimed', async () => {
    const inbox = await temp('complete');
    const content = `${HEADER}\n${rows(300, 7).join('\n')}\n`;
    await writeFile(join(inbox, 'weekly.csv'), content);
    await writeFile(join(inbox, 'weekly.csv.ready'), '');

    const r = await scan(inbox);
    expect(r.taken.map((t) => [t.name, t.result, t.outcome])).toEqual([
      ['weekly.csv', 'done', 'queued 7 rows in 2 withdrawal requests'],
    ]);
    expect(await ls(inbox)).toEqual(['done', 'failed', 'processing']);
    expect(await ls(join(inbox, 'processing'))).toEqual([]);
    expect(await ls(join(inbox, 'done'))).toEqual(['weekly.csv', 'weekly.csv.txt']);
    const kept = await readFile(join(inbox, 'done', 'weekly.csv'));
    expect(kept.toString('utf8')).toBe(content);

    const [batch] = await batchesOf('weekly.csv');
    expect(batch).toMatchObject({ state: 'queued', rows: 7, validRows: 7, requests: 2, sha256: sha256(kept) });
    const note = await readFile(join(inbox, 'done', 'weekly.csv.txt'), 'utf8');
    expect(note).toContain(`batch: ${batch!.id}`);
    expect(note).toContain(`sha256: ${sha256(kept)}`);
    expect(note).toContain(`bytes: ${kept.length}`);
    expect(await jobs()).toBe(2);
    await queue.obliterate({ force: true });
  });
});
