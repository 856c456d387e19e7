/**
 * The OpenAPI 3.1 document of the HTTP API, served at `/api/v1/openapi.json`. Written by hand; a
 * test (test/api/http-api-openapi.test.ts) checks that its paths and methods are exactly
 * the routes the API registers.
 */
import { ERROR_CODES } from '../errors.js';

const json = (schema: object) => ({ 'application/json': { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((c) => [String(c), { $ref: `#/components/responses/E${c}` }]));
const idParam = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'batch id (16 hex digits)',
  schema: { type: 'string', pattern: '^[0-9a-f]{16}$' },
};
const seqParam = {
  name: 'seq',
  in: 'path',
  required: true,
  description: 'request number',
  schema: { type: 'integer', minimum: 1 },
};
const label = { type: 'string', maxLength: 100, description: "recorded beside the key's name, never in its place" };
const egp = { type: 'string', pattern: '^\\d+\\.\\d{2}$', description: 'EGP decimal string' };
const tally = { type: 'object', properties: { rows: { type: 'integer' }, amount: egp }, required: ['rows', 'amount'] };
const flag = { type: 'string', enum: ['true', 'false', '1', '0'] };

/** The document (a plain JSON value). */
export const OPENAPI_DOCUMENT = {
  openapi: '3.1.0',
  info: {
    title: 'bulk-cashout HTTP API',
    version: '1.0.0',
    description:
      'Upload payout files, follow their batches, approve, cancel and reconcile them. Every route but this ' +
      'document needs an API key (`cashout api-key create --name <who>`) as a bearer token; its name is the person ' +
      'recorded for every action, and an importer cannot approve their own batch.',
  },
  servers: [{ url: '/' }],
  security: [{ apiKey: [] }],
  paths: {
    '/api/v1/openapi.json': {
      get: {
        summary: 'This document',
        security: [],
        responses: { 200: { description: 'the document', content: json({ type: 'object' }) } },
      },
    },
    '/api/v1/batches': {
      post: {
        summary: 'Upload a payout file (the checks and options of `cashout import`)',
        parameters: [
          {
            name: 'file_name',
            in: 'query',
            schema: { type: 'string', maxLength: 200 },
            description: 'name recorded for the file',
          },
          {
            name: 'partial',
            in: 'query',
            schema: flag,
            description: 'queue the valid rows even when some are invalid',
          },
          { name: 'force', in: 'query', schema: flag, description: 'import content imported before, as a new batch' },
          {
            name: 'pay_again',
            in: 'query',
            schema: { type: 'string', maxLength: 500 },
            description: 'why payees held by another payout are paid again',
          },
          {
            name: 'strict_duplicates',
            in: 'query',
            schema: flag,
            description: 'refuse rows repeating an earlier row of the file',
          },
          {
            name: 'delimiter',
            in: 'query',
            schema: { type: 'string', enum: [',', ';', '\t', '|', 'comma', 'semicolon', 'tab', 'pipe'] },
          },
          { name: 'encoding', in: 'query', schema: { type: 'string' }, description: 'e.g. windows-1256' },
          { name: 'label', in: 'query', schema: label },
        ],
        requestBody: {
          required: true,
          content: {
            'text/csv': { schema: { type: 'string' } },
            'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
          },
        },
        responses: {
          201: {
            description: 'the batch made of the file (also when it was refused: see state and problems)',
            content: json(ref('Upload')),
          },
          ...errors(400, 401, 409, 413, 422, 429, 503),
        },
      },
    },
    '/api/v1/batches/{id}': {
      get: {
        summary: 'A batch: state, counts and EGP totals by status and channel, story, files',
        parameters: [idParam],
        responses: { 200: { description: 'the batch', content: json(ref('Batch')) }, ...errors(401, 404, 429) },
      },
    },
    '/api/v1/batches/{id}/rows': {
      get: {
        summary: "Rows of the batch's results, by status, a page at a time",
        parameters: [
          idParam,
          {
            name: 'status',
            in: 'query',
            schema: {
              type: 'string',
              enum: ['accepted', 'rejected', 'unknown', 'not_sent', 'invalid', 'duplicate', 'pending'],
            },
          },
          { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 } },
          { name: 'per_page', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
        ],
        responses: {
          200: { description: 'a page of rows (the columns of results.csv)', content: json(ref('Rows')) },
          ...errors(400, 401, 404, 429),
        },
      },
    },
    '/api/v1/batches/{id}/files/{name}': {
      get: {
        summary: 'A report file of the batch',
        parameters: [
          idParam,
          {
            name: 'name',
            in: 'path',
            required: true,
            schema: {
              type: 'string',
              enum: ['results.csv', 'rejected-rows.csv', 'summary.json', 'reconciliation.csv'],
            },
          },
        ],
        responses: {
          200: {
            description: 'the file',
            content: { 'text/csv': { schema: { type: 'string' } }, 'application/json': { schema: { type: 'object' } } },
          },
          ...errors(401, 404, 429),
        },
      },
    },
    '/api/v1/batches/{id}/notifications': {
      get: {
        summary: "Every delivery attempt of the batch's notifications",
        parameters: [idParam],
        responses: {
          200: { description: 'attempts, oldest first', content: json(ref('Deliveries')) },
          ...errors(401, 404, 429),
        },
      },
    },
    '/api/v1/batches/{id}/approve': {
      post: {
        summary: 'Approve a batch awaiting approval (by another person than the importer); its requests are queued',
        parameters: [idParam],
        requestBody: {
          required: false,
          content: json({ type: 'object', properties: { label }, additionalProperties: false }),
        },
        responses: {
          200: {
            description: 'approved',
            content: json({
              type: 'object',
              properties: { batchId: { type: 'string' }, state: { type: 'string' }, requests: { type: 'integer' } },
            }),
          },
          ...errors(400, 401, 403, 404, 409, 429),
        },
      },
    },
    '/api/v1/batches/{id}/cancel': {
      post: {
        summary: 'Cancel a batch awaiting approval; nothing of it is sent',
        parameters: [idParam],
        requestBody: { required: true, content: json(ref('Note')) },
        responses: {
          200: { description: 'cancelled', content: json({ type: 'object' }) },
          ...errors(400, 401, 404, 409, 429),
        },
      },
    },
    '/api/v1/batches/{id}/requests/{seq}/resolve': {
      post: {
        summary: 'Record what a person found about a request whose outcome is unknown',
        parameters: [idParam, seqParam],
        requestBody: {
          required: true,
          content: json({
            type: 'object',
            properties: {
              finding: { type: 'string', enum: ['created', 'not_created'] },
              note: { type: 'string', minLength: 1 },
              label,
            },
            required: ['finding', 'note'],
            additionalProperties: false,
          }),
        },
        responses: {
          200: { description: 'recorded', content: json({ type: 'object' }) },
          ...errors(400, 401, 404, 409, 429),
        },
      },
    },
    '/api/v1/batches/{id}/requests/{seq}/retry': {
      post: {
        summary: 'Queue a request again that the ledger allows to be sent (not sent, or resolved as not created)',
        parameters: [idParam, seqParam],
        requestBody: {
          required: false,
          content: json({ type: 'object', properties: { label }, additionalProperties: false }),
        },
        responses: {
          202: {
            description: 'queued; the ledger decides again when a worker takes it',
            content: json({ type: 'object' }),
          },
          ...errors(400, 401, 404, 409, 429),
        },
      },
    },
  },
  components: {
    securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'an API key: cok_<id>_<secret>' } },
    responses: Object.fromEntries(
      [400, 401, 403, 404, 409, 413, 422, 429, 503].map((c) => [
        `E${c}`,
        { description: `error ${c}`, content: json(ref('Error')) },
      ]),
    ),
    schemas: {
      Error: {
        type: 'object',
        properties: {
          error: {
            type: 'object',
            properties: {
              code: {
                type: 'string',
                enum: Object.keys(ERROR_CODES),
                description: "one of the project's error codes (ERROR_CODES in src/errors.ts)",
              },
              message: { type: 'string' },
            },
            required: ['code', 'message'],
          },
        },
        required: ['error'],
      },
      Note: {
        type: 'object',
        properties: { note: { type: 'string', minLength: 1 }, label },
        required: ['note'],
        additionalProperties: false,
      },
      Problem: {
        type: 'object',
        properties: {
          line: { type: 'integer' },
          status: { type: 'string', enum: ['invalid', 'duplicate'] },
          message: { type: 'string' },
          issues: {
            type: 'array',
            items: {
              type: 'object',
              properties: { column: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
            },
          },
        },
        required: ['line', 'status', 'message'],
      },
      Upload: {
        type: 'object',
        properties: {
          batchId: { type: 'string' },
          state: { type: 'string', enum: ['queued', 'awaiting_approval', 'refused', 'finished'] },
          refusalReason: { type: 'string' },
          rows: { type: 'integer' },
          validRows: { type: 'integer' },
          invalidRows: { type: 'integer' },
          duplicateRows: { type: 'integer' },
          warnedRows: { type: 'integer' },
          requests: { type: 'integer' },
          total: egp,
          problems: { type: 'array', items: ref('Problem') },
          problemsTruncated: { type: 'boolean' },
        },
        required: ['batchId', 'state', 'rows', 'problems'],
      },
      Batch: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          state: { type: 'string' },
          fileName: { type: 'string' },
          sha256: { type: 'string' },
          createdAt: { type: 'string', format: 'date-time' },
          importedBy: { type: 'string' },
          approvedBy: { type: 'string' },
          approvalExpiresAt: { type: 'string', format: 'date-time' },
          refusalReason: { type: 'string' },
          follows: { type: 'string', description: 'The batch of the same content refused as a whole before this one.' },
          supersededBy: { type: 'string', description: "The batch that imported this refused batch's content again." },
          finishedAt: { type: 'string', format: 'date-time' },
          rows: { type: 'integer' },
          validRows: { type: 'integer' },
          invalidRows: { type: 'integer' },
          total: egp,
          requests: { type: 'object', properties: { all: { type: 'integer' }, done: { type: 'integer' } } },
          byStatus: { type: 'object', additionalProperties: tally },
          byChannel: { type: 'object', additionalProperties: tally },
          story: { type: 'array', items: { type: 'object' } },
          resolutions: { type: 'array', items: { type: 'object' } },
          files: { type: 'array', items: { type: 'string' } },
        },
        required: ['id', 'state', 'rows', 'byStatus'],
      },
      Rows: {
        type: 'object',
        properties: {
          batchId: { type: 'string' },
          status: { type: 'string' },
          page: { type: 'integer' },
          perPage: { type: 'integer' },
          matching: { type: 'integer' },
          rows: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string' } } },
        },
        required: ['batchId', 'page', 'perPage', 'matching', 'rows'],
      },
      Deliveries: {
        type: 'object',
        properties: {
          batchId: { type: 'string' },
          deliveries: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                event: { type: 'string' },
                id: { type: 'string' },
                host: { type: 'string' },
                attempt: { type: 'integer' },
                status: { type: 'integer' },
                ok: { type: 'boolean' },
                error: { type: 'string' },
                at: { type: 'string', format: 'date-time' },
              },
            },
          },
        },
      },
    },
  },
} as const;
