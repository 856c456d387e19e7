/**
 * Masking of personal data for logs, job data shown in dashboards and console output.
 * Reports hold full values (they are the payer's own records and are written owner-only).
 */

/**
 * Masks a mobile or account number, keeping the first `keepStart` and last `keepEnd` characters:
 * "+201001234567" → "+201******567". Short values are masked entirely but for the last two.
 */
export function maskNumber(value: string, keepStart = 4, keepEnd = 3): string {
  if (value.length <= keepStart + keepEnd + 2) {
    return '*'.repeat(Math.max(0, value.length - 2)) + value.slice(-2);
  }
  return value.slice(0, keepStart) + '*'.repeat(value.length - keepStart - keepEnd) + value.slice(-keepEnd);
}

/** Object keys whose string values are masked by `maskDeep`. */
const SENSITIVE_KEYS = new Set(['mobile_number', 'number', 'account_number', 'iban']);
/** Object keys whose values are removed by `maskDeep`. */
const SECRET_KEYS = new Set(['authorization', 'token', 'apitoken', 'password', 'cookie']);

/**
 * Returns a deep copy of `value` with `mobile_number`/`number`/`account_number` strings masked and
 * `authorization`/`token`/`password`/`cookie` values replaced by "[redacted]", at any depth.
 */
export function maskDeep<T>(value: T, depth = 0): T {
  if (depth > 12) return value;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, depth + 1)) as T;
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const key = k.toLowerCase();
      out[k] = SECRET_KEYS.has(key)
        ? '[redacted]'
        : typeof v === 'string' && SENSITIVE_KEYS.has(key)
          ? maskNumber(v)
          : maskDeep(v, depth + 1);
    }
    return out as T;
  }
  return value;
}
