/** Notification signatures verify only with their secret and time; payloads hold no full numbers. */
import { describe, expect, it } from 'vitest';
import { signBody, verifySignature } from '../../src/notify/signature.js';
import { buildPayload } from '../../src/notify/payload.js';

describe('notification signature', () => {
  const body = '{"event":"batch.finished"}';
  it('verifies with the secret, the exact body and a recent time only', () => {
    const header = signBody('s'.repeat(20), body, 1_700_000_000);
    expect(header).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature('s'.repeat(20), header, body, 300, 1_700_000_100)).toBe(true);
    expect(verifySignature('t'.repeat(20), header, body, 300, 1_700_000_100)).toBe(false);
    expect(verifySignature('s'.repeat(20), header, `${body} `, 300, 1_700_000_100)).toBe(false);
    expect(verifySignature('s'.repeat(20), header, body, 300, 1_700_001_000)).toBe(false);
    expect(verifySignature('s'.repeat(20), undefined, body)).toBe(false);
  });
});

describe('notification payload', () => {
  it('masks digit runs of the file name and gives a Slack-style line with the link', () => {
    const p = buildPayload(
      'batch.needs_reconciliation',
      {
        batchId: '0123456789abcdef',
        state: 'needs_reconciliation',
        fileName: 'salary-201001234567.csv',
        rows: 3,
        counts: { accepted: 2, unknown: 1 },
        totals: { accepted: '200.00', unknown: '1500.00' },
        total: '1700.00',
      },
      'https://cashout.example.com',
      new Date('2026-11-20T10:00:00Z'),
    );
    expect(JSON.stringify(p)).not.toContain('201001234567');
    expect(p.text).toBe(
      'Batch 0123456789abcdef (salary-2010*****567.csv) needs reconciliation: 3 rows, EGP 1,700.00; 2 accepted, 1 unknown. ' +
        '<https://cashout.example.com/batches/0123456789abcdef|Open in the dashboard>',
    );
    expect(p.id).toBe(`batch.needs_reconciliation.0123456789abcdef.${Date.parse('2026-11-20T10:00:00Z')}`);
  });
});
