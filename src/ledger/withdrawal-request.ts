/** The two shapes of a withdrawal request that the import hands to the ledger (interface doc §2.4). */
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';

/** A withdrawal request before it is sent: body plus the file line of each item, array by array. */
export interface WithdrawalRequest {
  /** 1-based sequence number within the batch. */
  readonly seq: number;
  readonly body: WithdrawalRequestBody;
  /** `walletLines[i]` is the file line of `body.mobile_wallets[i]`. */
  readonly walletLines: readonly number[];
  /** `bankLines[i]` is the file line of `body.bank_accounts[i]`. */
  readonly bankLines: readonly number[];
  /** Sum of the items' amounts, in piasters. */
  readonly totalPiasters: bigint;
  /** The payer's `reference` of each item that has one, by file line (never sent to the service). */
  readonly references: Readonly<Record<string, string>>;
}

/**
 * A withdrawal request ready for the ledger, its body already JSON (`bodyJson`, the same text
 * `JSON.stringify(body)` gives; UTF-8 bytes from the import): what the import stages. Other
 * fields as in `WithdrawalRequest`.
 */
export interface StagedRequest extends Omit<WithdrawalRequest, 'body' | 'references'> {
  readonly bodyJson: string | Buffer;
  /** `references` as JSON (`{"<line>":"<reference>",…}`, lines ascending: the text `JSON.stringify` gives). */
  readonly referencesJson: string;
  /** Each item's payee key (payout register): "<line>\t<key>\n" per item that has one. */
  readonly payees: string;
}
