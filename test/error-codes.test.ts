/**
 * The table of error codes (`ERROR_CODES`): the CLI's exit code and the HTTP API's status of every
 * code are read from it, and each code names its situation in one line.
 */
import { describe, expect, it } from 'vitest';
import { CashoutError, ERROR_CODES, EXIT, exitCodeFor, type ErrorCode } from '../src/errors.js';
import { httpStatusOf } from '../src/api/http-errors.js';

const codes = Object.keys(ERROR_CODES) as ErrorCode[];

describe('error codes', () => {
  it.each(codes)('%s: its exit code and HTTP status come from the table', (code) => {
    const entry = ERROR_CODES[code];
    expect(exitCodeFor(new CashoutError(code, 'message'))).toBe(entry.exit);
    expect(httpStatusOf(code)).toBe(entry.http);
    expect(entry.http).toBeGreaterThanOrEqual(400);
    expect(entry.situation.trim()).not.toBe('');
    expect(entry.situation).not.toMatch(/\n/);
  });

  it('ends a command with 2 (usage and files) or 3 (Redis); an unexpected failure, or anything not a CashoutError, with 70', () => {
    expect(new Set(codes.map((c) => ERROR_CODES[c].exit))).toEqual(new Set([EXIT.usage, EXIT.redis, EXIT.internal]));
    expect(codes.filter((c) => ERROR_CODES[c].exit === EXIT.internal)).toEqual(['internal']);
    expect(exitCodeFor(new Error('boom'))).toBe(EXIT.internal);
    expect(exitCodeFor('not an error')).toBe(EXIT.internal);
  });

  it('gives each of the situations the ledger refuses its own code', () => {
    expect(ERROR_CODES.request_state.http).toBe(409);
    expect(ERROR_CODES.batch_state.http).toBe(409);
    expect(ERROR_CODES.batch_changed.http).toBe(409);
    expect(new Set(codes.map((c) => ERROR_CODES[c].situation)).size).toBe(codes.length);
  });
});
