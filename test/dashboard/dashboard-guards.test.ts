/**
 * The dashboard's guards over real HTTP against the real Redis (a key prefix of this file's own):
 * Bull Board does only what its allow-list names, however a path is encoded or spelt, and the queue
 * stays as it was; only the configured Host names are answered, with and without a login, so a page
 * on another name can neither read batches nor post a resolve; failed logins from one client, or
 * for other user names, never stop a user with the right password, while guessing is still slowed.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { SESSION_COOKIE } from '../../src/dashboard/server.js';
import { KNOWN_BROWSER_COOKIE } from '../../src/dashboard/login-limit.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { freePort } from '../../src/queue/private-redis.js';
import { requestJobId } from '../../src/batch-id.js';
import { openTestPipeline, walletRow, type TestPipeline } from '../support/pipeline.js';
import { startTestDashboard, staffUsers } from '../support/dashboard.js';

const PASSWORD = 'a long enough password';
const TOKEN = 'guards-token';
const BOARD = '/queues/api/queues';

/** An answer read in full. */
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** Options of one raw request. */
interface SendOptions {
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Source address of the connection (any 127.x.y.z is loopback), to act as another client. */
  readonly localAddress?: string;
}

/** Sends `method path` exactly as written (no URL normalisation) to the server on `port`. */
function send(port: number, method: string, path: string, opts: SendOptions = {}): Promise<Answer> {
  const length = opts.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(opts.body)) };
  const headers = { host: `127.0.0.1:${port}`, ...length, ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method, path, localAddress: opts.localAddress, agent: false, headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Percent-encodes every character of `text`. */
const encodeAll = (text: string) =>
  [...Buffer.from(text)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** The value of cookie `name` among an answer's Set-Cookie headers. */
function cookieOf(answer: Answer, name: string): string | undefined {
  const all = ([] as string[]).concat(answer.headers['set-cookie'] ?? []);
  const found = all.find((c) => c.startsWith(`${name}=`));
  return found?.split(';')[0]!.slice(name.length + 1);
}

describe('dashboard guards', () => {
  let p: TestPipeline;
  let sandbox: Sandbox;
  let app: FastifyInstance;
  let port: number;
  let origin: string;
  let session: string;
  const ids = { completed: [] as string[], failed: '', waiting: [] as string[], unknownBatch: '' };

  /** Job counts of the submit queue, and the stored data of every waiting job. */
  const snapshot = async () => ({
    counts: await p.queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized'),
    data: await Promise.all(ids.waiting.map(async (id) => JSON.stringify((await p.queue.getJob(id))?.data))),
    completed: await Promise.all(ids.completed.map(async (id) => (await p.queue.getJob(id))?.getState())),
  });
  /** A state-changing request from the dashboard's own page, logged in. */
  const act = (method: string, path: string, body: unknown = {}) =>
    send(port, method, path, {
      headers: { origin, cookie: `${SESSION_COOKIE}=${session}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const login = (user: string, password: string, localAddress: string, known?: string) =>
    send(port, 'POST', '/login', {
      localAddress,
      headers: {
        origin,
        'content-type': 'application/x-www-form-urlencoded',
        ...(known ? { cookie: `${KNOWN_BROWSER_COOKIE}=${known}` } : {}),
      },
      body: new URLSearchParams({ user, password, next: '/batches' }).toString(),
    });

  beforeAll(async () => {
    p = await openTestPipeline('guards');
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    const done = await p.importCsv(await p.writeCsv('done.csv', [walletRow(1), walletRow(2)]), { itemsPerRequest: 1 });
    await p.submit(done.batchId, { baseUrl: sandbox.url, token: TOKEN });
    ids.completed = [requestJobId(done.batchId, 1), requestJobId(done.batchId, 2)];
    const notSent = await p.importCsv(await p.writeCsv('not-sent.csv', [walletRow(3)]));
    await p.submit(notSent.batchId, { baseUrl: `http://127.0.0.1:${await freePort()}`, token: TOKEN });
    ids.failed = requestJobId(notSent.batchId, 1);
    sandbox.setFaults({ rates: { createThen500: 1 } });
    const unknown = await p.importCsv(await p.writeCsv('unknown.csv', [walletRow(4)]));
    await p.submit(unknown.batchId, { baseUrl: sandbox.url, token: TOKEN });
    sandbox.setFaults({});
    ids.unknownBatch = unknown.batchId;
    const waitingCsv = await p.writeCsv('waiting.csv', [walletRow(5), walletRow(6)]);
    const waiting = await p.importCsv(waitingCsv, { itemsPerRequest: 1 });
    ids.waiting = [requestJobId(waiting.batchId, 1), requestJobId(waiting.batchId, 2)];

    ({ app } = await startTestDashboard(p, { users: await staffUsers(PASSWORD, ['maker', 'alice', 'bob', 'carol']) }));
    port = (app.server.address() as { port: number }).port;
    origin = `http://127.0.0.1:${port}`;
    const res = await login('maker', PASSWORD, '127.0.0.1');
    expect(res.status).toBe(303);
    session = cookieOf(res, SESSION_COOKIE)!;
  });
  afterAll(async () => {
    await app?.close();
    await sandbox?.close();
    await p?.close();
  });

  describe('Bull Board allows only its allow-list, by the route a path resolves to', () => {
    it('the setup holds completed, failed and waiting submission jobs', async () => {
      const { counts, completed } = await snapshot();
      expect(counts).toMatchObject({ completed: 2, failed: 2, waiting: 2 });
      expect(completed).toEqual(['completed', 'completed']);
      expect((await p.ledger.getRequest(ids.unknownBatch, 1))!.state).toBe('unknown');
    });

    const addPaths = [
      `${BOARD}/cashout-submit/add`,
      `${BOARD}/cashout%2Dsubmit/add`,
      `${BOARD}/cashout%2dsubmit/add`,
      `${BOARD}/cashout-submit/%61dd`,
      `${BOARD}/cashout-submit/%61%64%64`,
      `${BOARD}/${encodeAll('cashout-submit')}/${encodeAll('add')}`,
      `${BOARD}/cashout-submit/%2561dd`,
      `${BOARD}/cashout%252Dsubmit/add`,
      `${BOARD}/CASHOUT-SUBMIT/add`,
      `${BOARD}/cashout-submit/ADD`,
      `${BOARD}/cashout-submit//add`,
      `${BOARD}/cashout-submit/add/`,
      `${BOARD}/cashout-submit/add?x=1`,
      `${BOARD}/cashout-submit/add;x`,
      `${BOARD}/x/../cashout-submit/add`,
      `${BOARD}/cashout-submit/./add`,
      `${BOARD}/cashout-submit/%2E%2E/cashout-submit/add`,
      `${BOARD}/cashout-submit%2Fadd`,
      `/%71ueues/api/queues/cashout-submit/add`,
      `/QUEUES/api/queues/cashout-submit/add`,
      `//queues/api/queues/cashout-submit/add`,
      `/queues/./api/queues/cashout-submit/add`,
    ];
    it.each(addPaths)('POST %s (adding a job) is refused and adds nothing', async (path) => {
      const before = await snapshot();
      const res = await act('POST', path, { name: 'submit-request', data: { batchId: 'x', seq: 1 }, options: {} });
      expect(res.status).toBe(403);
      expect(await snapshot()).toEqual(before);
    });

    const editPaths = (id: string) => [
      `${BOARD}/cashout-submit/${id}/update-data`,
      `${BOARD}/cashout-submit/${id}/%75pdate-data`,
      `${BOARD}/cashout%2Dsubmit/${id}/update-data`,
      `${BOARD}/cashout-submit/${encodeAll(id)}/update%2Ddata`,
      `${BOARD}/cashout-submit/${id}/%2575pdate-data`,
      `${BOARD}/cashout-submit/${id}/UPDATE-DATA`,
      `${BOARD}/cashout-submit/${id}/update-data/`,
      `${BOARD}/cashout-submit/${id}//update-data`,
      `${BOARD}/cashout-submit/${id}/x/../update-data`,
      `${BOARD}/cashout-submit/x/../${id}/update-data`,
    ];
    it("editing a job's data is refused however the path is spelt, and the data stays as it was", async () => {
      const before = await snapshot();
      for (const path of editPaths(ids.waiting[0]!)) {
        for (const method of ['PATCH', 'PUT', 'POST']) {
          const res = await act(method, path, { jobData: { batchId: 'other', seq: 99, items: [] } });
          expect([path, method, res.status]).toEqual([path, method, 403]);
        }
      }
      expect(await snapshot()).toEqual(before);
    });

    it('retrying completed submission jobs is refused however the path is spelt, and they stay completed', async () => {
      const id = ids.completed[0]!;
      const paths = [
        `${BOARD}/cashout-submit/retry/completed`,
        `${BOARD}/cashout-submit/retry/%63ompleted`,
        `${BOARD}/cashout-submit/retry/${encodeAll('completed')}`,
        `${BOARD}/cashout-submit/retry/%2563ompleted`,
        `${BOARD}/cashout-submit/%72etry/completed`,
        `${BOARD}/cashout%2Dsubmit/retry/completed`,
        `${BOARD}/cashout-submit/retry/COMPLETED`,
        `${BOARD}/cashout-submit/retry/completed/`,
        `${BOARD}/cashout-submit/retry//completed`,
        `${BOARD}/cashout-submit/retry/x/../completed`,
        `${BOARD}/cashout-submit/retry/active`,
        `${BOARD}/cashout-submit/${id}/retry`,
        `${BOARD}/cashout-submit/${id}/%72etry`,
        `${BOARD}/cashout-submit/${encodeAll(id)}/retry`,
        `${BOARD}/cashout%2Dsubmit/${encodeURIComponent(id)}/retry`,
        `${BOARD}/cashout-submit/${id.toUpperCase()}/retry`,
        `${BOARD}/cashout-submit/no-such-job/retry`,
      ];
      const before = await snapshot();
      for (const path of paths) {
        const res = await act('PUT', path);
        expect([path, res.status]).toEqual([path, 403]);
      }
      expect(await snapshot()).toEqual(before);
    });

    it.each([
      ['PUT', 'cashout-submit/clean/completed'],
      ['PUT', 'cashout-submit/clean/failed'],
      ['PUT', 'cashout-submit/empty'],
      ['PUT', 'cashout-submit/obliterate'],
      ['PUT', 'cashout-submit/promote'],
      ['PUT', 'cashout-submit/concurrency'],
      ['PUT', 'cashout-submit/rate-limit'],
      ['PUT', 'cashout-submit/rate-limit/release'],
      ['PUT', 'cashout-submit/WAITING_ID/clean'],
      ['PUT', 'cashout-submit/WAITING_ID/promote'],
      ['PATCH', 'cashout-submit/WAITING_ID/delay'],
      ['PATCH', 'cashout-submit/WAITING_ID/priority'],
      ['PUT', 'cashout-submit/WAITING_ID/remove-unprocessed-children'],
      ['PATCH', 'cashout-submit/job-schedulers/s'],
      ['PUT', 'cashout-submit/job-schedulers/s/remove'],
      ['PUT', 'cashout-submit/job-schedulers/s/run'],
      ['DELETE', 'cashout-submit/WAITING_ID'],
      ['OPTIONS', 'cashout-submit/add'],
    ])('%s %s (not on the allow-list) is refused and changes nothing', async (method, rest) => {
      const before = await snapshot();
      const body = { concurrency: 1000, max: 1, duration: 1, delay: 1, priority: 1 };
      const res = await act(method, `${BOARD}/${rest.replace('WAITING_ID', ids.waiting[1]!)}`, body);
      expect(res.status).toBe(403);
      expect(await snapshot()).toEqual(before);
      expect(await p.queue.getGlobalConcurrency()).toBeNull();
    });

    it('views still work: the board, its API, a job, its static files', async () => {
      const cookie = `${SESSION_COOKIE}=${session}`;
      const page = await send(port, 'GET', '/queues', { headers: { cookie, accept: 'text/html' } });
      expect(page.status).toBe(200);
      const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(page.text)?.[1];
      expect(script).toBeDefined();
      expect((await send(port, 'GET', `/queues/${script}`, { headers: { cookie } })).status).toBe(200);
      expect((await send(port, 'GET', '/queues/queue/cashout-submit', { headers: { cookie } })).status).toBe(200);
      const api = await send(port, 'GET', `${BOARD}?activeQueue=cashout-submit&status=waiting`, {
        headers: { cookie },
      });
      expect(api.status).toBe(200);
      expect(api.text).toContain('cashout-submit');
      const job = await send(port, 'GET', `${BOARD}/cashout-submit/${ids.waiting[0]}`, { headers: { cookie } });
      expect(job.status).toBe(200);
      const encoded = await send(port, 'GET', `${BOARD}/cashout%2Dsubmit/${ids.waiting[0]}`, { headers: { cookie } });
      expect(encoded.status).toBe(200);
    });

    it('retrying a failed submission job is allowed (the ledger decides), and so are pause and resume', async () => {
      expect((await act('PUT', `${BOARD}/cashout-submit/pause`)).status).toBe(200);
      expect(await p.queue.isPaused()).toBe(true);
      expect((await act('PUT', `${BOARD}/cashout-submit/resume`)).status).toBe(200);
      expect(await p.queue.isPaused()).toBe(false);
      expect(await (await p.queue.getJob(ids.failed))!.getState()).toBe('failed');
      expect((await act('PUT', `${BOARD}/cashout-submit/${ids.failed}/retry`)).status).toBe(204);
      expect(await (await p.queue.getJob(ids.failed))!.getState()).toBe('waiting');
      const all = await act('PUT', `${BOARD}/cashout-submit/retry/failed`);
      expect(all.status).toBe(200);
      const { counts } = await snapshot();
      expect(counts).toMatchObject({ completed: 2, failed: 0, waiting: 4 });
    });
  });

  describe('only the configured Host names are answered', () => {
    it.each([
      ['127.0.0.1:PORT', 200],
      ['localhost:PORT', 200],
      ['LocalHost:PORT', 200],
      ['[::1]:PORT', 200],
      ['evil.example:PORT', 421],
      ['evil.example', 421],
      ['localhost', 421],
      ['localhost:1', 421],
      ['localhost.:PORT', 421],
      ['127.0.0.1.nip.io:PORT', 421],
      ['localhost:PORT@evil.example', 421],
    ])('Host %j → %i', async (host, status) => {
      const res = await send(port, 'GET', '/login', { headers: { host: host.replace('PORT', String(port)) } });
      expect(res.status).toBe(status);
      if (status === 421) expect(res.text).toMatch(/does not answer for that host name/);
    });

    it('a logged-in browser on another name reads nothing and changes nothing', async () => {
      const foreign = `rebind.example:${port}`;
      const headers = { host: foreign, cookie: `${SESSION_COOKIE}=${session}` };
      for (const path of ['/batches', `/batches/${ids.unknownBatch}`, BOARD, '/queues', '/no-such-page']) {
        const res = await send(port, 'GET', path, { headers });
        expect([path, res.status]).toEqual([path, 421]);
        expect(res.text).not.toContain(ids.unknownBatch);
      }
      const before = await snapshot();
      const add = await send(port, 'POST', `${BOARD}/cashout-submit/add`, {
        headers: { ...headers, origin: `http://${foreign}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'x', data: {} }),
      });
      expect(add.status).toBe(421);
      expect(await snapshot()).toEqual(before);
      const res = await send(port, 'POST', '/login', {
        headers: { host: foreign, origin: `http://${foreign}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ user: 'maker', password: PASSWORD }).toString(),
      });
      expect(res.status).toBe(421);
      expect(res.headers['set-cookie']).toBeUndefined();
    });

    it('without a login (--no-auth) too: a page on another name cannot read batches or post a resolve', async () => {
      const { app: local } = await startTestDashboard(p, { users: 'none', allowedHosts: ['cashout.example.com'] });
      try {
        const localPort = (local.server.address() as { port: number }).port;
        const foreign = `rebind.example:${localPort}`;
        const read = await send(localPort, 'GET', '/batches', { headers: { host: foreign } });
        expect(read.status).toBe(421);
        expect(read.text).not.toContain(ids.unknownBatch);
        const resolve = (host: string) =>
          send(localPort, 'POST', `/batches/${ids.unknownBatch}/requests/1/resolve`, {
            headers: { host, origin: `http://${host}`, 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ finding: 'not_created', note: 'from another site' }).toString(),
          });
        expect((await resolve(foreign)).status).toBe(421);
        expect((await p.ledger.getRequest(ids.unknownBatch, 1))!.state).toBe('unknown');

        for (const host of ['cashout.example.com', 'cashout.example.com:8443', `127.0.0.1:${localPort}`]) {
          const ok = await send(localPort, 'GET', '/batches', { headers: { host } });
          expect([host, ok.status]).toEqual([host, 200]);
          expect(ok.text).toContain(ids.unknownBatch);
        }
        // The same post from the dashboard's own name is what a person does: it is recorded.
        expect((await resolve(`127.0.0.1:${localPort}`)).status).toBe(303);
        expect((await p.ledger.getRequest(ids.unknownBatch, 1))!.state).toBe('reconciled_not_created');
      } finally {
        await local.close();
      }
    });
  });

  describe('failed logins cannot lock out a user with the right password', () => {
    it('a correct password is never counted: the same user logs in again and again', async () => {
      for (let i = 0; i < 8; i++) expect((await login('alice', PASSWORD, '127.0.0.21')).status).toBe(303);
    });

    it('wrong passwords for other user names from the same address do not stop the user', async () => {
      const statuses: number[] = [];
      for (const user of ['nobody', 'bob', 'admin']) {
        for (let i = 0; i < 7; i++) statuses.push((await login(user, `guess ${i}`, '127.0.0.22')).status);
      }
      expect(statuses).toContain(429);
      expect((await login('alice', PASSWORD, '127.0.0.22')).status).toBe(303);
    });

    it('wrong passwords for the user from another client do not stop the user', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await login('carol', `guess ${i}`, '127.0.0.23')).status);
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses.slice(5)).toEqual([429, 429, 429]);
      expect((await login('carol', PASSWORD, '127.0.0.24')).status).toBe(303);
    });

    it('guessing is slowed: of attempts sent at once at most 5 are checked, then the address waits', async () => {
      const known = cookieOf(await login('bob', PASSWORD, '127.0.0.25'), KNOWN_BROWSER_COOKIE);
      expect(known).toBeDefined();
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => login('bob', `guess ${i}`, '127.0.0.25')));
      const statuses = burst.map((r) => r.status);
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(15);
      const refused = burst.find((r) => r.status === 429)!;
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.text).toMatch(/Too many failed attempts/);
      // From that address, a browser unknown for bob waits too, even with the right password ...
      expect((await login('bob', PASSWORD, '127.0.0.25')).status).toBe(429);
      // ... while bob's own browser, which logged in before, still gets in.
      const own = await login('bob', PASSWORD, '127.0.0.25', known);
      expect(own.status).toBe(303);
      expect(cookieOf(own, SESSION_COOKIE)).toBeDefined();
    });

    it('a known browser is limited too: its own wrong passwords make it wait', async () => {
      const known = cookieOf(await login('maker', PASSWORD, '127.0.0.26'), KNOWN_BROWSER_COOKIE)!;
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await login('maker', `guess ${i}`, '127.0.0.26', known)).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
      // A known-browser cookie of one user gives nothing for another user name.
      expect((await login('alice', 'guess', '127.0.0.26', known)).status).toBe(401);
    });
  });
});
