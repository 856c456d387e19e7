/**
 * The browser of the browser tests (test/support/browser.ts): which one is chosen, and that the
 * headless Chromium shipped in the @sparticuz/chromium package starts from node_modules and renders
 * a page, on every run: also where Debian's Chromium is installed, so that the fallback used on
 * machines without it is never left untried. A screenshot is saved to test-artifacts/.
 */
import { describe, expect, it } from 'vitest';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { SYSTEM_CHROMIUM, bundledChromium, chooseBrowserKind, launchTestBrowser } from './browser.js';

const ARTIFACTS = join(PACKAGE_ROOT, 'test-artifacts');
const ARABIC = 'محمد أحمد السيد';

describe('choosing the test browser', () => {
  it.each([
    [undefined, true, 'system'],
    [undefined, false, 'bundled'],
    ['', true, 'system'],
    ['', false, 'bundled'],
    ['bundled', true, 'bundled'],
    ['bundled', false, 'bundled'],
    ['system', true, 'system'],
  ] as const)('TEST_BROWSER=%j, Debian chromium installed: %j → %s', (override, installed, kind) => {
    expect(chooseBrowserKind(override, installed)).toBe(kind);
  });

  it('TEST_BROWSER=system without Debian chromium fails, naming it', () => {
    expect(() => chooseBrowserKind('system', false)).toThrow(SYSTEM_CHROMIUM);
  });

  it.each(['chrome', 'System', '/usr/bin/chromium'])('an unknown TEST_BROWSER=%j fails', (override) => {
    expect(() => chooseBrowserKind(override, true)).toThrow(/must be "system" or "bundled"/);
  });
});

describe('the bundled browser', () => {
  it('starts from the package, headless, and renders Arabic text and a canvas', async () => {
    const found = await bundledChromium();
    expect(found.kind).toBe('bundled');
    expect(found.executablePath).not.toBe(SYSTEM_CHROMIUM);
    const pkgFile = join(PACKAGE_ROOT, 'node_modules', '@sparticuz', 'chromium', 'package.json');
    const pkg = JSON.parse(await readFile(pkgFile, 'utf8')) as { version: string };

    const browser = await launchTestBrowser('bundled');
    try {
      // The package's version follows its Chromium's major version.
      expect(browser.version().split('.')[0]).toBe(pkg.version.split('.')[0]);
      const page = await browser.newPage({ viewport: { width: 640, height: 240 } });
      await page.setContent(
        `<html lang="ar" dir="rtl"><body><h1 id="name">${ARABIC}</h1><canvas id="c" width="40" height="40"></canvas>` +
          '<script>document.getElementById("c").getContext("2d").fillRect(0, 0, 40, 40)</script></body></html>',
      );
      expect(await page.locator('#name').innerText()).toBe(ARABIC);
      const alpha = await page.evaluate(() => {
        type Canvas = { getContext(t: '2d'): { getImageData(...a: number[]): { data: number[] } } };
        const g = globalThis as unknown as { document: { getElementById(id: string): Canvas } };
        return g.document.getElementById('c').getContext('2d').getImageData(20, 20, 1, 1).data[3];
      });
      expect(alpha).toBe(255);
      await mkdir(ARTIFACTS, { recursive: true });
      const png = await page.screenshot({ path: join(ARTIFACTS, 'bundled-browser.png') });
      expect(png.subarray(1, 4).toString()).toBe('PNG');
    } finally {
      await browser.close();
    }
  }, 120_000);
});
