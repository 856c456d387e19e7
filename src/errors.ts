/**
 * Typed errors. Every error the project raises on purpose is a `CashoutError` with a code from
 * the closed `ErrorCode` union, a context object (never holding secrets or full account/mobile
 * numbers) and an optional `cause`. Callers branch on `code`, never on message text.
 */

/** Every error code the project raises, grouped by the exit code the CLI maps it to. */
export type ErrorCode =
  // exit 2: bad usage or a file that cannot be read as a payout CSV
  | 'usage'
  | 'config_invalid'
  | 'file_not_found'
  | 'file_unreadable'
  | 'file_empty'
  | 'file_too_large'
  | 'too_many_rows'
  | 'file_binary'
  | 'file_encoding'
  | 'file_delimiter'
  | 'csv_malformed'
  | 'header_missing'
  | 'column_unknown'
  | 'column_missing'
  | 'column_duplicated'
  | 'no_data_rows'
  | 'file_changed'
  | 'banks_file_invalid'
  | 'charge_invalid'
  | 'batch_not_found'
  | 'batch_exists'
  | 'request_not_found'
  | 'state_conflict'
  // the ledger refused a person's action or a send (ledger/lifecycle.ts)
  | 'batch_state'
  | 'self_approval'
  | 'approval_expired'
  | 'payee_held'
  | 'service_mismatch'
  // HTTP API keys and notifications
  | 'api_key_not_found'
  | 'notify_failed'
  // exit 3: Redis cannot be reached or is unsafe
  | 'redis_unreachable'
  | 'redis_unsafe'
  // exit 4: the payment service cannot be reached or refused our token
  | 'service_unreachable'
  | 'service_auth_refused';

/** Exit codes of the `cashout` command (README "Exit codes"). */
export const EXIT = {
  ok: 0,
  notAllAccepted: 1,
  usage: 2,
  redis: 3,
  service: 4,
  /** `cashout worker` stopped before every in-flight outcome was recorded: left to the recovery sweep. */
  leftForRecovery: 5,
  internal: 70,
} as const;

/** An expected failure with a machine-readable code and a message a person can act on. */
export class CashoutError extends Error {
  readonly code: ErrorCode;
  readonly context: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, context: Record<string, unknown> = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'CashoutError';
    this.code = code;
    this.context = context;
  }
}

/** True when `err` is a `CashoutError`, optionally with the given code. */
export function isCashoutError(err: unknown, code?: ErrorCode): err is CashoutError {
  return err instanceof CashoutError && (code === undefined || err.code === code);
}

/** The CLI exit code for an error: 2 for usage and file problems, 3 for Redis, 4 for the service, 70 otherwise. */
export function exitCodeFor(err: unknown): number {
  if (!(err instanceof CashoutError)) return EXIT.internal;
  switch (err.code) {
    case 'redis_unreachable':
    case 'redis_unsafe':
      return EXIT.redis;
    case 'service_unreachable':
    case 'service_auth_refused':
      return EXIT.service;
    default:
      return EXIT.usage;
  }
}
