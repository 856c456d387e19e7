/**
 * The first rule across batches and people: a second file, a re-upload, a retry or a worker of
 * another service must not pay the same payee again. Real Redis (own prefix), the sandbox over
 * HTTP, real files; the sandbox's own list of created requests is the proof of what was paid.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { isCashoutError } from '../../src/errors.js';
import { retryRequest, resolveRequest } from '../../src/ledger/actions.js';
import { serviceAddress } from '../../src/submit/service-address.js';
import { recoverStuckRequests } from '../../src/submit/recover-stuck.js';
import { STALE_STAGING_MS } from '../../src/ledger/lifecycle.js';
import { buildRequest } from '../../src/batch/group-items.js';
import { openTestPipeline, walletRow, bankRow, type TestPipeline } from '../support/pipeline.js';

const TOKEN = 'never-twice-token';

/** How many items the sandbox created per payee (mobile or account number, holder and amount). */
function createdPerPayee(sandbox: Sandbox): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of sandbox.ledger()) {
    for (const w of entry.body.mobile_wallets ?? []) {
      const k = `${w.mobile_number}|${w.holder_name}|${w.amount}`;
      out.set(k, (out.get(k) ?? 0) + 1);
    }
    for (const b of entry.body.bank_accounts ?? []) {
      const k = `${b.number}|${b.holder_name}|${b.amount}`;
      out.set(k, (out.get(k) ?? 0) + 1);
    }
  }
  return out;
}

/**
 * Payees of `holders` (holder names) the sandbox created more than once: by destination and holder
 * (whatever the amount) when `byAmount` is false, else by destination, holder and amount.
 */
function paidTwice(sandbox: Sandbox, holders: readonly string[], byAmount = false): string[] {
  const wanted = new Set(holders);
  const count = new Map<string, number>();
  for (const [k, n] of createdPerPayee(sandbox)) {
    const [number, holder] = k.split('|');
    if (!wanted.has(holder!)) continue;
    const payee = byAmount ? k : `${number}|${holder}`;
    count.set(payee, (count.get(payee) ?? 0) + n);
  }
  return [...count].filter(([, n]) => n > 1).map(([k]) => k);
}

const holders = (from: number, to: number, bank = false) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${bank ? 'Bank Holder' : 'Holder'} ${from + i}`);

describe('never pay twice across batches', () => {
  let sandbox: Sandbox;
  let p: TestPipeline;
  beforeAll(async () => {
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    p = await openTestPipeline('never-twice');
  });
  afterAll(async () => {
    await sandbox.close();
    await p.close();
  });
  const pay = (batchId: string) => p.submit(batchId, { baseUrl: sandbox.url, token: TOKEN, concurrency: 4 });

  it('case 1: a corrected file imported while the first is still queued pays nobody twice (with references)', async () => {
    const rows = Array.from({ length: 200 }, (_, i) => (i % 5 === 0 ? bankRow(1000 + i) : walletRow(1000 + i)));
    const a = await p.importCsv(await p.writeCsv('case1-a.csv', rows));
    const corrected = [...rows];
    corrected[7] = walletRow(1007, '175.00');
    // Imported before anything of A was sent: every payee of B is held by A's queued requests.
    const b = await p.importCsv(await p.writeCsv('case1-b.csv', corrected));
    expect(a.state).toBe('queued');
    expect(b.duplicateRows).toBe(200);
    expect(b.requests).toBe(0);
    const before = sandbox.ledger().length;
    const ra = await pay(a.batchId);
    const rb = await p.report(b.batchId);
    expect(ra.rows.every((r) => r.status === 'accepted')).toBe(true);
    expect(rb.rows.every((r) => r.status === 'duplicate')).toBe(true);
    expect(rb.rows[7]!.message).toMatch(new RegExp(`already (to be )?paid (in|by) batch ${a.batchId} line 9`));
    expect(sandbox.ledger().length - before).toBe(a.requests);
    expect(paidTwice(sandbox, [...holders(1000, 1199), ...holders(1000, 1199, true)])).toEqual([]);
  });

  it('case 1 without references: the same payee, destination and amount is held; a changed amount is a new payout', async () => {
    const noRef = (row: string) => row.replace(/,[^,]*$/, ',');
    const rows = Array.from({ length: 30 }, (_, i) => noRef(walletRow(2000 + i)));
    const a = await p.importCsv(await p.writeCsv('case1n-a.csv', rows));
    const corrected = [...rows];
    corrected[3] = noRef(walletRow(2003, '101.00'));
    const b = await p.importCsv(await p.writeCsv('case1n-b.csv', corrected));
    expect(b.duplicateRows).toBe(29);
    const before = sandbox.ledger().length;
    await pay(a.batchId);
    const rb = await pay(b.batchId);
    expect(rb.rows.filter((r) => r.status === 'accepted').map((r) => r.amount)).toEqual(['101.00']);
    expect(rb.rows[0]!.message).toContain(`batch ${a.batchId} line 2`);
    expect(paidTwice(sandbox, holders(2000, 2029), true)).toEqual([]);
    expect(sandbox.ledger().length).toBeGreaterThan(before);
  });

  it('two identical rows of one file are two payouts; the same file uploaded again pays neither again', async () => {
    const twin = walletRow(2500).replace(/,[^,]*$/, ',');
    const a = await p.importCsv(await p.writeCsv('twins-a.csv', [twin, twin]));
    expect(a.duplicateRows).toBe(0);
    expect((await pay(a.batchId)).rows.map((r) => r.status)).toEqual(['accepted', 'accepted']);
    const again = await p.importCsv(await p.writeCsv('twins-b.csv', [twin, twin, twin]));
    const r = await pay(again.batchId);
    // The third copy is a payout the first file did not have.
    expect(r.rows.map((x) => x.status)).toEqual(['duplicate', 'duplicate', 'accepted']);
  });

  it('case 2: a re-upload after unknown outcomes does not pay the unknown rows again', async () => {
    // Every request is created by the service, but the answer is lost: all rows end unknown.
    sandbox.setFaults({ rates: { createThenReset: 1 }, seed: 2 });
    const rows = Array.from({ length: 12 }, (_, i) => walletRow(3000 + i));
    const a = await p.importCsv(await p.writeCsv('case2-a.csv', rows));
    const first = await pay(a.batchId);
    sandbox.setFaults({});
    expect(first.rows.every((r) => r.status === 'unknown')).toBe(true);
    const createdAfterA = sandbox.ledger().length;

    // The file, "fixed" (one description changed), uploaded again.
    const fixed = [...rows];
    fixed[0] = fixed[0]!.replace('Payout 3000', 'Payout 3000 (fixed)');
    const b = await p.importCsv(await p.writeCsv('case2-b.csv', fixed));
    const second = await pay(b.batchId);
    expect(second.rows.every((r) => r.status === 'duplicate')).toBe(true);
    expect(second.rows[0]!.message).toContain(`may already be paid: request 1 of batch ${a.batchId}`);
    expect(second.rows[0]!.message).toContain('reconcile it first');
    expect(sandbox.ledger().length).toBe(createdAfterA);
    expect(paidTwice(sandbox, holders(3000, 3011))).toEqual([]);
  });

  it('a payee released by "resolved not created" may be paid by a new file; the old request is then refused on retry', async () => {
    sandbox.setFaults({ rates: { http503: 1 }, seed: 3 });
    const rows = [walletRow(4000), walletRow(4001), walletRow(4002)];
    const a = await p.importCsv(await p.writeCsv('case2b-a.csv', rows), { itemsPerRequest: 3 });
    expect((await pay(a.batchId)).rows.every((r) => r.status === 'unknown')).toBe(true);
    sandbox.setFaults({});
    // A person looked in the service's dashboard: not created. The payees are free again.
    await resolveRequest(p.ledger, a.batchId, 1, 'not_created', { user: 'checker' }, 'not in the dashboard');
    const b = await p.importCsv(await p.writeCsv('case2b-b.csv', rows), { force: true });
    expect(b.duplicateRows).toBe(0);
    expect((await pay(b.batchId)).rows.every((r) => r.status === 'accepted')).toBe(true);
    // Someone presses Retry on the first batch's request: its payees are now held by B.
    const before = sandbox.ledger().length;
    await retryRequest(p.ledger, p.queue, a.batchId, 1, { user: 'checker' });
    const report = await pay(a.batchId);
    expect(sandbox.ledger().length).toBe(before);
    expect((await p.ledger.getRequest(a.batchId, 1))?.state).toBe('not_sent');
    expect(report.rows.map((r) => r.status)).toEqual(['not_sent', 'not_sent', 'not_sent']);
    expect(report.rows[0]!.message).toContain(`held by request 1 of batch ${b.batchId}`);
    // Not the 503 of the first try: this outcome had no HTTP answer.
    expect(report.rows.map((r) => r.http_status)).toEqual(['', '', '']);
    expect(paidTwice(sandbox, holders(4000, 4002))).toEqual([]);
    const events = await p.ledger.listApprovals(a.batchId);
    expect(events.some((e) => e.action === 'retried' && e.by === 'checker')).toBe(true);
  });

  it('paying a held payee on purpose needs a reason, and the report shows who and why', async () => {
    const a = await p.importCsv(await p.writeCsv('again-a.csv', [walletRow(5000)]));
    await pay(a.batchId);
    const b = await p.importCsv(await p.writeCsv('again-b.csv', [walletRow(5000)]), {
      force: true,
      payAgain: { note: 'second instalment agreed on the phone' },
      importedBy: 'alice',
    });
    const r = await pay(b.batchId);
    expect(r.rows[0]!.status).toBe('accepted');
    expect(r.rows[0]!.warnings).toContain('paid again on purpose (alice: second instalment agreed on the phone)');
    expect(r.rows[0]!.warnings).toContain(`already paid in batch ${a.batchId} line 2`);
    expect((await p.ledger.getBatch(b.batchId))?.payAgain).toEqual({
      by: 'alice',
      note: 'second instalment agreed on the phone',
    });
  });

  it('case 4: a batch is sent only to the service it was imported for', async () => {
    const a = await p.importCsv(await p.writeCsv('case4.csv', [walletRow(6000), walletRow(6001)]), {
      serviceUrl: serviceAddress(sandbox.url),
    });
    const other = await startSandbox({ token: TOKEN, banks: loadBankList() });
    try {
      // A worker configured for another service address takes the job: nothing is sent anywhere.
      const worker = p.startWorker({ baseUrl: other.url, token: TOKEN, serviceUrl: serviceAddress(other.url) });
      const job = await p.queue.getJob(`${a.batchId}-1`);
      await expect.poll(async () => (await job?.getState()) ?? 'missing', { timeout: 10_000 }).toBe('failed');
      await worker.close();
      const failed = await p.queue.getJob(`${a.batchId}-1`);
      expect(failed?.failedReason).toContain(`imported for the service at ${serviceAddress(sandbox.url)}`);
      expect(failed?.failedReason).toContain(`this worker sends to ${serviceAddress(other.url)}`);
      expect(other.received()).toBe(0);
      expect((await p.ledger.getRequest(a.batchId, 1))?.state).toBe('pending');
      // A person's retry where the other address is configured is refused, naming both addresses;
      // the job is not queued again.
      const wrongSetup = await retryRequest(
        p.ledger,
        p.queue,
        a.batchId,
        1,
        { user: 'amira' },
        {
          serviceUrl: serviceAddress(other.url),
        },
      ).catch((e: unknown) => e);
      expect(isCashoutError(wrongSetup, 'service_mismatch')).toBe(true);
      expect((wrongSetup as Error).message).toContain(`imported for the service at ${serviceAddress(sandbox.url)}`);
      expect((wrongSetup as Error).message).toContain(`this setup sends to ${serviceAddress(other.url)}`);
      expect(await (await p.queue.getJob(`${a.batchId}-1`))?.getState()).toBe('failed');
      // Where the batch's own address is configured, the retry queues it again.
      await retryRequest(
        p.ledger,
        p.queue,
        a.batchId,
        1,
        { user: 'amira' },
        { serviceUrl: serviceAddress(sandbox.url) },
      );
      expect(await (await p.queue.getJob(`${a.batchId}-1`))?.getState()).toBe('waiting');
      // The right worker sends them (request 2's failed job is queued again by its recovery sweep).
      const r = await p.submit(a.batchId, {
        baseUrl: sandbox.url,
        token: TOKEN,
        serviceUrl: serviceAddress(sandbox.url),
      });
      expect(r.rows.map((x) => x.status)).toEqual(['accepted', 'accepted']);
    } finally {
      await other.close();
    }
  });

  it('an import that stopped mid-file holds its payees until the recovery sweep refuses it', async () => {
    const stale = 'abcdefabcdef0001';
    await p.ledger.createBatch({
      id: stale,
      fileName: 'stopped.csv',
      sha256: stale.repeat(4),
      createdAt: new Date(Date.now() - STALE_STAGING_MS - 60_000).toISOString(),
      rows: 0,
      validRows: 0,
      invalidRows: 0,
      itemsPerRequest: 10,
      serviceUrl: '',
      reportDir: '/nonexistent',
      partial: false,
      importedBy: 'scheduler',
    });
    const item = {
      line: 2,
      reference: 'REF-8000',
      channel: 'wallet' as const,
      wallet: {
        amount: '100.00',
        type: 'TRANSFER' as const,
        holder_name: 'Holder 8000',
        mobile_number: '+201010008000',
        description: 'x',
      },
    };
    await p.ledger.stageRequests(stale, [{ ...buildRequest(1, [item]), payees: '2\tr:REF-8000\n' }]);
    const held = await p.importCsv(await p.writeCsv('stale-a.csv', [walletRow(8000)]));
    expect(held.duplicateRows).toBe(1);
    const changed = await recoverStuckRequests({ ledger: p.ledger, queue: p.queue, log: p.log, graceMs: 1000 });
    expect(changed).toBeGreaterThanOrEqual(1);
    expect((await p.ledger.getBatch(stale))?.state).toBe('refused');
    const again = await p.importCsv(await p.writeCsv('stale-b.csv', [walletRow(8000)]), { force: true });
    expect(again.duplicateRows).toBe(0);
  });

  it('a retry of an unknown request is refused until a person resolves it', async () => {
    sandbox.setFaults({ rates: { createThen500: 1 }, seed: 4 });
    const a = await p.importCsv(await p.writeCsv('unknown-retry.csv', [walletRow(7000)]));
    await pay(a.batchId);
    sandbox.setFaults({});
    const refused = await retryRequest(p.ledger, p.queue, a.batchId, 1, { user: 'bob' }).catch((e: unknown) => e);
    expect(isCashoutError(refused, 'request_state')).toBe(true);
    expect((refused as Error).message).toContain('reconcile it first');
  });
});
