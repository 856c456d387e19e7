/**
 * The HTTP API's answer for a `CashoutError`: the status its code has in `ERROR_CODES`, and
 * `{ error: { code, message } }`.
 * Messages are the project's own (they never hold secrets or full numbers: src/errors.ts).
 */
import type { FastifyReply } from 'fastify';
import { errorCodeEntry, type ErrorCode } from '../errors.js';

/** HTTP status of an error code, from the table of codes (`ERROR_CODES` in src/errors.ts). */
export function httpStatusOf(code: ErrorCode): number {
  return errorCodeEntry(code)?.http ?? 500;
}

/**
 * Sends the API's error answer `{ error: { code, message } }` with the status of `code` in
 * `ERROR_CODES`, or `status` when given (a 4xx the HTTP layer itself decided, for `bad_request`).
 */
export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  status = httpStatusOf(code),
): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error: { code, message } });
}
