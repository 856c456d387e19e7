/**
 * Typed errors. Every error the project raises on purpose is a `CashoutError` with a code from
 * the closed table `ERROR_CODES`, a context object (never holding secrets or full account/mobile
 * numbers) and an optional `cause`. Callers branch on `code`, never on message text.
 */

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

/** One exit code of the `cashout` command. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What the project makes of one error code, wherever it is raised. */
export interface ErrorCodeEntry {
  /** The exit code of a `cashout` command that stops on it. */
  readonly exit: ExitCode;
  /** The status the HTTP API answers with. */
  readonly http: number;
  /** The situation, in one line; the message of each throw says it for the case at hand. */
  readonly situation: string;
}

/**
 * Every error code the project raises, one situation each: the exit code, the HTTP status and the
 * situation in plain words. `ErrorCode` is this table's keys, so a code not in it does not compile.
 */
export const ERROR_CODES = {
  // Bad usage or configuration.
  usage: {
    exit: EXIT.usage,
    http: 400,
    situation: 'a command, an option or the input of a request is not usable as given',
  },
  config_invalid: {
    exit: EXIT.usage,
    http: 503,
    situation: 'a setting is missing or invalid, or a process cannot serve with it',
  },
  // A file that cannot be read as a payout CSV.
  file_not_found: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the payout file does not exist',
  },
  file_unreadable: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the payout file cannot be read: not a regular file, not permitted, or not a workbook',
  },
  file_empty: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the payout file holds no header row and no payout rows',
  },
  file_too_large: {
    exit: EXIT.usage,
    http: 413,
    situation: 'the payout file is larger than the largest file accepted (CASHOUT_MAX_FILE_BYTES)',
  },
  too_many_rows: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the payout file has more rows than one file may hold (CASHOUT_MAX_ROWS)',
  },
  file_binary: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the payout file is binary data, not text',
  },
  file_encoding: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the payout file is not text in the encoding it is read in',
  },
  file_delimiter: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the payout file is separated by another character than the one it is read with',
  },
  csv_malformed: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the payout file is not well-formed CSV (an unclosed quote, a row or a line too long)',
  },
  header_missing: {
    exit: EXIT.usage,
    http: 422,
    situation: 'line 1 of the payout file is not a header row',
  },
  column_unknown: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the header names a column a payout file does not have, or leaves a column unnamed',
  },
  column_missing: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the header lacks a column every payout file needs',
  },
  column_duplicated: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the header names a column twice',
  },
  no_data_rows: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the payout file has a header row but no payout rows',
  },
  file_changed: {
    exit: EXIT.usage,
    http: 422,
    situation: 'an inbox file changed after it was taken for import',
  },
  banks_file_invalid: {
    exit: EXIT.usage,
    http: 422,
    situation: 'the list of supported banks cannot be read, or is not a list of bank names',
  },
  charge_invalid: {
    exit: EXIT.usage,
    http: 422,
    situation: "a card charge's fields break the charge API's rules; nothing was sent",
  },
  // What the ledger holds, and what it refuses.
  batch_not_found: {
    exit: EXIT.usage,
    http: 404,
    situation: 'the ledger has no batch with this id',
  },
  batch_exists: {
    exit: EXIT.usage,
    http: 409,
    situation: "the file's content was imported before, as another batch",
  },
  batch_state: {
    exit: EXIT.usage,
    http: 409,
    situation: "the batch's state does not allow this action",
  },
  batch_changed: {
    exit: EXIT.usage,
    http: 409,
    situation: 'the batch is not what the page showed: its total changed since',
  },
  self_approval: {
    exit: EXIT.usage,
    http: 403,
    situation: 'the person who imported the batch tried to approve it',
  },
  approval_expired: {
    exit: EXIT.usage,
    http: 409,
    situation: 'the batch was not approved before its deadline and is now cancelled',
  },
  request_not_found: {
    exit: EXIT.usage,
    http: 404,
    situation: 'the batch has no request with this number',
  },
  request_state: {
    exit: EXIT.usage,
    http: 409,
    situation: "the ledger's lifecycle refuses this action on the request in its present state",
  },
  payee_held: {
    exit: EXIT.usage,
    http: 409,
    situation: 'a payee is held by a payout of another batch',
  },
  service_mismatch: {
    exit: EXIT.usage,
    http: 409,
    situation: 'the batch was imported for another service address than the one the worker sends to',
  },
  // API keys and notifications.
  api_key_not_found: {
    exit: EXIT.usage,
    http: 404,
    situation: 'there is no API key with this id',
  },
  notify_failed: {
    exit: EXIT.usage,
    http: 500,
    situation: 'a notification was not delivered',
  },
  // Redis.
  redis_unreachable: {
    exit: EXIT.redis,
    http: 503,
    situation: 'Redis cannot be reached or started',
  },
  redis_unsafe: {
    exit: EXIT.redis,
    http: 503,
    situation: "Redis is not set up to keep the ledger's writes durable",
  },
  // Answers of the HTTP API to the HTTP request itself (no command raises these).
  unauthorized: {
    exit: EXIT.usage,
    http: 401,
    situation: 'the HTTP API request has no API key, or one that is not valid',
  },
  too_many_failures: {
    exit: EXIT.usage,
    http: 429,
    situation: 'too many HTTP API requests with a wrong API key came from this address; wait',
  },
  not_found: {
    exit: EXIT.usage,
    http: 404,
    situation: 'the HTTP API has no such file for this batch',
  },
  bad_request: {
    exit: EXIT.usage,
    http: 400,
    situation: 'the HTTP API request cannot be read as sent: its body, content type, size or parameters',
  },
  internal: {
    exit: EXIT.internal,
    http: 500,
    situation: 'an unexpected failure; the server log has the details',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

/** Every error code the project raises: the keys of `ERROR_CODES`. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** The entry of `code` in `ERROR_CODES`, or undefined for a string that is not one of its codes. */
export function errorCodeEntry(code: string): ErrorCodeEntry | undefined {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode] : undefined;
}

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

/** The CLI exit code for an error: its code's in `ERROR_CODES`; 70 for any other error. */
export function exitCodeFor(err: unknown): number {
  if (!(err instanceof CashoutError)) return EXIT.internal;
  return errorCodeEntry(err.code)?.exit ?? EXIT.internal;
}
