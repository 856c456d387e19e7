/**
 * What Bull Board may do on the dashboard: an allow-list keyed by the route the web server matched
 * (method and route pattern, such as `PUT /api/queues/:queueName/:jobId/retry`) and by its decoded
 * parameters, never by the text of the request's path. Whatever way a path is spelt (percent
 * encoding, case, extra or dot segments), it either resolves to one of these routes with decoded
 * parameters or to no route at all; a route or an action not listed here is refused.
 *
 * Allowed: every view (the pages, static files and read-only API calls); pausing and resuming
 * queues; on the submit queue, retrying a failed job (the processor re-reads the ledger and never
 * sends a request that may already have been created); on the inbox queue, running a scan again
 * (retry, promote, run the scheduler now), which is harmless because a file is taken only once and
 * content imported before is refused. Adding, duplicating, editing, removing or re-prioritising jobs,
 * emptying or obliterating a queue, changing its limits and retrying completed submissions are refused.
 */
import type { Queue } from 'bullmq';
import { SUBMIT_QUEUE } from '../queue/queues.js';
import { INBOX_QUEUE } from '../../jobs/schedule.js';

/** A state-changing Bull Board action on one queue that a queue policy may allow. */
export type QueueAction =
  'pause' | 'resume' | 'retry-job' | 'retry-all' | 'promote-job' | 'promote-all' | 'run-scheduler';

/** How a route is treated: a view, an action on every queue, an action on one queue, or refused with a reason. */
type RouteRule =
  | { readonly kind: 'view' }
  | { readonly kind: 'all-queues' }
  | { readonly kind: 'queue'; readonly action: QueueAction }
  | { readonly kind: 'refused'; readonly reason: string };

const VIEW: RouteRule = { kind: 'view' };
const refused = (reason: string): RouteRule => ({ kind: 'refused', reason });
const onQueue = (action: QueueAction): RouteRule => ({ kind: 'queue', action });

/** The generic refusal, for routes and actions not on the allow-list. */
export const NOT_ALLOWED = 'this queue action is not allowed from the dashboard';

/**
 * Every route of Bull Board (relative to its base path) with its rule. HEAD is treated as GET.
 * A route missing here (a newer Bull Board, say) is refused.
 */
const ROUTES: ReadonlyMap<string, RouteRule> = new Map<string, RouteRule>([
  ['GET /', VIEW],
  ['GET /metrics-history', VIEW],
  ['GET /job-schedulers', VIEW],
  ['GET /queue/:queueName', VIEW],
  ['GET /queue/:queueName/:jobId', VIEW],
  ['GET /static/*', VIEW],
  ['GET /api/redis/stats', VIEW],
  ['GET /api/queues', VIEW],
  ['GET /api/job-schedulers', VIEW],
  ['GET /api/queues/:queueName/metrics', VIEW],
  ['GET /api/queues/:queueName/default-job-options', VIEW],
  ['GET /api/queues/:queueName/workers', VIEW],
  ['GET /api/queues/:queueName/rate-limit', VIEW],
  ['GET /api/queues/:queueName/job-data-schema', VIEW],
  ['GET /api/queues/:queueName/:jobId/logs', VIEW],
  ['GET /api/queues/:queueName/:jobId/flow', VIEW],
  ['GET /api/queues/:queueName/:jobId', VIEW],
  ['PUT /api/queues/pause', { kind: 'all-queues' }],
  ['PUT /api/queues/resume', { kind: 'all-queues' }],
  ['PUT /api/queues/:queueName/pause', onQueue('pause')],
  ['PUT /api/queues/:queueName/resume', onQueue('resume')],
  ['PUT /api/queues/:queueName/retry/:queueStatus', onQueue('retry-all')],
  ['PUT /api/queues/:queueName/:jobId/retry', onQueue('retry-job')],
  ['PUT /api/queues/:queueName/promote', onQueue('promote-all')],
  ['PUT /api/queues/:queueName/:jobId/promote', onQueue('promote-job')],
  ['PUT /api/queues/:queueName/job-schedulers/:schedulerId/run', onQueue('run-scheduler')],
  [
    'POST /api/queues/:queueName/add',
    refused('adding or duplicating a job is not allowed: submission requests come only from an import'),
  ],
  ['PATCH /api/queues/:queueName/:jobId/update-data', refused('editing job data is not allowed')],
  ['PATCH /api/queues/:queueName/:jobId/delay', refused("changing a job's delay is not allowed")],
  ['PATCH /api/queues/:queueName/:jobId/priority', refused("changing a job's priority is not allowed")],
  ['PUT /api/queues/:queueName/:jobId/clean', refused('removing a job is not allowed')],
  ['PUT /api/queues/:queueName/clean/:queueStatus', refused('removing jobs is not allowed')],
  ['PUT /api/queues/:queueName/empty', refused('emptying a queue is not allowed')],
  ['PUT /api/queues/:queueName/obliterate', refused('obliterating a queue is not allowed')],
]);

/** What one queue allows: the actions, and for retries a check of what is retried. */
interface QueuePolicy {
  readonly actions: ReadonlySet<QueueAction>;
  /** Why retrying jobs in `state` is refused, or undefined when allowed. */
  retryRefusal(state: string): string | undefined;
}

const SUBMIT_POLICY: QueuePolicy = {
  actions: new Set<QueueAction>(['pause', 'resume', 'retry-job', 'retry-all']),
  retryRefusal: (state) =>
    state === 'failed'
      ? undefined
      : 'only a failed submission may be retried: a completed one already reached a final state',
};

const INBOX_POLICY: QueuePolicy = {
  actions: new Set<QueueAction>([
    'pause',
    'resume',
    'retry-job',
    'retry-all',
    'promote-job',
    'promote-all',
    'run-scheduler',
  ]),
  retryRefusal: (state) =>
    state === 'failed' || state === 'completed' ? undefined : 'only a finished scan may be run again',
};

const POLICIES: ReadonlyMap<string, QueuePolicy> = new Map([
  [SUBMIT_QUEUE, SUBMIT_POLICY],
  [INBOX_QUEUE, INBOX_POLICY],
]);

/** A request as the web server resolved it: method, matched route pattern and decoded parameters. */
export interface ResolvedRequest {
  readonly method: string;
  /** The matched route pattern relative to Bull Board's base path, or undefined when no route matched. */
  readonly route: string | undefined;
  readonly params: Readonly<Record<string, string | undefined>>;
}

/**
 * Why Bull Board must refuse `req`, or undefined when it is allowed. `queues` are the queues shown
 * (by their exact name); a queue not among them, or without a policy, allows views only.
 */
export async function bullBoardRefusal(
  req: ResolvedRequest,
  queues: ReadonlyMap<string, Queue>,
): Promise<string | undefined> {
  const method = req.method.toUpperCase() === 'HEAD' ? 'GET' : req.method.toUpperCase();
  if (req.route === undefined) return method === 'GET' ? undefined : NOT_ALLOWED;
  const rule = ROUTES.get(`${method} ${req.route === '' ? '/' : req.route}`);
  if (!rule) return NOT_ALLOWED;
  if (rule.kind === 'view' || rule.kind === 'all-queues') return undefined;
  if (rule.kind === 'refused') return rule.reason;
  const name = req.params.queueName ?? '';
  const queue = queues.get(name);
  const policy = POLICIES.get(name);
  if (!queue || !policy || !policy.actions.has(rule.action)) return NOT_ALLOWED;
  if (rule.action === 'retry-all') return policy.retryRefusal(req.params.queueStatus ?? '');
  if (rule.action === 'retry-job') {
    const job = await queue.getJob(req.params.jobId ?? '');
    return job ? policy.retryRefusal(await job.getState()) : 'no such job';
  }
  return undefined;
}
