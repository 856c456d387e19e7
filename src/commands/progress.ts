/**
 * Progress of long commands: a bar on a terminal (cli-progress: done/total, rate, time left), and
 * a plain log line every 10 seconds when stderr is not a terminal (logs, CI, cron).
 */
import cliProgress from 'cli-progress';
import type { Logger } from 'pino';

/** A progress reporter for one phase. */
export interface Progress {
  update(done: number, total?: number): void;
  stop(): void;
}

/** Starts a progress reporter; `unit` names what is counted ("rows read", "requests final"). */
export function startProgress(log: Logger, phase: string, unit: string, total?: number): Progress {
  const started = Date.now();
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: total === undefined ? `${phase} {value} ${unit} | {rate}/s` : `${phase} [{bar}] {value}/{total} ${unit} | {rate}/s | {eta_formatted} left`,
        hideCursor: true,
        clearOnComplete: false,
        etaBuffer: 50,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total ?? 0, 0, { rate: '0' });
    return {
      update(done, newTotal) {
        if (newTotal !== undefined) bar.setTotal(newTotal);
        bar.update(done, { rate: (done / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(0) });
      },
      stop: () => bar.stop(),
    };
  }
  let last = started;
  return {
    update(done, newTotal) {
      if (Date.now() - last < 10_000) return;
      last = Date.now();
      const rate = done / Math.max(0.001, (last - started) / 1000);
      const t = newTotal ?? total;
      log.info({ phase, done, total: t, perSecond: Math.round(rate), secondsLeft: t === undefined ? undefined : Math.round((t - done) / Math.max(rate, 0.001)) }, `${phase}: ${done}${t === undefined ? '' : `/${t}`} ${unit}`);
    },
    stop() {},
  };
}
