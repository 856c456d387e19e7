/**
 * A server of a command (`cashout dashboard`, `cashout sandbox`) that cannot listen where it was
 * told: the address and port, why in words, and the option and setting that choose another.
 */
import { CashoutError } from '../errors.js';

const WHY: Readonly<Record<string, string>> = {
  EADDRINUSE: 'another program already listens there',
  EACCES: 'this user may not listen on that port',
  EADDRNOTAVAIL: 'this machine has no such address',
  ENOTFOUND: 'no such address or host name',
  EAI_AGAIN: 'the host name could not be looked up',
};

/** The option or setting that chooses the port, and the one that chooses the address ("--port or CASHOUT_SANDBOX_PORT"). */
export interface ListenChoices {
  readonly port: string;
  readonly host: string;
}

/**
 * The `CashoutError('config_invalid')` (exit 2) for `err`, an error of listening on `host`:`port`,
 * naming what chooses another port or address (`choose`); `err` itself when it is not a listening error.
 */
export function listenFailure(err: unknown, host: string, port: number, choose: ListenChoices): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (!code || !(code in WHY)) return err;
  const what =
    code === 'EADDRINUSE' || code === 'EACCES'
      ? `choose another port with ${choose.port}, or stop the other program`
      : `choose another address with ${choose.host}`;
  return new CashoutError(
    'config_invalid',
    `cannot listen on ${host}:${port} (${code}: ${WHY[code]}); ${what}`,
    { key: choose.port, host, port },
    err,
  );
}
