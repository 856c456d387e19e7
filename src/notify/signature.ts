/**
 * The signature of a notification: header `X-Cashout-Signature: t=<unix seconds>,v1=<hex>`, where
 * `<hex>` is the HMAC-SHA256, keyed with CASHOUT_WEBHOOK_SECRET, of `<t>.<body>` (the body's exact
 * bytes). A receiver recomputes it, compares in constant time and refuses an old `t` (replays).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Name of the signature header. */
export const SIGNATURE_HEADER = 'x-cashout-signature';

/** Default age (seconds) past which `verifySignature` refuses a signature. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const hmac = (secret: string, t: number, body: string | Buffer) =>
  createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');

/** The header value for `body` signed at `t` (unix seconds). */
export function signBody(secret: string, body: string | Buffer, t: number = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${hmac(secret, t, body)}`;
}

/**
 * True when `header` signs `body` with `secret` and its time is within `toleranceSeconds` of
 * `now` (unix seconds). What a receiver runs (README "Notifications" shows it standalone).
 */
export function verifySignature(
  secret: string,
  header: string | undefined,
  body: string | Buffer,
  toleranceSeconds = SIGNATURE_TOLERANCE_SECONDS,
  now: number = Math.floor(Date.now() / 1000),
): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  const t = Number(m[1]);
  if (Math.abs(now - t) > toleranceSeconds) return false;
  return timingSafeEqual(Buffer.from(hmac(secret, t, body), 'hex'), Buffer.from(m[2]!, 'hex'));
}
