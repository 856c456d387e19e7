/**
 * Deterministic ids. The batch id is derived from the file's content, so the same content always
 * gives the same batch; a withdrawal request's job id is derived from batch id and sequence
 * number, so enqueuing the same request twice is a no-op in BullMQ.
 */

/** Batch id from the file's SHA-256 (hex): its first 16 hex digits (64 bits). */
export function batchIdFromSha256(sha256: string): string {
  if (!/^[0-9a-f]{64}$/.test(sha256)) throw new RangeError('expected a hex SHA-256 digest');
  return sha256.slice(0, 16);
}

/** True for a string shaped like a batch id. */
export function isBatchId(value: string): boolean {
  return /^[0-9a-f]{16}$/.test(value);
}

/** BullMQ job id of request `seq` (1-based) of a batch: "<batchId>-<seq>". */
export function requestJobId(batchId: string, seq: number): string {
  return `${batchId}-${seq}`;
}
