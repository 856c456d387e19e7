/**
 * Paying a file in the browser: upload (CSV or .xlsx, drag-and-drop or picker, streamed to a
 * private folder with the file size limit), a check in the background by the same reading and
 * row rules as the import (nothing touches the ledger), the result with totals and problems, the
 * invalid rows as `rejected-rows.csv`, and Send (or Submit for approval) behind a confirmation
 * that states the payees and the EGP total. Send imports that exact file through `importBatch`
 * as the logged-in user, so the payout register, the approval rules and every guard apply as for
 * `cashout import`. A file with invalid rows can be sent only as "the N valid rows" (the import's
 * `partial`), confirmed as such. Sending twice imports once: the ledger refuses the same content
 * (`batch_exists`), and the upload remembers its batch.
 */
import { createReadStream } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyMultipart from '@fastify/multipart';
import { importBatch, type ImportDeps } from '../batch/import-batch.js';
import { CONFIG_DEFAULTS } from '../config.js';
import { CashoutError, isCashoutError } from '../errors.js';
import { toPiasters } from '../money.js';
import { checkUpload, UPLOAD_REJECTED } from '../uploads/check-upload.js';
import { payableOf, safeFileName, uploadStore, type UploadRecord } from '../uploads/upload-store.js';
import { uploadMessage } from '../uploads/upload-message.js';
import { xlsxToCsv } from '../uploads/xlsx-to-csv.js';
import { templateCsv, templateXlsx } from '../uploads/payout-template.js';
import { csrfMatches, type Session } from './sessions.js';
import type { Flash, UploadRouteKit } from './page-kit.js';

/** Whether a batch of this total waits for approval (BatchPolicy: CASHOUT_REQUIRE_APPROVAL, _THRESHOLD). */
export function needsApproval(imports: ImportDeps, total: string): boolean {
  const policy = imports.policy ?? {};
  if (policy.requireApproval !== true) return false;
  return policy.approvalThreshold === undefined || toPiasters(total) > toPiasters(policy.approvalThreshold);
}

/** The upload routes, as a plugin (multipart is registered inside it only). */
export function uploadRoutes(kit: UploadRouteKit) {
  return async (app: FastifyInstance): Promise<void> => {
    const { deps, page, translate, sessionOf, setFlash, takeFlash } = kit;
    const imports = deps.imports ?? deps.api?.import;
    const maxBytes = imports?.limits?.maxBytes ?? deps.api?.maxFileBytes ?? CONFIG_DEFAULTS.maxFileBytes;
    const maxRows = imports?.limits?.maxRows ?? CONFIG_DEFAULTS.maxRows;
    const store = imports ? uploadStore(imports.reportsDir) : undefined;
    const limits = { fileSize: maxBytes, files: 1, fields: 4, fieldSize: 1024, parts: 6 };
    await app.register(fastifyMultipart, { limits });

    const csrfOk = (s: Session | undefined, token: unknown) =>
      s !== undefined && (deps.users === 'none' || csrfMatches(s, token));
    const uploadPage = async (req: FastifyRequest, reply: FastifyReply, flash?: Flash) => {
      const s = sessionOf(req);
      const data = { enabled: store !== undefined, maxBytes, maxRows };
      return page(req, reply, 'upload', translate(req)('upload.title'), data, s, flash ?? (await takeFlash(s)));
    };
    /** The upload `id` of the logged-in user, or an answer already sent. */
    const ownUpload = async (req: FastifyRequest, reply: FastifyReply): Promise<UploadRecord | undefined> => {
      const { id } = req.params as { id: string };
      const record = store ? await store.load(id) : undefined;
      const t = translate(req);
      if (!record) {
        reply.code(404).send({ error: t('upload.gone') });
        return undefined;
      }
      if (record.user !== sessionOf(req)?.user) {
        reply.code(403).send({ error: t('upload.notYours') });
        return undefined;
      }
      return record;
    };

    app.get('/upload', async (req, reply) => uploadPage(req, reply));

    app.get('/templates/:name', async (req, reply) => {
      const { name } = req.params as { name: string };
      if (name === 'payouts-template.csv') {
        const disposition = `attachment; filename="${name}"`;
        return reply.type('text/csv; charset=utf-8').header('content-disposition', disposition).send(templateCsv());
      }
      if (name === 'payouts-template.xlsx') {
        const type = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
        const disposition = `attachment; filename="${name}"`;
        return reply
          .type(type)
          .header('content-disposition', disposition)
          .send(await templateXlsx());
      }
      return reply.code(404).send({ error: 'no such template' });
    });

    app.post('/upload', async (req, reply) => {
      const s = sessionOf(req);
      if (!store || !imports) return uploadPage(req, reply.code(409), { kind: 'error', key: 'upload.off' });
      const part = await req.file().catch(() => undefined);
      if (!part) return uploadPage(req, reply.code(400), { kind: 'error', key: 'upload.noFile' });
      const token = (part.fields._csrf as { value?: unknown } | undefined)?.value;
      if (!csrfOk(s, token)) {
        part.file.resume();
        return reply.code(403).send({ error: 'missing or wrong form token; reload the page' });
      }
      const lower = part.filename.toLowerCase();
      const isCsv = lower.endsWith('.csv') || lower.endsWith('.txt');
      const kind = lower.endsWith('.xlsx') ? 'xlsx' : isCsv ? 'csv' : undefined;
      if (!kind) {
        part.file.resume();
        return uploadPage(req, reply.code(400), { kind: 'error', key: 'upload.kind' });
      }
      const { id, dir } = await store.create();
      const fileName = safeFileName(part.filename, `upload.${kind}`);
      const saved = join(dir, fileName);
      try {
        await pipeline(part.file, createWriteStream(saved, { mode: 0o600 }));
        if (part.file.truncated) throw new CashoutError('file_too_large', 'over the size limit');
      } catch {
        await store.remove(id);
        return uploadPage(req, reply.code(413), { kind: 'error', key: 'upload.tooLarge', params: { bytes: maxBytes } });
      }
      const csvFile = kind === 'xlsx' ? `${fileName.replace(/\.xlsx$/i, '')}.csv` : fileName;
      const record: UploadRecord = {
        id,
        user: s!.user,
        fileName,
        kind,
        createdAt: new Date().toISOString(),
        csvFile,
        state: 'checking',
        rowsRead: 0,
      };
      await store.save(record);
      deps.log.info({ user: record.user, upload: id, kind }, 'payout file uploaded');
      void runCheck(record, saved, join(dir, csvFile));
      return reply.redirect(`/uploads/${id}`, 303);
    });

    /** The background check: convert an .xlsx, then read every row; the record tells how far it is. */
    const runCheck = async (record: UploadRecord, saved: string, csv: string): Promise<void> => {
      const dir = store!.dir(record.id);
      let last = Date.now();
      try {
        if (record.kind === 'xlsx') await xlsxToCsv(saved, csv, maxRows);
        const check = await checkUpload(
          dir,
          csv,
          imports!.rules,
          { ...imports!.limits },
          {
            bom: deps.csvBom,
            // Rows whose payee another batch holds now: shown apart, and not in what Send pays.
            heldPayees: (keys) => imports!.ledger.checkPayees('', keys),
            onRows: (rows) => {
              if (Date.now() - last < 500) return;
              last = Date.now();
              void store!.save({ ...record, rowsRead: rows }).catch(() => undefined);
            },
          },
        );
        await store!.save({ ...record, state: 'checked', rowsRead: check.rows, check });
      } catch (err) {
        const message = isCashoutError(err)
          ? uploadMessage(err.message, [saved, csv], record.fileName, 'page')
          : 'the file could not be read';
        if (!isCashoutError(err)) deps.log.error({ err, upload: record.id }, 'upload check failed');
        await store!.save({ ...record, state: 'failed', error: message }).catch(() => undefined);
      }
    };

    app.get('/uploads/:id', async (req, reply) => {
      const record = await ownUpload(req, reply);
      if (!record) return reply;
      const s = sessionOf(req);
      const payable = record.check ? payableOf(record.check) : undefined;
      const approval = payable ? needsApproval(imports!, payable.amount) : false;
      const title = translate(req)('upload.result', { file: record.fileName });
      return page(req, reply, 'upload-result', title, { record, approval, payable }, s, await takeFlash(s));
    });

    app.get('/uploads/:id/status.json', async (req, reply) => {
      const record = await ownUpload(req, reply);
      if (!record) return reply;
      return reply.header('cache-control', 'no-store').send({ state: record.state, rowsRead: record.rowsRead });
    });

    app.get('/uploads/:id/rejected-rows.csv', async (req, reply) => {
      const record = await ownUpload(req, reply);
      if (!record) return reply;
      const stream = createReadStream(join(store!.dir(record.id), UPLOAD_REJECTED));
      const opened = await new Promise<boolean>((resolve) => {
        stream.once('open', () => resolve(true));
        stream.once('error', () => resolve(false));
      });
      if (!opened) return reply.code(404).send({ error: 'no invalid rows' });
      const name = `${record.fileName.replace(/\.(csv|xlsx|txt)$/i, '')}-rejected-rows.csv`;
      deps.log.info({ user: record.user, upload: record.id }, 'rejected rows downloaded');
      return reply
        .type('text/csv; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(stream);
    });

    app.post('/uploads/:id/send', async (req, reply) => {
      const s = sessionOf(req);
      const body = (req.body ?? {}) as Record<string, unknown>;
      if (!csrfOk(s, body._csrf)) {
        return reply.code(403).send({ error: 'missing or wrong form token; reload the page' });
      }
      const record = await ownUpload(req, reply);
      if (!record) return reply;
      const back = `/uploads/${record.id}`;
      if (record.batchId) {
        await setFlash(s, { kind: 'error', key: 'upload.alreadySent', params: { id: record.batchId } });
        return reply.redirect(`/batches/${record.batchId}`, 303);
      }
      const check = record.check;
      if (record.state !== 'checked' || !check) return reply.redirect(back, 303);
      const payable = payableOf(check);
      if (payable.rows === 0) {
        await setFlash(s, { kind: 'error', key: 'upload.nothing' });
        return reply.redirect(back, 303);
      }
      // The confirmation names what the page showed: the number of payees and the total.
      const confirmed = body.confirm === 'yes' && body.payees === String(payable.rows) && body.total === payable.amount;
      if (!confirmed) {
        await setFlash(s, { kind: 'error', key: 'upload.confirmFirst' });
        return reply.redirect(back, 303);
      }
      const csv = join(store!.dir(record.id), record.csvFile);
      let flash: Flash;
      try {
        const result = await importBatch(imports!, csv, {
          partial: check.invalidRows > 0,
          importedBy: s!.user,
          importedByUser: s!.user,
        });
        await store!.save({ ...record, batchId: result.batchId });
        const facts = { user: s!.user, upload: record.id, batchId: result.batchId, state: result.state };
        deps.log.info(facts, 'upload sent');
        const refused = { id: result.batchId, reason: result.refusalReason ?? '' };
        flash =
          result.state === 'refused'
            ? { kind: 'error', key: 'upload.refused', params: refused }
            : result.state === 'awaiting_approval'
              ? { kind: 'ok', key: 'upload.submitted', params: { id: result.batchId } }
              : result.state === 'finished'
                ? { kind: 'error', key: 'upload.ended', params: { id: result.batchId } }
                : { kind: 'ok', key: 'upload.sent', params: { id: result.batchId, requests: result.requests } };
        await setFlash(s, flash);
        return reply.redirect(`/batches/${result.batchId}`, 303);
      } catch (err) {
        if (!isCashoutError(err)) throw err;
        deps.log.warn({ user: s!.user, upload: record.id, reason: err.message }, 'upload not sent');
        if (err.code === 'batch_exists') {
          // The same content was imported before: the error names that batch.
          const batchId = String(err.context.batchId);
          await store!.save({ ...record, batchId });
          await setFlash(s, { kind: 'error', key: 'upload.alreadySent', params: { id: batchId } });
          return reply.redirect(`/batches/${batchId}`, 303);
        }
        await setFlash(s, { kind: 'error', text: uploadMessage(err.message, [csv], record.fileName, 'page') });
        return reply.redirect(back, 303);
      }
    });
  };
}
