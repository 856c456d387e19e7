/**
 * The HTTP API (`/api/v1`), for systems that produce payout files, served by the dashboard's
 * Fastify app as a plugin. Every route but the OpenAPI document needs an API key as a bearer
 * token (./api-keys.ts); the key's name is the person the ledger records (`Actor.user`), so the
 * API has the dashboard's guards: approval by another person than the importer, the payout
 * register, the ledger's lifecycle (src/ledger/actions.ts is the only way in). Uploads go
 * through `importBatch`, with the options of `cashout import`. The dashboard's session and
 * same-origin checks do not apply here (no cookie is read); its Host rule does.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { z } from 'zod';
import { isBatchId } from '../batch-id.js';
import { importBatch, type ImportDeps } from '../batch/import-batch.js';
import { CashoutError, isCashoutError } from '../errors.js';
import { actorText, approveBatch, cancelBatch, resolveRequest, retryRequest, type Actor } from '../ledger/actions.js';
import type { BatchRecord, Ledger } from '../ledger/index.js';
import { formatPiasters } from '../money.js';
import type { SubmitJobData } from '../queue/queues.js';
import { writeReconciliation } from '../results/write-reconciliation.js';
import { ROW_STATUSES, writeReport, type RowStatus } from '../results/write-report.js';
import { batchView } from '../results/batch-view.js';
import { listDeliveries } from '../notify/deliveries.js';
import { apiKeyStore, type ApiKeyRecord } from './api-keys.js';
import { authLimiter } from './auth-limit.js';
import { freshSummary, importProblems, resultRows } from './batch-report.js';
import { sendError } from './http-errors.js';
import { OPENAPI_DOCUMENT } from './openapi.js';
import { receiveUpload, uploadFileName } from './receive-upload.js';
import { uploadMessage } from '../uploads/upload-message.js';
import { isRedisConnectionError, redisErrorText } from '../queue/connection.js';

/** Where the API's routes start; the dashboard skips its session checks for routes under it. */
export const API_ROUTE_PREFIX = '/api/v1';

/** Files of a batch the API serves. */
export const API_FILES = ['results.csv', 'rejected-rows.csv', 'summary.json', 'reconciliation.csv'] as const;

/** Most problems an upload's answer lists (the rest are in rejected-rows.csv and results.csv). */
const PROBLEMS_LISTED = 1_000;

/** What the API needs besides the dashboard's handles. */
export interface ApiDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<SubmitJobData>;
  readonly redis: Redis;
  readonly prefix: string;
  readonly log: Logger;
  readonly csvBom?: boolean;
  /**
   * What an upload's import needs (`importDeps` of src/commands/context.ts: service address, rules,
   * limits, policy); undefined when the service is not configured, and uploads are then refused.
   */
  readonly import: ImportDeps | undefined;
  /** Largest upload, in bytes (CASHOUT_MAX_FILE_BYTES). */
  readonly maxFileBytes: number;
}

const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const UploadQuery = z
  .object({
    file_name: z.string().max(200).optional(),
    partial: flag.optional(),
    force: flag.optional(),
    pay_again: z
      .string()
      .trim()
      .min(1, 'pay_again needs a reason: say why these payees are paid again')
      .max(500)
      .optional(),
    strict_duplicates: flag.optional(),
    delimiter: z.enum([',', ';', '\t', '|', 'comma', 'semicolon', 'tab', 'pipe']).optional(),
    encoding: z.string().min(1).max(40).optional(),
    label: z.string().trim().max(100).optional(),
  })
  .strict();
const RowsQuery = z
  .object({
    status: z.enum(ROW_STATUSES as [RowStatus, ...RowStatus[]]).optional(),
    page: z.coerce.number().int().min(1).default(1),
    per_page: z.coerce.number().int().min(1).max(1_000).default(100),
  })
  .strict();
const labelField = z.string().trim().max(100).optional();
const noteField = z.string().trim().min(1).max(1_000);
const NoteBody = z.object({ note: noteField, label: labelField }).strict();
const ResolveBody = z
  .object({ finding: z.enum(['created', 'not_created']), note: noteField, label: labelField })
  .strict();
const ActorBody = z.object({ label: z.string().trim().max(100).optional() }).strict();
const DELIMITERS: Record<string, string> = { comma: ',', semicolon: ';', tab: '\t', pipe: '|' };

type Authed = FastifyRequest & { apiKey?: ApiKeyRecord };

/** Throws `CashoutError('usage')` naming the first problem of `value` against `schema`. */
function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const r = schema.safeParse(value ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const where = issue.path.length > 0 ? `${what} ${issue.path.join('.')}` : what;
  throw new CashoutError('usage', `${where}: ${issue.message}`);
}

/** The API as a Fastify plugin; register it with `{ prefix: API_ROUTE_PREFIX }`. */
export function httpApi(deps: ApiDeps): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const keys = apiKeyStore(deps.redis, deps.prefix);
    const limiter = authLimiter(deps.redis, deps.prefix);
    const openRoutes = new Set([`${API_ROUTE_PREFIX}/openapi.json`]);

    // Raw payout files: handed over as a stream, written to disk by the upload route.
    app.addContentTypeParser(['text/csv', 'application/octet-stream'], (_req, payload, done) => done(null, payload));

    app.addHook('onRequest', async (req, reply) => {
      if (openRoutes.has(req.routeOptions.url ?? '')) return undefined;
      const wait = await limiter.waitSeconds(req.ip);
      if (wait > 0) {
        reply.header('retry-after', String(wait));
        const text = 'too many requests with a wrong API key from this address; wait';
        return sendError(reply, 'too_many_failures', text);
      }
      const auth = req.headers.authorization ?? '';
      const m = /^Bearer ([^\s]+)$/.exec(auth);
      const key = m ? await keys.verify(m[1]!) : undefined;
      if (!key) {
        await limiter.failed(req.ip);
        const route = req.routeOptions.url;
        deps.log.warn({ address: req.ip, route }, 'API request refused: missing or wrong API key');
        reply.header('www-authenticate', 'Bearer');
        const text = 'send an API key as "Authorization: Bearer <key>" (cashout api-key create)';
        return sendError(reply, 'unauthorized', text);
      }
      (req as Authed).apiKey = key;
      return undefined;
    });

    app.setErrorHandler(async (err, req, reply) => {
      if (isCashoutError(err)) {
        const user = (req as Authed).apiKey?.name;
        const route = req.routeOptions.url;
        deps.log.warn({ user, route, code: err.code, reason: err.message }, 'API request refused');
        return sendError(reply, err.code, err.message);
      }
      const status = (err as { statusCode?: number }).statusCode;
      if (status !== undefined && status >= 400 && status < 500) {
        return sendError(reply, 'bad_request', (err as Error).message, status);
      }
      if (isRedisConnectionError(err)) {
        deps.log.error({ route: req.routeOptions.url, err: redisErrorText(err) }, 'API request failed: Redis');
        return sendError(
          reply,
          'redis_unreachable',
          'Redis is away or refuses the password of REDIS_URL; try again later',
        );
      }
      deps.log.error({ route: req.routeOptions.url, err: redisErrorText(err) }, 'API request failed');
      return sendError(reply, 'internal', 'internal error; the server log has the details');
    });

    const actorOf = (req: FastifyRequest, label?: string): Actor => {
      const key = (req as Authed).apiKey!;
      return { user: key.name, ...(label ? { label } : {}) };
    };
    const loadBatch = async (req: FastifyRequest): Promise<BatchRecord> => {
      const { id } = req.params as { id: string };
      const batch = isBatchId(id) ? await deps.ledger.getBatch(id) : undefined;
      if (!batch) throw new CashoutError('batch_not_found', `no batch ${JSON.stringify(id.slice(0, 40))}`);
      return batch;
    };
    const logAction = (req: FastifyRequest, action: string, batchId: string, extra: Record<string, unknown> = {}) => {
      const key = (req as Authed).apiKey!;
      deps.log.info({ user: key.name, keyId: key.id, action, batchId, ...extra }, `API ${action}`);
    };

    /** The batch as the API shows it: facts, counts and EGP totals per status, story, files. */
    const batchBody = async (batch: BatchRecord) => {
      // The report first: the files it writes (results.csv, summary.json) are then listed.
      const summary = await freshSummary(deps.ledger, batch, deps.csvBom);
      const view = await batchView(deps.ledger, batch);
      const files = view.files.filter((f) => (API_FILES as readonly string[]).includes(f));
      return {
        id: batch.id,
        state: view.state,
        fileName: batch.fileName,
        sha256: batch.sha256,
        createdAt: batch.createdAt,
        importedBy: batch.importedBy,
        ...(batch.approvedBy ? { approvedBy: batch.approvedBy } : {}),
        ...(batch.expiresAt ? { approvalExpiresAt: batch.expiresAt } : {}),
        ...(batch.refusalReason ? { refusalReason: batch.refusalReason } : {}),
        ...(batch.follows ? { follows: batch.follows } : {}),
        ...(batch.supersededBy ? { supersededBy: batch.supersededBy } : {}),
        ...(batch.finishedAt ? { finishedAt: batch.finishedAt } : {}),
        rows: batch.rows,
        validRows: batch.validRows,
        invalidRows: batch.invalidRows,
        total: formatPiasters(batch.totalPiasters),
        requests: { all: view.requestsAll, done: view.requestsDone },
        byStatus: summary.byStatus,
        byChannel: summary.byChannel,
        story: summary.approvals,
        resolutions: summary.resolutions,
        files: [...new Set([...files, 'reconciliation.csv'])],
      };
    };

    app.get('/openapi.json', async (_req, reply) => reply.header('cache-control', 'no-store').send(OPENAPI_DOCUMENT));

    app.post('/batches', async (req, reply) => {
      const q = parseInput(UploadQuery, req.query, 'query');
      const body = req.body as Readable | undefined;
      if (!body || typeof (body as Readable).pipe !== 'function') {
        throw new CashoutError('usage', 'send the payout file as the request body with Content-Type: text/csv');
      }
      const declared = Number(req.headers['content-length'] ?? 0);
      if (declared > deps.maxFileBytes) {
        const limit = deps.maxFileBytes;
        const text = `the file is larger than ${limit} bytes (CASHOUT_MAX_FILE_BYTES); nothing was imported`;
        throw new CashoutError('file_too_large', text);
      }
      const importDeps = deps.import;
      if (!importDeps) {
        const text = 'uploads need the service address: set CASHOUT_API_BASE_URL where the dashboard runs';
        throw new CashoutError('config_invalid', text);
      }
      const name = uploadFileName(q.file_name);
      const file = await receiveUpload(body, name, deps.maxFileBytes);
      const actor = actorOf(req, q.label);
      try {
        const result = await importBatch(importDeps, file.path, {
          ...(q.partial ? { partial: true } : {}),
          ...(q.force ? { force: true } : {}),
          ...(q.pay_again ? { payAgain: { note: q.pay_again } } : {}),
          ...(q.strict_duplicates ? { strictDuplicates: true } : {}),
          ...(q.delimiter ? { delimiter: DELIMITERS[q.delimiter] ?? q.delimiter } : {}),
          ...(q.encoding ? { encoding: q.encoding } : {}),
          importedBy: actorText(actor),
          importedByUser: actor.user,
        }).catch((err: unknown) => {
          // In the API's words: the file by the name it was sent as, options as query parameters.
          if (!isCashoutError(err)) throw err;
          throw new CashoutError(err.code, uploadMessage(err.message, [file.path], name, 'api'), err.context);
        });
        const { state, rows, invalidRows } = result;
        logAction(req, 'upload', result.batchId, { state, rows, invalidRows });
        const batch = (await deps.ledger.getBatch(result.batchId))!;
        const { problems, more } = await importProblems(batch, PROBLEMS_LISTED);
        return reply
          .code(201)
          .header('location', `${API_ROUTE_PREFIX}/batches/${result.batchId}`)
          .header('cache-control', 'no-store')
          .send({
            batchId: result.batchId,
            state: result.state,
            ...(result.refusalReason ? { refusalReason: result.refusalReason } : {}),
            rows: result.rows,
            validRows: result.validRows,
            invalidRows: result.invalidRows,
            duplicateRows: result.duplicateRows,
            warnedRows: result.warnedRows,
            requests: result.requests,
            total: formatPiasters(result.totalPiasters),
            problems,
            problemsTruncated: more,
          });
      } finally {
        await file.remove();
      }
    });

    app.get('/batches/:id', async (req, reply) =>
      reply.header('cache-control', 'no-store').send(await batchBody(await loadBatch(req))),
    );

    app.get('/batches/:id/rows', async (req, reply) => {
      const q = parseInput(RowsQuery, req.query, 'query');
      const batch = await loadBatch(req);
      await freshSummary(deps.ledger, batch, deps.csvBom);
      const { rows, matching } = await resultRows(batch, q.status, q.page, q.per_page);
      return reply.header('cache-control', 'no-store').send({
        batchId: batch.id,
        ...(q.status ? { status: q.status } : {}),
        page: q.page,
        perPage: q.per_page,
        matching,
        rows,
      });
    });

    app.get('/batches/:id/files/:name', async (req, reply) => {
      const { name } = req.params as { name: string };
      if (!(API_FILES as readonly string[]).includes(name)) {
        return sendError(reply, 'not_found', `no file ${JSON.stringify(name.slice(0, 40))}`);
      }
      const batch = await loadBatch(req);
      if (name === 'reconciliation.csv') {
        await writeReconciliation(deps.ledger, batch.id, batch.reportDir, { bom: deps.csvBom });
      } else await freshSummary(deps.ledger, batch, deps.csvBom);
      const stream = createReadStream(join(batch.reportDir, name));
      try {
        await new Promise<void>((resolve, reject) => {
          stream.once('open', () => resolve());
          stream.once('error', reject);
        });
      } catch {
        return sendError(reply, 'not_found', `${name} is not written for this batch`);
      }
      logAction(req, 'download', batch.id, { file: name });
      return reply
        .type(name.endsWith('.csv') ? 'text/csv; charset=utf-8' : 'application/json')
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="${batch.id}-${name}"`)
        .send(stream);
    });

    app.get('/batches/:id/notifications', async (req, reply) => {
      const batch = await loadBatch(req);
      const deliveries = await listDeliveries(deps.redis, deps.prefix, batch.id);
      return reply.header('cache-control', 'no-store').send({ batchId: batch.id, deliveries });
    });

    app.post('/batches/:id/approve', async (req, reply) => {
      const body = parseInput(ActorBody, req.body, 'body');
      const batch = await loadBatch(req);
      const requests = await approveBatch(deps.ledger, deps.queue, batch.id, actorOf(req, body.label));
      logAction(req, 'approve', batch.id, { requests });
      return reply.send({ batchId: batch.id, state: 'queued', requests });
    });

    app.post('/batches/:id/cancel', async (req, reply) => {
      const body = parseInput(NoteBody, req.body, 'body');
      const batch = await loadBatch(req);
      await cancelBatch(deps.ledger, batch.id, actorOf(req, body.label), body.note);
      await writeReport(deps.ledger, batch.id, { bom: deps.csvBom });
      logAction(req, 'cancel', batch.id);
      return reply.send({ batchId: batch.id, state: 'cancelled' });
    });

    const seqOf = (req: FastifyRequest): number => {
      const seq = Number((req.params as { seq: string }).seq);
      if (!Number.isInteger(seq) || seq < 1) {
        throw new CashoutError('request_not_found', 'a request number is a whole number from 1');
      }
      return seq;
    };

    app.post('/batches/:id/requests/:seq/resolve', async (req, reply) => {
      const body = parseInput(ResolveBody, req.body, 'body');
      const batch = await loadBatch(req);
      const seq = seqOf(req);
      await resolveRequest(deps.ledger, batch.id, seq, body.finding, actorOf(req, body.label), body.note);
      await writeReport(deps.ledger, batch.id, { bom: deps.csvBom });
      logAction(req, 'resolve', batch.id, { seq, finding: body.finding });
      const request = await deps.ledger.getRequest(batch.id, seq, { body: false });
      return reply.send({ batchId: batch.id, request: seq, state: request?.state, finding: body.finding });
    });

    app.post('/batches/:id/requests/:seq/retry', async (req, reply) => {
      const body = parseInput(ActorBody, req.body, 'body');
      const batch = await loadBatch(req);
      const seq = seqOf(req);
      await retryRequest(deps.ledger, deps.queue, batch.id, seq, actorOf(req, body.label), {
        serviceUrl: deps.import?.serviceUrl,
      });
      logAction(req, 'retry', batch.id, { seq });
      return reply.code(202).send({ batchId: batch.id, request: seq, queued: true });
    });
  };
}
