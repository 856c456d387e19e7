/**
 * The structure `npm test` holds the code to (`npm run check:structure`): no import circles, and
 * every import goes down the layers below, never back up. Data flows one way: file -> rows ->
 * items -> requests -> jobs -> submissions -> results -> report; the layers follow it.
 *
 * A folder or file may import its own layer and any layer under it. A new top-level file or
 * folder under src/ must be given a layer here: the last rule refuses files no layer names.
 */

/** Lowest first. Each entry is a list of paths (folders end with "/"), relative to the project. */
const LAYERS = [
  // plain helpers, no project imports but each other
  [
    'src/errors.ts',
    'src/money.ts',
    'src/mask.ts',
    'src/paths.ts',
    'src/terminal-log.ts',
    'src/stop-signals.ts',
    'src/batch-id.ts',
    'src/host-guard.ts',
    'src/closest-name.ts',
    'src/config-defaults.ts',
    'src/listen-failure.ts',
  ],
  // settings, logging, the service's contract, Redis connections and queues
  ['src/logger.ts', 'src/config.ts', 'src/health.ts', 'src/contract/', 'src/queue/'],
  // file -> rows -> items, and the ledger that records batches, requests and payees
  ['src/import/', 'src/ledger/'],
  // what is written about a batch
  ['src/results/'],
  // items -> withdrawal requests in the ledger
  ['src/batch/'],
  // submission, notifications and the ways a file comes in
  ['src/metrics.ts', 'src/submit/', 'src/notify/', 'src/inbox/', 'src/uploads/', 'src/api/', 'src/charge/'],
  // the BullMQ processors
  ['jobs/'],
  // the servers
  ['src/dashboard/', 'src/sandbox/'],
  // the commands and the command line
  ['src/commands/'],
  ['src/cli.ts', 'bin/'],
];

const escape = (p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pattern = (paths) => `^(${paths.map((p) => (p.endsWith('/') ? escape(p) : `${escape(p)}$`)).join('|')})`;

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${i + 1}-imports-up`,
  severity: 'error',
  comment: `${layer.join(', ')} may import only their own layer and the ones under it (.dependency-cruiser.cjs)`,
  from: { path: pattern(layer) },
  to: { path: pattern(LAYERS.slice(i + 1).flat()) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files that import each other in a loop: move what they share into a file both import.',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'no-layer',
      severity: 'error',
      comment: 'Every file of src/ and jobs/ belongs to a layer: add its path to LAYERS in .dependency-cruiser.cjs.',
      from: { path: '^(src|jobs)/', pathNot: pattern(LAYERS.flat()) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
