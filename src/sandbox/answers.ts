/**
 * The answer bodies both of the sandbox's POST endpoints share: the failure layout of interface doc
 * §7 (and the same layout, without `errors` unless given, for statuses the document does not
 * show), and the reading of a raw JSON body. Texts come from `./assumptions.ts` where the document
 * gives none.
 */
import type { FastifyRequest } from 'fastify';
import { SANDBOX_ASSUMPTIONS } from './assumptions.js';

/** Map from a §7 `errors` key to one reason text. */
export type FieldErrors = Record<string, string>;

/** A failure body: `{ success: false, status_code, message, status_description[, errors] }`. */
export function failureBody(status: number, text: string, errors?: FieldErrors): Record<string, unknown> {
  const body: Record<string, unknown> = {
    success: false,
    status_code: status,
    message: text,
    status_description: text,
  };
  if (errors) body.errors = errors;
  return body;
}

/** The §7 validation failure body (HTTP 422), with `errors` as given. */
export function invalidBody(errors: FieldErrors): Record<string, unknown> {
  const text = SANDBOX_ASSUMPTIONS.invalidText.text;
  return { success: false, message: text, status_code: 422, status_description: text, errors };
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * The raw body of `req` (read as bytes) parsed as JSON, or the reason it is not: another content
 * type than `application/json`, or not JSON (an empty body included).
 */
export function readJsonBody(req: FastifyRequest): { ok: true; value: unknown } | { ok: false; reason: string } {
  if (mediaType(req.headers['content-type']) !== 'application/json') {
    return { ok: false, reason: SANDBOX_ASSUMPTIONS.notJson.text };
  }
  const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false, reason: SANDBOX_ASSUMPTIONS.emptyOrBadJson.text };
  }
}
