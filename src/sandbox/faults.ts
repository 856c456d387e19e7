/**
 * Fault injection for the local sandbox of the payment service. The interface document gives no
 * rate limits, timeouts or failure bodies beyond validation (interface doc §7 rule 2, §8: "not
 * shown"), so the sandbox lets a test or a person dial in the failures a real service and the
 * network between can produce: server errors, throttling, hangs, and the ambiguous cases where
 * the request was created but the client never learns it.
 */
import { z } from 'zod';
import { CashoutError } from '../errors.js';

/**
 * The fault kinds, in the order `pickFault` checks them. The first four never create a
 * withdrawal request; the last three create exactly one and then answer badly or not at all.
 */
export const FAULT_KINDS = [
  'http500',
  'http503',
  'http429',
  'hang',
  'createThenReset',
  'malformed200',
  'createThen500',
] as const;

/** One fault kind (see `FaultConfig.rates`). */
export type FaultKind = (typeof FAULT_KINDS)[number];

/**
 * Fault configuration of the sandbox. Probabilities are per authenticated POST.
 *
 * - `latencyMs`: time in milliseconds from a request's arrival to its answer (its checks run within
 *   it), fixed or uniform in `[min, max]`.
 * - `rates`: probability 0..1 of each kind, checked in `FAULT_KINDS` order; their sum is at most 1
 *   and the rest is the share of requests answered normally.
 *   - `http500` / `http503`: answer 500 / 503 JSON, nothing created.
 *   - `http429`: answer 429 JSON with `Retry-After: <retryAfterSeconds>`, nothing created.
 *   - `hang`: never answer; the socket stays open until the client gives up or the sandbox closes.
 *   - `createThenReset`: validate and create, then drop the connection without a response.
 *   - `malformed200`: validate and create, then answer 200 with a body that does not match §2.5.
 *   - `createThen500`: validate and create, then answer 500.
 * - `retryAfterSeconds`: value of the `Retry-After` header on 429 answers, default 1.
 * - `seed`: seed of the PRNG choosing faults and latencies, for reproducible runs; default random.
 */
export interface FaultConfig {
  latencyMs?: number | { min: number; max: number };
  rates?: Partial<Record<FaultKind, number>>;
  retryAfterSeconds?: number;
  seed?: number;
}

const rate = z.number().min(0).max(1);

const FaultConfigSchema = z
  .object({
    latencyMs: z
      .union([
        z.number().finite().min(0),
        z
          .object({ min: z.number().finite().min(0), max: z.number().finite().min(0) })
          .strict()
          .refine((r) => r.min <= r.max, { message: 'latencyMs.min must not exceed latencyMs.max' }),
      ])
      .optional(),
    rates: z
      .object(
        Object.fromEntries(FAULT_KINDS.map((k) => [k, rate.optional()])) as Record<
          FaultKind,
          z.ZodOptional<typeof rate>
        >,
      )
      .strict()
      .refine((r) => Object.values(r).reduce<number>((s, v) => s + (v ?? 0), 0) <= 1 + 1e-9, {
        message: 'the fault rates must sum to at most 1',
      })
      .optional(),
    retryAfterSeconds: z.number().int().min(0).optional(),
    seed: z.number().int().min(0).max(0xffffffff).optional(),
  })
  .strict();

/**
 * Checks a fault configuration (e.g. the JSON body of `PUT /__sandbox/faults`). Unknown keys,
 * rates outside 0..1, rates summing above 1, negative latencies and `min > max` are rejected.
 * Throws `CashoutError('config_invalid')` whose context holds `issues` (path and message each).
 */
export function parseFaultConfig(input: unknown): FaultConfig {
  const parsed = FaultConfigSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
    throw new CashoutError(
      'config_invalid',
      `invalid sandbox fault configuration: ${issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join('; ')}`,
      { issues },
    );
  }
  const out: FaultConfig = {};
  const d = parsed.data;
  if (d.latencyMs !== undefined)
    out.latencyMs = typeof d.latencyMs === 'number' ? d.latencyMs : { min: d.latencyMs.min, max: d.latencyMs.max };
  if (d.rates !== undefined) {
    const rates: Partial<Record<FaultKind, number>> = {};
    for (const k of FAULT_KINDS) {
      const v = d.rates[k];
      if (v !== undefined) rates[k] = v;
    }
    out.rates = rates;
  }
  if (d.retryAfterSeconds !== undefined) out.retryAfterSeconds = d.retryAfterSeconds;
  if (d.seed !== undefined) out.seed = d.seed;
  return out;
}

/**
 * mulberry32: a tiny seeded PRNG. Returns a function giving floats uniform in [0, 1); the same
 * 32-bit seed always yields the same sequence.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Picks the fault for one request with a single draw of `rand` (uniform in [0, 1)): the kinds
 * take consecutive slices of [0, 1) of their rate's width, in `FAULT_KINDS` order; a draw beyond
 * the last slice gives `'none'` (answer normally).
 */
export function pickFault(config: FaultConfig, rand: () => number): FaultKind | 'none' {
  const rates = config.rates;
  if (!rates) return 'none';
  const r = rand();
  let upTo = 0;
  for (const kind of FAULT_KINDS) {
    const p = rates[kind] ?? 0;
    if (p <= 0) continue;
    upTo += p;
    if (r < upTo) return kind;
  }
  return 'none';
}

/** The delay in milliseconds before answering one request (0 when `latencyMs` is unset). */
export function pickLatency(config: FaultConfig, rand: () => number): number {
  const l = config.latencyMs;
  if (l === undefined) return 0;
  if (typeof l === 'number') return l;
  return l.min + (l.max - l.min) * rand();
}

function envNumber(name: string, value: string): number {
  const trimmed = value.trim();
  const n = trimmed === '' ? Number.NaN : Number(trimmed);
  if (!Number.isFinite(n))
    throw new CashoutError('config_invalid', `${name} must be a number, got "${value}"`, { name });
  return n;
}

/**
 * Builds a fault configuration from environment variables (unset or blank ones are ignored):
 * - `SANDBOX_LATENCY_MS`: milliseconds, `"50"` (fixed) or `"20-80"` (uniform range);
 * - `SANDBOX_FAULT_RATES`: comma-separated `kind=probability`, e.g. `"http500=0.05,hang=0.01"`;
 * - `SANDBOX_RETRY_AFTER_SECONDS`: integer seconds for `Retry-After` on 429 answers;
 * - `SANDBOX_SEED`: 32-bit unsigned integer seed.
 * The result goes through `parseFaultConfig`; throws `CashoutError('config_invalid')` on bad values.
 */
export function faultConfigFromEnv(env: Record<string, string | undefined>): FaultConfig {
  const raw: Record<string, unknown> = {};
  const latency = env.SANDBOX_LATENCY_MS?.trim();
  if (latency) {
    const range = /^(.+?)\s*-\s*(.+)$/.exec(latency);
    raw.latencyMs = range
      ? { min: envNumber('SANDBOX_LATENCY_MS', range[1] ?? ''), max: envNumber('SANDBOX_LATENCY_MS', range[2] ?? '') }
      : envNumber('SANDBOX_LATENCY_MS', latency);
  }
  const rates = env.SANDBOX_FAULT_RATES?.trim();
  if (rates) {
    const out: Record<string, number> = {};
    for (const part of rates.split(',')) {
      if (part.trim() === '') continue;
      const eq = part.indexOf('=');
      if (eq < 0)
        throw new CashoutError(
          'config_invalid',
          `SANDBOX_FAULT_RATES entries must look like kind=probability, got "${part.trim()}"`,
        );
      const kind = part.slice(0, eq).trim();
      if (kind in out) throw new CashoutError('config_invalid', `SANDBOX_FAULT_RATES names ${kind} twice`);
      out[kind] = envNumber(`SANDBOX_FAULT_RATES ${kind}`, part.slice(eq + 1));
    }
    raw.rates = out;
  }
  const retry = env.SANDBOX_RETRY_AFTER_SECONDS?.trim();
  if (retry) raw.retryAfterSeconds = envNumber('SANDBOX_RETRY_AFTER_SECONDS', retry);
  const seed = env.SANDBOX_SEED?.trim();
  if (seed) raw.seed = envNumber('SANDBOX_SEED', seed);
  return parseFaultConfig(raw);
}
