/**
 * People, not labels: through the real `cashout` command, the importer is the system user whatever
 * `--as` says, so they cannot approve their own batch by typing another name; `retry` and
 * `resolve` record who acted. Real Redis under a prefix of its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { openLedger, type Ledger } from '../../src/ledger/index.js';
import { runCli } from '../support/cli.js';
import { HEADER, walletRow } from '../support/pipeline.js';
import { TEST_REDIS_URL, deleteKeys, testPrefix } from '../support/redis.js';

describe('the CLI records people, not labels', () => {
  const prefix = testPrefix('cli-actors');
  const me = userInfo().username;
  let dir: string;
  let redis: Redis;
  let ledger: Ledger;
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cashout-actors-'));
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 3 });
    ledger = openLedger(redis, prefix);
    env = {
      REDIS_URL: TEST_REDIS_URL,
      CASHOUT_REDIS_PREFIX: prefix,
      CASHOUT_REPORTS_DIR: join(dir, 'reports'),
      CASHOUT_API_BASE_URL: 'http://127.0.0.1:9',
      CASHOUT_API_TOKEN: 'actors-token',
      CASHOUT_REQUIRE_APPROVAL: 'true',
      CASHOUT_ALLOW_UNSAFE_REDIS: 'true',
      CASHOUT_LOG_LEVEL: 'error',
    };
  });
  afterAll(async () => {
    redis.disconnect();
    await deleteKeys(prefix);
    await rm(dir, { recursive: true, force: true });
  });

  it('the importer cannot approve their own batch by typing another name; retry records who asked', async () => {
    const file = join(dir, 'payouts.csv');
    await writeFile(file, `${[HEADER, walletRow(1), walletRow(2)].join('\n')}\n`);
    const imported = await runCli(['import', file, '--as', 'payroll desk'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const batchId = /batch ([0-9a-f]{16})/i.exec(imported.stdout)?.[1] ?? /([0-9a-f]{16})/.exec(imported.stdout)?.[1];
    expect(batchId, imported.stdout).toBeDefined();
    const batch = await ledger.getBatch(batchId!);
    expect(batch?.state).toBe('awaiting_approval');
    expect(batch?.importedBy).toBe(`${me} (payroll desk)`);

    // The same system user, another label: refused, and nothing is queued.
    const own = await runCli(['approve', batchId!, '--as', 'someone else'], env);
    expect(own.code).toBe(2);
    expect(own.stderr).toContain(`was imported by ${me}; someone else must approve it`);
    expect((await ledger.getBatch(batchId!))?.state).toBe('awaiting_approval');

    // Another person approves (the dashboard's logged-in user, say).
    await ledger.approveBatch(batchId!, 'checker', 'checker');
    const retried = await runCli(['retry', batchId!, '1', '--as', 'night shift'], env);
    expect(retried.code, retried.stderr).toBe(0);
    const events = await ledger.listApprovals(batchId!);
    expect(events.map((e) => [e.action, e.by])).toEqual([
      ['imported', `${me} (payroll desk)`],
      ['approval_required', 'bulk-cashout'],
      ['approved', 'checker'],
      ['retried', `${me} (night shift)`],
    ]);
  });
});
