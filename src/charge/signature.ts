/**
 * The card charge signature (interface doc §5.2): the SHA-256 hash, as 64 lowercase hexadecimal
 * characters, of `merchant_code`, `merchant_reference_id`, `customer_merchant_profile_id`, `amount`
 * and `hash_key` joined in that order with no separator. The amount is the exact string sent in the
 * request (§5.2 rule 3), never a number turned back into text.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** The values a signature covers; `merchantCode` and `hashKey` are the merchant's secrets (§5.2 rule 2). */
export interface SignedFields {
  readonly merchantCode: string;
  readonly merchantReferenceId: string;
  readonly customerMerchantProfileId: string;
  /** EGP decimal string exactly as sent, e.g. "250.00". */
  readonly amount: string;
  readonly hashKey: string;
}

/** The §5.2 signature of `f`: 64 lowercase hexadecimal characters. */
export function chargeSignature(f: SignedFields): string {
  return createHash('sha256')
    .update(`${f.merchantCode}${f.merchantReferenceId}${f.customerMerchantProfileId}${f.amount}${f.hashKey}`, 'utf8')
    .digest('hex');
}

/** True when `signature` is the §5.2 signature of `f`, compared in constant time. */
export function signatureMatches(signature: string, f: SignedFields): boolean {
  const want = Buffer.from(chargeSignature(f), 'utf8');
  const got = Buffer.from(signature, 'utf8');
  return got.length === want.length && timingSafeEqual(got, want);
}
