/**
 * The HTTP transport both of the service's clients share (cashouts: `./payment-client.ts`; card
 * charges: `../charge/charge-client.ts`): `POST {base}{path}` with a JSON body, the interface doc
 * §5.1 headers and a timeout, through a pooled undici dispatcher. It never retries by itself and
 * never follows redirects: whether a request may be sent again is for its caller to decide. It
 * returns what happened as data, and throws nothing.
 */
import { createRequire } from 'node:module';
import type { Dispatcher } from 'undici';

/**
 * undici, loaded when the first transport is opened: commands that send nothing (`import`,
 * `validate`, `report`, …) never load it (about a tenth of a second of each start).
 */
let undici: typeof import('undici') | undefined;
function loadUndici(): typeof import('undici') {
  return (undici ??= createRequire(import.meta.url)('undici') as typeof import('undici'));
}

/** What one POST came to: a response (any status), or an error and whether the request may have left. */
export type HttpResult =
  | { readonly kind: 'response'; readonly status: number; readonly retryAfter?: string; readonly body: string }
  | { readonly kind: 'error'; readonly code: string; readonly message: string };

/** Settings of the transport. Durations in milliseconds. */
export interface ServiceHttpOptions {
  /** Base address, e.g. the staging or production address; it may carry a path (`https://host/gateway`). */
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

/** A transport bound to one service address. */
export interface ServiceHttp {
  /** POSTs `payload` (JSON text, or its UTF-8 bytes, sent as it is) to `path` under the base address. */
  post(path: string, payload: string | Buffer): Promise<HttpResult>;
  close(): Promise<void>;
}

/**
 * The address of an endpoint: `path` (e.g. `/api/v1/charge/card`) appended to `baseUrl`, keeping any
 * path the base address has ("Every path below is appended to one of them", interface doc "Base
 * addresses"): `https://host/gateway` + `/api/v1/x` → `https://host/gateway/api/v1/x`.
 */
export function endpointUrl(baseUrl: string, path: string): URL {
  return new URL(`${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`);
}

/** Opens a pooled transport. Call `close()` when done. */
export function createServiceHttp(opts: ServiceHttpOptions): ServiceHttp {
  const dispatcher = new (loadUndici().Agent)({
    connect: { timeout: opts.connectTimeoutMs },
    headersTimeout: opts.requestTimeoutMs,
    bodyTimeout: opts.requestTimeoutMs,
    connections: opts.connections,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 10_000,
    pipelining: 1,
  });
  const urls = new Map<string, URL>();
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
    post(path, payload) {
      let url = urls.get(path);
      if (!url) urls.set(path, (url = endpointUrl(opts.baseUrl, path)));
      const target = url;
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
            const body = Buffer.concat(chunks).toString('utf8');
            resolve({ kind: 'response', status, body, ...(retryAfter !== undefined ? { retryAfter } : {}) });
          },
          onResponseError(_controller, err) {
            resolve(failed(err));
          },
        };
        try {
          const path = `${target.pathname}${target.search}`;
          dispatcher.dispatch({ origin: target.origin, path, method: 'POST', headers, body: payload }, handler);
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
