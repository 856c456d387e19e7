/**
 * A server of a command (`cashout dashboard`, `cashout sandbox`) that cannot listen where it was
 * told: the address and port, why in words, and the option and setting that choose another.
 */
import { CashoutError } from '../errors.js';

const WHY: Readonly<Record<string, string>> = {
  EADDRINUSE: 'another program already listens there',
  EACCES: 'this user may not listen on that port',
  EADDRNOTAVAIL: 'this machine has no such address',
};

/**
 * The `CashoutError('config_invalid')` (exit 2) for `err`, an error of listening on `host`:`port`,
 * naming `setting` (e.g. CASHOUT_DASHBOARD_PORT); `err` itself when it is not a listening error.
 */
export function listenFailure(err: unknown, host: string, port: number, setting: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (!code || !(code in WHY)) return err;
  return new CashoutError(
    'config_invalid',
    `cannot listen on ${host}:${port} (${code}: ${WHY[code]}); choose another port with --port or ${setting}, or stop the other program`,
    { key: setting, host, port },
    err,
  );
}
