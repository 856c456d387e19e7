/**
 * The identity of the service a batch is imported for and sent to: its base address, normalised so
 * that `https://Host:443/gateway/` and `https://host/gateway` are the same service, and a short
 * fingerprint of the access token (never the token). A batch records both when imported; a worker
 * configured for another address does not send it (README "How bulk-cashout keeps money safe").
 */
import { createHash } from 'node:crypto';

/**
 * The base address in one spelling: lower-case scheme and host, no default port, no trailing
 * slash, no query or fragment. An address that does not parse is returned trimmed, unchanged.
 */
export function serviceAddress(baseUrl: string): string {
  try {
    const u = new URL(baseUrl.trim());
    const path = u.pathname.replace(/\/+$/, '');
    return `${u.protocol}//${u.host}${path}`;
  } catch {
    return baseUrl.trim();
  }
}

/** First 16 hex digits of the SHA-256 of `token`: tells two tokens apart without revealing either. */
export function tokenFingerprint(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 16);
}
