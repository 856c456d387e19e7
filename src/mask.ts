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

/**
 * A card number as its last four digits at most: "5123456789012346" → "****2346". Anything shorter
 * than eight characters is masked entirely.
 */
export function maskCardNumber(value: string): string {
  return value.length < 8 ? '****' : `****${value.slice(-4)}`;
}

/** Runs of 12 to 19 digits, alone or in groups split by spaces or dashes: what may be a card number. */
const CARD_LIKE = /(?<![\d])\d(?:[ -]?\d){11,18}(?![\d])/g;

/**
 * `text` with anything that looks like a card number (12 to 19 digits, maybe grouped by spaces or
 * dashes) shown as its last four digits: for texts that come from outside (the service's answers).
 */
export function scrubCardNumbers(text: string): string {
  return text.replace(CARD_LIKE, (run) => maskCardNumber(run.replace(/[ -]/g, '')));
}

/** Object keys whose string values are masked by `maskDeep`. */
const SENSITIVE_KEYS = new Set(['mobile_number', 'number', 'account_number', 'iban']);
/** Object keys whose string values are shown as their last four digits by `maskDeep`. */
const CARD_KEYS = new Set(['card_number', 'cardnumber']);
/** Object keys whose values are removed by `maskDeep`. */
const SECRET_KEYS = new Set([
  'authorization',
  'token',
  'apitoken',
  'password',
  'cookie',
  'cvv',
  'hash_key',
  'hashkey',
  'merchant_code',
  'merchantcode',
]);

/**
 * Returns a deep copy of `value` with `mobile_number`/`number`/`account_number` strings masked,
 * `card_number` strings cut to their last four digits, and `authorization`/`token`/`password`/
 * `cookie`/`cvv`/`hash_key`/`merchant_code` values replaced by "[redacted]", at any depth.
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
        : typeof v === 'string' && CARD_KEYS.has(key)
          ? maskCardNumber(v)
          : typeof v === 'string' && SENSITIVE_KEYS.has(key)
            ? maskNumber(v)
            : maskDeep(v, depth + 1);
    }
    return out as T;
  }
  return value;
}
