/**
 * A server that cannot listen where it was told (the dashboard, the sandbox, the worker's metrics
 * and health endpoints): the address and port, why in words, and the option or setting that
 * chooses another.
 */
import { CashoutError } from './errors.js';

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
 * naming what chooses another port or address (`choose`). A `CashoutError` is returned as it is:
 * it already says what is wrong (a server that refused its settings before it listened).
 */
export function listenFailure(err: unknown, host: string, port: number, choose: ListenChoices): CashoutError {
  if (err instanceof CashoutError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? (err as Error | undefined)?.message ?? String(err);
  const why = WHY[code] ? `${code}: ${WHY[code]}` : code;
  const what =
    code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL'
      ? `choose another address with ${choose.host}`
      : `choose another port with ${choose.port}, or stop the other program`;
  return new CashoutError(
    'config_invalid',
    `cannot listen on ${host}:${port} (${why}); ${what}`,
    { key: choose.port, host, port },
    err,
  );
}
