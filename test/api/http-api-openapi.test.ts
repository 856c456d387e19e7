/**
 * The HTTP API's OpenAPI document names exactly the routes the API registers (paths and methods),
 * and the API keeps the dashboard's Host rule, limits wrong keys, honours revocation, and needs no
 * cookie or same-origin header (and accepts none in place of a key).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import { API_ROUTE_PREFIX, httpApi } from '../../src/api/routes.js';
import { OPENAPI_DOCUMENT } from '../../src/api/openapi.js';
import { apiKeyStore } from '../../src/api/api-keys.js';
import { AUTH_FAILURES_ALLOWED } from '../../src/api/auth-limit.js';
import { errorCodeEntry } from '../../src/errors.js';
import { openTestPipeline, type TestPipeline } from '../support/pipeline.js';
import { startTestDashboard } from '../support/dashboard.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Status of a GET with a Host header of our choosing (fetch cannot set one). */
function statusWithHost(url: string, host: string, headers: Record<string, string>): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'GET', agent: false, headers: { ...headers, host } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** "METHOD /path/{param}" of every operation of the document. */
function documented(): string[] {
  return Object.entries(OPENAPI_DOCUMENT.paths).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((m) => METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );
}

describe('HTTP API: OpenAPI document and guards', () => {
  let p: TestPipeline;
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    p = await openTestPipeline('http-api-doc');
    ({ app, base } = await startTestDashboard(p, { users: 'none', api: { import: undefined, maxFileBytes: 1000 } }));
  });
  afterAll(async () => {
    await app?.close();
    await p?.close();
  });

  it('documents every route the API registers, with the same methods, and no other', async () => {
    const registered: string[] = [];
    const bare = Fastify();
    bare.addHook('onRoute', (route) => {
      for (const m of [route.method].flat()) {
        if (m === 'HEAD') continue;
        registered.push(`${m} ${route.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
      }
    });
    await bare.register(
      httpApi({
        ledger: p.ledger,
        queue: p.queue,
        redis: p.redis,
        prefix: p.prefix,
        log: p.log,
        import: undefined,
        maxFileBytes: 1,
      }),
      {
        prefix: API_ROUTE_PREFIX,
      },
    );
    await bare.ready();
    await bare.close();
    expect(registered.length).toBeGreaterThan(5);
    expect(registered.every((r) => r.split(' ')[1]!.startsWith(`${API_ROUTE_PREFIX}/`))).toBe(true);
    expect([...registered].sort()).toEqual(documented().sort());
    // The dashboard serves the same routes.
    for (const entry of documented()) {
      const [method, path] = entry.split(' ') as [string, string];
      expect(app.hasRoute({ method: method as 'GET', url: path.replace(/\{([A-Za-z_]+)\}/g, ':$1') }), entry).toBe(
        true,
      );
    }
  });

  it('serves the document without a key', async () => {
    const res = await fetch(`${base}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
  });

  it('keeps the Host rule, needs a key even with the dashboard open (--no-auth), refuses revoked keys', async () => {
    const keys = apiKeyStore(p.redis, p.prefix);
    const { key, record } = await keys.create('ledger-system');
    const get = (headers: Record<string, string>) => fetch(`${base}/api/v1/batches/0123456789abcdef`, { headers });
    expect((await get({ authorization: `Bearer ${key}` })).status).toBe(404);
    const url = `${base}/api/v1/batches/0123456789abcdef`;
    expect(await statusWithHost(url, 'evil.example', { authorization: `Bearer ${key}` })).toBe(421);
    expect(await statusWithHost(url, new URL(base).host, { authorization: `Bearer ${key}` })).toBe(404);
    expect((await get({})).status).toBe(401);
    const post = await fetch(`${base}/api/v1/batches/0123456789abcdef/approve`, {
      method: 'POST',
      headers: { origin: base, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(post.status).toBe(401);
    expect((await keys.list()).map((k) => k.name)).toEqual(['ledger-system']);
    expect(JSON.stringify(await p.redis.hgetall(`${p.prefix}:api-keys`))).not.toContain(key);
    await keys.revoke(record.id);
    expect((await get({ authorization: `Bearer ${key}` })).status).toBe(401);
  });

  it('refuses uploads over the size limit, and when the service is not configured', async () => {
    const keys = apiKeyStore(p.redis, p.prefix);
    const { key } = await keys.create('uploader');
    const upload = (bytes: number) =>
      fetch(`${base}/api/v1/batches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'text/csv' },
        body: 'x'.repeat(bytes),
      });
    const big = await upload(2000);
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe('file_too_large');
    const res = await upload(10);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/CASHOUT_API_BASE_URL/);
  });

  it('answers every error with a code of the table of error codes, and with the status the table gives it', async () => {
    const { key } = await apiKeyStore(p.redis, p.prefix).create('error-codes');
    const auth = { authorization: `Bearer ${key}` };
    const answers = await Promise.all([
      fetch(`${base}/api/v1/batches/0123456789abcdef`), // no key
      fetch(`${base}/api/v1/batches/0123456789abcdef`, { headers: auth }), // no such batch
      fetch(`${base}/api/v1/batches/0123456789abcdef/files/passwords.txt`, { headers: auth }), // no such file
      fetch(`${base}/api/v1/batches/0123456789abcdef/approve`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: '{"note": ', // not JSON
      }),
    ]);
    const seen: string[] = [];
    for (const res of answers) {
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      const entry = errorCodeEntry(error.code);
      expect(entry, error.code).toBeDefined();
      expect(res.status, error.code).toBe(entry!.http);
      expect(error.message).not.toBe('');
      seen.push(error.code);
    }
    expect(seen).toEqual(['unauthorized', 'batch_not_found', 'not_found', 'bad_request']);
    const documented = OPENAPI_DOCUMENT.components.schemas.Error.properties.error.properties.code.enum;
    expect(seen.every((code) => documented.includes(code))).toBe(true);
  });

  it('limits wrong keys per address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < AUTH_FAILURES_ALLOWED + 2; i++) {
      const res = await fetch(`${base}/api/v1/batches/0123456789abcdef`, {
        headers: { authorization: `Bearer cok_0000000${i % 10}_wrong` },
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });
});
