/**
 * Where log lines go on a terminal. While a progress bar is drawn (`commands/progress.ts`), it
 * takes the lines and prints them above itself, so that a log line never overwrites the bar and
 * the bar never cuts a log line; otherwise lines go straight to stderr.
 */

let sink: ((text: string) => void) | undefined;

/** Sends terminal log lines to `fn` (a progress bar's own log method) until called with undefined. */
export function setTerminalLogSink(fn: ((text: string) => void) | undefined): void {
  sink = fn;
}

/** Writes one formatted log line (ending with a line break) for the terminal. */
export function writeTerminalLog(text: string): void {
  if (sink) sink(text);
  else process.stderr.write(text);
}
