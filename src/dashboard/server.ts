/**
 * The dashboard: a Batches page and a page per batch (counts, totals, requests and their ledger
 * states, downloads), the approve / cancel / resolve / send-again actions, and Bull Board for the
 * queues — all behind a login. Every page and API call without a session gets a redirect to the
 * login (pages) or 401 (everything else). Every state-changing request must come from the
 * dashboard's own origin (Origin/Referer check), and the dashboard's own forms also carry a
 * per-session CSRF token. Security headers on every answer (helmet). Only the configured Host names
 * are answered (./host-guard.ts), and failed logins are limited per client address and user name
 * (./login-limit.ts). Bull Board allows only what its allow-list names (./bull-board-policy.ts).
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import { Eta } from 'eta';
import { PACKAGE_ROOT } from '../paths.js';
import { isBatchId } from '../batch-id.js';
import { CashoutError, isCashoutError } from '../errors.js';
import { CONFIG_DEFAULTS } from '../config.js';
import { formatPiasters } from '../money.js';
import { writeReport } from '../results/write-report.js';
import { writeReconciliation, requestsInState } from '../results/write-reconciliation.js';
import { approveBatch, cancelBatch, resolveRequest, retryRequest } from '../ledger/actions.js';
import { REQUEST_STATES } from '../ledger/lifecycle.js';
import { groupDigits } from '../money.js';
import { registerBullBoard } from './bull-board.js';
import { batchView, listBatchViews, DOWNLOADABLE, type Downloadable } from '../results/batch-view.js';
import { csrfMatches, sessionStore, SESSION_TTL_SECONDS, type Session } from './sessions.js';
import { verifyPassword } from './users.js';
import { hostAllowed, MISDIRECTED_TEXT, parseHost, type HostEntry } from '../host-guard.js';
import { KNOWN_BROWSER_COOKIE, KNOWN_BROWSER_TTL_SECONDS, loginLimiter } from './login-limit.js';
import { chooseLanguage, directionOf, isLanguage, LANG_COOKIE, translator, type Translate } from './i18n/index.js';
import { timeFormatter } from './format-time.js';
import { batchReview } from './batch-review.js';
import { requestItems } from './request-items.js';
import { batchLive } from './batch-live.js';
import { uploadRoutes } from './upload-routes.js';
import { errorFlash, type DashboardDeps, type Flash, type PageRenderer } from './page-kit.js';

export type { DashboardDeps } from './page-kit.js';
import { API_ROUTE_PREFIX, httpApi } from '../api/routes.js';
import { retrySends, STALE_STAGING_MS } from '../ledger/lifecycle.js';

/** Name of the session cookie. */
export const SESSION_COOKIE = 'cashout_session';

const TEMPLATES = join(PACKAGE_ROOT, 'src', 'dashboard', 'templates');
/** Routes served without a session, by the route pattern matched (never the raw path). */
const PUBLIC = new Set(['/login', '/static/dashboard.css', '/static/dashboard.js', '/lang/:lang']);

/** Parses the extra Host names; throws `config_invalid` naming a bad entry. */
function hostEntries(entries: readonly string[]): HostEntry[] {
  return entries.map((entry) => {
    const parsed = parseHost(entry);
    if (parsed) return parsed;
    throw new CashoutError('config_invalid', `CASHOUT_DASHBOARD_HOSTS: "${entry}" is not a host name`, {
      key: 'CASHOUT_DASHBOARD_HOSTS',
    });
  });
}

/** Builds the dashboard app (not listening yet). */
export async function buildDashboard(deps: DashboardDeps): Promise<FastifyInstance> {
  const hosts = hostEntries(deps.allowedHosts ?? []);
  const app = Fastify({ logger: false, trustProxy: false });
  // First of all hooks: a request for another Host name reaches no route (DNS rebinding).
  app.addHook('onRequest', async (req, reply) => {
    if (hostAllowed(req.headers.host, req.socket.localPort, hosts)) return undefined;
    return reply.code(421).type('text/plain; charset=utf-8').header('cache-control', 'no-store').send(MISDIRECTED_TEXT);
  });
  const eta = new Eta({ views: TEMPLATES, autoEscape: true, cache: true });
  const sessions = sessionStore(deps.redis, deps.prefix);
  const flashKey = (id: string) => `${deps.prefix}:dashboard:flash:${id}`;

  await app.register(fastifyHelmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'", "'unsafe-inline'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    hsts: deps.secureCookies,
    // Browsers send "Origin: null" on form posts under no-referrer; same-origin keeps the origin
    // check working and still tells other sites nothing.
    referrerPolicy: { policy: 'same-origin' },
  });
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody);
  const logins = loginLimiter(deps.redis, deps.prefix);

  const money = (amount: string) => groupDigits(amount);
  const timeZone = deps.timeZone ?? CONFIG_DEFAULTS.timezone;
  const languageOf = (req: FastifyRequest) => chooseLanguage(req.cookies[LANG_COOKIE], req.headers['accept-language']);
  const translate = (req: FastifyRequest): Translate => translator(languageOf(req));
  const page: PageRenderer = (req, reply, view, title, data, session, flash) => {
    const lang = languageOf(req);
    const t = translator(lang);
    const time = timeFormatter(timeZone, lang);
    const common = { money, piasters: formatPiasters, csrf: session?.csrf ?? '', t, time, lang, timeZone };
    const body = eta.render(view, { ...data, ...common });
    const shown = flash && { kind: flash.kind, text: flash.key ? t(flash.key, flash.params) : (flash.text ?? '') };
    const layout = { ...common, title, body, user: session?.user, flash: shown, dir: directionOf(lang), url: req.url };
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(eta.render('layout', layout));
  };

  const sessionOf = (req: FastifyRequest) => (req as FastifyRequest & { session?: Session }).session;
  const setFlash = async (s: Session | undefined, flash: Flash) => {
    if (s) await deps.redis.set(flashKey(s.id), JSON.stringify(flash), 'EX', 60);
  };
  const takeFlash = async (s: Session | undefined): Promise<Flash | undefined> => {
    if (!s) return undefined;
    const raw = await deps.redis.getdel(flashKey(s.id));
    return raw ? (JSON.parse(raw) as Flash) : undefined;
  };

  // Same-origin check for every state-changing request (the session cookie is also SameSite=Strict).
  const sameOrigin = (req: FastifyRequest): boolean => {
    const host = req.headers.host;
    if (!host) return false;
    const allowed = [`http://${host}`, `https://${host}`];
    const origin = req.headers.origin;
    if (typeof origin === 'string' && origin !== 'null') return allowed.includes(origin);
    const referer = req.headers.referer;
    if (typeof referer === 'string') return allowed.some((o) => referer === o || referer.startsWith(`${o}/`));
    return false;
  };

  app.addHook('onRequest', async (req, reply) => {
    const route = req.routeOptions.url;
    // API routes take no cookie: their bearer key is checked by the API's own hook (src/api/routes.ts).
    if (deps.api && route?.startsWith(`${API_ROUTE_PREFIX}/`)) return undefined;
    const unsafe = !['GET', 'HEAD', 'OPTIONS'].includes(req.method);
    if (unsafe && !sameOrigin(req)) return reply.code(403).send({ error: 'cross-site request refused' });
    if (deps.users === 'none') {
      (req as FastifyRequest & { session?: Session }).session = { id: 'no-auth', user: 'local', csrf: 'no-auth' };
      return undefined;
    }
    if (route !== undefined && PUBLIC.has(route)) return undefined;
    const session = await sessions.get(req.cookies[SESSION_COOKIE]);
    if (!session) {
      const wantsHtml = req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');
      if (wantsHtml) return reply.redirect(`/login?next=${encodeURIComponent(req.url)}`, 302);
      return reply.code(401).send({ error: 'log in first' });
    }
    (req as FastifyRequest & { session?: Session }).session = session;
    return undefined;
  });

  // Our own forms carry the session's CSRF token.
  const requireCsrf = async (req: FastifyRequest, reply: FastifyReply) => {
    const s = sessionOf(req);
    const token = (req.body as Record<string, unknown> | undefined)?._csrf;
    if (!s || (deps.users !== 'none' && !csrfMatches(s, token)))
      return reply.code(403).send({ error: 'missing or wrong form token; reload the page' });
    return undefined;
  };

  app.get('/static/dashboard.css', async (_req, reply) =>
    reply.type('text/css').send(createReadStream(join(TEMPLATES, 'dashboard.css'))),
  );
  app.get('/static/dashboard.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').send(createReadStream(join(TEMPLATES, 'dashboard.js'))),
  );

  // The language switch: keeps the choice in a cookie (a preference, not a state change), then goes back.
  app.get('/lang/:lang', async (req, reply) => {
    const { lang } = req.params as { lang: string };
    const next = String((req.query as Record<string, unknown>).next ?? '/batches');
    if (isLanguage(lang)) {
      const cookie = {
        path: '/',
        sameSite: 'strict' as const,
        httpOnly: true,
        maxAge: 365 * 86_400,
        secure: deps.secureCookies,
      };
      reply.setCookie(LANG_COOKIE, lang, cookie);
    }
    return reply.redirect(next.startsWith('/') && !next.startsWith('//') ? next : '/batches', 303);
  });

  app.get('/login', async (req, reply) => {
    const next = String((req.query as Record<string, unknown>).next ?? '/batches');
    const t = translate(req);
    return page(req, reply, 'login', t('login.title'), {
      next: next.startsWith('/') && !next.startsWith('//') ? next : '/batches',
    });
  });

  app.post('/login', async (req, reply) => {
    if (deps.users === 'none') return reply.redirect('/batches', 303);
    const body = (req.body ?? {}) as Record<string, unknown>;
    const user = String(body.user ?? '');
    const password = String(body.password ?? '');
    const next = String(body.next ?? '/batches');
    const knownBrowser = req.cookies[KNOWN_BROWSER_COOKIE];
    const ticket = await logins.begin({ address: req.ip, user, knownBrowser });
    if (ticket.retryAfterSeconds > 0) {
      deps.log.warn({ user: user.slice(0, 64), address: req.ip }, 'dashboard login refused: too many failed attempts');
      const minutes = Math.ceil(ticket.retryAfterSeconds / 60);
      reply.code(429).header('retry-after', String(ticket.retryAfterSeconds));
      const flash: Flash = { kind: 'error', key: 'login.tooMany', params: { minutes } };
      return page(req, reply, 'login', translate(req)('login.title'), { next }, undefined, flash);
    }
    if (!(await verifyPassword(deps.users, user, password))) {
      deps.log.warn({ user: user.slice(0, 64) }, 'dashboard login refused');
      reply.code(401);
      return page(req, reply, 'login', translate(req)('login.title'), { next }, undefined, {
        kind: 'error',
        key: 'login.wrong',
      });
    }
    await logins.succeeded(ticket);
    const session = await sessions.create(user);
    deps.log.info({ user }, 'dashboard login');
    reply.setCookie(SESSION_COOKIE, session.id, {
      path: '/',
      httpOnly: true,
      sameSite: 'strict',
      secure: deps.secureCookies,
      maxAge: SESSION_TTL_SECONDS,
    });
    reply.setCookie(KNOWN_BROWSER_COOKIE, await logins.rememberBrowser(user, knownBrowser), {
      path: '/login',
      httpOnly: true,
      sameSite: 'strict',
      secure: deps.secureCookies,
      maxAge: KNOWN_BROWSER_TTL_SECONDS,
    });
    return reply.redirect(next.startsWith('/') && !next.startsWith('//') ? next : '/batches', 303);
  });

  app.post('/logout', { preHandler: requireCsrf }, async (req, reply) => {
    const s = sessionOf(req);
    if (s && deps.users !== 'none') await sessions.destroy(s.id);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return reply.redirect('/login', 303);
  });

  app.get('/', async (_req, reply) => reply.redirect('/batches', 302));

  app.get('/batches', async (req, reply) => {
    const s = sessionOf(req);
    const views = await listBatchViews(deps.ledger);
    return page(req, reply, 'batches', translate(req)('batches.title'), { batches: views }, s, await takeFlash(s));
  });

  const loadBatch = async (id: string, reply: FastifyReply) => {
    const batch = isBatchId(id) ? await deps.ledger.getBatch(id) : undefined;
    if (!batch) {
      reply.code(404).send({ error: `no batch ${id}` });
      return undefined;
    }
    return batch;
  };

  app.get('/batches/:id', async (req, reply) => {
    const { id } = req.params as { id: string };
    const batch = await loadBatch(id, reply);
    if (!batch) return reply;
    const s = sessionOf(req);
    const requests = await requestsInState(deps.ledger, id, REQUEST_STATES, { body: false });
    // The payments of each unknown request, for the person who looks them up (numbers masked):
    // only these requests' bodies are read.
    const itemsOf: Record<number, ReturnType<typeof requestItems>> = {};
    const unknown = requests.filter((r) => r.state === 'unknown');
    const bodies = await Promise.all(unknown.map((r) => deps.ledger.getRequest(id, r.seq)));
    for (const full of bodies) if (full) itemsOf[full.seq] = requestItems(full);
    const view = await batchView(deps.ledger, batch);
    const pageNo = Number((req.query as Record<string, unknown>).page ?? 1);
    const review = view.state === 'awaiting_approval' ? await batchReview(deps.ledger, batch, pageNo) : undefined;
    // Retry is offered only where the ledger would queue the request again (actions.ts retryRequest).
    const canRetry = retrySends(batch);
    // A batch still being imported: when the recovery sweep refuses it if its import stopped.
    const stagingEnds =
      batch.state === 'staging' ? new Date(Date.parse(batch.createdAt) + STALE_STAGING_MS).toISOString() : undefined;
    const data = { view, requests, itemsOf, review, canRetry, stagingEnds };
    return page(req, reply, 'batch', translate(req)('batch.title', { id }), data, s, await takeFlash(s));
  });

  // What the batch page polls while the batch is being sent: state, counts and totals.
  app.get('/batches/:id/live.json', async (req, reply) => {
    const { id } = req.params as { id: string };
    const batch = await loadBatch(id, reply);
    if (!batch) return reply;
    const live = await batchLive(deps.ledger, await batchView(deps.ledger, batch), translate(req));
    return reply.header('cache-control', 'no-store').send(live);
  });

  app.get('/batches/:id/files/:name', async (req, reply) => {
    const { id, name } = req.params as { id: string; name: string };
    if (!(DOWNLOADABLE as readonly string[]).includes(name)) return reply.code(404).send({ error: 'no such file' });
    const batch = await loadBatch(id, reply);
    if (!batch) return reply;
    const csv = { bom: deps.csvBom };
    if (name === 'reconciliation.csv') await writeReconciliation(deps.ledger, id, batch.reportDir, csv);
    const file = join(batch.reportDir, name as Downloadable);
    const type = name.endsWith('.csv')
      ? 'text/csv; charset=utf-8'
      : name.endsWith('.html')
        ? 'text/html; charset=utf-8'
        : 'application/json';
    const stream = createReadStream(file);
    try {
      await new Promise<void>((resolve, reject) => {
        stream.once('open', () => resolve());
        stream.once('error', reject);
      });
    } catch {
      return reply.code(404).send({ error: `${name} is not written for this batch` });
    }
    deps.log.info({ user: sessionOf(req)?.user, batchId: id, file: name }, 'report downloaded');
    return reply
      .type(type)
      .header('cache-control', 'no-store')
      .header('content-disposition', `${name.endsWith('.html') ? 'inline' : 'attachment'}; filename="${id}-${name}"`)
      .send(stream);
  });

  const action = (name: string, run: (req: FastifyRequest, s: Session, id: string) => Promise<Flash>) =>
    app.post(`/batches/:id/${name}`, { preHandler: requireCsrf }, async (req, reply) => {
      const { id } = req.params as { id: string };
      const s = sessionOf(req)!;
      if (!(await loadBatch(id, reply))) return reply;
      try {
        const flash = await run(req, s, id);
        deps.log.info({ user: s.user, action: name, batchId: id }, `dashboard action: ${name}`);
        await setFlash(s, flash);
      } catch (err) {
        if (!isCashoutError(err)) throw err;
        deps.log.warn({ user: s.user, action: name, batchId: id, reason: err.message }, 'dashboard action refused');
        await setFlash(s, errorFlash(err));
      }
      return reply.redirect(`/batches/${id}`, 303);
    });

  // The checker confirms having seen the rows and the total: the total posted must be the batch's.
  action('approve', async (req, s, id) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (body.confirm !== 'yes') throw new CashoutError('usage', 'not confirmed', { key: 'batch.approveUnconfirmed' });
    const batch = await deps.ledger.getBatch(id);
    if (!batch || String(body.total ?? '') !== formatPiasters(batch.totalPiasters)) {
      throw new CashoutError('batch_changed', 'the batch is not what the page showed', { key: 'batch.totalChanged' });
    }
    const n = await approveBatch(deps.ledger, deps.queue, id, { user: s.user });
    return { kind: 'ok', key: 'batch.approved', params: { user: s.user, n } };
  });
  action('cancel', async (req, s, id) => {
    const note = String((req.body as Record<string, unknown>).note ?? '').trim() || 'cancelled from the dashboard';
    await cancelBatch(deps.ledger, id, { user: s.user }, note);
    await writeReport(deps.ledger, id, { bom: deps.csvBom });
    return { kind: 'ok', key: 'batch.cancelled', params: { user: s.user } };
  });

  app.post('/batches/:id/requests/:seq/:verb', { preHandler: requireCsrf }, async (req, reply) => {
    const { id, seq: seqText, verb } = req.params as { id: string; seq: string; verb: string };
    const s = sessionOf(req)!;
    const seq = Number(seqText);
    if (!(await loadBatch(id, reply))) return reply;
    if (!Number.isInteger(seq) || seq < 1 || (verb !== 'resolve' && verb !== 'retry'))
      return reply.code(404).send({ error: 'no such action' });
    try {
      if (verb === 'resolve') {
        const body = req.body as Record<string, unknown>;
        const finding =
          body.finding === 'created' ? 'created' : body.finding === 'not_created' ? 'not_created' : undefined;
        const note = String(body.note ?? '').trim();
        if (!finding || note === '')
          throw new CashoutError('usage', 'choose a finding and write a note', { key: 'request.needFinding' });
        await resolveRequest(deps.ledger, id, seq, finding, { user: s.user }, note);
        await writeReport(deps.ledger, id, { bom: deps.csvBom });
        deps.log.info({ user: s.user, action: 'resolve', batchId: id, seq, finding }, 'reconciliation recorded');
        const shown = translate(req)(finding === 'created' ? 'finding.created' : 'finding.not_created');
        await setFlash(s, { kind: 'ok', key: 'request.recorded', params: { seq, finding: shown, user: s.user } });
      } else {
        await retryRequest(
          deps.ledger,
          deps.queue,
          id,
          seq,
          { user: s.user },
          {
            serviceUrl: (deps.imports ?? deps.api?.import)?.serviceUrl,
          },
        );
        deps.log.info({ user: s.user, action: 'retry', batchId: id, seq }, 'request queued again');
        await setFlash(s, { kind: 'ok', key: 'request.queued', params: { seq } });
      }
    } catch (err) {
      if (!isCashoutError(err)) throw err;
      await setFlash(s, errorFlash(err));
    }
    return reply.redirect(`/batches/${id}`, 303);
  });

  if (deps.api) await app.register(httpApi({ ...deps, ...deps.api }), { prefix: API_ROUTE_PREFIX });

  await app.register(uploadRoutes({ deps, page, translate, sessionOf, setFlash, takeFlash }));

  if (deps.metrics) {
    const metrics = deps.metrics;
    app.get('/metrics', async (_req, reply) => reply.type(metrics.contentType).send(await metrics.render()));
  }

  // No route: a read gets 404, anything else is refused like every action not allowed.
  app.setNotFoundHandler(async (req, reply) =>
    ['GET', 'HEAD'].includes(req.method)
      ? reply.code(404).send({ error: 'not found' })
      : reply.code(403).send({ error: 'no such action' }),
  );
  await registerBullBoard(app, [deps.queue, ...(deps.otherQueues ?? [])]);
  return app;
}
