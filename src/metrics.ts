/**
 * Prometheus metrics (prom-client), one registry per process. Counters and the latency
 * histogram are fed by the worker as it records outcomes; queue depths, ledger request states and
 * batch states are read from Redis when the metrics are scraped. No personal data in labels.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Queue } from 'bullmq';
import type { Ledger } from './ledger/index.js';

/** A process's metrics. */
export interface MetricsRegistry {
  readonly contentType: string;
  render(): Promise<string>;
  /** One finished submission: its outcome, how many rows it carried, how long the POST took. */
  observeSubmission(outcome: string, rows: number, seconds: number): void;
}

/** Creates the registry; `queues` and `ledger` are read at scrape time. */
export function createMetrics(opts: {
  queues: readonly Queue[];
  ledger: Ledger;
  defaultMetrics?: boolean;
}): MetricsRegistry {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'cashout_process_' });
  const rows = new Counter({
    name: 'cashout_rows_total',
    help: 'Payout rows by the outcome of their withdrawal request',
    labelNames: ['status'],
    registers: [registry],
  });
  const requests = new Counter({
    name: 'cashout_requests_total',
    help: 'Withdrawal requests by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'cashout_submission_seconds',
    help: 'Time of one withdrawal request POST, in seconds',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  new Gauge({
    name: 'cashout_queue_jobs',
    help: 'Jobs per queue and state',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const q of opts.queues) {
        const counts = await q.getJobCounts('waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized');
        for (const [state, n] of Object.entries(counts)) this.set({ queue: q.name, state }, n);
      }
    },
  });
  new Gauge({
    name: 'cashout_batches',
    help: 'Batches (most recent 1000) by state',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      this.reset();
      const byState = new Map<string, number>();
      for (const b of await opts.ledger.listBatches(1000)) byState.set(b.state, (byState.get(b.state) ?? 0) + 1);
      for (const [state, n] of byState) this.set({ state }, n);
    },
  });
  new Gauge({
    name: 'cashout_open_requests',
    help: 'Withdrawal requests not yet final, over the most recent 1000 batches',
    registers: [registry],
    async collect() {
      let open = 0;
      for (const b of await opts.ledger.listBatches(1000)) open += b.open;
      this.set(open);
    },
  });
  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),
    observeSubmission(outcome, n, seconds) {
      rows.inc({ status: outcome }, n);
      requests.inc({ outcome });
      latency.observe(seconds);
    },
  };
}

/** Serves GET /metrics on host:port (the worker's; keep it on a private network). */
export async function serveMetrics(
  metrics: MetricsRegistry,
  host: string,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.get('/metrics', async (_req, reply) => reply.type(metrics.contentType).send(await metrics.render()));
  const url = await app.listen({ host, port });
  return { url, close: () => app.close() };
}
