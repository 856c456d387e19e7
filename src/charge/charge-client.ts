/**
 * The card charge client: `POST {base}/api/v1/charge/card` (interface doc §2.1, §4, §5) over the
 * transport the cashout client uses (`../submit/service-http.ts`: §5.1 headers, timeouts, the base
 * address's own path kept). It checks the fields against §2.1 before anything is sent, signs the
 * exact amount string it sends (§5.2), and says which answer came back (`./classify-charge.ts`).
 *
 * A charge is sent once and never again by itself, whatever happens, as with cashouts: a timeout
 * after sending is an unknown outcome for a person to look up. The card number, CVV, merchant code
 * and hash key never reach a log line, an error or a result; a card shows as its last four digits.
 */
import { CHARGE_FIELDS, CHARGE_FIELD_RULES, CHARGE_PATH, ChargeRequestBody } from '../contract/charge-api.js';
import type { ChargeField } from '../contract/charge-api.js';
import { CashoutError } from '../errors.js';
import type { Logger } from '../logger.js';
import { maskCardNumber } from '../mask.js';
import { createServiceHttp, type ServiceHttpOptions } from '../submit/service-http.js';
import { classifyCharge, type ChargeResult } from './classify-charge.js';
import { chargeSignature } from './signature.js';

/** What a merchant supplies for one charge: every §2.1 field but `signature`, which the client computes. */
export type ChargeInput = Omit<ChargeRequestBody, 'signature'>;

/** The merchant's secrets from the API settings page of the merchant dashboard (interface doc §5.2 rule 2). */
export interface ChargeSecrets {
  readonly merchantCode: string;
  readonly hashKey: string;
}

/** Settings of the charge client: the transport's (durations in milliseconds) and the §5.2 secrets. */
export interface ChargeClientOptions extends ServiceHttpOptions, ChargeSecrets {
  /** Where each charge and its outcome are logged (card as its last four digits); none by default. */
  readonly log?: Logger;
}

/** A charge client bound to one service address. */
export interface ChargeClient {
  /**
   * Charges one card once. Resolves to what came back (never throws for the service's answers);
   * throws `CashoutError('charge_invalid')` before sending anything when a field breaks §2.1.
   */
  charge(input: ChargeInput): Promise<ChargeResult>;
  close(): Promise<void>;
}

const INPUT_FIELDS = CHARGE_FIELDS.filter((f): f is Exclude<ChargeField, 'signature'> => f !== 'signature');
const ChargeInputSchema = ChargeRequestBody.omit({ signature: true });

/**
 * Checks `input` against the §2.1 rules (every field a string matching `CHARGE_FIELD_RULES`) and
 * returns exactly the §2.1 fields. Throws `CashoutError('charge_invalid')` whose message names each
 * bad field and its rule and whose context lists the fields, never a value.
 */
export function checkChargeInput(input: unknown): ChargeInput {
  const parsed = ChargeInputSchema.safeParse(input);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((i) => String(i.path[0] ?? 'charge')))];
    const problems = fields.map((f) => {
      const given = input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[f] : undefined;
      const present = given !== undefined;
      const rule = CHARGE_FIELD_RULES[f as ChargeField]?.rule ?? 'an object of the §2.1 fields';
      return present ? `${f} must be ${rule}` : `${f} is missing`;
    });
    const message = `the charge was not sent: ${problems.join('; ')} (interface doc §2.1)`;
    throw new CashoutError('charge_invalid', message, { fields });
  }
  const out = {} as Record<(typeof INPUT_FIELDS)[number], string>;
  for (const f of INPUT_FIELDS) out[f] = parsed.data[f];
  return out;
}

/**
 * The §2.1 body for `input` (checked with `checkChargeInput`), in document order, with the §5.2
 * signature computed over the very amount string the body carries, and the JSON text to send.
 */
export function buildChargeBody(input: ChargeInput, secrets: ChargeSecrets): { body: ChargeRequestBody; text: string } {
  const checked = checkChargeInput(input);
  const signature = chargeSignature({
    merchantCode: secrets.merchantCode,
    merchantReferenceId: checked.merchant_reference_id,
    customerMerchantProfileId: checked.customer_merchant_profile_id,
    amount: checked.amount,
    hashKey: secrets.hashKey,
  });
  const body: ChargeRequestBody = { ...checked, signature };
  return { body, text: JSON.stringify(body) };
}

/** Opens a charge client. Throws `CashoutError('config_invalid')` when the merchant code or hash key is missing. */
export function createChargeClient(opts: ChargeClientOptions): ChargeClient {
  if (!opts.merchantCode) {
    const key = 'CASHOUT_MERCHANT_CODE';
    throw new CashoutError('config_invalid', `setting ${key} (or ${key}_FILE) is missing`, { key });
  }
  if (!opts.hashKey) {
    const key = 'CASHOUT_HASH_KEY';
    throw new CashoutError('config_invalid', `setting ${key} (or ${key}_FILE) is missing`, { key });
  }
  const secrets: ChargeSecrets = { merchantCode: opts.merchantCode, hashKey: opts.hashKey };
  const http = createServiceHttp(opts);
  return {
    async charge(input) {
      const { body, text } = buildChargeBody(input, secrets);
      const card = maskCardNumber(body.card_number);
      const about = { merchantReferenceId: body.merchant_reference_id, amount: body.amount, card };
      const started = Date.now();
      const result = classifyCharge(await http.post(CHARGE_PATH, text));
      opts.log?.info(
        {
          ...about,
          outcome: result.kind,
          ...('httpStatus' in result && result.httpStatus !== undefined ? { httpStatus: result.httpStatus } : {}),
          ...('serviceReferenceId' in result ? { serviceReferenceId: result.serviceReferenceId } : {}),
          ms: Date.now() - started,
        },
        'card charge',
      );
      return result;
    },
    close: () => http.close(),
  };
}
