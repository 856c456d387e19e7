/**
 * SIGINT and SIGTERM as a request to stop, for long-running commands (`cashout worker`). Watched
 * from the moment the command line is read, so a stop asked for while the process is still
 * starting (loading, connecting) is kept and honoured once it is up, instead of the signal's
 * default action killing it mid-start.
 */

let watching = false;
let asked = false;
const waiting = new Set<() => void>();

function ask(): void {
  asked = true;
  for (const wake of waiting) wake();
  waiting.clear();
}

/** Starts watching SIGINT and SIGTERM (once; later calls do nothing). */
export function watchStopSignals(): void {
  if (watching) return;
  watching = true;
  process.once('SIGINT', ask);
  process.once('SIGTERM', ask);
}

/** Resolves when a stop was asked for (at once if it already was). Starts watching if needed. */
export function stopAsked(): Promise<void> {
  watchStopSignals();
  return asked ? Promise.resolve() : new Promise((resolve) => waiting.add(resolve));
}
