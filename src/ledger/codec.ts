/**
 * The ledger's records as TypeScript sees them, and their codec: Redis hash fields ↔ typed
 * records. Amounts are piasters (bigint) or EGP decimal strings, never floats.
 */
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import type { BatchState, RequestState } from './lifecycle.js';

export type { BatchState, RequestState } from './lifecycle.js';

/** Facts of a batch as kept in the ledger. Amounts are EGP decimal strings. */
export interface BatchRecord {
  readonly id: string;
  readonly state: BatchState;
  readonly fileName: string;
  readonly sha256: string;
  readonly createdAt: string;
  readonly rows: number;
  readonly validRows: number;
  readonly invalidRows: number;
  readonly requests: number;
  readonly open: number;
  readonly itemsPerRequest: number;
  readonly serviceUrl: string;
  readonly reportDir: string;
  readonly haltReason?: string;
  readonly finishedAt?: string;
  readonly partial: boolean;
  /** Who imported the batch (a user name, or "scheduler"). */
  readonly importedBy: string;
  /** The person behind `importedBy` (operating-system or dashboard user): who may not approve the batch. */
  readonly importedByUser?: string;
  /** How the input file is read again for reports: its field delimiter and text encoding, when not the defaults. */
  readonly delimiter?: string;
  readonly encoding?: string;
  /** Total of the rows queued, in piasters. */
  readonly totalPiasters: bigint;
  /** Why the batch was refused (state `refused`). */
  readonly refusalReason?: string;
  /** Until when an approval is accepted (state `awaiting_approval`), ISO time. */
  readonly expiresAt?: string;
  readonly approvedBy?: string;
  /** First 16 hex digits of the SHA-256 of the access token the batch was imported with (never the token). */
  readonly tokenFingerprint?: string;
  /** Imported with `--force`: content imported before, made a new batch (the payout register still applies). */
  readonly forced?: boolean;
  /**
   * The batch of the same content refused as a whole before this one: an import of content whose
   * batch was refused is a new batch, and the refused one stays as it was.
   */
  readonly follows?: string;
  /** The batch that imported this refused batch's content again (`follows` names this one there). */
  readonly supersededBy?: string;
  /** Rows of the batch paid again on purpose although another payout held their payee: who and why. */
  readonly payAgain?: { readonly by: string; readonly note: string };
}

/** One step of a batch's story (who imported, approved, cancelled, retried…), for reports and the dashboard. */
export interface ApprovalEvent {
  readonly action: 'imported' | 'approval_required' | 'approved' | 'cancelled' | 'expired' | 'pay_again' | 'retried';
  readonly by: string;
  readonly at: string;
  readonly note?: string;
}

/** Counts of an import, for the batch record. */
export interface BatchCounts {
  readonly requests: number;
  readonly rows: number;
  readonly validRows: number;
  readonly invalidRows: number;
  readonly totalPiasters: bigint;
}

/** One withdrawal request as kept in the ledger. */
export interface LedgerRequest {
  readonly batchId: string;
  readonly seq: number;
  readonly state: RequestState;
  /** The body, parsed from `bodyJson` when first read. */
  readonly body: WithdrawalRequestBody;
  /**
   * The body exactly as the ledger keeps it: UTF-8 JSON text, as a string or as its bytes. This is
   * what is sent (unchanged, never re-serialised). Absent on requests built outside the ledger.
   */
  readonly bodyJson?: string | Buffer;
  readonly walletLines: readonly number[];
  readonly bankLines: readonly number[];
  readonly totalPiasters: bigint;
  /** The payer's references by file line (for duplicate detection across batches). */
  readonly references: Readonly<Record<string, string>>;
  /**
   * The payee key of each item, as the ledger keeps it: "<line>\t<key>\n" per item (see
   * `payout-register.ts`); '' for requests made without keys.
   */
  readonly payees: string;
  readonly attempts: number;
  /** Request this one was split from after a 422 (its un-named items). */
  readonly parent?: number;
  /** After a 422: the request that carries this one's un-named items again. */
  readonly resentAs?: number;
  readonly httpStatus?: number;
  readonly message?: string;
  /** After a 422: reasons per file line, for the rows the service named. */
  readonly rowErrors?: Readonly<Record<string, readonly string[]>>;
  readonly sendingAt?: string;
  /** The worker (host:pid) that took it for sending last. */
  readonly sentBy?: string;
  readonly finishedAt?: string;
  readonly resolution?: {
    readonly by: string;
    readonly at: string;
    readonly note: string;
    readonly finding: 'created' | 'not_created';
  };
}

/** Result of trying to take a request for sending. */
export type ClaimResult =
  | { readonly claimed: true; readonly request: LedgerRequest }
  | { readonly claimed: false; readonly reason: 'state'; readonly state: RequestState }
  | { readonly claimed: false; readonly reason: 'batch'; readonly batchState: BatchState }
  | { readonly claimed: false; readonly reason: 'missing' }
  /** The batch was imported for another service address than the worker's. */
  | { readonly claimed: false; readonly reason: 'service'; readonly batchServiceUrl: string }
  /** A request sent again whose payee another payout holds now (`holder`: "<batch>:<seq>:<line>"). */
  | {
      readonly claimed: false;
      readonly reason: 'payee';
      readonly key: string;
      readonly holder: string;
      readonly holderState: string;
    };

/** What a final move records. */
export interface Outcome {
  readonly state: 'accepted' | 'rejected' | 'unknown' | 'not_sent';
  readonly httpStatus?: number;
  readonly message: string;
  readonly rowErrors?: Readonly<Record<string, readonly string[]>>;
}

/** A batch from its hash fields, or undefined when it has none. */
export function parseBatch(batchId: string, h: Record<string, string>): BatchRecord | undefined {
  if (!h.state) return undefined;
  return {
    id: batchId,
    state: h.state as BatchState,
    fileName: h.file_name ?? '',
    sha256: h.sha256 ?? '',
    createdAt: h.created_at ?? '',
    rows: Number(h.rows ?? 0),
    validRows: Number(h.valid_rows ?? 0),
    invalidRows: Number(h.invalid_rows ?? 0),
    requests: Number(h.requests ?? 0),
    open: Number(h.open ?? 0),
    itemsPerRequest: Number(h.items_per_request ?? 0),
    serviceUrl: h.service_url ?? '',
    reportDir: h.report_dir ?? '',
    partial: h.partial === '1',
    importedBy: h.imported_by ?? '',
    ...(h.imported_by_user ? { importedByUser: h.imported_by_user } : {}),
    ...(h.delimiter ? { delimiter: h.delimiter } : {}),
    ...(h.encoding ? { encoding: h.encoding } : {}),
    totalPiasters: BigInt(h.total ?? '0'),
    ...(h.refusal_reason ? { refusalReason: h.refusal_reason } : {}),
    ...(h.expires_at ? { expiresAt: h.expires_at } : {}),
    ...(h.approved_by ? { approvedBy: h.approved_by } : {}),
    ...(h.token_fp ? { tokenFingerprint: h.token_fp } : {}),
    ...(h.forced === '1' ? { forced: true } : {}),
    ...(h.follows ? { follows: h.follows } : {}),
    ...(h.superseded_by ? { supersededBy: h.superseded_by } : {}),
    ...(h.pay_again_by ? { payAgain: { by: h.pay_again_by, note: h.pay_again_note ?? '' } } : {}),
    ...(h.halt_reason ? { haltReason: h.halt_reason } : {}),
    ...(h.finished_at ? { finishedAt: h.finished_at } : {}),
  };
}

/** Every field of a request record but its body and payee keys (see `parseRequest`): what reports read. */
export const OUTCOME_FIELDS = [
  'state',
  'wallet_lines',
  'bank_lines',
  'total',
  'refs',
  'attempts',
  'parent',
  'resent_as',
  'http_status',
  'message',
  'row_errors',
  'sending_at',
  'sent_by',
  'finished_at',
  'resolution',
] as const;

/** A request from its hash fields; `rawBody` (the body's bytes) takes the place of `h.body` when given. */
export function parseRequest(
  batchId: string,
  seq: number,
  h: Record<string, string>,
  rawBody?: Buffer,
): LedgerRequest | undefined {
  if (!h.state) return undefined;
  const bodyJson: string | Buffer = rawBody ?? h.body ?? '{}';
  let body: WithdrawalRequestBody | undefined;
  let references: Record<string, string> | undefined;
  return {
    batchId,
    seq,
    state: h.state as RequestState,
    bodyJson,
    // Parsed on first use: sending needs only the text, reports need no body at all.
    get body(): WithdrawalRequestBody {
      return (body ??= JSON.parse(
        typeof bodyJson === 'string' ? bodyJson : bodyJson.toString('utf8'),
      ) as WithdrawalRequestBody);
    },
    walletLines: JSON.parse(h.wallet_lines ?? '[]') as number[],
    bankLines: JSON.parse(h.bank_lines ?? '[]') as number[],
    totalPiasters: BigInt(h.total ?? '0'),
    get references(): Record<string, string> {
      return (references ??= JSON.parse(h.refs ?? '{}') as Record<string, string>);
    },
    payees: h.payees ?? '',
    attempts: Number(h.attempts ?? 0),
    ...(h.parent ? { parent: Number(h.parent) } : {}),
    ...(h.resent_as ? { resentAs: Number(h.resent_as) } : {}),
    ...(h.http_status ? { httpStatus: Number(h.http_status) } : {}),
    ...(h.message ? { message: h.message } : {}),
    ...(h.row_errors ? { rowErrors: JSON.parse(h.row_errors) as Record<string, string[]> } : {}),
    ...(h.sending_at ? { sendingAt: h.sending_at } : {}),
    ...(h.sent_by ? { sentBy: h.sent_by } : {}),
    ...(h.finished_at ? { finishedAt: h.finished_at } : {}),
    ...(h.resolution ? { resolution: JSON.parse(h.resolution) as LedgerRequest['resolution'] } : {}),
  };
}
