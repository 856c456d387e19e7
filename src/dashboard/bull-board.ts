/**
 * Bull Board for the project's queues, mounted on a fastify app. Job data is shown masked. Every
 * request to it is checked against an allow-list (./bull-board-policy.ts) by the route the server
 * matched and its decoded parameters, never by the text of the path: on the submit queue, adding or
 * duplicating a job, editing job data and retrying completed jobs are refused on the server, not
 * only hidden, and so is any action not proven safe. Retrying a failed submission stays possible:
 * the processor then re-reads the ledger and sends only what the ledger allows (never a request
 * that may already have been created).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { maskDeep } from '../mask.js';
import { SUBMIT_QUEUE } from '../queue/queues.js';
import { bullBoardRefusal, NOT_ALLOWED, type ResolvedRequest } from './bull-board-policy.js';

/** The request as the router resolved it, with the route pattern relative to `basePath`. */
function resolved(req: FastifyRequest, basePath: string): ResolvedRequest {
  const pattern = req.routeOptions.url;
  const route = pattern !== undefined && pattern.startsWith(basePath) ? pattern.slice(basePath.length) : undefined;
  return { method: req.method, route, params: (req.params ?? {}) as Record<string, string | undefined> };
}

/** Mounts Bull Board under `basePath` (default "/queues") for `queues`. */
export async function registerBullBoard(
  app: FastifyInstance,
  queues: readonly Queue[],
  basePath = '/queues',
): Promise<void> {
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(basePath);
  const adapters = queues.map((q) => {
    // `allowCompletedRetries` is honoured by the adapter but missing from its option type.
    const options = (
      q.name === SUBMIT_QUEUE ? { allowCompletedRetries: false, description: 'one job per withdrawal request' } : {}
    ) as ConstructorParameters<typeof BullMQAdapter>[1];
    const a = new BullMQAdapter(q, options);
    a.setFormatter('data', (data: unknown) => maskDeep(data));
    a.setFormatter('returnValue', (v: unknown) => maskDeep(v));
    return a;
  });
  createBullBoard({ queues: adapters, serverAdapter, options: { uiConfig: { boardTitle: 'bulk-cashout queues' } } });
  const byName = new Map(queues.map((q) => [q.name, q]));
  await app.register(
    async (scope) => {
      // Runs for every request routed into this scope, and for those matching no route under it.
      scope.addHook('onRequest', async (req, reply) => {
        const why = await bullBoardRefusal(resolved(req, basePath), byName);
        if (why) return reply.code(403).send({ error: why });
        return undefined;
      });
      scope.setNotFoundHandler(async (req, reply) =>
        ['GET', 'HEAD'].includes(req.method)
          ? reply.code(404).send({ error: 'not found' })
          : reply.code(403).send({ error: NOT_ALLOWED }),
      );
      await scope.register(serverAdapter.registerPlugin());
    },
    { prefix: basePath },
  );
}
