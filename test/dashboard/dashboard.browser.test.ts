/**
 * The dashboard as staff use it, in a real browser driven by playwright-core (test/support/browser.ts:
 * Debian's Chromium when installed, else the one bundled in the @sparticuz/chromium package):
 * log in; read a finished batch's counts and totals; download its results; approve a batch and
 * see it sent; retry a not_sent job from Bull Board and see it complete; see an unknown request
 * refused on retry until it is resolved; open the error sample's summary.html. Screenshots are
 * saved to test-artifacts/ for people to look at, with browser.txt naming the browser that took them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { parse } from 'csv-parse/sync';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { importBatch, type ImportResult } from '../../src/batch/import-batch.js';
import { writeReport } from '../../src/results/write-report.js';
import { freePort } from '../../src/queue/private-redis.js';
import { requestJobId } from '../../src/batch-id.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { bankRow, openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';
import { findTestBrowser, launchTestBrowser } from '../support/browser.js';
import { startTestDashboard, staffUsers } from '../support/dashboard.js';

const PASSWORD = 'a long enough password';
const TOKEN = 'browser-test-token';
const ARTIFACTS = join(PACKAGE_ROOT, 'test-artifacts');

describe('dashboard in a browser', () => {
  let p: TestPipeline;
  let sandbox: Sandbox;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  let worker: { close(): Promise<void> } | undefined;
  const batches: Record<'finished' | 'awaiting' | 'notSent' | 'unknown' | 'errors', ImportResult> = {} as never;

  /** A worker against `baseUrl` that writes each batch's report when it is final, as `cashout worker` does. */
  const startWorker = (baseUrl: string) => {
    worker = p.startWorker({
      baseUrl,
      token: TOKEN,
      connections: 4,
      onBatchDone: async (id) => void (await writeReport(p.ledger, id)),
    });
  };
  const stopWorker = async () => {
    await worker?.close();
  };
  /** Waits until `fn()` returns `want` (beforeAll cannot use expect.poll). */
  const until = async <T>(fn: () => Promise<T>, want: T, timeoutMs = 10_000) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const got = await fn();
      if (got === want) return;
      if (Date.now() > end) throw new Error(`still ${String(got)}, expected ${String(want)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const state = async (id: string) => (await p.ledger.getBatch(id))!.state;
  const requestState = async (id: string, seq: number) => (await p.ledger.getRequest(id, seq))!.state;
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const imp = (file: string, opts: Parameters<typeof importBatch>[2] = {}, approval = false) =>
    importBatch(
      {
        ledger: p.ledger,
        queue: p.queue,
        rules: { banks: p.banks, walletCountries: ['EG'], maxFieldLength: 255 },
        log: p.log,
        reportsDir: p.reportsDir,
        itemsPerRequest: 10,
        serviceUrl: sandbox.url,
        ...(approval ? { policy: { requireApproval: true, approvalExpiryHours: 1 } } : {}),
      },
      file,
      { importedBy: 'maker', ...opts },
    );

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    p = await openTestPipeline('browser');
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });

    // A batch whose only request never reached the service.
    startWorker(`http://127.0.0.1:${await freePort()}`);
    batches.notSent = await imp(await p.writeCsv('not-sent.csv', [walletRow(301), walletRow(302)]));
    await until(() => requestState(batches.notSent.batchId, 1), 'not_sent');
    await stopWorker();

    startWorker(sandbox.url);
    // A finished batch.
    batches.finished = await imp(
      await p.writeCsv('november-commissions.csv', [
        walletRow(1, '1500.00'),
        bankRow(2, '2500.50'),
        walletRow(3, '99.99'),
      ]),
    );
    await until(() => state(batches.finished.batchId), 'finished');
    // A batch whose request was created but answered with a 500: unknown.
    sandbox.setFaults({ rates: { createThen500: 1 } });
    batches.unknown = await imp(await p.writeCsv('unknown.csv', [walletRow(401)]));
    await until(() => state(batches.unknown.batchId), 'needs_reconciliation');
    sandbox.setFaults({});
    // A batch awaiting approval.
    batches.awaiting = await imp(await p.writeCsv('december-salaries.csv', [walletRow(11), bankRow(12)]), {}, true);
    // The error sample: refused as a whole, with a report that lists what needs attention.
    batches.errors = await imp(join(PACKAGE_ROOT, 'samples', 'payouts-with-errors.csv'));
    await writeReport(p.ledger, batches.errors.batchId);

    ({ app, base } = await startTestDashboard(p, { users: await staffUsers(PASSWORD) }));
    browser = await launchTestBrowser();
    const { kind, executablePath } = await findTestBrowser();
    await writeFile(join(ARTIFACTS, 'browser.txt'), `${kind} ${executablePath} ${browser.version()}\n`);
    const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1400, height: 900 } });
    page = await context.newPage();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopWorker();
    await app?.close();
    await sandbox?.close();
    await p?.close();
  });

  it('logs in and shows a finished batch with its counts and totals', async () => {
    await page.goto(`${base}/batches`);
    await shot('00-login');
    await expect.poll(() => page.url()).toContain('/login');
    await page.fill('input[name=user]', 'checker');
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/batches`);
    const row = page.locator(`tr[data-batch="${batches.finished.batchId}"]`);
    await expect.poll(() => row.locator('.state').getAttribute('data-state')).toBe('finished');
    expect(await row.locator('.state').innerText()).toBe('Finished');
    expect((await row.locator('[data-status=accepted]').innerText()).replace(/\s+/g, ' ')).toBe('3 4,100.49');
    expect(await row.locator('[data-total]').innerText()).toBe('4,100.49');
    await shot('01-batches');
  });

  it("downloads the finished batch's results.csv, marked as UTF-8 for Excel", async () => {
    const row = page.locator(`tr[data-batch="${batches.finished.batchId}"]`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.locator('a', { hasText: 'results.csv' }).click(),
    ]);
    const bytes = await readFile((await download.path())!);
    expect(bytes.subarray(0, 3), 'a UTF-8 byte-order mark, for Excel').toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const rows = parse(bytes, { columns: true, bom: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)[0]).toBe('line');
    expect(rows.map((r) => [r.line, r.status, r.amount])).toEqual([
      ['2', 'accepted', '1500.00'],
      ['3', 'accepted', '2500.50'],
      ['4', 'accepted', '99.99'],
    ]);
  });

  it('approves a batch awaiting approval and sees it sent', async () => {
    await page.goto(`${base}/batches/${batches.awaiting.batchId}`);
    expect(await page.locator('#batch-state').innerText()).toBe('Awaiting approval');
    expect(await page.locator('#review-rows tbody tr').count()).toBe(2);
    expect(await page.locator('#review-total').innerText()).toBe('350.00');
    await shot('02-awaiting-approval');
    await page.check('#approve-confirm');
    await page.click('#approve');
    await expect.poll(() => page.locator('.flash').innerText()).toContain('approved by checker');
    await expect.poll(() => state(batches.awaiting.batchId), { timeout: 10_000 }).toBe('finished');
    await page.reload();
    expect(await page.locator('#batch-state').getAttribute('data-state')).toBe('finished');
    await shot('03-approved-and-sent');
  });

  /** Presses Retry on a job's page in Bull Board (an icon button; found by its tooltip) and confirms. */
  async function retryFromBullBoard(batchId: string, seq: number): Promise<void> {
    const jobId = requestJobId(batchId, seq);
    await page.goto(`${base}/queues/queue/cashout-submit/${jobId}`);
    await page.getByText(jobId).first().waitFor();
    const icons = page.locator('ul[class*="jobActions"] li button');
    let pressed = false;
    for (let i = 0; i < (await icons.count()) && !pressed; i++) {
      const button = icons.nth(i);
      await button.hover();
      const tip = page.getByText(/^Retry$/);
      if (
        await tip
          .first()
          .waitFor({ state: 'visible', timeout: 2000 })
          .then(
            () => true,
            () => false,
          )
      ) {
        await button.click();
        pressed = true;
      }
    }
    expect(pressed, 'a Retry button on the job page').toBe(true);
    const confirm = page.getByRole('button', { name: /^(Confirm|Retry|Yes|OK)$/i });
    if (
      await confirm
        .last()
        .isVisible({ timeout: 1000 })
        .catch(() => false)
    )
      await confirm.last().click();
  }

  it('retries a not_sent job from Bull Board and sees it complete', async () => {
    const jobId = requestJobId(batches.notSent.batchId, 1);
    expect(await (await p.queue.getJob(jobId))!.getState()).toBe('failed');
    const before = sandbox.ledger().length;
    await retryFromBullBoard(batches.notSent.batchId, 1);
    await shot('04-bull-board-retry');
    await expect.poll(() => requestState(batches.notSent.batchId, 1), { timeout: 15_000 }).toBe('accepted');
    expect(sandbox.ledger().length).toBe(before + 1);
  });

  it('an unknown request is refused on retry until it is resolved, then sent once', async () => {
    const { batchId } = batches.unknown;
    const received = sandbox.received();
    await retryFromBullBoard(batchId, 1);
    await expect
      .poll(async () => (await p.queue.getJob(requestJobId(batchId, 1)))!.failedReason, { timeout: 15_000 })
      .toMatch(/may already have been created/);
    expect(sandbox.received()).toBe(received);
    expect(await requestState(batchId, 1)).toBe('unknown');

    await page.goto(`${base}/batches/${batchId}`);
    await page.selectOption('form.resolve select[name=finding]', 'not_created');
    await page.fill('form.resolve input[name=note]', 'not in the merchant dashboard');
    await page.click('form.resolve button[type=submit]');
    await expect.poll(() => page.locator('.flash').innerText()).toContain('recorded as not created by checker');
    await shot('05-resolved');
    await retryFromBullBoard(batchId, 1);
    await expect.poll(() => requestState(batchId, 1), { timeout: 15_000 }).toBe('accepted');
    expect(sandbox.received()).toBe(received + 1);
  });

  it("opens the error sample's summary.html and shows the rows that need attention", async () => {
    await page.goto(`${base}/batches/${batches.errors.batchId}/files/summary.html`);
    const text = await page.locator('body').innerText();
    expect(text).toContain(batches.errors.batchId);
    expect(text).toMatch(/Banqe Misr/);
    expect(text).toMatch(/1,500\.00/);
    await shot('06-summary-html');
  });
});
