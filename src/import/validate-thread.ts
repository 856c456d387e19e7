/**
 * An import thread: checks the pieces of a payout file it is sent (`./check-chunk.ts`) and posts
 * back their parts. Started by `./parallel-scan.ts` with the file's `ChunkSettings` as
 * `workerData`. Messages in: a `ChunkTask`, or `{ ack: index }` when the reader has taken a part
 * of a stream task (at most four parts wait unread, so a slow reader slows the thread).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createChunkChecker, type ChunkPart, type ChunkSettings, type ChunkTask } from './check-chunk.js';

const port = parentPort!;
const checker = createChunkChecker(workerData as ChunkSettings);
const WINDOW = 4;
let unacked = 0;
let wakeOnAck: (() => void) | undefined;
let queue = Promise.resolve();

function transferOf(part: ChunkPart): ArrayBuffer[] {
  return [
    part.kinds.buffer,
    part.rowLines.buffer,
    part.piasters.buffer,
    part.fingerprints.buffer,
    part.itemBytes.buffer,
    part.itemEnds.buffer,
  ] as ArrayBuffer[];
}

port.on('message', (message: ChunkTask | { ack: number }) => {
  if ('ack' in message) {
    unacked--;
    wakeOnAck?.();
    wakeOnAck = undefined;
    return;
  }
  queue = queue.then(() =>
    checker.run(message, async (part) => {
      while (message.kind === 'stream' && unacked >= WINDOW)
        await new Promise<void>((resolve) => (wakeOnAck = resolve));
      if (message.kind === 'stream') unacked++;
      port.postMessage(part, transferOf(part));
    }),
  );
});
