/**
 * Bull Board for the project's queues, mounted on a fastify app. Job data is shown masked. On the
 * submit queue the actions that could create work the ledger never planned are refused on the
 * server, not only hidden: adding or duplicating a job, editing job data, and retrying completed
 * jobs. Retrying a failed submission stays possible: the processor then re-reads the ledger and
 * sends only what the ledger allows (never a request that may already have been created).
 */
import type { FastifyInstance } from 'fastify';
import type { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { maskDeep } from '../mask.js';
import { SUBMIT_QUEUE } from '../queue/queues.js';

/** Why an action on the submit queue is refused, or undefined when it is allowed. */
export async function refusedSubmitAction(method: string, path: string, basePath: string, queue: Queue | undefined): Promise<string | undefined> {
  const prefix = `${basePath}/api/queues/${encodeURIComponent(SUBMIT_QUEUE)}/`;
  if (!path.startsWith(prefix)) return undefined;
  const rest = path.slice(prefix.length).split('?')[0]!;
  const m = method.toUpperCase();
  if (m === 'POST' && rest === 'add') return 'adding or duplicating a submission job is not allowed: requests come only from an import';
  if ((m === 'PUT' || m === 'PATCH') && /\/update-data$/.test(rest)) return 'editing submission job data is not allowed';
  if (m === 'PUT' && rest === 'retry/completed') return 'retrying completed submissions is not allowed: they already reached a final state';
  const single = /^([^/]+)\/retry$/.exec(rest);
  if (m === 'PUT' && single && queue) {
    const job = await queue.getJob(decodeURIComponent(single[1]!));
    if (job && (await job.getState()) === 'completed') return 'retrying a completed submission is not allowed: it already reached a final state';
  }
  return undefined;
}

/** Mounts Bull Board under `basePath` (default "/queues") for `queues`. */
export async function registerBullBoard(app: FastifyInstance, queues: readonly Queue[], basePath = '/queues'): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(basePath);
  const adapters = queues.map((q) => {
    // `allowCompletedRetries` is honoured by the adapter but missing from its option type.
    const options = (q.name === SUBMIT_QUEUE ? { allowCompletedRetries: false, description: 'one job per withdrawal request' } : {}) as ConstructorParameters<typeof BullMQAdapter>[1];
    const a = new BullMQAdapter(q, options);
    a.setFormatter('data', (data: unknown) => maskDeep(data));
    a.setFormatter('returnValue', (v: unknown) => maskDeep(v));
    return a;
  });
  createBullBoard({ queues: adapters, serverAdapter, options: { uiConfig: { boardTitle: 'bulk-cashout queues' } } });
  const submit = queues.find((q) => q.name === SUBMIT_QUEUE);
  await app.register(async (scope) => {
    scope.addHook('onRequest', async (req, reply) => {
      const why = await refusedSubmitAction(req.method, req.url, basePath, submit);
      if (why) return reply.code(403).send({ error: why });
      return undefined;
    });
    await scope.register(serverAdapter.registerPlugin(), { prefix: basePath });
  });
}
