/**
 * The sandbox's record of card charges and what each test card does (interface doc §2.2, §2.3, §3,
 * §6.1). A charge on a `direct` card is PAID in the request; on a `three_d_secure` card it waits for
 * the OTP (our name for that state: `AWAITING_OTP`), and the dialog settles it PAID with the card's
 * OTP or FAILED with any other (assumption `wrongOtp`); on a `declined` or unknown card it is
 * recorded FAILED (assumption `declinedCard`). Only the last four digits of a card are kept: never
 * its number or CVV.
 */
import type { ChargeRequestBody, OtpBrowserMessage } from '../contract/charge-api.js';
import type { TestCard } from './test-cards.js';

/** State of a sandbox charge: the §3 payment statuses, and ours for a 3-D Secure charge not yet settled. */
export type SandboxChargeStatus = 'PAID' | 'FAILED' | 'AWAITING_OTP';

/** One charge the sandbox recorded. Times are ISO 8601 UTC; `amount` is the EGP string received. */
export interface SandboxCharge {
  readonly service_reference_id: number;
  readonly merchant_reference_id: string;
  readonly customer_merchant_profile_id: string;
  readonly amount: string;
  readonly description: string;
  readonly card_last_four: string;
  readonly three_d_secured: boolean;
  readonly status: SandboxChargeStatus;
  readonly payment_gateway_reference_id?: string;
  readonly created_at: string;
  readonly settled_at?: string;
}

/** What a new charge came to. */
export type NewCharge =
  | { readonly outcome: 'charged' | 'otp_required' | 'declined'; readonly charge: SandboxCharge }
  | { readonly outcome: 'duplicate' };

/** What entering an OTP came to: the §6.1 browser message, or why there is none. */
export type OtpSettlement =
  | { readonly ok: true; readonly message: OtpBrowserMessage; readonly charge: SandboxCharge }
  | { readonly ok: false; readonly reason: 'not_found' | 'not_awaiting_otp' };

/** The record of charges (in memory, for one sandbox run). */
export interface ChargeDesk {
  /** Records a charge for a valid, signed body (unless its merchant_reference_id was recorded before). */
  create(body: ChargeRequestBody): NewCharge;
  /** A charge by its service reference. */
  get(serviceReferenceId: number): SandboxCharge | undefined;
  /** Settles a 3-D Secure charge with the OTP the customer typed. */
  settle(serviceReferenceId: number, otp: string): OtpSettlement;
  /** Every charge, oldest first. */
  list(): readonly SandboxCharge[];
  /** Forgets every charge and starts the references again. */
  reset(): void;
}

interface Entry {
  charge: SandboxCharge;
  /** The OTP that pays a 3-D Secure charge. */
  readonly otp?: string;
}

/** A charge desk using `cards` (see `./test-cards.ts`). */
export function createChargeDesk(cards: readonly TestCard[]): ChargeDesk {
  const byNumber = new Map(cards.map((c) => [c.number, c]));
  let entries = new Map<number, Entry>();
  let references = new Set<string>();
  let nextId = 1;
  let nextGateway = 1;
  const gatewayReference = () => String(700_000_000 + nextGateway++);
  const now = () => new Date().toISOString();

  return {
    create(body) {
      if (references.has(body.merchant_reference_id)) return { outcome: 'duplicate' };
      references.add(body.merchant_reference_id);
      const card = byNumber.get(body.card_number);
      const behaviour = card?.behaviour ?? 'declined';
      const created = now();
      const base = {
        service_reference_id: nextId++,
        merchant_reference_id: body.merchant_reference_id,
        customer_merchant_profile_id: body.customer_merchant_profile_id,
        amount: body.amount,
        description: body.description,
        card_last_four: body.card_number.slice(-4),
        created_at: created,
      };
      let charge: SandboxCharge;
      let outcome: 'charged' | 'otp_required' | 'declined';
      if (behaviour === 'direct') {
        const payment_gateway_reference_id = gatewayReference();
        charge = { ...base, three_d_secured: false, status: 'PAID', payment_gateway_reference_id, settled_at: created };
        outcome = 'charged';
      } else if (behaviour === 'three_d_secure') {
        charge = { ...base, three_d_secured: true, status: 'AWAITING_OTP' };
        outcome = 'otp_required';
      } else {
        charge = { ...base, three_d_secured: false, status: 'FAILED', settled_at: created };
        outcome = 'declined';
      }
      entries.set(charge.service_reference_id, { charge, ...(card?.otp ? { otp: card.otp } : {}) });
      return { outcome, charge };
    },
    get: (id) => entries.get(id)?.charge,
    settle(id, otp) {
      const entry = entries.get(id);
      if (!entry) return { ok: false, reason: 'not_found' };
      if (entry.charge.status !== 'AWAITING_OTP') return { ok: false, reason: 'not_awaiting_otp' };
      const status = entry.otp !== undefined && otp === entry.otp ? 'PAID' : 'FAILED';
      const reference = gatewayReference();
      entry.charge = { ...entry.charge, status, payment_gateway_reference_id: reference, settled_at: now() };
      const message: OtpBrowserMessage = {
        callback_type: 'order_status_update',
        service_reference_id: String(id),
        message_source: 'service',
        message_type: 'service_browser_callback',
        payment_gateway_reference_id: reference,
        payment_status: status,
      };
      return { ok: true, message, charge: entry.charge };
    },
    list: () => [...entries.values()].map((e) => e.charge),
    reset() {
      entries = new Map();
      references = new Set();
      nextId = 1;
      nextGateway = 1;
    },
  };
}
