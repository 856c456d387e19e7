/**
 * The browser every browser test drives through playwright-core. No browser is ever downloaded:
 *
 * - Debian's Chromium (`/usr/bin/chromium`) when it is installed and executable;
 * - otherwise the headless Chromium that the `@sparticuz/chromium` dev dependency ships inside its
 *   package (`npm ci` brings it). Its `executablePath()` unpacks it, once per package version, into
 *   a private folder under the system's temporary folder, together with the NSS and expat libraries
 *   the package ships for machines without them, so that it starts where no Chromium is installed.
 *
 * `TEST_BROWSER=system` or `TEST_BROWSER=bundled` forces one of them (not a `CASHOUT_` name: the
 * program refuses unknown `CASHOUT_` settings). A browser that cannot start fails the test; no
 * test is ever skipped for want of a browser.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants, createReadStream, createWriteStream } from 'node:fs';
import { access, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/**
 * Flags every test browser starts with: headless, no sandbox (tests often run as root in a
 * container), no GPU, and nothing that reaches out to the network by itself (QUIC, background
 * updates, component updates, sync, first-run pages).
 */
export const COMMON_FLAGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Flags of `@sparticuz/chromium`'s `args` left out: they suit a serverless function, not tests.
 * The headless mode is set by playwright and `COMMON_FLAGS`; one process without a zygote makes
 * several contexts in one browser unreliable; turning off web security, site isolation and the
 * blocking of mixed content would switch off what the dashboard and summary.html tests check.
 */
const LEFT_OUT = [
  /^--headless/,
  /^--single-process$/,
  /^--no-zygote$/,
  /^--disable-web-security$/,
  /^--allow-running-insecure-content$/,
  /^--disable-site-isolation-trials$/,
];

/** Which browser: Debian's Chromium, or the one in the `@sparticuz/chromium` package. */
export type BrowserKind = 'system' | 'bundled';

/** A browser ready to launch. */
export interface TestBrowser {
  readonly kind: BrowserKind;
  readonly executablePath: string;
  /** Command-line flags it starts with. */
  readonly args: readonly string[];
  /** Variables added to the environment it starts in. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Which browser to use, given `TEST_BROWSER` (`override`) and whether Debian's Chromium is
 * installed. Throws when the override is unknown, or asks for a system browser that is missing.
 */
export function chooseBrowserKind(override: string | undefined, systemInstalled: boolean): BrowserKind {
  if (override === undefined || override === '') return systemInstalled ? 'system' : 'bundled';
  if (override === 'bundled') return 'bundled';
  if (override === 'system') {
    if (systemInstalled) return 'system';
    const hint = 'apt-get install chromium, or TEST_BROWSER=bundled';
    throw new Error(`TEST_BROWSER=system, but ${SYSTEM_CHROMIUM} is missing or not executable (${hint})`);
  }
  throw new Error(`TEST_BROWSER must be "system" or "bundled", not "${override}"`);
}

/**
 * The browser `override` asks for (`TEST_BROWSER` when not given), else Debian's Chromium if
 * installed, else the bundled one.
 */
export async function findTestBrowser(override = process.env.TEST_BROWSER): Promise<TestBrowser> {
  const kind = chooseBrowserKind(override, await isExecutable(SYSTEM_CHROMIUM));
  if (kind === 'bundled') return bundledChromium();
  return { kind, executablePath: SYSTEM_CHROMIUM, args: COMMON_FLAGS, env: {} };
}

/**
 * Launches a test browser headless: the given kind, else the one `findTestBrowser` finds. Each
 * launch gets a fresh, empty profile (user-data-dir) that playwright makes in the temporary folder
 * and removes when the browser closes (it refuses a `--user-data-dir` flag). The caller closes it.
 */
export async function launchTestBrowser(kind?: BrowserKind): Promise<Browser> {
  const found = await findTestBrowser(kind);
  return chromium.launch({
    executablePath: found.executablePath,
    headless: true,
    args: [...found.args],
    env: { ...process.env, ...found.env },
    timeout: 60_000,
  });
}

let bundled: Promise<TestBrowser> | undefined;

/** The `@sparticuz/chromium` browser, unpacked once per package version (and once per process). */
export function bundledChromium(): Promise<TestBrowser> {
  bundled ??= unpackBundled().catch((err: unknown) => {
    bundled = undefined;
    throw err;
  });
  return bundled;
}

/** How long an unfinished unpacking folder (of a process that died) is left alone before removal. */
const STALE_UNPACK_MS = 30 * 60_000;

async function unpackBundled(): Promise<TestBrowser> {
  const entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  const pkgDir = dirname(dirname(dirname(entry)));
  const pkg = JSON.parse(await readFile(join(pkgDir, 'package.json'), 'utf8')) as { name: string; version: string };
  if (pkg.name !== '@sparticuz/chromium') throw new Error(`unexpected package layout: ${entry}`);
  const uid = process.getuid?.() ?? 'user';
  const dir = join(tmpdir(), `cashout-test-chromium-${pkg.version}-${uid}`);
  if (!(await isExecutable(join(dir, 'chromium')))) {
    await removeStaleUnpacking(dir);
    // Unpacked beside the final folder, then renamed into place: a folder of that name is always
    // complete, and test files starting at once never run a half-written browser.
    const staging = await mkdtemp(`${dir}.`);
    try {
      await unpackInto(staging, entry, pkgDir, dir);
      await rename(staging, dir).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
        await rm(staging, { recursive: true, force: true }); // another test process was first
      });
    } catch (err) {
      await rm(staging, { recursive: true, force: true });
      throw err;
    }
    if (!(await isExecutable(join(dir, 'chromium')))) throw new Error(`${dir} is incomplete: remove it and run again`);
  }
  const launch = JSON.parse(await readFile(join(dir, 'launch.json'), 'utf8')) as { args: string[] };
  const extra = launch.args.filter((a) => !LEFT_OUT.some((re) => re.test(a)) && !COMMON_FLAGS.includes(a));
  const libs = join(dir, 'al2023', 'lib');
  const ldPath = process.env.LD_LIBRARY_PATH ? `${libs}:${process.env.LD_LIBRARY_PATH}` : libs;
  return {
    kind: 'bundled',
    executablePath: join(dir, 'chromium'),
    args: [...COMMON_FLAGS, ...extra],
    env: { LD_LIBRARY_PATH: ldPath, FONTCONFIG_FILE: join(dir, 'fonts.conf') },
  };
}

/**
 * Unpacks into `staging`: the browser, its fonts and graphics libraries by the package's own
 * `executablePath()` (run in a child process whose temporary folder is `staging`, where it
 * unpacks), the libraries of `al2023.tar.br`, the launch flags the package recommends, and a
 * fontconfig file naming the system's fonts and the package's (paths as in the final `dir`).
 */
async function unpackInto(staging: string, entry: string, pkgDir: string, dir: string): Promise<void> {
  const script =
    'const c = require(process.argv[1]); c.setGraphicsMode = false;' +
    'c.executablePath().then((p) => process.stdout.write(JSON.stringify({ path: p, args: c.args })));';
  const child = spawn(process.execPath, ['-e', script, entry], {
    env: { ...process.env, TMPDIR: staging },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let errText = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (errText += d));
  const code = await exited(child);
  if (code !== 0) throw new Error(`@sparticuz/chromium could not unpack its browser (exit ${code}): ${errText}`);
  const result = JSON.parse(out) as { path: string; args: string[] };
  if (result.path !== join(staging, 'chromium')) throw new Error(`@sparticuz/chromium unpacked to ${result.path}`);
  await writeFile(join(staging, 'launch.json'), `${JSON.stringify({ args: result.args })}\n`);

  const libs = join(staging, 'al2023'); // the archive holds lib/, as the package unpacks it on Lambda
  await mkdir(libs);
  // Decompressed to a file first: tar stops reading at the archive's end marker, so a pipe into it
  // could close before the decompressor has written its last (padding) bytes, on a busy machine.
  const archive = join(staging, 'al2023.tar');
  await pipeline(
    createReadStream(join(pkgDir, 'bin', 'al2023.tar.br')),
    createBrotliDecompress(),
    createWriteStream(archive),
  );
  const tar = spawn('tar', ['-x', '-f', archive, '-C', libs], { stdio: ['ignore', 'ignore', 'pipe'] });
  let tarErr = '';
  tar.stderr!.on('data', (d) => (tarErr += d));
  const tarCode = await exited(tar);
  await rm(archive, { force: true });
  if (tarCode !== 0) throw new Error(`tar could not unpack the browser's libraries (exit ${tarCode}): ${tarErr}`);
  const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  await writeFile(
    join(staging, 'fonts.conf'),
    [
      '<?xml version="1.0"?>',
      '<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">',
      '<fontconfig>',
      '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>',
      `  <dir>${xml(join(dir, 'fonts'))}</dir>`,
      `  <cachedir>${xml(join(dir, 'fonts-cache'))}</cachedir>`,
      '</fontconfig>',
      '',
    ].join('\n'),
  );
}

/** Removes unpacking folders of `dir` left by processes that died while unpacking. */
async function removeStaleUnpacking(dir: string): Promise<void> {
  const prefix = `${basename(dir)}.`;
  for (const name of await readdir(dirname(dir))) {
    if (!name.startsWith(prefix)) continue;
    const path = join(dirname(dir), name);
    const age = await stat(path).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (age > STALE_UNPACK_MS) await rm(path, { recursive: true, force: true });
  }
}

async function isExecutable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
}
