/**
 * Shared pieces of the benchmarks: the machine's description, cached payout files, child processes
 * of the `cashout` command measured for wall time and peak resident memory, a Redis to work in
 * (a private `redis-server` by default), a sandbox process, tables and result files.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { PACKAGE_ROOT } from '../src/paths.js';
import { freePort, startPrivateRedis } from '../src/queue/private-redis.js';
import { generatePayoutFile, type GenerateStats } from '../scripts/generate-payouts.js';

/** The project folder and the `cashout` entry point. */
export const ROOT = PACKAGE_ROOT;
export const CASHOUT_BIN = join(ROOT, 'bin', 'cashout.js');
export const RESULTS_DIR = join(ROOT, 'bench', 'results');
const TIME_BIN = '/usr/bin/time';

/** Facts about the machine a result was measured on. */
export interface MachineInfo {
  cpu: string;
  cores: number;
  totalMemoryMB: number;
  node: string;
  platform: string;
}

export function machineInfo(): MachineInfo {
  const c = cpus();
  return {
    cpu: c[0]?.model ?? 'unknown',
    cores: c.length,
    totalMemoryMB: Math.round(totalmem() / 2 ** 20),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

/** Settings shared by every benchmark of one run. */
export interface BenchSettings {
  readonly seed: number;
  /** Redis to use instead of a private `redis-server` (BENCH_REDIS_URL). */
  readonly redisUrl?: string;
  /** Delete cached payout files at the end. */
  readonly dropFiles: boolean;
}

// ---------------------------------------------------------------- payout files

/** A payout file in the temporary folder, generated once per seed and row count. */
export interface PayoutFile {
  readonly path: string;
  readonly rows: number;
  readonly bytes: number;
  /** Set when this run generated it. */
  readonly generated?: { seconds: number; stats: GenerateStats };
}

const madeFiles = new Set<string>();

export async function payoutFile(rows: number, seed: number): Promise<PayoutFile> {
  const path = join(tmpdir(), `cashout-bench-payouts-s${seed}-r${rows}.csv`);
  const existing = await stat(path).catch(() => undefined);
  madeFiles.add(path);
  if (existing?.isFile()) return { path, rows, bytes: existing.size };
  const t0 = performance.now();
  const stats = await generatePayoutFile(path, { rows, seed });
  return { path, rows, bytes: stats.bytes, generated: { seconds: (performance.now() - t0) / 1000, stats } };
}

/** Removes the payout files this process used (only with `--drop-files`). */
export async function dropPayoutFiles(): Promise<void> {
  for (const f of madeFiles) await rm(f, { force: true });
  madeFiles.clear();
}

// ---------------------------------------------------------------- child processes

/** How a measured child ended. */
export interface Measured {
  readonly code: number | null;
  readonly signal: string | null;
  readonly seconds: number;
  /** Peak resident set size in MiB, or undefined when it could not be read. */
  readonly peakRssMB: number | undefined;
  readonly rssSource: 'time -v' | 'VmHWM' | 'none';
  /**
   * CPU seconds the node process used, user plus system, all its threads together (from
   * `time -v`); undefined without /usr/bin/time. Other work on the machine moves it less than
   * `seconds` (a busy machine still adds some: caches and memory are shared).
   */
  readonly cpuSeconds?: number;
  readonly timedOut: boolean;
  readonly stdout: string;
  /** The last 64 KiB of standard error. */
  readonly stderrTail: string;
}

/** A running measured child. */
export interface MeasuredChild {
  /** The node process's pid (not /usr/bin/time's), once known. */
  nodePid(): number | undefined;
  /** Sends a signal to the node process, unless it has ended. */
  signal(sig: NodeJS.Signals): void;
  /** True once the child has ended. */
  ended(): boolean;
  readonly done: Promise<Measured>;
}

/** A clean environment: PATH, HOME, TMPDIR and LANG of this process plus `extra`. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) base[k] = process.env[k]!;
  return { ...base, ...extra };
}

function readHwmKb(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Children of `pid`, from /proc/<n>/stat (field 4 is the parent pid). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const s = readFileSync(`/proc/${e}/stat`, 'utf8');
      const fields = s.slice(s.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * Starts `node bin/cashout.js ...args` in `cwd` with a clean environment plus `env`. Under
 * `/usr/bin/time -v` when it exists (its "Maximum resident set size" is the peak RSS); VmHWM of
 * the node process is also polled, and used when `time` is missing or the child was killed.
 * After `timeoutMs` the node process gets SIGKILL and `timedOut` is set.
 */
export function startMeasured(
  args: readonly string[],
  opts: {
    env: Record<string, string>;
    cwd: string;
    timeoutMs: number;
    onStderrLine?: (line: string) => void;
    /** The `cashout.js` to run (default: this checkout's, `CASHOUT_BIN`). */
    bin?: string;
  },
): MeasuredChild {
  const useTime = existsSync(TIME_BIN);
  const timeFile = join(tmpdir(), `cashout-bench-time-${randomBytes(6).toString('hex')}.txt`);
  const bin = opts.bin ?? CASHOUT_BIN;
  const argv = useTime ? ['-v', '-o', timeFile, process.execPath, bin, ...args] : [bin, ...args];
  const t0 = performance.now();
  const child: ChildProcess = spawn(useTime ? TIME_BIN : process.execPath, argv, {
    cwd: opts.cwd,
    env: cleanEnv(opts.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let nodePid: number | undefined = useTime ? undefined : child.pid;
  let hwmKb: number | undefined;
  let timedOut = false;
  let closed = false;
  let stdout = '';
  let stderr = '';
  let partial = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr = (stderr + d).slice(-65_536);
    if (!opts.onStderrLine) return;
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) opts.onStderrLine(l);
  });
  const poll = () => {
    if (nodePid === undefined && child.pid !== undefined) nodePid = childPids(child.pid)[0];
    if (nodePid !== undefined) {
      const kb = readHwmKb(nodePid);
      if (kb !== undefined) hwmKb = Math.max(hwmKb ?? 0, kb);
    }
  };
  const poller = setInterval(poll, 200);
  const kill = (sig: NodeJS.Signals) => {
    if (closed) return;
    try {
      if (nodePid !== undefined) process.kill(nodePid, sig);
      else child.kill(sig);
    } catch {
      // it ended meanwhile
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    poll();
    kill('SIGKILL');
  }, opts.timeoutMs);
  const done = new Promise<Measured>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      closed = true;
      const seconds = (performance.now() - t0) / 1000;
      clearInterval(poller);
      clearTimeout(timer);
      void (async () => {
        let exitCode = code;
        let exitSignal: string | null = signal;
        let peakKb: number | undefined;
        let source: Measured['rssSource'] = 'none';
        let cpuSeconds: number | undefined;
        if (useTime) {
          const report = await readFile(timeFile, 'utf8').catch(() => '');
          await rm(timeFile, { force: true });
          const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(report);
          if (rss) {
            peakKb = Number(rss[1]);
            source = 'time -v';
          }
          const user = /User time \(seconds\): ([\d.]+)/.exec(report);
          const system = /System time \(seconds\): ([\d.]+)/.exec(report);
          if (user && system) cpuSeconds = Number(user[1]) + Number(system[1]);
          const sig = /Command terminated by signal (\d+)/.exec(report);
          if (sig) {
            exitSignal = `signal ${sig[1]}`;
            exitCode = null;
          }
        }
        if (peakKb === undefined && hwmKb !== undefined) {
          peakKb = hwmKb;
          source = 'VmHWM';
        }
        resolve({
          code: exitCode,
          signal: exitSignal,
          seconds,
          peakRssMB: peakKb === undefined ? undefined : peakKb / 1024,
          rssSource: source,
          ...(cpuSeconds === undefined ? {} : { cpuSeconds }),
          timedOut,
          stdout,
          stderrTail: stderr,
        });
      })();
    });
  });
  return {
    nodePid: () => {
      if (nodePid === undefined) poll();
      return nodePid;
    },
    ended: () => closed,
    signal(sig) {
      poll();
      kill(sig);
    },
    done,
  };
}

/** Runs a measured child to its end. */
export function runMeasured(args: readonly string[], opts: Parameters<typeof startMeasured>[1]): Promise<Measured> {
  return startMeasured(args, opts).done;
}

/** Waits until the node process of `c` is known (it is spawned by /usr/bin/time). */
export async function waitForPid(c: MeasuredChild, ms = 5_000): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const pid = c.nodePid();
    if (pid !== undefined) return pid;
    if (Date.now() > until) throw new Error('the cashout process did not start');
    await sleep(20);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A temporary folder for one measurement (working folder and reports); removed by `cleanup`. */
export async function scratchDir(label: string): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `cashout-bench-${label}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** One JSON line of a pino log, or undefined. */
export function logLine(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The JSON lines of a pino log on stderr. */
export function logLines(stderr: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut by the 64 KiB tail
    }
  }
  return out;
}

// ---------------------------------------------------------------- Redis

/** A Redis for one benchmark: a private `redis-server`, or `BENCH_REDIS_URL` when set. */
export interface BenchRedis {
  readonly url: string;
  readonly private: boolean;
  stop(): Promise<void>;
}

export async function benchRedis(settings: BenchSettings): Promise<BenchRedis> {
  if (settings.redisUrl) return { url: settings.redisUrl, private: false, stop: async () => undefined };
  const r = await startPrivateRedis();
  return { url: r.url, private: true, stop: () => r.stop() };
}

/** A fresh key prefix, hash-tagged like the production default. */
export function benchPrefix(): string {
  return `{cashout-bench-${randomBytes(4).toString('hex')}}`;
}

/** Deletes every key under `prefix` (SCAN + UNLINK); returns how many. */
export async function deleteKeys(url: string, prefix: string): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  let n = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(
        cursor,
        'MATCH',
        `${prefix.replace(/([*?[\]\\])/g, '\\$1')}*`,
        'COUNT',
        1000,
      );
      cursor = next;
      if (keys.length > 0) n += await redis.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return n;
}

/**
 * What the Redis server at `url` reports (one `INFO`): memory in use, MiB, and CPU seconds used
 * since it started (user + system). A figure it does not report is undefined.
 */
export async function redisFigures(url: string): Promise<{ usedMB?: number; cpuSeconds?: number }> {
  const redis = new Redis(url, { maxRetriesPerRequest: 3 });
  try {
    const info = await redis.info();
    const used = /used_memory:(\d+)/.exec(info);
    const user = /used_cpu_user:([\d.]+)/.exec(info);
    const sys = /used_cpu_sys:([\d.]+)/.exec(info);
    return {
      ...(used ? { usedMB: Number(used[1]) / 2 ** 20 } : {}),
      ...(user && sys ? { cpuSeconds: Number(user[1]) + Number(sys[1]) } : {}),
    };
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------- sandbox

/** A sandbox of the service in its own process. */
export interface SandboxProcess {
  readonly url: string;
  readonly token: string;
  /** Forgets what it created (POST /__sandbox/reset). */
  reset(): Promise<void>;
  /** Withdrawal requests and items it created, and POSTs it received. */
  created(): Promise<{ requests: number; items: number; received: number }>;
  stop(): Promise<void>;
}

/** Starts `node bin/cashout.js sandbox --port <free>` with a fixed latency and a known token. */
export async function startSandboxProcess(latencyMs: number): Promise<SandboxProcess> {
  const port = await freePort();
  const token = `bench-${randomBytes(12).toString('hex')}`;
  const cwd = await mkdtemp(join(tmpdir(), 'cashout-bench-sandbox-'));
  const child = spawn(process.execPath, [CASHOUT_BIN, 'sandbox', '--port', String(port), '--host', '127.0.0.1'], {
    cwd,
    env: cleanEnv({ SANDBOX_LATENCY_MS: String(latencyMs), CASHOUT_SANDBOX_TOKEN: token, CASHOUT_LOG_LEVEL: 'warn' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-8192)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`the sandbox did not start: ${err}`)), 15_000);
    const check = () => {
      const m = /Sandbox listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`the sandbox exited (${code}): ${err}`));
    });
  });
  return {
    url,
    token,
    async reset() {
      const res = await fetch(`${url}/__sandbox/reset`, { method: 'POST' });
      await res.arrayBuffer();
      if (!res.ok) throw new Error(`sandbox reset: HTTP ${res.status}`);
    },
    async created() {
      const res = await fetch(`${url}/__sandbox/ledger`);
      const body = (await res.json()) as {
        requests: { body: { mobile_wallets?: unknown[]; bank_accounts?: unknown[] } }[];
        received: number;
      };
      let items = 0;
      for (const e of body.requests)
        items += (e.body.mobile_wallets?.length ?? 0) + (e.body.bank_accounts?.length ?? 0);
      return { requests: body.requests.length, items, received: body.received };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      await rm(cwd, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- output

/** Formats a number with thousands separators and `digits` decimals. */
export function num(n: number | undefined, digits = 0): string {
  if (n === undefined || !Number.isFinite(n)) return '—';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A ratio as "0.42×". */
export function ratio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return '—';
  return `${a / b >= 10 ? (a / b).toFixed(1) : (a / b).toFixed(2)}×`;
}

/** Prints a table with a title; the first column is left-aligned, the others right-aligned. */
export function printTable(title: string, header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const text = [title, line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
  process.stdout.write(`\n${text}\n`);
  return text;
}

/** The commit the project is at, and whether src/, jobs/ or bin/ differ from it (the code measured). */
export function codeVersion(): { commit: string; uncommittedChanges: boolean } | undefined {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--', 'src', 'jobs', 'bin'], {
        cwd: ROOT,
        encoding: 'utf8',
      }).trim() !== '';
    return { commit, uncommittedChanges: dirty };
  } catch {
    return undefined;
  }
}

/** Writes `bench/results/<name>-<timestamp>.json` and returns its path. */
export async function saveResults(name: string, data: Record<string, unknown>): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const path = join(RESULTS_DIR, `${name}-${stamp}.json`);
  await writeFile(
    path,
    `${JSON.stringify({ benchmark: name, at: new Date().toISOString(), machine: machineInfo(), code: codeVersion() ?? null, loadAverageAtEnd: loadavg(), ...data }, null, 2)}\n`,
  );
  process.stdout.write(`results: ${path}\n`);
  return path;
}

/** Logs a progress line on stderr. */
export function note(text: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}
