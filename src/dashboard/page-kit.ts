/**
 * What the dashboard's routes share: its dependencies, the one-time message shown on the next
 * page (flash), and the page renderer the upload routes take from the server.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Ledger } from '../ledger/index.js';
import type { SubmitJobData } from '../queue/queues.js';
import type { MetricsRegistry } from '../metrics.js';
import type { ImportDeps } from '../batch/import-batch.js';
import type { ApiDeps } from '../api/routes.js';
import type { UserTable } from './users.js';
import type { Session } from './sessions.js';
import type { MessageKey, Translate } from './i18n/index.js';

/** What the dashboard needs. `users: 'none'` turns the login off (allowed on loopback only). */
export interface DashboardDeps {
  readonly ledger: Ledger;
  readonly queue: Queue<SubmitJobData>;
  /** Other queues of the project to show in Bull Board. */
  readonly otherQueues?: readonly Queue[];
  readonly redis: Redis;
  readonly prefix: string;
  readonly log: Logger;
  readonly users: UserTable | 'none';
  /** Mark the session cookie Secure (behind TLS). */
  readonly secureCookies: boolean;
  /** Start the CSV files it writes with a UTF-8 byte-order mark (`Config.csvBom`). Default true. */
  readonly csvBom?: boolean;
  readonly metrics?: MetricsRegistry;
  /**
   * Host names answered besides the loopback names on the dashboard's port: "name" (any port) or
   * "name:port" (CASHOUT_DASHBOARD_HOSTS, the address listened on).
   */
  readonly allowedHosts?: readonly string[];
  /** The HTTP API under /api/v1 (src/api/routes.ts), with what its uploads need; none when absent. */
  readonly api?: Pick<ApiDeps, 'import' | 'maxFileBytes'>;
  /** Time zone of the times shown (CASHOUT_TIMEZONE); default `CONFIG_DEFAULTS.timezone` (Africa/Cairo). */
  readonly timeZone?: string;
  /**
   * What an upload's Send imports with (`importDeps` of the commands: the ledger, queue, rules,
   * limits and approval policy of `cashout import`); else `api.import`. Without either, the
   * upload page says uploads are off.
   */
  readonly imports?: ImportDeps;
}

/**
 * A message shown once on the next page: a key of the wording tables with its parameters, or a
 * text as it came (the ledger's refusals are written in English).
 */
export interface Flash {
  readonly kind: 'ok' | 'error';
  readonly key?: MessageKey;
  readonly params?: Readonly<Record<string, string | number>>;
  readonly text?: string;
}

/** The flash of a refused action: its wording key when the error names one, else its message. */
export function errorFlash(err: { message: string; context: Record<string, unknown> }): Flash {
  return typeof err.context.key === 'string'
    ? { kind: 'error', key: err.context.key as MessageKey, params: err.context as Record<string, string> }
    : { kind: 'error', text: err.message };
}

/** Renders a page of the dashboard's layout (server.ts). */
export type PageRenderer = (
  req: FastifyRequest,
  reply: FastifyReply,
  view: string,
  title: string,
  data: Record<string, unknown>,
  session?: Session,
  flash?: Flash,
) => FastifyReply;

/** What the upload routes take from the dashboard. */
export interface UploadRouteKit {
  readonly deps: DashboardDeps;
  readonly page: PageRenderer;
  readonly translate: (req: FastifyRequest) => Translate;
  readonly sessionOf: (req: FastifyRequest) => Session | undefined;
  readonly setFlash: (s: Session | undefined, flash: Flash) => Promise<void>;
  readonly takeFlash: (s: Session | undefined) => Promise<Flash | undefined>;
}
