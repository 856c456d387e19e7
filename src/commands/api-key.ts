/**
 * `cashout api-key create --name <who> | list | revoke <id>`: the keys of the HTTP API
 * (src/api/api-keys.ts). A new key is printed once, on standard output, and never logged; only
 * its SHA-256 is kept in Redis. The name is the person or system the key acts for: the ledger
 * records it as the importer, approver or reconciler, so one person's keys share one name.
 */
import { EXIT } from '../errors.js';
import { apiKeyStore } from '../api/api-keys.js';
import { openQueues, type AppContext } from './context.js';

/** Runs one of the subcommands; returns the exit code. */
export async function apiKeyCommand(
  ctx: AppContext,
  action: 'create' | 'list' | 'revoke',
  arg: { name?: string; id?: string },
): Promise<number> {
  const h = await openQueues(ctx);
  try {
    const keys = apiKeyStore(h.redis, h.prefix);
    if (action === 'create') {
      const { key, record } = await keys.create(arg.name ?? '');
      ctx.log.info({ keyId: record.id, name: record.name }, 'API key created');
      process.stdout.write(
        `API key ${record.id} for ${record.name} (shown this once; keep it secret; ` +
          `send it as "Authorization: Bearer <key>"):\n${key}\n`,
      );
    } else if (action === 'list') {
      const all = await keys.list();
      if (all.length === 0) process.stdout.write('No API keys.\n');
      for (const k of all) process.stdout.write(`${k.id}  ${k.name}  created ${k.createdAt}\n`);
    } else {
      const record = await keys.revoke(arg.id ?? '');
      ctx.log.info({ keyId: record.id, name: record.name }, 'API key revoked');
      process.stdout.write(`API key ${record.id} of ${record.name} revoked.\n`);
    }
    return EXIT.ok;
  } finally {
    await h.close();
  }
}
