/**
 * The HTTP side of one submission: `POST {base}/api/v1/merchant/withdrawal` with the interface
 * doc §5.1 headers and a timeout, through a pooled undici dispatcher. The client never retries by
 * itself and never follows redirects: whether a request may be sent again is decided by
 * `classify-outcome.ts` and the ledger alone. It returns what happened as data, and throws nothing.
 */
import { Agent, type Dispatcher } from 'undici';
import { WITHDRAWAL_PATH, type WithdrawalRequestBody } from '../contract/withdrawal-api.js';

/** What one POST came to: a response (any status), or an error and whether the request may have left. */
export type HttpResult =
  | { readonly kind: 'response'; readonly status: number; readonly retryAfter?: string; readonly body: string }
  | { readonly kind: 'error'; readonly code: string; readonly message: string };

/** Settings of the client. Durations in milliseconds. */
export interface PaymentClientOptions {
  /** Base address without a trailing slash, e.g. the staging or production address. */
  readonly baseUrl: string;
  /** Bearer token (interface doc §5.1); never logged. */
  readonly token: string;
  /** Time allowed for the response headers and body after the request was written. */
  readonly requestTimeoutMs: number;
  /** Time allowed to open the connection (nothing has been sent while connecting). */
  readonly connectTimeoutMs: number;
  /** Most connections kept open to the service. */
  readonly connections: number;
}

/** A client bound to one service address. */
export interface PaymentClient {
  /**
   * POSTs one withdrawal request. `body` is the request body, or its JSON text (a string or its
   * UTF-8 bytes), which is sent as it is.
   */
  postWithdrawal(body: WithdrawalRequestBody | string | Buffer): Promise<HttpResult>;
  close(): Promise<void>;
}

/** Opens a pooled client. Call `close()` when done. */
export function createPaymentClient(opts: PaymentClientOptions): PaymentClient {
  const dispatcher = new Agent({
    connect: { timeout: opts.connectTimeoutMs },
    headersTimeout: opts.requestTimeoutMs,
    bodyTimeout: opts.requestTimeoutMs,
    connections: opts.connections,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 10_000,
    pipelining: 1,
  });
  const url = new URL(WITHDRAWAL_PATH, `${opts.baseUrl}/`);
  const headers = {
    authorization: `Bearer ${opts.token}`,
    'content-type': 'application/json',
    accept: 'application/json',
  };
  const failed = (err: unknown): HttpResult => {
    const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    const code = e.code ?? e.cause?.code ?? e.name ?? 'ERROR';
    return { kind: 'error', code, message: String(e.message ?? code).replace(opts.token, '[token]') };
  };
  return {
    postWithdrawal(body) {
      const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      // The dispatcher's own handler interface: the same request, timeouts and errors as
      // `undici.request`, without a stream per answer (the answer is small and read whole).
      return new Promise<HttpResult>((resolve) => {
        let status = 0;
        let retryAfter: string | undefined;
        const chunks: Buffer[] = [];
        const handler: Dispatcher.DispatchHandler = {
          // (Its presence selects the handler interface of undici 7; nothing to do at the start.)
          onRequestStart() {},
          onResponseStart(_controller, statusCode, responseHeaders) {
            status = statusCode;
            const value = responseHeaders['retry-after'];
            retryAfter = typeof value === 'string' ? value : undefined;
          },
          onResponseData(_controller, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            resolve({ kind: 'response', status, body: Buffer.concat(chunks).toString('utf8'), ...(retryAfter !== undefined ? { retryAfter } : {}) });
          },
          onResponseError(_controller, err) {
            resolve(failed(err));
          },
        };
        try {
          dispatcher.dispatch({ origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST', headers, body: payload }, handler);
        } catch (err) {
          resolve(failed(err));
        }
      });
    },
    async close() {
      await dispatcher.close();
    },
  };
}
