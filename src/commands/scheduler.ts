/** `cashout scheduler [--once]`: the scheduled inbox scan (implementation in progress). */
import { CashoutError } from '../errors.js';
import type { AppContext } from './context.js';

/** Runs the scheduler; returns the exit code. */
export async function schedulerCommand(_ctx: AppContext, _opts: { once?: boolean }): Promise<number> {
  throw new CashoutError('usage', 'the scheduler is not available yet');
}
