/**
 * Payout items → the JSON text sent for them (interface doc §2.4.1, §2.4.2), written without
 * building an object per row. The text is exactly what `JSON.stringify` gives for the item with
 * its keys in the order of `MobileWalletItem` / `BankAccountItem` as the import builds them
 * (amount, type, holder_name, description, then mobile_number, or bank_name, bank_address,
 * number): a request body is the same bytes whichever way it was made.
 */
import type { BankAccountItem, MobileWalletItem } from './withdrawal-api.js';

/** Characters JSON.stringify escapes: quote, backslash, controls, and surrogates (lone ones are escaped). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A JSON string literal of `s`, the same text `JSON.stringify(s)` gives. */
export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** JSON of a mobile wallet item, as `JSON.stringify(item)` with keys amount, type, holder_name, description, mobile_number. */
export function walletItemJson(item: MobileWalletItem): string {
  return (
    `{"amount":${jsonString(item.amount)},"type":${jsonString(item.type)},"holder_name":${jsonString(item.holder_name)},` +
    `"description":${jsonString(item.description)},"mobile_number":${jsonString(item.mobile_number)}}`
  );
}

/** JSON of a bank account item, as `JSON.stringify(item)` with keys amount, type, holder_name, description, bank_name, bank_address, number. */
export function bankItemJson(item: BankAccountItem): string {
  return (
    `{"amount":${jsonString(item.amount)},"type":${jsonString(item.type)},"holder_name":${jsonString(item.holder_name)},` +
    `"description":${jsonString(item.description)},"bank_name":${jsonString(item.bank_name)},` +
    `"bank_address":${jsonString(item.bank_address)},"number":${jsonString(item.number)}}`
  );
}
