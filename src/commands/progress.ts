/**
 * Progress of long commands: a bar on a terminal (cli-progress: done/total, rate, time left), and
 * a plain log line every 10 seconds when stderr is not a terminal (logs, CI, cron). While the bar
 * is drawn, log lines are printed above it by the bar itself (`../terminal-log.ts`), never over it.
 */
import cliProgress from 'cli-progress';
import type { Logger } from 'pino';
import { setTerminalLogSink } from '../terminal-log.js';

/** A progress reporter for one phase. */
export interface Progress {
  /** `done` so far, and the total when it is known (or better known) now. */
  update(done: number, total?: number): void;
  stop(): void;
}

/** "1:05:09", "4:07" or "12s": a time left, in seconds. */
export function formatSecondsLeft(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/**
 * One line of the bar: with a total, `phase [=====-----] done/total unit | rate/s | time left`;
 * without one, `phase done unit | rate/s`. `elapsed` in seconds.
 */
export function progressLine(
  phase: string,
  unit: string,
  done: number,
  total: number | undefined,
  elapsed: number,
): string {
  const rate = done / Math.max(0.001, elapsed);
  if (total === undefined || total <= 0) return `${phase} ${done} ${unit} | ${rate.toFixed(0)}/s`;
  const width = 30;
  const filled = Math.max(0, Math.min(width, Math.round((done / total) * width)));
  const left = rate > 0 ? (total - done) / rate : Number.NaN;
  const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
  return `${phase} [${bar}] ${done}/${total} ${unit} | ${rate.toFixed(0)}/s | ${formatSecondsLeft(left)} left`;
}

/** Starts a progress reporter; `unit` names what is counted ("rows read", "requests final"). */
export function startProgress(log: Logger, phase: string, unit: string, total?: number): Progress {
  const started = Date.now();
  let knownTotal = total;
  if (process.stderr.isTTY) {
    const bars = new cliProgress.MultiBar({
      stream: process.stderr,
      // The line is drawn by `progressLine`, so it follows the total as it becomes known.
      format: (_options, params) => progressLine(phase, unit, params.value, knownTotal, (Date.now() - started) / 1000),
      hideCursor: true,
      clearOnComplete: false,
    });
    const bar = bars.create(knownTotal ?? 0, 0);
    setTerminalLogSink((text) => bars.log(text));
    return {
      update(done, newTotal) {
        if (newTotal !== undefined) {
          knownTotal = newTotal;
          bar.setTotal(newTotal);
        }
        bar.update(done);
      },
      stop() {
        setTerminalLogSink(undefined);
        bars.stop();
      },
    };
  }
  let last = started;
  return {
    update(done, newTotal) {
      if (newTotal !== undefined) knownTotal = newTotal;
      if (Date.now() - last < 10_000) return;
      last = Date.now();
      const rate = done / Math.max(0.001, (last - started) / 1000);
      const t = knownTotal;
      log.info(
        {
          phase,
          done,
          total: t,
          perSecond: Math.round(rate),
          secondsLeft: t === undefined ? undefined : Math.round((t - done) / Math.max(rate, 0.001)),
        },
        `${phase}: ${done}${t === undefined ? '' : `/${t}`} ${unit}`,
      );
    },
    stop() {},
  };
}
