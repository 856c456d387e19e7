/**
 * Lines a command asks for on standard input, secrets among them (a password, a card number, a
 * CVV). On a terminal each is asked for with its prompt and not shown as it is typed (`read`,
 * with echo off); from a pipe the lines are read in order, without prompts.
 */
import { createInterface } from 'node:readline';
import { read } from 'read';
import { CashoutError } from '../errors.js';

/**
 * One line per prompt (each trimmed of its line break only). Throws `CashoutError('usage')` naming
 * the first prompt whose line did not come (standard input ended, or Ctrl-C/Ctrl-D on a terminal).
 */
export async function readHiddenLines(prompts: readonly string[]): Promise<string[]> {
  if (prompts.length === 0) return [];
  const missing = (prompt: string) =>
    new CashoutError('usage', `${prompt} was not given: pass it as an option or on standard input`);
  const lines: string[] = [];
  if (process.stdin.isTTY) {
    for (const prompt of prompts) {
      const line = await read({ prompt: `${prompt}: `, silent: true, output: process.stderr }).catch(() => {
        throw missing(prompt);
      });
      lines.push(String(line));
    }
    return lines;
  }
  const rl = createInterface({ input: process.stdin, terminal: false });
  // The iterator keeps lines that arrive together until they are asked for.
  const next = rl[Symbol.asyncIterator]();
  try {
    for (const prompt of prompts) {
      const line = await next.next();
      if (line.done) throw missing(prompt);
      lines.push(String(line.value));
    }
  } finally {
    rl.close();
  }
  return lines;
}
