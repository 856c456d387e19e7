/**
 * `npm run chaos`: the chaos run at a larger size, printed as a table.
 *   npm run chaos -- --rows 20000 --workers 3 --kills 5 --redis --runs 1 --seed 42
 *   npm run chaos -- --operator --rows 1000 --runs 10      (an operator re-uploads and retries too)
 * Exits 1 when any run broke a promise (a duplicate, a lost row, a mismatch with the sandbox).
 */
import { parseArgs } from 'node:util';
import { runChaos, type ChaosFigures } from '../test/support/chaos.js';

const USAGE = `usage: npm run chaos -- [options]

Pays a generated payout file with several \`cashout worker\` processes against a faulty sandbox, kills
workers (and Redis) at random moments, and checks that nobody was paid twice and no row was lost.

  --rows N                rows of the payout file (default 20000)
  --workers N             worker processes (default 3)
  --kills N               workers killed with SIGKILL and restarted (default 5)
  --redis                 also kill Redis once mid-batch and restart it
  --operator              an operator uploads the file again with one change and retries failed jobs
  --runs N                runs in a row (default 1); each prints its seed and how to replay it
  --seed N                seed of the first run (then N+1, …; default random)
  --items-per-request N   items per withdrawal request (default 20)
  --help                  this text

Exit 0 when every run kept every promise, 1 when one did not, 2 on bad usage.
`;

let values: {
  rows: string;
  workers: string;
  kills: string;
  redis: boolean;
  runs: string;
  seed?: string | undefined;
  'items-per-request': string;
  operator: boolean;
  help: boolean;
};
try {
  values = parseArgs({
    options: {
      rows: { type: 'string', default: '20000' },
      workers: { type: 'string', default: '3' },
      kills: { type: 'string', default: '5' },
      redis: { type: 'boolean', default: false },
      runs: { type: 'string', default: '1' },
      seed: { type: 'string' },
      'items-per-request': { type: 'string', default: '20' },
      operator: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  }).values as typeof values;
} catch (err) {
  process.stderr.write(`chaos: ${(err as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
for (const name of ['rows', 'workers', 'kills', 'runs', 'items-per-request'] as const) {
  if (!/^\d+$/.test(values[name])) {
    process.stderr.write(`chaos: --${name} takes a whole number, not "${values[name]}"\n`);
    process.exit(2);
  }
}

const MUST_BE_ZERO: (keyof ChaosFigures)[] = [
  'duplicates',
  'lostRows',
  'acceptedNotCreated',
  'createdUnaccounted',
  'unknownNotListed',
  'unexpectedExits',
  'uncleanStops',
  'payeesPaidTwice',
  'rowsWithoutOneStatus',
];
const runs: ChaosFigures[] = [];
const replayFlags =
  ` --rows ${values.rows} --workers ${values.workers} --kills ${values.kills}` +
  `${values.redis ? ' --redis' : ''}${values.operator ? ' --operator' : ''} --items-per-request ${values['items-per-request']}`;
for (let i = 0; i < Number(values.runs); i++) {
  const seed = values.seed !== undefined ? Number(values.seed) + i : Math.floor(Math.random() * 1e6);
  process.stderr.write(
    `run ${i + 1}: ${values.rows} rows, ${values.workers} workers, ${values.kills} worker kills${values.redis ? ', Redis killed once' : ''}` +
      `${values.operator ? ', an operator re-uploading and retrying' : ''}, seed ${seed} ` +
      `(replay: npm run chaos -- --runs 1 --seed ${seed}${replayFlags})\n`,
  );
  runs.push(
    await runChaos({
      rows: Number(values.rows),
      workers: Number(values.workers),
      kills: Number(values.kills),
      killRedis: values.redis === true,
      itemsPerRequest: Number(values['items-per-request']),
      seed,
      timeoutMs: 600_000,
      operator: values.operator === true,
    }),
  );
  const last = runs[runs.length - 1]!;
  process.stderr.write(
    `run ${i + 1} (seed ${seed}): payees created twice across batches ${last.payeesPaidTwice}, ` +
      `rows without exactly one final status ${last.rowsWithoutOneStatus}\n`,
  );
}
const keys = Object.keys(runs[0]!) as (keyof ChaosFigures)[];
const width = Math.max(...keys.map((k) => k.length)) + 2;
process.stdout.write(
  `${'figure'.padEnd(width)}${runs.map((_, i) => `run ${i + 1}`.padStart(10)).join('')}   must be\n`,
);
for (const k of keys) {
  process.stdout.write(
    `${k.padEnd(width)}${runs.map((r) => String(r[k]).padStart(10)).join('')}   ${MUST_BE_ZERO.includes(k) ? '0' : ''}\n`,
  );
}
const broken = runs.some((r) => MUST_BE_ZERO.some((k) => r[k] !== 0));
process.stdout.write(
  broken ? 'BROKEN: a promise was not kept\n' : 'OK: no duplicate, no lost row, every row matches the service\n',
);
process.exitCode = broken ? 1 : 0;
