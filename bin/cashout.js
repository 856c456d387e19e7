#!/usr/bin/env node
// Entry point of the `cashout` command (built by `npm run build`, which `npm ci` runs through `prepare`).
// The worker watches SIGINT/SIGTERM before anything else loads, so a stop asked for while it starts
// is honoured once it is up rather than killing it mid-start.
import { watchStopSignals } from '../dist/src/stop-signals.js';

if (process.argv[2] === 'worker') watchStopSignals();
const { main } = await import('../dist/src/cli.js');
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Leave time for open handles to close by themselves, then exit anyway.
setTimeout(() => process.exit(code), 3000).unref();
