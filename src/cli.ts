/**
 * The `cashout` command: argv → command. Exit codes (README "Exit codes"): 0 every row accepted,
 * 1 finished with some row not accepted, 2 bad usage or a file that cannot be read as a payout
 * CSV, 3 Redis cannot be reached or is unsafe, 4 the service cannot be reached or refused the
 * token, 70 an unexpected internal error. Errors are one line on stderr, never a stack trace.
 */
import { watchStopSignals } from './stop-signals.js';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CashoutError, EXIT, exitCodeFor } from './errors.js';
import type { AppContext } from './commands/context.js';
import type { ChargeFlags } from './commands/charge.js';
import { sandboxSettingsHelp } from './sandbox/settings-help.js';
import { CONFIG_DEFAULTS } from './config-defaults.js';

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('expected a port number 0-65535');
  return Number(value);
}

function delimiter(value: string): string {
  const named: Record<string, string> = { comma: ',', semicolon: ';', tab: '\t', pipe: '|' };
  const d = named[value] ?? value;
  if (d.length !== 1) throw new InvalidArgumentError('expected one character, or comma, semicolon, tab or pipe');
  return d;
}

/** Flags of run and import. */
interface RunFlags {
  sandbox?: boolean;
  partial?: boolean;
  delimiter?: string;
  encoding?: string;
  force?: boolean;
  as?: string;
  payAgain?: string;
  strictDuplicates?: boolean;
}

const forceOption = () =>
  new Option('--force', 'import content that was imported before, as a new batch (it may pay the same people again)');
const payAgainOption = () =>
  new Option(
    '--pay-again <why>',
    'send rows whose payee was paid, or is still to be paid, by another batch (recorded with who and why; shown in the report)',
  );
const asOption = () =>
  new Option('--as <label>', 'a label recorded beside your system user name (it never replaces it)');
const strictDupOption = () =>
  new Option(
    '--strict-duplicates',
    'refuse rows that pay the same amount to the same holder, mobile or account as an earlier row of the file',
  );

/** Builds the program; `run(ctx)` actions resolve to an exit code. */
export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('cashout');
  // Configuration, logging and the queue modules load only when a command runs, so `--help` and
  // usage errors answer at once.
  let ctx: AppContext | undefined;
  const context = async () => (ctx ??= (await import('./commands/context.js')).loadContext());
  const act =
    <A extends unknown[]>(fn: (c: AppContext, ...args: A) => Promise<number>) =>
    async (...args: A) => {
      setExit(await fn(await context(), ...args));
    };
  const delimiterOption = () =>
    new Option('--delimiter <char>', 'field delimiter: a character, or comma, semicolon, tab, pipe').argParser(
      delimiter,
    );
  const encodingOption = () =>
    new Option('--encoding <name>', 'text encoding of the file (default utf-8; e.g. windows-1256, utf-16le)');

  program
    .description('Pay many people at once: validate a payout CSV, submit withdrawal requests safely, report every row.')
    .version('0.1.0')
    .addHelpText(
      'after',
      '\nExit codes: 0 every row accepted, 1 some row not accepted (or invalid), 2 usage or unreadable file,\n' +
        '            3 Redis unreachable or unsafe, 4 service unreachable or token refused,\n' +
        '            5 (worker) stopped with in-flight requests left to the recovery sweep.\n' +
        'Configuration comes from the environment and a .env file; see .env.example.',
    );

  program
    .command('validate')
    .description('check a payout CSV and list every problem with its line; needs neither Redis nor the service')
    .argument('<file>', 'payout CSV')
    .addOption(delimiterOption())
    .addOption(encodingOption())
    .option('--errors-file <path>', 'write every problem to this CSV file (line, column, code, found, suggestion, …)')
    .action(
      act(async (c, file: string, o: { delimiter?: string; encoding?: string; errorsFile?: string }) =>
        (await import('./commands/validate.js')).validateCommand(c, file, o),
      ),
    );

  program
    .command('run')
    .description('import a payout CSV, submit every withdrawal request until final, write the report')
    .argument('<file>', 'payout CSV')
    .option(
      '--sandbox',
      'use a local stand-in of the service (and a private Redis if none runs); the report goes to the sandbox/ folder of the reports folder',
    )
    .option('--partial', 'send the valid rows even when some rows are invalid; invalid ones go to rejected-rows.csv')
    .addOption(delimiterOption())
    .addOption(encodingOption())
    .addOption(forceOption())
    .addOption(payAgainOption())
    .addOption(strictDupOption())
    .addOption(asOption())
    .action(act(async (c, file: string, o: RunFlags) => (await import('./commands/run.js')).runCommand(c, file, o)));

  program
    .command('import')
    .description('validate a payout CSV and queue its withdrawal requests for the workers')
    .argument('<file>', 'payout CSV')
    .option('--partial', 'queue the valid rows even when some rows are invalid')
    .addOption(delimiterOption())
    .addOption(encodingOption())
    .addOption(forceOption())
    .addOption(payAgainOption())
    .addOption(strictDupOption())
    .addOption(asOption())
    .action(
      act(async (c, file: string, o: RunFlags) => (await import('./commands/import.js')).importCommand(c, file, o)),
    );

  program
    .command('worker')
    .description('submit queued withdrawal requests until stopped (SIGTERM/SIGINT finish in-flight ones)')
    .action(act(async (c) => (await import('./commands/worker.js')).workerCommand(c)));

  program
    .command('report')
    .description("write a batch's results.csv and summary.json again from the ledger and print its summary")
    .argument('<batch-id>', 'batch id printed by run or import')
    .action(act(async (c, id: string) => (await import('./commands/report.js')).reportCommand(c, id)));

  program
    .command('reconcile')
    .description('list the withdrawal requests of a batch whose outcome is unknown and write reconciliation.csv')
    .argument('<batch-id>', 'batch id')
    .action(act(async (c, id: string) => (await import('./commands/reconcile.js')).reconcileCommand(c, id)));

  program
    .command('resolve')
    .description("record what a person found in the service's dashboard about an unknown request")
    .argument('<batch-id>', 'batch id')
    .argument('<request>', 'request number (see cashout reconcile)')
    .option('--created', 'the service did create it: its rows are accepted')
    .option('--not-created', 'the service did not create it: it may be sent again (cashout retry)')
    .requiredOption('--note <text>', 'where you looked and what you found (required)')
    .addOption(asOption())
    .action(
      act(
        async (
          c,
          id: string,
          req: string,
          o: { created?: boolean; notCreated?: boolean; note?: string; as?: string },
        ) => (await import('./commands/reconcile.js')).resolveCommand(c, id, req, o),
      ),
    );

  program
    .command('retry')
    .description('queue a request again that the ledger allows to be sent (not_sent, or resolved as not created)')
    .argument('<batch-id>', 'batch id')
    .argument('<request>', 'request number')
    .addOption(asOption())
    .action(
      act(async (c, id: string, req: string, o: { as?: string }) =>
        (await import('./commands/reconcile.js')).retryCommand(c, id, req, o),
      ),
    );

  program
    .command('approve')
    .description('approve a batch awaiting approval (maker-checker): its requests are queued for the workers')
    .argument('<batch-id>', 'batch id')
    .addOption(asOption())
    .action(
      act(async (c, id: string, o: { as?: string }) =>
        (await import('./commands/approve.js')).approveCommand(c, id, o),
      ),
    );

  program
    .command('cancel')
    .description('cancel a batch awaiting approval; nothing of it is sent')
    .argument('<batch-id>', 'batch id')
    .requiredOption('--note <text>', 'why (required)')
    .addOption(asOption())
    .action(
      act(async (c, id: string, o: { as?: string; note: string }) =>
        (await import('./commands/approve.js')).cancelCommand(c, id, o),
      ),
    );

  program
    .command('dashboard')
    .description('serve the dashboard (batches, approvals, reconciliation, queues) behind a login')
    .option('--no-auth', 'no login: allowed only on 127.0.0.1, for one local user')
    .option(
      '--port <port>',
      `port (default CASHOUT_DASHBOARD_PORT or ${CONFIG_DEFAULTS.dashboardPort}; 0 = any free port)`,
      port,
    )
    .option(
      '--host <address>',
      `address to listen on (default CASHOUT_DASHBOARD_HOST or ${CONFIG_DEFAULTS.dashboardHost})`,
    )
    .action(
      act(async (c, o: { auth?: boolean; port?: number; host?: string }) =>
        (await import('./commands/dashboard.js')).dashboardCommand(c, o),
      ),
    );

  const apiKey = program.command('api-key').description('make, list and revoke keys of the HTTP API (/api/v1)');
  const apiKeys = async () => (await import('./commands/api-key.js')).apiKeyCommand;
  apiKey
    .command('create')
    .description('make a key and print it once; only its hash is kept')
    .requiredOption('--name <who>', 'the person or system the key acts for (recorded as the importer, approver, …)')
    .action(act(async (c, o: { name: string }) => (await apiKeys())(c, 'create', { name: o.name })));
  apiKey
    .command('list')
    .description('list the keys: id, name, when made (never the keys)')
    .action(act(async (c) => (await apiKeys())(c, 'list', {})));
  apiKey
    .command('revoke')
    .description('revoke a key by its id')
    .argument('<id>', "the key's id (8 hex digits, as listed)")
    .action(act(async (c, id: string) => (await apiKeys())(c, 'revoke', { id })));

  program
    .command('hash-password')
    .description('read a password from standard input and print a user entry for CASHOUT_DASHBOARD_USERS')
    .option('--user <name>', 'the user name', 'user')
    .action(async (o: { user?: string }) =>
      setExit(await (await import('./commands/dashboard.js')).hashPasswordCommand(o)),
    );

  program
    .command('scheduler')
    .description('scan the inbox folder on the CASHOUT_SCHEDULE cron schedule and import each complete payout file')
    .option('--once', 'run one scan now and exit')
    .action(act(async (c, o: { once?: boolean }) => (await import('./commands/scheduler.js')).schedulerCommand(c, o)));

  program
    .command('charge')
    .description('charge one card (interface doc §2.1-2.3) and print the outcome; sent once, never again by itself')
    .requiredOption('--amount <NN.NN>', 'amount in EGP, two decimals, sent and signed exactly as written')
    .option('--card-number <digits>', 'the card number (16 digits); read from standard input when not given')
    .option('--cvv <digits>', 'the CVV (3 digits); read from standard input when not given')
    .requiredOption('--expiry <MM/YY>', "the card's expiry month and year")
    .requiredOption('--name <text>', "the customer's name")
    .requiredOption('--mobile <number>', "the customer's mobile number in international format, e.g. +201001234567")
    .requiredOption('--email <address>', "the customer's e-mail address")
    .requiredOption('--description <text>', 'what the charge is for; it becomes the payment name')
    .requiredOption('--customer <id>', "the customer's id in your own system (customer_merchant_profile_id)")
    .option('--reference <id>', 'merchant_reference_id, letters and digits (default: a new one)')
    .option('--json', 'print the outcome as JSON')
    .action(act(async (c, o: ChargeFlags) => (await import('./commands/charge.js')).chargeCommand(c, o)));

  program
    .command('sandbox')
    .description("run the local stand-in of the service's staging environment on 127.0.0.1")
    .option(
      '--port <port>',
      `port (default CASHOUT_SANDBOX_PORT or ${CONFIG_DEFAULTS.sandboxPort}; 0 = any free port)`,
      port,
    )
    .option('--host <address>', 'address to listen on (default 127.0.0.1; containers need 0.0.0.0)')
    .addHelpText('after', sandboxSettingsHelp())
    .action(
      act(async (c, o: { port?: number; host?: string }) =>
        (await import('./commands/sandbox.js')).sandboxCommand(c, o),
      ),
    );

  // Every command at every depth (`api-key create` too): a usage error of a subcommand (a missing
  // argument or option) is exit 2 like a mistyped command name, never commander's own
  // process.exit(1), and points to that command's own help.
  const prepare = (command: Command, path: string) => {
    command.exitOverride();
    command.configureOutput({ writeErr: (s) => process.stderr.write(s) });
    command.showHelpAfterError(`(run "${path} --help" for usage)`);
    for (const sub of command.commands) prepare(sub, `${path} ${sub.name()}`);
  };
  prepare(program, 'cashout');
  return program;
}

/** Runs the CLI with `argv` and returns the exit code; never throws. */
export async function main(argv: readonly string[]): Promise<number> {
  // The worker keeps a stop asked for while it starts (see stop-signals.ts).
  if (argv[0] === 'worker') watchStopSignals();
  let code: number = EXIT.ok;
  const program = buildProgram((c) => (code = c));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT.ok;
      return EXIT.usage;
    }
    if (err instanceof CashoutError) {
      process.stderr.write(`cashout: ${err.message}\n`);
      return exitCodeFor(err);
    }
    process.stderr.write(`cashout: internal error: ${(err as Error)?.message ?? String(err)}\n`);
    return EXIT.internal;
  }
}
