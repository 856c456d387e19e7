/**
 * Paying a file in the browser, as finance staff do it (issue "Finance in the browser"): the maker
 * uploads the error sample as .xlsx and as CSV, sees its problems, downloads the rejected rows,
 * fixes them and uploads them again, and submits them for approval behind a confirmation; the
 * checker sees the rows and the total and approves; the batch page follows the batch by itself
 * until it ends; the request the sandbox left unknown is resolved as not created on its page and
 * retried from there, and the sandbox created it once. The Arabic dashboard is right-to-left.
 * Screenshots go to test-artifacts/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { writeReport } from '../../src/results/write-report.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { openTestPipeline, type TestPipeline } from '../support/pipeline.js';
import { startTestDashboard, staffUsers } from '../support/dashboard.js';
import { launchTestBrowser } from '../support/browser.js';

const PASSWORD = 'a long enough password';
const TOKEN = 'pay-a-file-token';
const ARTIFACTS = join(PACKAGE_ROOT, 'test-artifacts');
const SAMPLE = join(PACKAGE_ROOT, 'samples', 'payouts-with-errors.csv');

describe('paying a file in the browser', () => {
  let p: TestPipeline;
  let sandbox: Sandbox;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let worker: { close(): Promise<void> } | undefined;
  let maker: Page;
  let checker: Page;
  let batchId = '';
  let fixedTotal = '';
  const contexts: BrowserContext[] = [];

  const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
  const login = async (user: string): Promise<Page> => {
    const viewport = { width: 1400, height: 900 };
    const context = await browser.newContext({ acceptDownloads: true, viewport, locale: 'en-GB' });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${base}/login`);
    await page.fill('input[name=user]', user);
    await page.fill('input[name=password]', PASSWORD);
    await page.click('button[type=submit]');
    await page.waitForURL(`${base}/batches`);
    return page;
  };
  /** Uploads `path` and waits for the check's result page. */
  const upload = async (page: Page, path: string) => {
    await page.goto(`${base}/upload`);
    await page.setInputFiles('#file', path);
    await page.click('#check-file');
    await page.waitForURL(/\/uploads\/[0-9a-f]{32}$/);
    await page.locator('#upload-totals, #file-problem').first().waitFor({ timeout: 20_000 });
  };

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    p = await openTestPipeline('pay-a-file');
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    const client = { baseUrl: sandbox.url, token: TOKEN, serviceUrl: sandbox.url };
    worker = p.startWorker(client);
    ({ app, base } = await startTestDashboard(p, {
      users: await staffUsers(PASSWORD),
      timeZone: 'Africa/Cairo',
      imports: p.importDeps({
        itemsPerRequest: 50,
        serviceUrl: sandbox.url,
        policy: { requireApproval: true, approvalExpiryHours: 1 },
        limits: { maxBytes: 1_000_000, maxRows: 1000, maxFieldLength: 255 },
      }),
    }));
    browser = await launchTestBrowser();
    maker = await login('maker');
    checker = await login('checker');
  }, 60_000);

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await worker?.close();
    await app?.close();
    await sandbox?.close();
    await p?.close();
  });

  it('checks the error sample uploaded as .xlsx: its problems by sheet row, filterable', async () => {
    const book = new ExcelJS.Workbook();
    const sheet = book.addWorksheet('payouts');
    for (const record of parse(await readFile(SAMPLE), { bom: true, relax_column_count: true }) as string[][]) {
      sheet.addRow(record);
    }
    sheet.eachRow((row) => row.eachCell((cell) => void (cell.numFmt = '@')));
    const xlsx = join(p.reportsDir, 'payouts-with-errors.xlsx');
    await writeFile(xlsx, Buffer.from(await book.xlsx.writeBuffer()));
    await upload(maker, xlsx);
    expect(await maker.locator('#rows').innerText()).toBe('36');
    expect(await maker.locator('#invalid-rows').innerText()).toBe('27');
    const lines = await maker.locator('#problems tbody tr td:first-child').allInnerTexts();
    expect(Math.min(...lines.map(Number))).toBeGreaterThanOrEqual(2);
    await maker.selectOption('#filter-column', 'amount');
    const visible = maker.locator('#problems tbody tr:visible');
    expect(await visible.count()).toBeGreaterThan(0);
    const columns = await visible.evaluateAll((rows) => rows.map((r) => r.getAttribute('data-column')));
    expect(new Set(columns)).toEqual(new Set(['amount']));
    await shot(maker, '10-upload-xlsx-problems');
  });

  it('checks the same file as CSV with the same result, and hands out its rejected rows', async () => {
    await upload(maker, SAMPLE);
    expect(await maker.locator('#rows').innerText()).toBe('36');
    expect(await maker.locator('#invalid-rows').innerText()).toBe('27');
    expect(await maker.locator('#send-form').innerText()).toContain('Send the 9 valid rows');
    await shot(maker, '11-upload-csv-problems');
    const [download] = await Promise.all([maker.waitForEvent('download'), maker.click('#download-rejected')]);
    const rejectedBytes = await readFile((await download.path())!);
    const rejected = parse(rejectedBytes, { bom: true, relax_column_count: true }) as string[][];
    expect(rejected[0]!.slice(0, 3)).toEqual(['line', 'errors', 'channel']);
    expect(rejected).toHaveLength(28);

    // A person fixes each row (here: a valid wallet payout of its own) and keeps line and errors.
    let cents = 0;
    const fixed = rejected.map((r, i) => {
      if (i === 0) return r;
      const amount = `${100 + i}.00`;
      cents += (100 + i) * 100;
      const mobile = `+2010${String(20_000_000 + i)}`;
      const payee = [`Fixed Payee ${i}`, mobile, '', '', '', `Fixed payout ${i}`, `FIX-${i}`];
      return [r[0]!, r[1]!, 'wallet', amount, 'TRANSFER', ...payee];
    });
    fixedTotal = (cents / 100).toLocaleString('en-US', { minimumFractionDigits: 2 });
    const path = join(p.reportsDir, 'payouts-fixed.csv');
    await writeFile(path, stringify(fixed));
    await upload(maker, path);
    expect(await maker.locator('#invalid-rows').innerText()).toBe('0');
    expect(await maker.locator('#valid-total').innerText()).toBe(fixedTotal);
    expect(await maker.locator('#send').innerText()).toBe('Submit for approval');
    await shot(maker, '12-upload-fixed');
  });

  it('submits for approval behind a confirmation, and a second send imports nothing more', async () => {
    const uploadUrl = maker.url();
    await maker.click('#send');
    expect(maker.url(), 'the confirmation is required').toBe(uploadUrl);
    expect(await maker.locator('#send-form').innerText()).toContain(`27 payees a total of EGP ${fixedTotal}`);
    await maker.check('#send-confirm');
    await maker.click('#send');
    await maker.waitForURL(/\/batches\/[\w-]+$/);
    batchId = maker.url().split('/').pop()!;
    expect(await maker.locator('.flash').innerText()).toContain('waiting for another user');
    expect(await maker.locator('#batch-state').getAttribute('data-state')).toBe('awaiting_approval');

    // The same content again (another upload of the same file): the check shows every row held by
    // the batch awaiting approval, and offers nothing to send; nothing is imported.
    await upload(maker, join(p.reportsDir, 'payouts-fixed.csv'));
    expect(await maker.locator('#held-rows').innerText()).toBe('27');
    expect(await maker.locator('#held-total').innerText()).toBe(fixedTotal);
    expect(await maker.locator('#held-note').innerText()).toContain(`already to be paid by batch ${batchId}`);
    expect(await maker.locator('#send-form').count()).toBe(0);
    await shot(maker, '12b-upload-held-by-another-batch');
    expect((await p.ledger.listBatches()).length).toBe(1);
  });

  it('the checker sees the rows and the total, confirms, and the page follows the batch until it ends', async () => {
    await checker.goto(`${base}/batches/${batchId}`);
    expect(await checker.locator('#review-rows tbody tr').count()).toBe(27);
    expect(await checker.locator('#review-total').innerText()).toBe(fixedTotal);
    expect(await checker.locator('#review-rows').innerText()).toMatch(/\+201\*+\d{3}/);
    expect(await checker.locator('#review-rows').innerText()).not.toContain('+201020000001');
    await shot(checker, '13-checker-review');
    // The service answers 500 without creating anything: the request's outcome is unknown.
    sandbox.setFaults({ rates: { http500: 1 }, latencyMs: 1500 });
    await checker.check('#approve-confirm');
    await checker.click('#approve');
    await checker.waitForURL(`${base}/batches/${batchId}`);
    expect(await checker.locator('.flash').innerText()).toContain('approved by checker');
    expect(['queued', 'submitting']).toContain(await checker.locator('#batch-state').getAttribute('data-state'));
    await shot(checker, '14-batch-being-sent');
    // No navigation from here: the page updates by itself.
    await checker.locator('#batch-state[data-state="needs_reconciliation"]').waitFor({ timeout: 20_000 });
    sandbox.setFaults({});
    expect(await checker.locator('#batch-state').innerText()).toBe('Needs checking');
    await shot(checker, '15-batch-needs-checking');
  });

  it('resolves the unknown request as not created from its page, retries it, and it is created once', async () => {
    const before = sandbox.ledger().length;
    const row = checker.locator('tr[data-request="1"]');
    expect(await row.locator('.resolve-items tbody tr').count()).toBe(27);
    expect(await row.locator('.resolve-items').innerText()).toContain('Fixed Payee 1');
    await row.locator('select[name=finding]').selectOption('not_created');
    await row.locator('input[name=note]').fill('not in the merchant dashboard');
    await row.locator('form.resolve button').click();
    await expect.poll(() => checker.locator('.flash').innerText()).toContain('recorded as not created by checker');
    await shot(checker, '16-resolved-not-created');
    await checker.locator('tr[data-request="1"] .retry-button').click();
    await expect.poll(() => checker.locator('.flash').innerText()).toContain('Request 1 queued again');
    await expect.poll(async () => (await p.ledger.getRequest(batchId, 1))!.state, { timeout: 15_000 }).toBe('accepted');
    const created = sandbox
      .ledger()
      .slice(before)
      .flatMap((e) => e.body.mobile_wallets ?? []);
    expect(created.filter((i) => i.holder_name === 'Fixed Payee 1')).toHaveLength(1);
    const all = sandbox.ledger().flatMap((e) => e.body.mobile_wallets ?? []);
    expect(all.filter((i) => i.holder_name.startsWith('Fixed Payee'))).toHaveLength(27);
    await writeReport(p.ledger, batchId);
    await checker.reload();
    expect(await checker.locator('#batch-state').getAttribute('data-state')).toBe('finished');
    await shot(checker, '17-finished');
  });

  it('speaks Arabic, right to left, from the language switch', async () => {
    await checker.click('#lang-switch');
    await checker.waitForURL(`${base}/batches/${batchId}`);
    expect(await checker.locator('html').getAttribute('dir')).toBe('rtl');
    expect(await checker.locator('html').getAttribute('lang')).toBe('ar');
    expect(await checker.locator('#batch-state').innerText()).toBe('انتهت');
    await shot(checker, '18-batch-arabic');
    await checker.goto(`${base}/upload`);
    expect(await checker.locator('h1').innerText()).toBe('دفع ملف');
    await shot(checker, '19-upload-arabic');
    await checker.click('#lang-switch');
    expect(await checker.locator('html').getAttribute('dir')).toBe('ltr');
  });
});
