/**
 * Local sandbox standing in for the payment service's staging environment, for the whole interface
 * document: the cashout endpoint (`POST /api/v1/merchant/withdrawal`, interface doc §2.4, §2.5),
 * the card charge endpoint (`POST /api/v1/charge/card`, §2.1-2.3, §5.2; `./charge-routes.ts`) and
 * the OTP dialog's script with its dialog (§4, §6.1; `./otp-routes.ts`). Both POST endpoints check
 * the bearer token (§5.1), validate like the service and answer failures in the §7 layout; it
 * records what they create in memory, and can inject faults (`./faults.ts`). What the document does
 * not show is answered from one labelled table of assumptions (`./assumptions.ts`). Test-only
 * admin endpoints under `/__sandbox/` expose what was created and change the faults at run time.
 */
import { randomBytes, timingSafeEqual, randomInt } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { WITHDRAWAL_PATH } from '../contract/withdrawal-api.js';
import type { WithdrawalRequestBody } from '../contract/withdrawal-api.js';
import type { BankList } from '../contract/supported-banks.js';
import { CashoutError, isCashoutError } from '../errors.js';
import { CONFIG_DEFAULTS, SANDBOX_FAULT_DEFAULTS } from '../config.js';
import { mulberry32, parseFaultConfig, pickFault, pickLatency } from './faults.js';
import type { FaultConfig, FaultKind } from './faults.js';
import { validateWithdrawalBody } from './item-rules.js';
import { failureBody as failure, invalidBody as invalid, readJsonBody as jsonBody } from './answers.js';
import type { FieldErrors } from './answers.js';
import { SANDBOX_ASSUMPTIONS } from './assumptions.js';
import { createChargeDesk, type SandboxCharge } from './charge-desk.js';
import { registerChargeRoutes, type EndpointKit } from './charge-routes.js';
import type { SandboxMerchant } from './charge-rules.js';
import { registerOtpRoutes } from './otp-routes.js';
import { DEFAULT_TEST_CARDS, type TestCard } from './test-cards.js';

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
  /**
   * Largest accepted request body in bytes; default `CONFIG_DEFAULTS.sandboxBodyLimitBytes` (1 MiB).
   * Larger bodies get HTTP 413 JSON.
   */
  bodyLimitBytes?: number;
  /** fastify `logger` option; default false. */
  logger?: false | object;
  /** Merchant code charge signatures are checked with (interface doc §5.2); default random (`Sandbox.merchant`). */
  merchantCode?: string;
  /** Hash key charge signatures are checked with (interface doc §5.2); default random (`Sandbox.merchant`). */
  hashKey?: string;
  /** The test cards (`./test-cards.ts`); default `DEFAULT_TEST_CARDS`. */
  testCards?: readonly TestCard[];
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
  /** The card charges recorded so far, oldest first (last four digits of the card only). */
  charges(): readonly SandboxCharge[];
  /** Number of `POST /api/v1/charge/card` requests received, whatever their outcome. */
  chargesReceived(): number;
  /** The merchant code and hash key charges must be signed with (interface doc §5.2). */
  readonly merchant: SandboxMerchant;
  /** The test cards in use. */
  readonly testCards: readonly TestCard[];
  /** Stops listening and destroys every open connection, hanging ones included. */
  close(): Promise<void>;
}

/** Success text of §2.5 (`status_description` and `message`). */
const CREATED_TEXT = SANDBOX_ASSUMPTIONS.withdrawalCreatedText.text;
const A = SANDBOX_ASSUMPTIONS;
const UNAUTHENTICATED = failure(A.unauthenticated.status, A.unauthenticated.text);

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
 * `POST /api/v1/charge/card` answers the same way (token, latency, faults, §7 layout), see
 * `./charge-routes.ts`; the OTP dialog's script, dialog and a demo page: `./otp-routes.ts`.
 * Admin endpoints (no token on loopback; the same bearer token on any other host):
 * `GET /__sandbox/ledger`, `GET /__sandbox/charges`, `PUT /__sandbox/faults`, `POST /__sandbox/reset`.
 * Throws `CashoutError('config_invalid')` on an empty token or a bad fault configuration.
 */
export async function startSandbox(opts: SandboxOptions): Promise<Sandbox> {
  if (typeof opts.token !== 'string' || opts.token === '' || /[\s\x00-\x1f\x7f]/.test(opts.token)) {
    throw new CashoutError(
      'config_invalid',
      'the sandbox token must be a non-empty string without spaces or control characters',
    );
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
    ledger.map(
      (c) =>
        (c.entry ??= deepFreeze({
          id: c.id,
          created_at: c.created_at,
          body: JSON.parse(c.raw.toString('utf8')) as WithdrawalRequestBody,
        })),
    );
  let receivedCount = 0;
  let chargeCount = 0;
  const merchant: SandboxMerchant = Object.freeze({
    code: opts.merchantCode ?? `SANDBOX${randomBytes(4).toString('hex').toUpperCase()}`,
    hashKey: opts.hashKey ?? randomBytes(16).toString('hex'),
  });
  const testCards = opts.testCards ?? DEFAULT_TEST_CARDS;
  const desk = createChargeDesk(testCards);
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
    bodyLimit: opts.bodyLimitBytes ?? CONFIG_DEFAULTS.sandboxBodyLimitBytes,
    forceCloseConnections: true,
  });

  // Bodies are read raw and parsed by the handlers, so that a non-JSON body or another content
  // type is answered in the service's own layout (§7) rather than fastify's.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.setErrorHandler((error: FastifyError, _req, reply) => {
    const status = error.statusCode ?? 500;
    if (status === 413) {
      const text = A.bodyTooLarge.text;
      return reply.code(413).send(failure(413, text, { body: text }));
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.code(422).send(invalid({ body: A.notJson.text }));
    }
    if (status >= 400 && status < 500) return reply.code(status).send(failure(status, error.message));
    reply.log.error({ err: error }, 'sandbox error');
    return reply.code(500).send(failure(500, A.serverError.text));
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send(failure(404, A.notFound.text)));

  /** An `onRequest` hook of a POST endpoint: notes the arrival, counts it, and checks the token (§5.1). */
  const arrive = (count: () => void) => async (req: FastifyRequest, reply: FastifyReply) => {
    arrivals.set(req, performance.now());
    count();
    if (!authorized(req.headers.authorization)) return reply.code(401).send(UNAUTHENTICATED);
  };

  /**
   * Starts a request's latency, counted from its arrival; the returned function resolves once it
   * has passed, true unless the sandbox is closing (then the caller holds the socket, which is
   * destroyed). The body is read and checked while it runs: a service's own work is part of its
   * latency, and requests arriving together are not delayed by each other's checks. What is
   * answered, and in which order the checks apply, is decided after it.
   */
  const startLatency = (req: FastifyRequest): (() => Promise<boolean>) => {
    const arrived = arrivals.get(req) ?? performance.now();
    const delay = Math.max(0, pickLatency(faults, auxRand) - (performance.now() - arrived));
    const signal = closeSignal.signal;
    const waited =
      delay > 0
        ? sleep(delay, undefined, { signal }).then(
            () => true,
            () => false,
          )
        : true;
    return async () => (await waited) && !closing;
  };

  /** Answers a fault that creates nothing (500, 503, 429); undefined for any other kind. */
  const nonCreatingFault = (kind: FaultKind | 'none', reply: FastifyReply): FastifyReply | undefined => {
    switch (kind) {
      case 'http500':
        return reply.code(500).send(failure(500, A.serverError.text));
      case 'http503':
        return reply.code(503).send(failure(503, A.unavailable.text));
      case 'http429':
        return reply
          .code(429)
          .header('retry-after', String(faults.retryAfterSeconds ?? SANDBOX_FAULT_DEFAULTS.retryAfterSeconds))
          .send(failure(429, A.tooManyAttempts.text));
      default:
        return undefined;
    }
  };

  /** Answers something just created: `status` with `body`, unless a creating fault spoils the answer. */
  const createdAnswer: EndpointKit['createdAnswer'] = (kind, req, reply, status, body) => {
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
        return reply.code(500).send(failure(500, A.serverError.text));
      default:
        return reply.code(status).send(body);
    }
  };

  app.post(WITHDRAWAL_PATH, { onRequest: arrive(() => (receivedCount += 1)) }, async (req, reply) => {
    const kind = pickFault(faults, faultRand);
    if (kind === 'hang') return hold(req, reply);
    const waited = startLatency(req);
    const parsed = jsonBody(req);
    const check = parsed.ok ? validateWithdrawalBody(parsed.value, banks) : undefined;
    if (!(await waited())) return hold(req, reply); // closing: the socket is destroyed

    const faulted = nonCreatingFault(kind, reply);
    if (faulted) return faulted;

    if (!parsed.ok) return reply.code(422).send(invalid({ body: parsed.reason }));
    if (!check?.ok) return reply.code(422).send(invalid(check?.errors ?? {}));

    // What was checked is exactly these bytes (the body is read from them when the ledger is read).
    // (A copy: the received buffer may share memory with others.)
    ledger.push({ id: nextId++, created_at: new Date().toISOString(), raw: Buffer.from(req.body as Buffer) });

    const created = { success: true, status_code: 200, status_description: CREATED_TEXT, message: CREATED_TEXT };
    return createdAnswer(kind, req, reply, 200, created);
  });

  const kit: EndpointKit = {
    arrive: arrive(() => (chargeCount += 1)),
    nextFault: () => pickFault(faults, faultRand),
    hold,
    startLatency,
    nonCreatingFault,
    createdAnswer,
  };
  registerChargeRoutes(app, kit, { desk, merchant });
  registerOtpRoutes(app, { desk });

  // Test-only admin endpoints.
  const adminGuard = async (req: FastifyRequest, reply: FastifyReply) => {
    if (adminNeedsToken && !authorized(req.headers.authorization)) return reply.code(401).send(UNAUTHENTICATED);
  };

  app.get('/__sandbox/ledger', { onRequest: adminGuard }, async () => ({
    requests: entries(),
    received: receivedCount,
  }));

  app.get('/__sandbox/charges', { onRequest: adminGuard }, async () => ({
    charges: desk.list(),
    received: chargeCount,
  }));

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
    desk.reset();
    chargeCount = 0;
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
    charges: () => desk.list(),
    chargesReceived: () => chargeCount,
    merchant,
    testCards,
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
