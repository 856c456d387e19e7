/**
 * `npm run chaos`: the chaos run at a larger size, printed as a table.
 *   npm run chaos -- --rows 20000 --workers 3 --kills 5 --redis --runs 1 --seed 42
 * Exits 1 when any run broke a promise (a duplicate, a lost row, a mismatch with the sandbox).
 */
import { parseArgs } from 'node:util';
import { runChaos, type ChaosFigures } from '../test/support/chaos.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    workers: { type: 'string', default: '3' },
    kills: { type: 'string', default: '5' },
    redis: { type: 'boolean', default: false },
    runs: { type: 'string', default: '1' },
    seed: { type: 'string' },
    'items-per-request': { type: 'string', default: '20' },
  },
});

const MUST_BE_ZERO: (keyof ChaosFigures)[] = ['duplicates', 'lostRows', 'acceptedNotCreated', 'createdUnaccounted', 'unknownNotListed', 'uncleanStops'];
const runs: ChaosFigures[] = [];
for (let i = 0; i < Number(values.runs); i++) {
  const seed = values.seed !== undefined ? Number(values.seed) + i : Math.floor(Math.random() * 1e6);
  process.stderr.write(`run ${i + 1}: ${values.rows} rows, ${values.workers} workers, ${values.kills} worker kills${values.redis ? ', Redis killed once' : ''}, seed ${seed}\n`);
  runs.push(
    await runChaos({
      rows: Number(values.rows),
      workers: Number(values.workers),
      kills: Number(values.kills),
      killRedis: values.redis === true,
      itemsPerRequest: Number(values['items-per-request']),
      seed,
      timeoutMs: 600_000,
    }),
  );
}
const keys = Object.keys(runs[0]!) as (keyof ChaosFigures)[];
const width = Math.max(...keys.map((k) => k.length)) + 2;
process.stdout.write(`${'figure'.padEnd(width)}${runs.map((_, i) => `run ${i + 1}`.padStart(10)).join('')}   must be\n`);
for (const k of keys) {
  process.stdout.write(`${k.padEnd(width)}${runs.map((r) => String(r[k]).padStart(10)).join('')}   ${MUST_BE_ZERO.includes(k) ? '0' : ''}\n`);
}
const broken = runs.some((r) => MUST_BE_ZERO.some((k) => r[k] !== 0));
process.stdout.write(broken ? 'BROKEN: a promise was not kept\n' : 'OK: no duplicate, no lost row, every row matches the service\n');
process.exitCode = broken ? 1 : 0;
