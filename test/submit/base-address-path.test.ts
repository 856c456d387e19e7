/**
 * "Every path below is appended to" the base address (interface doc, Base addresses): a base with a
 * path of its own (`http://host/gateway`, with or without a trailing slash) keeps it, on both
 * endpoints. A recording server on 127.0.0.1 shows the path and the bytes each client sent; it also
 * shows that the charge's amount travels byte for byte as it was signed (§5.2 rule 3).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createChargeClient } from '../../src/charge/charge-client.js';
import { chargeSignature } from '../../src/charge/signature.js';
import { createPaymentClient } from '../../src/submit/payment-client.js';
import { endpointUrl } from '../../src/submit/service-http.js';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

const TOKEN = 'base-path-token-77';
const CREATED = { success: true, status_code: 200, status_description: 'created', message: 'created' };

describe('a base address with a path keeps it', () => {
  let server: Server;
  let origin: string;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(CREATED));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    seen.length = 0;
  });

  const settings = (baseUrl: string) => ({
    baseUrl,
    token: TOKEN,
    requestTimeoutMs: 2_000,
    connectTimeoutMs: 1_000,
    connections: 1,
  });

  it.each(['/gateway', '/gateway/', '/pay/gateway'])('the withdrawal endpoint under base path %s', async (path) => {
    const client = createPaymentClient(settings(`${origin}${path}`));
    try {
      const result = await client.postWithdrawal({ mobile_wallets: [] });
      expect(result).toMatchObject({ kind: 'response', status: 200 });
    } finally {
      await client.close();
    }
    const expected = `POST ${path.replace(/\/$/, '')}/api/v1/merchant/withdrawal`;
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([expected]);
    expect(seen[0]!.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json',
    });
  });

  it.each(['/gateway', '/gateway/'])('the charge endpoint under base path %s, amount sent as signed', async (path) => {
    const secrets = { merchantCode: 'MERCHANT42', hashKey: 'hk_5f2d9c' };
    const client = createChargeClient({ ...settings(`${origin}${path}`), ...secrets });
    try {
      await client.charge({
        merchant_reference_id: 'ORDER1001',
        customer_merchant_profile_id: 'cust-17',
        amount: '1500.05',
        customer_name: 'Mona Said',
        customer_mobile: '+201001234567',
        customer_email: 'mona@example.com',
        card_number: '9000000000000019',
        cvv: '731',
        expiry_year: '29',
        expiry_month: '05',
        description: 'Order 1001',
      });
    } finally {
      await client.close();
    }
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['POST /gateway/api/v1/charge/card']);
    const raw = seen[0]!.body.toString('utf8');
    const amountBytes = /"amount":"([^"]*)"/.exec(raw)?.[1];
    expect(amountBytes).toBe('1500.05');
    const signature = /"signature":"([0-9a-f]{64})"/.exec(raw)?.[1];
    expect(signature).toBe(
      chargeSignature({
        merchantCode: secrets.merchantCode,
        merchantReferenceId: 'ORDER1001',
        customerMerchantProfileId: 'cust-17',
        amount: amountBytes!,
        hashKey: secrets.hashKey,
      }),
    );
  });

  it.each([
    ['https://host', '/api/v1/charge/card', 'https://host/api/v1/charge/card'],
    ['https://host/', '/api/v1/charge/card', 'https://host/api/v1/charge/card'],
    ['https://host/gateway', '/api/v1/charge/card', 'https://host/gateway/api/v1/charge/card'],
    ['https://host/gateway//', '/js/plugins/x.js', 'https://host/gateway/js/plugins/x.js'],
  ])('endpointUrl(%s, %s) is %s', (base, path, expected) => {
    expect(endpointUrl(base, path).href).toBe(expected);
  });
});
