/**
 * The HTTP API end to end, over real HTTP, against the real Redis and the sandbox: a system uploads
 * the error sample and sees its problems, uploads the fixed file, a second key (another person)
 * approves, a worker pays it against the sandbox, a request the sandbox made unknown is resolved
 * as not created and retried through the API, and the sandbox created every payout once. Two
 * receivers get the notifications: one fails its first deliveries (retried, signatures valid, no
 * full numbers), the other never answers (given up, never in the batch's way).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { parse } from 'csv-parse/sync';
import iconv from 'iconv-lite';
import { hashPassword } from '../../src/dashboard/users.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadBankList } from '../../src/contract/supported-banks.js';
import { apiKeyStore } from '../../src/api/api-keys.js';
import { createNotifier, type Notifier } from '../../src/notify/notifier.js';
import { notifyAwaitingApproval, reportAndNotifyDone } from '../../src/notify/batch-events.js';
import { verifySignature } from '../../src/notify/signature.js';
import { freePort } from '../../src/queue/private-redis.js';
import { PACKAGE_ROOT } from '../../src/paths.js';
import { startNotifyWorker, type NotifyWorker } from '../../jobs/index.js';
import { openTestPipeline, type TestPipeline } from '../support/pipeline.js';
import { startTestDashboard } from '../support/dashboard.js';

const TOKEN = 'http-api-test-token';
const SECRET = 'a-webhook-secret-of-some-length';
const SAMPLE = join(PACKAGE_ROOT, 'samples', 'payouts-with-errors.csv');

interface Received {
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** A receiver on 127.0.0.1 that answers 500 to its first `failFirst` deliveries, then 204. */
async function startReceiver(failFirst: number): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      calls++;
      if (calls <= failFirst) {
        res.writeHead(500).end();
        return;
      }
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/hooks/cashout?token=receiver-secret`, received, server };
}

describe('HTTP API: upload, approve, pay, reconcile, notify', () => {
  let p: TestPipeline;
  let sandbox: Sandbox;
  let app: FastifyInstance;
  let base: string;
  let notifier: Notifier;
  let worker: { close(): Promise<void> };
  let notifyWorker: NotifyWorker;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let downUrl: string;
  let makerKey: string;
  let checkerKey: string;

  beforeAll(async () => {
    p = await openTestPipeline('http-api');
    sandbox = await startSandbox({ token: TOKEN, banks: loadBankList() });
    receiver = await startReceiver(2);
    downUrl = `http://127.0.0.1:${await freePort()}/never`;
    notifier = createNotifier(
      { urls: [receiver.url, downUrl], attempts: 4, backoffMs: 50, dashboardUrl: 'https://cashout.example.com' },
      p.workerRedis,
      p.prefix,
      p.log,
    );
    const dashboard = await startTestDashboard(p, {
      users: new Map([['someone', await hashPassword('correct horse battery staple')]]),
      api: {
        import: p.importDeps({
          itemsPerRequest: 2,
          serviceUrl: sandbox.url,
          policy: { requireApproval: true, approvalExpiryHours: 1 },
          onAwaitingApproval: notifyAwaitingApproval(notifier),
        }),
        maxFileBytes: 1_000_000,
      },
    });
    app = dashboard.app;
    base = `${dashboard.base}/api/v1`;
    const keys = apiKeyStore(p.redis, p.prefix);
    makerKey = (await keys.create('payroll-system')).key;
    checkerKey = (await keys.create('amira')).key;
    worker = p.startWorker({
      baseUrl: sandbox.url,
      token: TOKEN,
      concurrency: 1,
      connections: 2,
      onBatchDone: async (id) => void (await reportAndNotifyDone(p.ledger, notifier, p.log)(id)),
    });
    notifyWorker = startNotifyWorker(
      { connection: p.workerRedis, prefix: p.prefix },
      { secret: SECRET, timeoutMs: 1000, redis: p.redis, prefix: p.prefix, log: p.log },
    );
  });
  afterAll(async () => {
    await worker?.close();
    await notifyWorker?.close();
    await notifier?.close();
    await app?.close();
    await sandbox?.close();
    await new Promise((resolve) => receiver?.server.close(resolve));
    await p?.close();
  });

  const call = async (
    method: string,
    path: string,
    key: string | undefined,
    body?: string | object,
    type = 'application/json',
  ) => {
    const headers: Record<string, string> = {};
    if (key) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers['content-type'] = type;
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: typeof body === 'object' ? JSON.stringify(body) : body,
    });
    const text = await res.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // CSV or empty
    }
    return { status: res.status, json: json as Record<string, any>, text, headers: res.headers };
  };
  const batchState = async (id: string) => (await call('GET', `/batches/${id}`, checkerKey)).json.state as string;

  it('refuses requests without a valid key, and serves nothing of a batch to them', async () => {
    expect((await call('GET', '/batches/0123456789abcdef', undefined)).status).toBe(401);
    expect(
      (await call('GET', '/batches/0123456789abcdef', 'cok_00000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'))
        .status,
    ).toBe(401);
    expect((await call('GET', '/batches/0123456789abcdef', `${makerKey}x`)).status).toBe(401);
    expect((await call('GET', '/batches/0123456789abcdef', makerKey)).status).toBe(404);
  });

  it('the whole flow, with notifications', async () => {
    // 1. The error sample: refused as a whole, every problem named with its line.
    const sample = await readFile(SAMPLE, 'utf8');
    const bad = await call('POST', '/batches?file_name=payouts-with-errors.csv', makerKey, sample, 'text/csv');
    expect(bad.status, bad.text).toBe(201);
    expect(bad.json.state).toBe('refused');
    const expected = parse(await readFile(join(PACKAGE_ROOT, 'samples', 'payouts-with-errors.expected.csv')), {
      columns: true,
    }) as Record<string, string>[];
    const problems = bad.json.problems as {
      line: number;
      status: string;
      issues: { column: string; code: string }[];
    }[];
    expect(new Set(problems.map((x) => x.line))).toEqual(new Set(expected.map((e) => Number(e.line))));
    for (const e of expected) {
      const found = problems.find((x) => x.line === Number(e.line))!;
      expect(found.issues.map((i) => `${i.column}:${i.code}`)).toContain(`${e.column}:${e.code}`);
    }
    const rejected = await call('GET', `/batches/${bad.json.batchId}/files/rejected-rows.csv`, makerKey);
    expect(rejected.status).toBe(200);
    expect(rejected.text).toContain('Banqe Misr');

    // 2. The fixed file: the rows named are taken out. It waits for a second person.
    const lines = sample.trimEnd().split('\n');
    const bad_lines = new Set(problems.map((x) => x.line));
    const fixed = `${lines.filter((_, i) => i === 0 || !bad_lines.has(i + 1)).join('\n')}\n`;
    const fixedRows = fixed.trimEnd().split('\n').length - 1;
    const up = await call('POST', '/batches?file_name=payouts-fixed.csv', makerKey, fixed, 'text/csv');
    expect(up.status, up.text).toBe(201);
    expect(up.json).toMatchObject({ state: 'awaiting_approval', validRows: fixedRows, invalidRows: 0, problems: [] });
    const id = up.json.batchId as string;
    expect(up.headers.get('location')).toBe(`/api/v1/batches/${id}`);
    expect(await p.queue.count()).toBe(0);
    const waiting = await call('GET', `/batches/${id}`, makerKey);
    expect(waiting.json).toMatchObject({ state: 'awaiting_approval', importedBy: 'payroll-system', rows: fixedRows });
    expect(waiting.json.byStatus.pending.rows).toBe(fixedRows);

    // 3. The importer's key cannot approve; another person's can.
    const own = await call('POST', `/batches/${id}/approve`, makerKey, {});
    expect(own.status).toBe(403);
    expect(own.json.error.code).toBe('self_approval');
    expect(await batchState(id)).toBe('awaiting_approval');
    sandbox.setFaults({ rates: { http500: 0.5 }, seed: 7 });
    const ok = await call('POST', `/batches/${id}/approve`, checkerKey, { label: 'finance desk' });
    expect(ok.status, ok.text).toBe(200);

    // 4. The worker pays it; the sandbox leaves some requests unknown (500: nothing created).
    await expect.poll(() => batchState(id), { timeout: 20_000, interval: 100 }).toBe('needs_reconciliation');
    sandbox.setFaults({});
    const unknownRows = await call('GET', `/batches/${id}/rows?status=unknown&per_page=1000`, checkerKey);
    expect(unknownRows.json.matching).toBeGreaterThan(0);
    const seqs = [...new Set((unknownRows.json.rows as Record<string, string>[]).map((r) => Number(r.request)))];
    const recon = await call('GET', `/batches/${id}/files/reconciliation.csv`, checkerKey);
    expect(recon.status).toBe(200);
    expect(recon.headers.get('content-type')).toMatch(/text\/csv/);

    // An unknown request may not be sent again before a person resolved it.
    const early = await call('POST', `/batches/${id}/requests/${seqs[0]}/retry`, checkerKey, {});
    expect(early.status).toBe(409);
    // Every finding first, then the retries: the batch needs reconciliation once.
    for (const seq of seqs) {
      const finding = { finding: 'not_created', note: 'not in the merchant dashboard' };
      const r = await call('POST', `/batches/${id}/requests/${seq}/resolve`, checkerKey, finding);
      expect(r.status, r.text).toBe(200);
      expect(r.json.state).toBe('reconciled_not_created');
    }
    for (const seq of seqs) {
      expect((await call('POST', `/batches/${id}/requests/${seq}/retry`, checkerKey, {})).status).toBe(202);
    }
    await expect.poll(() => batchState(id), { timeout: 20_000, interval: 100 }).toBe('finished');

    // 5. Every row accepted, and the sandbox created each payout once.
    const done = await call('GET', `/batches/${id}`, checkerKey);
    expect(done.json.byStatus.accepted.rows).toBe(fixedRows);
    expect(done.json.approvedBy).toBe('amira (finance desk)');
    expect(done.json.resolutions).toHaveLength(seqs.length);
    const accepted = await call('GET', `/batches/${id}/rows?status=accepted&page=2&per_page=5`, checkerKey);
    expect(accepted.json).toMatchObject({ matching: fixedRows, page: 2, perPage: 5 });
    expect(accepted.json.rows).toHaveLength(Math.min(5, fixedRows - 5));
    const items = sandbox
      .ledger()
      .flatMap((e) => [
        ...(e.body.mobile_wallets ?? []).map((w) => `${w.mobile_number}/${w.amount}`),
        ...(e.body.bank_accounts ?? []).map((b) => `${b.number}/${b.amount}`),
      ]);
    expect(items).toHaveLength(fixedRows);
    expect(new Set(items).size).toBe(fixedRows);
    const results = await call('GET', `/batches/${id}/files/results.csv`, checkerKey);
    expect(results.status).toBe(200);
    const summary = await call('GET', `/batches/${id}/files/summary.json`, checkerKey);
    expect(summary.json.batchState).toBe('finished');

    // 6. Notifications: the three events reached the flaky receiver after its failures, signed,
    // without a full mobile or account number; the receiver that never answers was given up.
    const events = () => new Set(receiver.received.map((r) => JSON.parse(r.body).event as string));
    await expect
      .poll(() => [...events()].sort(), { timeout: 15_000, interval: 100 })
      .toEqual(['batch.awaiting_approval', 'batch.finished', 'batch.needs_reconciliation']);
    const numbers = sample.match(/\+?\d{10,}|EG\d{27}/g)!;
    expect(numbers.length).toBeGreaterThan(10);
    for (const r of receiver.received) {
      expect(verifySignature(SECRET, r.headers['x-cashout-signature'] as string, r.body)).toBe(true);
      expect(verifySignature('another-secret-entirely', r.headers['x-cashout-signature'] as string, r.body)).toBe(
        false,
      );
      for (const n of numbers) expect(r.body).not.toContain(n);
      expect(r.body).not.toMatch(/\+20\d{10}|EG\d{27}/);
      const payload = JSON.parse(r.body);
      expect(payload).toMatchObject({ batchId: id, link: `https://cashout.example.com/batches/${id}` });
      expect(payload.text).toContain(id);
      expect(payload.text).toContain('<https://cashout.example.com/batches/');
      expect(r.headers['x-cashout-delivery']).toBe(payload.id);
    }
    const finished = receiver.received.map((r) => JSON.parse(r.body)).find((x) => x.event === 'batch.finished');
    expect(finished.counts.accepted).toBe(fixedRows);
    expect(finished.totals.accepted).toBe(done.json.byStatus.accepted.amount);
    const approval = receiver.received
      .map((r) => JSON.parse(r.body))
      .find((x) => x.event === 'batch.awaiting_approval');
    expect(approval).toMatchObject({ state: 'awaiting_approval', rows: fixedRows, counts: { pending: fixedRows } });

    const receiverHost = new URL(receiver.url).host;
    const downHost = new URL(downUrl).host;
    const record = async () =>
      (await call('GET', `/batches/${id}/notifications`, makerKey)).json.deliveries as Record<string, any>[];
    await expect
      .poll(async () => (await record()).filter((d) => d.host === downHost).length, { timeout: 15_000 })
      .toBe(3 * 4);
    const deliveries = await record();
    const flaky = deliveries.filter((d) => d.host === receiverHost);
    expect(flaky.filter((d) => !d.ok).map((d) => d.status)).toEqual([500, 500]);
    expect(flaky.filter((d) => d.ok)).toHaveLength(3);
    expect(flaky.find((d) => !d.ok)!.attempt).toBe(1);
    expect(deliveries.filter((d) => d.host === downHost).every((d) => !d.ok && d.status === 0)).toBe(true);
    expect(JSON.stringify(deliveries)).not.toContain('receiver-secret');
    expect(await batchState(id)).toBe('finished');

    // Keys and the webhook secret are in no log line.
    const logs = p.logLines.join('');
    for (const secret of [makerKey, checkerKey, SECRET, 'receiver-secret']) expect(logs).not.toContain(secret);
  }, 60_000);

  it('names a file it cannot read by its file name, and the options by the query parameters to send', async () => {
    const upload = async (name: string, bytes: Buffer) => {
      const res = await fetch(`${base}/batches?file_name=${name}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${makerKey}`, 'content-type': 'text/csv' },
        body: bytes,
      });
      return { status: res.status, error: ((await res.json()) as { error: { code: string; message: string } }).error };
    };
    const header =
      'channel,amount,type,holder_name,mobile_number,bank_name,bank_address,account_number,description,reference';
    const arabic = iconv.encode(
      `${header}\nwallet,10.00,TRANSFER,منى ياسر عثمان,+201001112233,,,,مكافأة,AR-1\n`,
      'windows-1256',
    );
    const encoding = await upload('arabic.csv', arabic);
    expect(encoding.status).toBe(422);
    expect(encoding.error.code).toBe('file_encoding');
    expect(encoding.error.message).toContain('"arabic.csv" is not UTF-8 text');
    expect(encoding.error.message).toContain('send it again with encoding=windows-1256');
    expect(encoding.error.message).not.toMatch(/--encoding|cashout-upload-|\//);

    const semicolons = await upload('semi.csv', Buffer.from(`${header.replaceAll(',', ';')}\n`));
    expect(semicolons.error.code).toBe('file_delimiter');
    expect(semicolons.error.message).toContain('send it again with delimiter=semicolon');
    expect(semicolons.error.message).not.toContain('--delimiter');
  });
});
