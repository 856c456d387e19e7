import { describe, expect, it } from 'vitest';
import {
  FAULT_KINDS,
  faultConfigFromEnv,
  mulberry32,
  parseFaultConfig,
  pickFault,
  pickLatency,
} from '../../src/sandbox/faults.js';
import type { FaultConfig, FaultKind } from '../../src/sandbox/faults.js';
import { isCashoutError } from '../../src/errors.js';

describe('mulberry32', () => {
  it('gives the same sequence for the same seed and floats in [0, 1)', () => {
    const a = mulberry32(1234);
    const b = mulberry32(1234);
    const c = mulberry32(1235);
    const seqA = Array.from({ length: 1000 }, a);
    const seqB = Array.from({ length: 1000 }, b);
    const seqC = Array.from({ length: 1000 }, c);
    expect(seqA).toEqual(seqB);
    expect(seqA).not.toEqual(seqC);
    for (const x of seqA) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
    const mean = seqA.reduce((s, x) => s + x, 0) / seqA.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
  });
});

describe('pickFault', () => {
  it('matches the configured rates with a seeded PRNG', () => {
    const rates: Record<FaultKind, number> = {
      http500: 0.1,
      http503: 0.05,
      http429: 0.05,
      hang: 0.02,
      createThenReset: 0.03,
      malformed200: 0.05,
      createThen500: 0.1,
    };
    const config: FaultConfig = { rates, seed: 42 };
    const rand = mulberry32(42);
    const n = 200_000;
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const k = pickFault(config, rand);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    let faulty = 0;
    for (const kind of FAULT_KINDS) {
      const share = (counts.get(kind) ?? 0) / n;
      faulty += rates[kind];
      expect(Math.abs(share - rates[kind]), kind).toBeLessThan(0.005);
    }
    expect(Math.abs((counts.get('none') ?? 0) / n - (1 - faulty))).toBeLessThan(0.005);
  });

  it('is reproducible for a given seed', () => {
    const config: FaultConfig = { rates: { http500: 0.3, hang: 0.3 } };
    const r1 = mulberry32(7);
    const r2 = mulberry32(7);
    const s1 = Array.from({ length: 200 }, () => pickFault(config, r1));
    const s2 = Array.from({ length: 200 }, () => pickFault(config, r2));
    expect(s1).toEqual(s2);
    expect(new Set(s1)).toEqual(new Set(['http500', 'hang', 'none']));
  });

  it('checks the kinds in order, each taking a slice of its rate', () => {
    const config: FaultConfig = { rates: { createThen500: 0.1, http500: 0.1, http503: 0.2 } };
    expect(pickFault(config, () => 0.05)).toBe('http500');
    expect(pickFault(config, () => 0.15)).toBe('http503');
    expect(pickFault(config, () => 0.35)).toBe('createThen500');
    expect(pickFault(config, () => 0.45)).toBe('none');
  });

  it('always picks a kind whose rate is 1 and never one whose rate is 0', () => {
    const rand = mulberry32(99);
    for (let i = 0; i < 1000; i++) {
      expect(pickFault({ rates: { http500: 0, createThenReset: 1 } }, rand)).toBe('createThenReset');
    }
  });

  it('gives none without rates', () => {
    expect(pickFault({}, () => 0)).toBe('none');
    expect(pickFault({ rates: {} }, () => 0)).toBe('none');
  });
});

describe('pickLatency', () => {
  it('is 0 by default, fixed when a number, within the range otherwise', () => {
    expect(pickLatency({}, () => 0.5)).toBe(0);
    expect(pickLatency({ latencyMs: 40 }, () => 0.9)).toBe(40);
    expect(pickLatency({ latencyMs: { min: 20, max: 80 } }, () => 0)).toBe(20);
    expect(pickLatency({ latencyMs: { min: 20, max: 80 } }, () => 0.5)).toBe(50);
    const rand = mulberry32(3);
    for (let i = 0; i < 1000; i++) {
      const l = pickLatency({ latencyMs: { min: 20, max: 80 } }, rand);
      expect(l).toBeGreaterThanOrEqual(20);
      expect(l).toBeLessThan(80);
    }
  });
});

function expectConfigInvalid(fn: () => unknown): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(isCashoutError(caught, 'config_invalid'), String(caught)).toBe(true);
}

describe('parseFaultConfig', () => {
  it('accepts a full valid configuration unchanged', () => {
    const config: FaultConfig = {
      latencyMs: { min: 5, max: 10 },
      rates: {
        http500: 0.1,
        http503: 0.1,
        http429: 0.1,
        hang: 0.1,
        createThenReset: 0.1,
        malformed200: 0.1,
        createThen500: 0.4,
      },
      retryAfterSeconds: 3,
      seed: 12345,
    };
    expect(parseFaultConfig(config)).toEqual(config);
    expect(parseFaultConfig({})).toEqual({});
    expect(parseFaultConfig({ latencyMs: 0 })).toEqual({ latencyMs: 0 });
  });

  it.each([
    ['a rate above 1', { rates: { http500: 1.5 } }],
    ['a negative rate', { rates: { hang: -0.1 } }],
    ['rates summing above 1', { rates: { http500: 0.6, http503: 0.6 } }],
    ['an unknown fault kind', { rates: { http502: 0.1 } }],
    ['an unknown key', { latency: 10 }],
    ['a negative latency', { latencyMs: -1 }],
    ['a latency range with min > max', { latencyMs: { min: 80, max: 20 } }],
    ['a fractional Retry-After', { retryAfterSeconds: 1.5 }],
    ['a fractional seed', { seed: 0.5 }],
    ['a non-object', 'http500=1'],
    ['a string rate', { rates: { http500: '0.1' } }],
  ])('rejects %s', (_name, input) => {
    expectConfigInvalid(() => parseFaultConfig(input));
  });
});

describe('faultConfigFromEnv', () => {
  it('reads every variable', () => {
    expect(
      faultConfigFromEnv({
        SANDBOX_LATENCY_MS: '20-80',
        SANDBOX_FAULT_RATES: 'http500=0.05, hang=0.01,createThenReset=0.02',
        SANDBOX_RETRY_AFTER_SECONDS: '4',
        SANDBOX_SEED: '77',
      }),
    ).toEqual({
      latencyMs: { min: 20, max: 80 },
      rates: { http500: 0.05, hang: 0.01, createThenReset: 0.02 },
      retryAfterSeconds: 4,
      seed: 77,
    });
    expect(faultConfigFromEnv({ SANDBOX_LATENCY_MS: '50' })).toEqual({ latencyMs: 50 });
  });

  it('gives an empty configuration when nothing is set or values are blank', () => {
    expect(faultConfigFromEnv({})).toEqual({});
    expect(faultConfigFromEnv({ SANDBOX_LATENCY_MS: '', SANDBOX_FAULT_RATES: '  ', SANDBOX_SEED: undefined })).toEqual(
      {},
    );
  });

  it.each([
    ['a non-numeric latency', { SANDBOX_LATENCY_MS: 'fast' }],
    ['a reversed latency range', { SANDBOX_LATENCY_MS: '80-20' }],
    ['a rate without =', { SANDBOX_FAULT_RATES: 'http500' }],
    ['a non-numeric rate', { SANDBOX_FAULT_RATES: 'http500=lots' }],
    ['an unknown kind', { SANDBOX_FAULT_RATES: 'boom=0.1' }],
    ['a kind named twice', { SANDBOX_FAULT_RATES: 'hang=0.1,hang=0.2' }],
    ['rates above 1 in sum', { SANDBOX_FAULT_RATES: 'http500=0.7,http503=0.7' }],
    ['a non-numeric seed', { SANDBOX_SEED: 'abc' }],
    ['a fractional Retry-After', { SANDBOX_RETRY_AFTER_SECONDS: '0.5' }],
  ])('rejects %s', (_name, env) => {
    expectConfigInvalid(() => faultConfigFromEnv(env));
  });
});
