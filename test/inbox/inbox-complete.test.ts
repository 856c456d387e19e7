/**
 * The inbox's completeness rules, with a stub import and a stub ledger: which file ends count as
 * complete (`fileEnd`), that a scan waits for a final line break and reports a file left without
 * one, that the import is given a private copy of the claimed file and the check before release,
 * that a change after the release is still named in the note, and that the guarded ledger
 * refuses a batch instead of releasing it when the check throws (README "The scheduled inbox").
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.js';
import { CashoutError } from '../../src/errors.js';
import { scanInbox, type InboxImportResult, type ScanDeps } from '../../src/inbox/scan-inbox.js';
import { claimName, fileEnd } from '../../src/inbox/inbox-rules.js';

const CSV = 'channel,amount\nwallet,1.00\n';
const MIN = 60_000;
let inbox: string;

beforeEach(async () => {
  inbox = await mkdtemp(join(tmpdir(), 'cashout-inbox-complete-unit-'));
});
afterEach(async () => {
  await rm(inbox, { recursive: true, force: true });
});

function queued(name: string): InboxImportResult {
  const counts = { rows: 1, validRows: 1, invalidRows: 0, duplicateRows: 0, requests: 1 };
  return { batchId: 'abcdefabcdef0123', state: 'queued', ...counts, reportDir: `/reports/${name}` };
}

function deps(over: Partial<ScanDeps> = {}): ScanDeps {
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const log = createLogger({ level: 'silent', stream: sink });
  return { inboxDir: inbox, settleSeconds: 30, log, importFile: async (p) => queued(basename(p)), ...over };
}

const ls = async (dir: string) => (await readdir(join(inbox, dir))).sort();
const bytes = (...b: number[]) => Uint8Array.from(b);
const text = (s: string) => new TextEncoder().encode(s);

describe('fileEnd', () => {
  it.each([
    ['LF', text('a,b\n1,2\n'), 'complete'],
    ['CRLF', text('a,b\r\n1,2\r\n'), 'complete'],
    ['CR', text('a,b\r1,2\r'), 'complete'],
    ['no final line break', text('a,b\n1,100012'), 'unfinished'],
    ['empty', text(''), 'empty'],
    ['NUL bytes (binary)', bytes(0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00), 'binary'],
    ['UTF-16LE ending with LF', bytes(0xff, 0xfe, 0x61, 0x00, 0x0a, 0x00), 'complete'],
    ['UTF-16LE ending with CR LF', bytes(0xff, 0xfe, 0x61, 0x00, 0x0d, 0x00, 0x0a, 0x00), 'complete'],
    ['UTF-16LE cut inside a line', bytes(0xff, 0xfe, 0x61, 0x00, 0x31, 0x00), 'unfinished'],
    ['UTF-16LE cut inside a code unit', bytes(0xff, 0xfe, 0x61, 0x00, 0x0a), 'unfinished'],
    ['UTF-16BE ending with LF', bytes(0xfe, 0xff, 0x00, 0x61, 0x00, 0x0a), 'complete'],
    ['UTF-16BE cut inside a line', bytes(0xfe, 0xff, 0x00, 0x61, 0x00, 0x31), 'unfinished'],
  ])('%s → %s', (_what, all, expected) => {
    expect(fileEnd(all.subarray(0, 8192), all.subarray(Math.max(0, all.length - 2)), all.length)).toBe(expected);
  });
});

describe('a scan and the end of a file', () => {
  it('waits for the last line break, with a marker or settled, and never imports the file meanwhile', async () => {
    await writeFile(join(inbox, 'cut.csv'), 'channel,amount\nwallet,1.0');
    await writeFile(join(inbox, 'cut.csv.ready'), '');
    await writeFile(join(inbox, 'empty.csv'), '');
    const calls: string[] = [];
    const importFile = async (p: string) => (calls.push(p), queued(basename(p)));
    const r = await scanInbox(deps({ now: () => Date.now() + 5 * MIN, importFile }));
    expect(r.taken).toEqual([]);
    expect(r.waiting.sort()).toEqual(['cut.csv', 'empty.csv']);
    expect(r.unfinished.sort()).toEqual(['cut.csv', 'empty.csv']);
    expect(calls).toEqual([]);
    expect(await ls('.')).toEqual(['cut.csv', 'cut.csv.ready', 'done', 'empty.csv', 'failed', 'processing']);
  });

  it('moves a file left without one past the longer time to failed/ with a note, never importing it', async () => {
    await writeFile(join(inbox, 'cut.csv'), 'channel,amount\nwallet,1.0');
    await writeFile(join(inbox, 'empty.csv'), '');
    const calls: string[] = [];
    const importFile = async (p: string) => (calls.push(p), queued(basename(p)));
    const r = await scanInbox(deps({ now: () => Date.now() + 11 * MIN, importFile }));
    expect(r.taken.map((t) => [t.name, t.result])).toEqual([
      ['cut.csv', 'failed'],
      ['empty.csv', 'failed'],
    ]);
    expect(calls).toEqual([]);
    expect(await ls('failed')).toEqual(['cut.csv', 'cut.csv.txt', 'empty.csv', 'empty.csv.txt']);
    expect(await ls('processing')).toEqual([]);
    const cut = await readFile(join(inbox, 'failed', 'cut.csv.txt'), 'utf8');
    expect(cut).toMatch(/outcome: not imported: the file does not end with a line break.*10 minutes/);
    expect(cut).toContain('batch: none');
    const empty = await readFile(join(inbox, 'failed', 'empty.csv.txt'), 'utf8');
    expect(empty).toMatch(/outcome: not imported: the file is empty/);
  });

  it('a file of a crashed scan without a final line break goes to failed/ too, not to the import', async () => {
    const claim = join(inbox, 'processing', claimName(Date.now() - 30 * MIN, 4242, 'abcdef01'));
    await mkdir(join(claim, '.copy'), { recursive: true });
    await writeFile(join(claim, 'cut.csv'), 'channel,amount\nwallet,1.0');
    await writeFile(join(claim, '.copy', 'cut.csv'), 'channel,amount\nwallet,1.0'); // the crashed scan's copy
    const calls: string[] = [];
    const r = await scanInbox(deps({ importFile: async (p) => (calls.push(p), queued(basename(p))) }));
    expect(r.taken.map((t) => [t.name, t.from, t.result])).toEqual([['cut.csv', 'processing', 'failed']]);
    expect(calls).toEqual([]);
    expect(await ls('processing')).toEqual([]);
  });
});

describe('the bytes imported are the bytes claimed', () => {
  it("the import reads a private copy with the file's name, and the claim folder keeps only the file", async () => {
    await writeFile(join(inbox, 'p.csv'), CSV);
    await writeFile(join(inbox, 'p.csv.ready'), '');
    let seen: { path: string; content: string; claim: string[]; check: boolean } | undefined;
    const r = await scanInbox(
      deps({
        importFile: async (p, check) => {
          const claimDir = dirname(dirname(p));
          const claim = (await readdir(claimDir)).sort();
          seen = { path: p, content: await readFile(p, 'utf8'), claim, check: check !== undefined };
          await check!();
          return queued('p.csv');
        },
      }),
    );
    expect(r.taken.map((t) => t.result)).toEqual(['done']);
    expect(basename(seen!.path)).toBe('p.csv');
    expect(basename(dirname(seen!.path))).toBe('.copy');
    expect(seen).toMatchObject({ content: CSV, claim: ['.copy', 'p.csv'], check: true });
    expect(await ls('processing')).toEqual([]);
    expect(await ls('done')).toEqual(['p.csv', 'p.csv.txt']);
  });

  it('the check before release throws file_changed when the claimed file grew', async () => {
    await writeFile(join(inbox, 'p.csv'), CSV);
    await writeFile(join(inbox, 'p.csv.ready'), '');
    let thrown: unknown;
    const r = await scanInbox(
      deps({
        importFile: async (p, check) => {
          await appendFile(join(dirname(dirname(p)), 'p.csv'), 'wallet,2.00\n');
          thrown = await check!().catch((err: unknown) => err);
          throw thrown;
        },
      }),
    );
    expect(thrown).toBeInstanceOf(CashoutError);
    const change = `its size went from ${CSV.length} to ${CSV.length + 12} bytes`;
    expect(thrown).toMatchObject({ code: 'file_changed', context: { file: 'p.csv', change } });
    expect(r.taken.map((t) => t.result)).toEqual(['failed']);
    const note = await readFile(join(inbox, 'failed', 'p.csv.txt'), 'utf8');
    expect(note).toContain('outcome: not imported: the file changed after it was taken (its size went from');
    expect(note).toContain('nothing of it was queued');
    expect(note).toContain('batch: none');
  });

  it('a change after the release is named in the note, which does not claim nothing was queued', async () => {
    await writeFile(join(inbox, 'p.csv'), CSV);
    await writeFile(join(inbox, 'p.csv.ready'), '');
    const r = await scanInbox(
      deps({
        importFile: async (p, check) => {
          await check!();
          await appendFile(join(dirname(dirname(p)), 'p.csv'), 'wallet,2.00\n');
          return queued('p.csv');
        },
      }),
    );
    expect(r.taken.map((t) => t.result)).toEqual(['failed']);
    const note = await readFile(join(inbox, 'failed', 'p.csv.txt'), 'utf8');
    expect(note).toContain('batch: abcdefabcdef0123');
    expect(note).toContain('outcome: imported from the bytes taken, but the file changed after its batch was released');
    expect(note).toContain('queued 1 row in 1 withdrawal request');
    expect(note).not.toContain('nothing of it was queued');
  });
});
