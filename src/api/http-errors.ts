/**
 * The HTTP API's answer for a `CashoutError`: a status by its code, and `{ error: { code, message } }`.
 * Messages are the project's own (they never hold secrets or full numbers: src/errors.ts).
 */
import type { FastifyReply } from 'fastify';
import type { ErrorCode } from '../errors.js';

const STATUS: Partial<Record<ErrorCode, number>> = {
  usage: 400,
  file_too_large: 413,
  batch_exists: 409,
  batch_not_found: 404,
  request_not_found: 404,
  api_key_not_found: 404,
  state_conflict: 409,
  batch_state: 409,
  approval_expired: 409,
  payee_held: 409,
  service_mismatch: 409,
  self_approval: 403,
  config_invalid: 503,
  redis_unreachable: 503,
  redis_unsafe: 503,
  service_unreachable: 502,
  service_auth_refused: 502,
  notify_failed: 500,
};

/** HTTP status of an error code: 422 for file problems (any other code), else by `STATUS`. */
export function httpStatusOf(code: ErrorCode): number {
  return STATUS[code] ?? 422;
}

/** Sends the API's error answer. */
export function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  return reply.code(status).header('cache-control', 'no-store').send({ error: { code, message } });
}
