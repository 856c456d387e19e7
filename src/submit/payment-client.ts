/**
 * The cashout client: `POST {base}/api/v1/merchant/withdrawal` (interface doc §4, §5.1) over the
 * shared transport (`./service-http.ts`: §5.1 headers, timeouts, a pooled dispatcher, the base
 * address's own path kept). It never retries by itself and never follows redirects: whether a
 * request may be sent again is decided by `classify-outcome.ts` and the ledger alone. It returns
 * what happened as data, and throws nothing.
 */
import { WITHDRAWAL_PATH, type WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import { createServiceHttp, type ServiceHttpOptions } from './service-http.js';
import type { HttpResult } from './service-http.js';

export type { HttpResult } from './service-http.js';

/** Settings of the client (see `ServiceHttpOptions`). Durations in milliseconds. */
export type PaymentClientOptions = ServiceHttpOptions;

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
  const http = createServiceHttp(opts);
  return {
    postWithdrawal(body) {
      const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      return http.post(WITHDRAWAL_PATH, payload);
    },
    close: () => http.close(),
  };
}
