/**
 * The 3-D Secure OTP dialog in a real browser (Chromium driven by playwright-core, as
 * test/support/browser.ts finds it), against the sandbox (interface doc §2.3, §4, §6.1). A page
 * served by the sandbox loads the dialog script;
 * the client charges a 3-D Secure card and gets §2.3; the page calls init() and load(id); the test
 * types the OTP; the page receives exactly the §6.1 message, the dialog is gone, and the sandbox
 * records the charge PAID (FAILED for a wrong OTP). Messages from another origin or with another
 * message_source are ignored; a page without the container gets a clear console error, not a crash.
 * As an outside check, a merchant page on another origin written the way public pages use the real
 * service's plugin (names spelt as in the document) works too. Screenshots go to test-artifacts/.
 */
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createChargeClient, type ChargeClient } from '../../src/charge/charge-client.js';
import { OtpBrowserMessage } from '../../src/contract/charge-api.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { launchTestBrowser } from '../support/browser.js';

const TOKEN = 'otp-browser-token';
const MERCHANT = { code: 'MERCHANT42', hashKey: 'hk_otp_browser' };
const THREE_DS = '9000000000000035';
const RIGHT_OTP = '123456';
const ARTIFACTS = join(PACKAGE_ROOT, 'test-artifacts');

/** What the tests reach inside a page (the project compiles without the DOM library). */
interface PageGlobals {
  SERVICEOTPDIALOG?: { init(): boolean; load(id: unknown): boolean };
  receivedServiceMessages: unknown[];
  shopMessages: unknown[];
  allMessages: number;
  posted?: boolean;
  postMessage(message: unknown, targetOrigin: string): void;
  addEventListener(type: 'message', listener: () => void): void;
  document: {
    getElementById(id: string): { remove(): void } | null;
    createElement(tag: 'iframe'): { src: string };
    body: { appendChild(node: unknown): void };
  };
}

/** A §6.1 message as another sender would forge it. */
const FORGED = {
  callback_type: 'order_status_update',
  service_reference_id: '999',
  message_source: 'service',
  message_type: 'service_browser_callback',
  payment_gateway_reference_id: 'forged',
  payment_status: 'PAID',
};

/** Pages of another origin: a sender of forged messages, and a merchant page using the dialog. */
function otherOriginPage(url: URL): string {
  if (url.pathname === '/forger') {
    return `<!doctype html><title>forger</title><script>
      parent.postMessage(${JSON.stringify(FORGED)}, '*');
      window.posted = true;
    </script>`;
  }
  // Written the way public merchant pages use the real plugin: a container in the page, the script
  // from the service, init() and load(<reference>) inline, and a listener checking message_source.
  const service = url.searchParams.get('service') ?? '';
  const ref = Number(url.searchParams.get('ref'));
  return `<!doctype html><html><head><title>Checkout</title></head><body>
    <h1>Checkout</h1>
    <div id="service-otp-container"></div>
    <script src="${service}/js/plugins/OTPPaymentPlugin.js"></script>
    <script>
      window.shopMessages = [];
      window.addEventListener('message', function (e) {
        if (e.data && e.data.message_source === 'service') window.shopMessages.push(e.data);
      });
      SERVICEOTPDIALOG.init();
      SERVICEOTPDIALOG.load(${ref});
    </script>
  </body></html>`;
}

describe('the 3-D Secure OTP dialog in a browser', () => {
  let sandbox: Sandbox;
  let other: Server;
  let otherUrl: string;
  let client: ChargeClient;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let consoleErrors: string[];
  let pageErrors: string[];

  /** Charges the 3-D Secure test card through the client; returns its service_reference_id (§2.3). */
  const chargeThreeDSecure = async (): Promise<number> => {
    const result = await client.charge({
      merchant_reference_id: `SHOP${Date.now()}${Math.floor(Math.random() * 1e6)}`,
      customer_merchant_profile_id: 'cust-17',
      amount: '250.00',
      customer_name: 'Mona Said',
      customer_mobile: '+201001234567',
      customer_email: 'mona@example.com',
      card_number: THREE_DS,
      cvv: '731',
      expiry_year: '29',
      expiry_month: '05',
      description: 'Order 1001',
    });
    expect(result.kind).toBe('otp_required');
    return result.kind === 'otp_required' ? result.serviceReferenceId : -1;
  };
  const dialog = () => page.frameLocator('#service-otp-container iframe');
  const received = () => page.evaluate(() => (globalThis as unknown as PageGlobals).receivedServiceMessages);
  const chargeStatus = (id: number) => sandbox.charges().find((c) => c.service_reference_id === id)?.status;
  const openDemo = async () => {
    await page.goto(`${sandbox.url}/demo/charge`);
    await page.waitForFunction(() => typeof (globalThis as unknown as PageGlobals).SERVICEOTPDIALOG === 'object');
  };

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    const secrets = { merchantCode: MERCHANT.code, hashKey: MERCHANT.hashKey };
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList(), ...secrets });
    const timeouts = { requestTimeoutMs: 5_000, connectTimeoutMs: 1_000 };
    client = createChargeClient({ baseUrl: sandbox.url, token: TOKEN, ...secrets, ...timeouts, connections: 1 });
    other = createServer((req, res) => {
      const html = otherOriginPage(new URL(req.url ?? '/', 'http://x'));
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    browser = await launchTestBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await sandbox?.close();
    await new Promise<void>((resolve) => (other ? other.close(() => resolve()) : resolve()));
  });

  beforeEach(async () => {
    await context?.close();
    context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    page = await context.newPage();
    consoleErrors = [];
    pageErrors = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  it('the right OTP: the page gets exactly the §6.1 message (PAID), the dialog goes, the charge is PAID', async () => {
    const id = await chargeThreeDSecure();
    await openDemo();
    const opened = await page.evaluate((ref) => {
      const d = (globalThis as unknown as PageGlobals).SERVICEOTPDIALOG!;
      return d.init() && d.load(ref);
    }, id);
    expect(opened).toBe(true);
    await expect.poll(() => dialog().locator('#amount').textContent()).toBe('EGP 250.00');
    await expect.poll(() => dialog().locator('#card').textContent()).toBe('\u2022\u2022\u2022\u2022 0035');
    await dialog().locator('#otp').fill(RIGHT_OTP);
    await page.screenshot({ path: join(ARTIFACTS, 'charge-otp-dialog.png') });
    await dialog().locator('#confirm').click();

    await expect.poll(async () => (await received()).length).toBe(1);
    const [message] = await received();
    const gateway = sandbox.charges().find((c) => c.service_reference_id === id)?.payment_gateway_reference_id;
    expect(message).toEqual({
      callback_type: 'order_status_update',
      service_reference_id: String(id),
      message_source: 'service',
      message_type: 'service_browser_callback',
      payment_gateway_reference_id: gateway,
      payment_status: 'PAID',
    });
    expect(OtpBrowserMessage.safeParse(message).success).toBe(true);
    expect(Object.keys(message as object)).toHaveLength(6);
    expect(await page.locator('#service-otp-container iframe').count()).toBe(0);
    expect(await page.locator('[data-service-otp-dialog]').count()).toBe(0);
    expect(chargeStatus(id)).toBe('PAID');
    await expect.poll(() => page.locator('#status').textContent()).toContain('Paid');
    await page.screenshot({ path: join(ARTIFACTS, 'charge-otp-paid.png') });
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });

  it('a wrong OTP: the message says FAILED, and the sandbox records the charge FAILED', async () => {
    const id = await chargeThreeDSecure();
    await page.goto(`${sandbox.url}/demo/charge?service_reference_id=${id}`);
    await page.getByRole('button', { name: 'Open the OTP dialog' }).click();
    await expect.poll(() => dialog().locator('#amount').textContent()).toBe('EGP 250.00');
    await dialog().locator('#otp').fill('000000');
    await dialog().locator('#confirm').click();
    await expect.poll(async () => (await received()).length).toBe(1);
    const failed = expect.objectContaining({ service_reference_id: String(id), payment_status: 'FAILED' });
    expect(await received()).toEqual([failed]);
    expect(await page.locator('#service-otp-container iframe').count()).toBe(0);
    expect(chargeStatus(id)).toBe('FAILED');
    expect(pageErrors).toEqual([]);
  });

  it('ignores a message from another origin and one with another message_source', async () => {
    const id = await chargeThreeDSecure();
    await openDemo();
    const allMessages = () => page.evaluate(() => (globalThis as unknown as PageGlobals).allMessages);
    await page.evaluate(() => {
      const w = globalThis as unknown as PageGlobals;
      w.allMessages = 0;
      w.addEventListener('message', () => (w.allMessages += 1));
    });
    // From the page's own origin (the sandbox's) but another message_source.
    await page.evaluate((forged) => {
      (globalThis as unknown as PageGlobals).postMessage({ ...forged, message_source: 'other' }, '*');
    }, FORGED);
    // A well-formed §6.1 message from another origin.
    await page.evaluate((src) => {
      const { document } = globalThis as unknown as PageGlobals;
      const frame = document.createElement('iframe');
      frame.src = src;
      document.body.appendChild(frame);
    }, `${otherUrl}/forger`);
    const forger = () => page.frame({ url: /\/forger$/ });
    await expect.poll(() => forger()?.evaluate(() => (globalThis as unknown as PageGlobals).posted)).toBe(true);
    await expect.poll(allMessages).toBe(2);
    expect(await received()).toEqual([]);

    await page.evaluate((ref) => {
      const d = (globalThis as unknown as PageGlobals).SERVICEOTPDIALOG!;
      d.init();
      d.load(ref);
    }, id);
    await expect.poll(() => dialog().locator('#amount').textContent()).toBe('EGP 250.00');
    await dialog().locator('#otp').fill(RIGHT_OTP);
    await dialog().locator('#confirm').click();
    await expect.poll(async () => (await received()).length).toBe(1);
    const paid = expect.objectContaining({ service_reference_id: String(id), payment_status: 'PAID' });
    expect(await received()).toEqual([paid]);
    expect(await allMessages()).toBe(3);
  });

  it('a page without the container gets a clear console error, not a crash', async () => {
    const id = await chargeThreeDSecure();
    await openDemo();
    await page.evaluate(() => {
      (globalThis as unknown as PageGlobals).document.getElementById('service-otp-container')?.remove();
    });
    const outcome = await page.evaluate((ref) => {
      const d = (globalThis as unknown as PageGlobals).SERVICEOTPDIALOG!;
      return { init: d.init(), load: d.load(ref), badReference: d.load('abc') };
    }, id);
    expect(outcome).toEqual({ init: false, load: false, badReference: false });
    expect(pageErrors).toEqual([]);
    const noContainer = 'SERVICEOTPDIALOG: no element with id "service-otp-container"';
    expect(consoleErrors.some((e) => e.includes(noContainer))).toBe(true);
    expect(consoleErrors.some((e) => e.includes('load() needs the service_reference_id'))).toBe(true);
    expect(await page.locator('iframe').count()).toBe(0);
    expect(chargeStatus(id)).toBe('AWAITING_OTP');
  });

  it('outside check: a page of another origin, written like public pages using the plugin, works', async () => {
    const id = await chargeThreeDSecure();
    await page.goto(`${otherUrl}/shop?ref=${id}&service=${encodeURIComponent(sandbox.url)}`);
    await expect.poll(() => dialog().locator('#amount').textContent()).toBe('EGP 250.00');
    await dialog().locator('#otp').fill(RIGHT_OTP);
    await dialog().locator('#confirm').click();
    const shop = () => page.evaluate(() => (globalThis as unknown as PageGlobals).shopMessages);
    await expect.poll(async () => (await shop()).length).toBe(1);
    const [message] = await shop();
    expect(OtpBrowserMessage.safeParse(message).success).toBe(true);
    expect(message).toMatchObject({ service_reference_id: String(id), payment_status: 'PAID' });
    expect(await page.locator('#service-otp-container iframe').count()).toBe(0);
    expect(chargeStatus(id)).toBe('PAID');
    expect(pageErrors).toEqual([]);
  });
});
