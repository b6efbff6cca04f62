#!/usr/bin/env node
// Runs a command with the clock moved to a given instant (libfaketime), for tests that must hold
// at any date or hour: `node scripts/at-instant.js 2027-01-31T23:58:30Z npx jest backend/test/partitions.test.ts`.
//
// The clock is moved by a fixed offset (FAKETIME="+Ns"), not started at the instant ("@…"), so every
// process the command starts (jest's workers, a backend, embedded PostgreSQL) agrees on the time and
// the clock goes on running from the instant. libfaketime: `apt-get install faketime` (Debian), or
// FAKETIME_LIB naming the library. docs/ci.md says more.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');

const LIBRARIES = [
  process.env.FAKETIME_LIB,
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
];

function fail(message) {
  process.stderr.write(`at-instant: ${message}\n`);
  process.exit(2);
}

const [instant, command, ...args] = process.argv.slice(2);
if (!instant || !command)
  fail('usage: node scripts/at-instant.js <ISO instant, e.g. 2027-01-31T23:58:30Z> <command> [args…]');
const target = Date.parse(instant);
if (Number.isNaN(target)) fail(`not an instant: ${instant} (say e.g. 2027-01-31T23:58:30Z)`);
const library = LIBRARIES.find((file) => file && fs.existsSync(file));
if (!library) fail('libfaketime not found: apt-get install faketime, or set FAKETIME_LIB');

const offset = Math.round((target - Date.now()) / 1000);
const preload = [library, process.env.LD_PRELOAD].filter(Boolean).join(':');
const child = spawn(command, args, {
  stdio: 'inherit',
  env: {
    ...process.env,
    LD_PRELOAD: preload,
    FAKETIME: `${offset >= 0 ? '+' : ''}${offset}s`,
    SPECTATOR_AT_INSTANT: instant,
  },
});
child.once('error', (error) => fail(`could not run ${command}: ${error.message}`));
child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
