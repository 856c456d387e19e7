/**
 * Local sandbox standing in for the payment service's staging environment, for the cashout
 * endpoint only (`POST /api/v1/merchant/withdrawal`, interface doc §2.4, §2.5, §4, §5.1, §7).
 * It checks the bearer token, validates like the service, records every withdrawal request it
 * creates in an in-memory ledger, and can inject faults (`./faults.ts`). Test-only admin
 * endpoints under `/__sandbox/` expose the ledger and change the faults at run time.
 */
import { timingSafeEqual, randomInt } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { WITHDRAWAL_PATH } from '../contract/withdrawal-api.js';
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import type { BankList } from '../contract/supported-banks.js';
import { CashoutError, isCashoutError } from '../errors.js';
import { mulberry32, parseFaultConfig, pickFault, pickLatency } from './faults.js';
import type { FaultConfig } from './faults.js';
import { validateWithdrawalBody } from './item-rules.js';
import type { FieldErrors } from './item-rules.js';

/** Options of `startSandbox`. */
export interface SandboxOptions {
  /** Interface to listen on; default `127.0.0.1` (loopback only). */
  host?: string;
  /** TCP port; default 0 (a free port, see `Sandbox.url`). */
  port?: number;
  /** The access token accepted as `Authorization: Bearer <token>` (interface doc §5.1). */
  token: string;
  /** The supported bank list; `bank_name` must match an entry exactly (interface doc §2.4.2). */
  banks: BankList;
  /** Fault injection; default none. */
  faults?: FaultConfig;
  /** Largest accepted request body in bytes; default 1 MiB. Larger bodies get HTTP 413 JSON. */
  bodyLimitBytes?: number;
  /** fastify `logger` option; default false. */
  logger?: false | object;
}

/** One withdrawal request the sandbox created: `id` counts from 1, `created_at` is ISO 8601 UTC, `body` as received. */
export interface SandboxLedgerEntry {
  id: number;
  created_at: string;
  body: WithdrawalRequestBody;
}

/** A running sandbox. */
export interface Sandbox {
  /** Base address, e.g. `http://127.0.0.1:41234`; append `WITHDRAWAL_PATH` to it. */
  url: string;
  /** The withdrawal requests created so far, oldest first (a copy). */
  ledger(): readonly SandboxLedgerEntry[];
  /** Replaces the fault configuration (checked with `parseFaultConfig`; throws on a bad one) and reseeds the PRNG. */
  setFaults(f: FaultConfig): void;
  /** Number of `POST /api/v1/merchant/withdrawal` requests received, whatever their outcome. */
  received(): number;
  /** Stops listening and destroys every open connection, hanging ones included. */
  close(): Promise<void>;
}

const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Success text of §2.5 (`status_description` and `message`). */
const CREATED_TEXT = 'Withdrawal request created successfully';
/** Failure text of §7 (`message` and `status_description`). */
const INVALID_TEXT = 'The given data was invalid.';

function failure(status: number, text: string, errors?: FieldErrors): Record<string, unknown> {
  const body: Record<string, unknown> = { success: false, status_code: status, message: text, status_description: text };
  if (errors) body.errors = errors;
  return body;
}

/** §7 validation failure body. */
function invalid(errors: FieldErrors): Record<string, unknown> {
  return { success: false, message: INVALID_TEXT, status_code: 422, status_description: INVALID_TEXT, errors };
}

const UNAUTHENTICATED = failure(401, 'Unauthenticated.');

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** The media type of a Content-Type header, lower-cased, without parameters. */
function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/**
 * Starts a sandbox and resolves once it listens. Behaviour of `POST /api/v1/merchant/withdrawal`:
 * - `Authorization` must be exactly `Bearer <token>` (§5.1), else 401 JSON; nothing created.
 * - The answer comes `latencyMs` after the request arrived (its headers were read); the body is
 *   read and checked within that time. Timers are late by a millisecond or two under load.
 * - Non-creating faults (500, 503, 429, hang) are answered next, whatever the body's checks found.
 * - A body that is not `application/json` or not JSON gives 422 in the §7 layout (key `body`);
 *   a body over `bodyLimitBytes` gives 413 in the same layout.
 * - Validation per §2.4 (`./item-rules.ts`); any problem gives 422 (§7) and nothing is created.
 * - Otherwise one ledger entry is created and the answer is 200 with the §2.5 body, unless a
 *   creating fault (createThenReset, malformed200, createThen500) spoils the answer.
 * Admin endpoints (no token on loopback; the same bearer token on any other host):
 * `GET /__sandbox/ledger`, `PUT /__sandbox/faults`, `POST /__sandbox/reset`.
 * Throws `CashoutError('config_invalid')` on an empty token or a bad fault configuration.
 */
export async function startSandbox(opts: SandboxOptions): Promise<Sandbox> {
  if (typeof opts.token !== 'string' || opts.token === '' || /[\s\x00-\x1f\x7f]/.test(opts.token)) {
    throw new CashoutError('config_invalid', 'the sandbox token must be a non-empty string without spaces or control characters');
  }
  const host = opts.host ?? '127.0.0.1';
  const expectedAuth = Buffer.from(`Bearer ${opts.token}`, 'utf8');
  const banks = opts.banks;
  const adminNeedsToken = !isLoopback(host);

  // Created requests are kept as the bytes received (cheap to keep for hundreds of thousands of
  // items) and turned into frozen entries when first read.
  interface Created {
    readonly id: number;
    readonly created_at: string;
    readonly raw: Buffer;
    entry?: SandboxLedgerEntry;
  }
  let ledger: Created[] = [];
  let nextId = 1;
  const entries = (): SandboxLedgerEntry[] =>
    ledger.map((c) => (c.entry ??= deepFreeze({ id: c.id, created_at: c.created_at, body: JSON.parse(c.raw.toString('utf8')) as WithdrawalRequestBody })));
  let receivedCount = 0;
  let faults: FaultConfig = {};
  let faultRand: () => number = Math.random;
  let auxRand: () => number = Math.random;
  let closing = false;
  const closeSignal = new AbortController();
  // Every request waiting out its latency listens on this signal: there may be many at once.
  setMaxListeners(0, closeSignal.signal);
  const held = new Set<Socket>();
  /** When each request arrived (its headers were read), for latencies counted from then. */
  const arrivals = new WeakMap<FastifyRequest, number>();

  const applyFaults = (input: FaultConfig): FaultConfig => {
    const parsed = parseFaultConfig(input);
    const seed = parsed.seed ?? randomInt(0, 0xffffffff);
    faults = parsed;
    faultRand = mulberry32(seed);
    auxRand = mulberry32((seed ^ 0x9e3779b9) >>> 0);
    return parsed;
  };
  applyFaults(opts.faults ?? {});

  const authorized = (header: string | undefined): boolean => {
    const got = Buffer.from(header ?? '', 'utf8');
    if (got.length !== expectedAuth.length) {
      timingSafeEqual(expectedAuth, expectedAuth);
      return false;
    }
    return timingSafeEqual(got, expectedAuth);
  };

  /** Keeps the connection open without ever answering; `close()` destroys it. */
  const hold = (req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    reply.hijack();
    const socket = req.raw.socket;
    held.add(socket);
    socket.once('close', () => held.delete(socket));
    if (closing) socket.destroy();
    return reply;
  };

  const app = Fastify({
    logger: (opts.logger ?? false) as FastifyServerOptions['logger'],
    bodyLimit: opts.bodyLimitBytes ?? DEFAULT_BODY_LIMIT,
    forceCloseConnections: true,
  });

  // Bodies are read raw and parsed by the handlers, so that a non-JSON body or another content
  // type is answered in the service's own layout (§7) rather than fastify's.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.setErrorHandler((error: FastifyError, _req, reply) => {
    const status = error.statusCode ?? 500;
    if (status === 413) {
      const text = 'The request body is too large.';
      return reply.code(413).send(failure(413, text, { body: text }));
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(422).send(invalid({ body: 'The request body must be JSON sent as Content-Type: application/json.' }));
    }
    if (status >= 400 && status < 500) return reply.code(status).send(failure(status, error.message));
    reply.log.error({ err: error }, 'sandbox error');
    return reply.code(500).send(failure(500, 'Server Error'));
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send(failure(404, 'Not Found')));

  /** Reads the raw body as JSON; undefined value with an error text when it is not. */
  const jsonBody = (req: FastifyRequest): { ok: true; value: unknown } | { ok: false; reason: string } => {
    if (mediaType(req.headers['content-type']) !== 'application/json') {
      return { ok: false, reason: 'The request body must be JSON sent as Content-Type: application/json.' };
    }
    const raw = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    try {
      return { ok: true, value: JSON.parse(raw) as unknown };
    } catch {
      return { ok: false, reason: 'The request body must be valid JSON.' };
    }
  };

  app.post(
    WITHDRAWAL_PATH,
    {
      onRequest: async (req, reply) => {
        arrivals.set(req, performance.now());
        receivedCount += 1;
        if (!authorized(req.headers.authorization)) return reply.code(401).send(UNAUTHENTICATED);
      },
    },
    async (req, reply) => {
      const kind = pickFault(faults, faultRand);
      if (kind === 'hang') return hold(req, reply);
      // The latency counts from the request's arrival, and the body is read and checked while it
      // runs: a service's own work is part of its latency, and requests arriving together are not
      // delayed by each other's checks. What is answered, and in which order the checks apply, is
      // decided after it.
      const arrived = arrivals.get(req) ?? performance.now();
      const delay = Math.max(0, pickLatency(faults, auxRand) - (performance.now() - arrived));
      const waited = delay > 0 ? sleep(delay, undefined, { signal: closeSignal.signal }).then(() => true, () => false) : undefined;
      const parsed = jsonBody(req);
      const check = parsed.ok ? validateWithdrawalBody(parsed.value, banks) : undefined;
      if (waited && !(await waited)) return hold(req, reply); // closing: the socket is destroyed
      if (closing) return hold(req, reply);

      switch (kind) {
        case 'http500':
          return reply.code(500).send(failure(500, 'Server Error'));
        case 'http503':
          return reply.code(503).send(failure(503, 'Service Unavailable'));
        case 'http429':
          return reply
            .code(429)
            .header('retry-after', String(faults.retryAfterSeconds ?? 1))
            .send(failure(429, 'Too Many Attempts.'));
        default:
          break;
      }

      if (!parsed.ok) return reply.code(422).send(invalid({ body: parsed.reason }));
      if (!check?.ok) return reply.code(422).send(invalid(check?.errors ?? {}));

      // What was checked is exactly these bytes (the body is read from them when the ledger is read).
      // (A copy: the received buffer may share memory with others.)
      ledger.push({ id: nextId++, created_at: new Date().toISOString(), raw: Buffer.from(req.body as Buffer) });

      switch (kind) {
        case 'createThenReset': {
          reply.hijack();
          const socket = req.raw.socket;
          if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
          else socket.destroy();
          return reply;
        }
        case 'malformed200': {
          const truncated = auxRand() < 0.5;
          return reply
            .code(200)
            .type('application/json')
            .send(truncated ? `{"success":true,"status_code":200,"status_desc` : '{"ok":1}');
        }
        case 'createThen500':
          return reply.code(500).send(failure(500, 'Server Error'));
        default:
          return reply
            .code(200)
            .send({ success: true, status_code: 200, status_description: CREATED_TEXT, message: CREATED_TEXT });
      }
    },
  );

  // Test-only admin endpoints.
  const adminGuard = async (req: FastifyRequest, reply: FastifyReply) => {
    if (adminNeedsToken && !authorized(req.headers.authorization)) return reply.code(401).send(UNAUTHENTICATED);
  };

  app.get('/__sandbox/ledger', { onRequest: adminGuard }, async () => ({ requests: entries(), received: receivedCount }));

  app.put('/__sandbox/faults', { onRequest: adminGuard }, async (req, reply) => {
    const parsed = jsonBody(req);
    if (!parsed.ok) return reply.code(400).send(failure(400, parsed.reason));
    try {
      return { faults: applyFaults(parsed.value as FaultConfig) };
    } catch (err) {
      if (!isCashoutError(err, 'config_invalid')) throw err;
      const issues = (err.context.issues ?? []) as { path: string; message: string }[];
      const errors: FieldErrors = {};
      for (const i of issues) errors[i.path || 'faults'] = i.message;
      return reply.code(400).send(failure(400, err.message, errors));
    }
  });

  app.post('/__sandbox/reset', { onRequest: adminGuard }, async () => {
    ledger = [];
    nextId = 1;
    receivedCount = 0;
    applyFaults(faults);
    return { ok: true };
  });

  await app.listen({ host, port: opts.port ?? 0 });
  const addr = app.server.address() as AddressInfo;
  const url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;

  let closed: Promise<void> | undefined;
  return {
    url,
    ledger: () => entries(),
    setFaults: (f) => {
      applyFaults(f);
    },
    received: () => receivedCount,
    close: () => {
      closed ??= (async () => {
        closing = true;
        closeSignal.abort();
        for (const s of held) s.destroy();
        held.clear();
        await app.close();
      })();
      return closed;
    },
  };
}
