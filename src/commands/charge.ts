/**
 * `cashout charge`: charges one card through the card charge client (interface doc §2.1-2.3, §5.2)
 * and prints what came back, for trying the service's staging environment or the sandbox. The card
 * number and CVV come from the options or, when not given, from standard input (one a line); the
 * card is printed as its last four digits only. The charge is sent once, never again by itself.
 * Exit 0: charged, or waiting for the customer's OTP; 1: refused or unknown outcome; 4: not sent
 * (the service could not be reached, or refused the token).
 */
import { randomBytes } from 'node:crypto';
import { createChargeClient, type ChargeInput } from '../charge/charge-client.js';
import type { ChargeResult } from '../charge/classify-charge.js';
import { OTP_CONTAINER_ID, OTP_GLOBAL, OTP_PLUGIN_PATH } from '../contract/charge-api.js';
import { CashoutError, EXIT } from '../errors.js';
import { maskCardNumber } from '../mask.js';
import { endpointUrl } from '../submit/service-http.js';
import { serviceTarget, type AppContext } from './context.js';
import { readHiddenLines } from './secret-input.js';

/** Options of `cashout charge` (§2.1 fields; `expiry` is `MM/YY`; amounts are EGP strings `NN.NN`). */
export interface ChargeFlags {
  readonly amount: string;
  readonly cardNumber?: string;
  readonly cvv?: string;
  readonly expiry: string;
  readonly name: string;
  readonly mobile: string;
  readonly email: string;
  readonly description: string;
  readonly customer: string;
  readonly reference?: string;
  readonly json?: boolean;
}

/** A new alphanumeric merchant_reference_id (§2.1): `CH`, the time in base 36 and 6 random hex digits. */
export function newMerchantReference(): string {
  return `CH${Date.now().toString(36)}${randomBytes(3).toString('hex')}`.toUpperCase();
}

/**
 * The charge's §2.1 fields from the flags (card number and CVV from standard input when not given);
 * the client checks them before sending.
 */
async function chargeInput(flags: ChargeFlags): Promise<ChargeInput> {
  const expiry = /^(\d{2})\/(\d{2})$/.exec(flags.expiry.trim());
  if (!expiry) throw new CashoutError('usage', '--expiry must be MM/YY, e.g. 05/29');
  const asked: string[] = [];
  if (flags.cardNumber === undefined) asked.push('card number');
  if (flags.cvv === undefined) asked.push('CVV');
  const read = (await readHiddenLines(asked)).map((l) => l.trim());
  const cardNumber = flags.cardNumber ?? read.shift()!;
  const cvv = flags.cvv ?? read.shift()!;
  return {
    merchant_reference_id: flags.reference ?? newMerchantReference(),
    customer_merchant_profile_id: flags.customer,
    amount: flags.amount,
    customer_name: flags.name,
    customer_mobile: flags.mobile,
    customer_email: flags.email,
    card_number: cardNumber.replace(/[ -]/g, ''),
    cvv,
    expiry_year: expiry[2]!,
    expiry_month: expiry[1]!,
    description: flags.description,
  };
}

/** What to print for `result`, in lines. */
function describe(result: ChargeResult, baseUrl: string): string[] {
  switch (result.kind) {
    case 'charged':
      return [
        'Charged (interface doc §2.2).',
        `  service_reference_id: ${result.serviceReferenceId}`,
        `  payment_gateway_reference_id: ${result.paymentGatewayReferenceId}`,
      ];
    case 'otp_required':
      return [
        '3-D Secure: nothing is charged until the customer enters the one-time password (interface doc §2.3).',
        `  service_reference_id: ${result.serviceReferenceId}`,
        `  Open the OTP dialog on a page that loads ${endpointUrl(baseUrl, OTP_PLUGIN_PATH).href}`,
        `  and holds <div id="${OTP_CONTAINER_ID}">: ` +
          `${OTP_GLOBAL}.init(); ${OTP_GLOBAL}.load(${result.serviceReferenceId});`,
      ];
    case 'rejected':
      return [
        `Refused; nothing was created (HTTP ${result.httpStatus}): ${result.message}`,
        ...Object.entries(result.errors).map(([k, v]) => `  ${k}: ${v.join(' ')}`),
      ];
    case 'not_sent':
      return [`Not sent: ${result.message}`];
    case 'unknown':
      return [`Unknown outcome: ${result.message}`];
  }
}

/** Charges one card and prints the outcome. */
export async function chargeCommand(ctx: AppContext, flags: ChargeFlags): Promise<number> {
  const target = serviceTarget(ctx.config);
  const client = createChargeClient({
    baseUrl: target.baseUrl,
    token: target.token,
    merchantCode: ctx.config.merchantCode ?? '',
    hashKey: ctx.config.hashKey ?? '',
    requestTimeoutMs: ctx.config.requestTimeoutMs,
    connectTimeoutMs: ctx.config.connectTimeoutMs,
    connections: 1,
    log: ctx.log,
  });
  let input: ChargeInput;
  let result: ChargeResult;
  try {
    input = await chargeInput(flags);
    result = await client.charge(input);
  } finally {
    await client.close();
  }
  const card = maskCardNumber(input.card_number);
  if (flags.json) {
    const out = { merchant_reference_id: input.merchant_reference_id, amount: input.amount, card, result };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } else {
    process.stdout.write(`Card charge ${input.merchant_reference_id}: EGP ${input.amount} on card ${card}\n`);
    process.stdout.write(`${describe(result, target.baseUrl).join('\n')}\n`);
  }
  switch (result.kind) {
    case 'charged':
    case 'otp_required':
      return EXIT.ok;
    case 'not_sent':
      return EXIT.service;
    default:
      return EXIT.notAllAccepted;
  }
}
