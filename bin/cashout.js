#!/usr/bin/env node
// Entry point of the `cashout` command (built by `npm run build`, which `npm ci` runs through `prepare`).
import { main } from '../dist/src/cli.js';

const code = await main(process.argv.slice(2));
process.exitCode = code;
// Leave time for open handles to close by themselves, then exit anyway.
setTimeout(() => process.exit(code), 3000).unref();
