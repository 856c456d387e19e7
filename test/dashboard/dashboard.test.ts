/**
 * The dashboard over real HTTP, against the real Redis: nothing is shown or done without a login,
 * cross-site actions are refused, the importer cannot approve their own batch, and a batch over
 * the total limit or awaiting approval sends nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { SESSION_COOKIE } from '../../src/dashboard/server.js';
import { createMetrics } from '../../src/metrics.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { importBatch } from '../../src/batch/import-batch.js';
import { openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';
import { startTestDashboard, staffUsers } from '../support/dashboard.js';

const PASSWORD = 'correct horse battery staple';

describe('dashboard', () => {
  let p: TestPipeline;
  let app: FastifyInstance;
  let base: string;
  let sandbox: Sandbox;
  /** One session reused across tests. */
  let checkerCookie = '';

  beforeAll(async () => {
    p = await openTestPipeline('dashboard');
    sandbox = await startSandbox({ token: 't', banks: loadBankList() });
    ({ app, base } = await startTestDashboard(p, {
      users: await staffUsers(PASSWORD),
      metrics: createMetrics({ queues: [p.queue], ledger: p.ledger, defaultMetrics: false }),
    }));
  });
  afterAll(async () => {
    await app.close();
    await sandbox.close();
    await p.close();
  });

  const login = async (user: string, password = PASSWORD) => {
    const res = await fetch(`${base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: new URLSearchParams({ user, password, next: '/batches' }),
    });
    return res;
  };
  const sessionCookie = async (user: string) => {
    const res = await login(user);
    expect(res.status).toBe(303);
    const cookie = res.headers.get('set-cookie')!;
    return cookie.split(';')[0]!;
  };
  const csrfOf = async (cookie: string, path: string) => {
    const html = await (await fetch(`${base}${path}`, { headers: { cookie } })).text();
    return /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
  };
  const importWithApproval = async (name: string, rows: string[], importedBy: string) =>
    importBatch(
      p.importDeps({
        itemsPerRequest: 10,
        serviceUrl: sandbox.url,
        policy: { requireApproval: true, approvalExpiryHours: 1 },
      }),
      await p.writeCsv(name, rows),
      { importedBy },
    );

  it.each([
    ['GET', '/batches', { accept: 'text/html' }, 302],
    ['GET', '/batches', {}, 401],
    ['GET', '/batches/0123456789abcdef', {}, 401],
    ['GET', '/batches/0123456789abcdef/files/results.csv', {}, 401],
    ['GET', '/queues', { accept: 'text/html' }, 302],
    ['GET', '/queues/api/queues', {}, 401],
    ['GET', '/metrics', {}, 401],
    ['PUT', '/queues/api/queues/cashout-submit/x/retry', { origin: 'SELF' }, 401],
    ['POST', '/batches/0123456789abcdef/approve', { origin: 'SELF' }, 401],
  ])('%s %s without a session → %i', async (method, path, headers, status) => {
    const h: Record<string, string> = { ...headers };
    if (h.origin === 'SELF') h.origin = base;
    const res = await fetch(`${base}${path}`, { method, headers: h, redirect: 'manual' });
    expect(res.status).toBe(status);
    if (status === 302) expect(res.headers.get('location')).toMatch(/^\/login\?next=/);
  });

  it('logs in with the right password only; the cookie is HttpOnly and SameSite=Strict; pages carry security headers', async () => {
    expect((await login('maker', 'wrong password')).status).toBe(401);
    expect((await login('nobody')).status).toBe(401);
    const res = await login('checker');
    expect(res.status).toBe(303);
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toContain(`${SESSION_COOKIE}=`);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    const page = await fetch(`${base}/batches`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('x-frame-options')).toBeTruthy();
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('nothing is sent before approval, the importer cannot approve, cross-site actions are refused, another user can', async () => {
    const batch = await importWithApproval('approve.csv', [walletRow(1), walletRow(2)], 'maker');
    expect(batch.state).toBe('awaiting_approval');
    expect(await p.queue.count()).toBe(0);

    const maker = await sessionCookie('maker');
    const makerCsrf = await csrfOf(maker, `/batches/${batch.batchId}`);
    const own = await fetch(`${base}/batches/${batch.batchId}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: maker, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: makerCsrf, confirm: 'yes', total: '200.00' }),
    });
    expect(own.status).toBe(303);
    expect((await p.ledger.getBatch(batch.batchId))!.state).toBe('awaiting_approval');
    const flash = await (await fetch(`${base}/batches/${batch.batchId}`, { headers: { cookie: maker } })).text();
    expect(flash).toContain('someone else must approve it');

    const checker = await sessionCookie('checker');
    checkerCookie = checker;
    const csrf = await csrfOf(checker, `/batches/${batch.batchId}`);
    const crossSite = await fetch(`${base}/batches/${batch.batchId}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: checker, origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }),
    });
    expect(crossSite.status).toBe(403);
    const noToken = await fetch(`${base}/batches/${batch.batchId}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: checker, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({}),
    });
    expect(noToken.status).toBe(403);
    // A total other than the batch's (the batch changed since the page was drawn) approves nothing.
    const otherTotal = await fetch(`${base}/batches/${batch.batchId}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: checker, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, confirm: 'yes', total: '199.00' }),
    });
    expect(otherTotal.status).toBe(303);
    const changed = await (await fetch(`${base}/batches/${batch.batchId}`, { headers: { cookie: checker } })).text();
    expect(changed).toContain('The batch is not what this page showed');
    expect((await p.ledger.getBatch(batch.batchId))!.state).toBe('awaiting_approval');
    expect(await p.queue.count()).toBe(0);

    const ok = await fetch(`${base}/batches/${batch.batchId}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: checker, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, confirm: 'yes', total: '200.00' }),
    });
    expect(ok.status).toBe(303);
    const approved = await p.ledger.getBatch(batch.batchId);
    expect(approved).toMatchObject({ state: 'queued', approvedBy: 'checker' });
    expect(await p.queue.count()).toBe(1);
    const { rows } = await p.submit(batch.batchId, { baseUrl: sandbox.url, token: 't' });
    expect(rows.map((r) => r.status)).toEqual(['accepted', 'accepted']);
    expect((await p.ledger.listApprovals(batch.batchId)).map((a) => a.action)).toEqual([
      'imported',
      'approval_required',
      'approved',
    ]);
  });

  it('a batch over the batch total limit is refused before anything is sent', async () => {
    const batch = await importBatch(
      p.importDeps({ itemsPerRequest: 10, serviceUrl: sandbox.url, policy: { maxBatchTotal: '150.00' } }),
      await p.writeCsv('over.csv', [walletRow(11, '100.00'), walletRow(12, '100.00')]),
    );
    expect(batch.state).toBe('refused');
    expect(batch.refusalReason).toMatch(
      /EGP 200.00 is over the limit of EGP 150.00 per batch \(CASHOUT_MAX_BATCH_TOTAL\)/,
    );
    const { rows } = await p.report(batch.batchId);
    expect(rows.every((r) => r.status === 'not_sent' && r.message!.includes('CASHOUT_MAX_BATCH_TOTAL'))).toBe(true);
  });

  it('offers Retry on a request not sent only where the ledger would queue it again (not in a stopped batch)', async () => {
    const notSentIn = async (name: string, stop: boolean) => {
      const batch = await p.importCsv(await p.writeCsv(name, [walletRow(stop ? 61 : 62)]));
      if (stop) await p.ledger.halt(batch.batchId, 'the service refused the access token (HTTP 401)');
      await p.ledger.finishUnsent(batch.batchId, 1, 'not sent', 'pending');
      const html = await (
        await fetch(`${base}/batches/${batch.batchId}`, { headers: { cookie: checkerCookie } })
      ).text();
      return html.includes(`action="/batches/${batch.batchId}/requests/1/retry"`);
    };
    expect(await notSentIn('retry-open.csv', false)).toBe(true);
    expect(await notSentIn('retry-stopped.csv', true)).toBe(false);
  });

  it('links a refused batch and the batch that imported its file again, both ways', async () => {
    const file = await p.writeCsv('refused-then-partial.csv', [walletRow(63), walletRow(64, '"1,500.00"')]);
    const refused = await p.importCsv(file);
    expect(refused.state).toBe('refused');
    const again = await p.importCsv(file, { partial: true });
    const page = async (id: string) =>
      (await fetch(`${base}/batches/${id}`, { headers: { cookie: checkerCookie } })).text();
    expect(await page(again.batchId)).toContain(`<a id="follows" href="/batches/${refused.batchId}">`);
    expect(await page(refused.batchId)).toContain(`<a id="superseded-by" href="/batches/${again.batchId}">`);
    expect(await page(again.batchId)).not.toContain('id="superseded-by"');
    // A refused batch pays nothing: its total is not called a total to pay.
    expect(await page(refused.batchId)).toMatch(
      /<dt>Total of its valid rows \(none paid\)<\/dt><dd class="amount" id="batch-total">EGP 100.00</,
    );
    expect(await page(again.batchId)).toMatch(/<dt>Total to pay<\/dt><dd class="amount" id="batch-total">EGP 100.00</);
  });

  it('shows the totals of a report only while they describe the batch as it is', async () => {
    const batch = await p.importCsv(await p.writeCsv('totals-then-resend.csv', [walletRow(65)]));
    sandbox.setFaults({ rates: { http500: 1 } });
    const { summary } = await p.submit(batch.batchId, { baseUrl: sandbox.url, token: 't' });
    sandbox.setFaults({});
    expect(summary.batchState).toBe('needs_reconciliation');
    const page = async () =>
      (await fetch(`${base}/batches/${batch.batchId}`, { headers: { cookie: checkerCookie } })).text();
    expect(await page()).toContain('<tr data-status="unknown">');
    // Found not created (by another process): the batch is queued to be sent again; the report of
    // its earlier end is not shown beside that state.
    await p.ledger.resolve(batch.batchId, 1, 'not_created', 'checker', 'not in the merchant dashboard');
    const after = await page();
    expect(after).toContain('data-state="queued"');
    expect(after).not.toContain('<tr data-status="unknown">');
  });

  it('says of a batch still being imported when the workers refuse it if its import stopped', async () => {
    const id = 'a1b2c3d4e5f60718';
    await p.ledger.createBatch({
      id,
      fileName: 'stopped.csv',
      sha256: 'a1b2c3d4e5f60718'.repeat(4),
      createdAt: '2026-03-01T08:00:00.000Z',
      rows: 0,
      validRows: 0,
      invalidRows: 0,
      itemsPerRequest: 1,
      serviceUrl: '',
      reportDir: join(p.reportsDir, id),
      partial: false,
      importedBy: 'scheduler',
    });
    const html = await (await fetch(`${base}/batches/${id}`, { headers: { cookie: checkerCookie } })).text();
    // Two hours after the import began (STALE_STAGING_MS), in the dashboard's time zone (Cairo, UTC+2).
    expect(html).toMatch(
      /id="staging-note">not finished: nothing of this batch is sent[^<]*refuse the batch at [^<]*12:00/,
    );
    const queued = await p.importCsv(await p.writeCsv('not-staging.csv', [walletRow(66)]));
    const other = await (
      await fetch(`${base}/batches/${queued.batchId}`, { headers: { cookie: checkerCookie } })
    ).text();
    expect(other).not.toContain('id="staging-note"');
  });

  it('lists a batch whose rows are all duplicates with their count and total, not zeros', async () => {
    await p.importCsv(await p.writeCsv('held-first.csv', [walletRow(67), walletRow(68)]));
    const again = await p.importCsv(
      await p.writeCsv('held-again.csv', [walletRow(67, '70.00'), walletRow(68, '80.00')]),
    );
    expect(again.state).toBe('finished');
    const html = await (await fetch(`${base}/batches`, { headers: { cookie: checkerCookie } })).text();
    const row = html.slice(html.indexOf(`<tr data-batch="${again.batchId}">`));
    const cell = (status: string) =>
      new RegExp(`<td class="num" data-status="${status}">([^<]*)<br><small>([^<]*)</small>`).exec(row)?.slice(1);
    expect(cell('duplicate')).toEqual(['2', '150.00']);
    expect(cell('pending')).toEqual(['0', '0.00']);
  });

  it('serves metrics to a logged-in user: queue depths and batches by state', async () => {
    const cookie = checkerCookie;
    const text = await (await fetch(`${base}/metrics`, { headers: { cookie } })).text();
    expect(text).toMatch(/cashout_queue_jobs\{queue="cashout-submit",state="completed"\} \d+/);
    expect(text).toMatch(/cashout_batches\{state="finished"\} [1-9]/);
  });

  it('too many wrong passwords are slowed down', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await login('maker', `guess ${i}`)).status);
    expect(statuses).toContain(429);
  });
});
