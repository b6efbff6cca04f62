#!/usr/bin/env node
// `npm test`: the type-check and lint beside jest, not before it; fails when either fails.
//
// Why: jest runs its files one at a time (one worker on CI's two cores) and much of its time waits
// on the processes its tests start, while the type-check and lint (about 90 s on a quiet machine)
// held jest back until they were done. Here `tsc -b shared agent backend` runs first and alone (it
// writes the packages' dist/, which tests pack and run; up to date after `npm ci`, it writes
// nothing); then jest starts, and `npm run typecheck && npm run lint` run beside it at a lower CPU
// priority, inherited by tsc, eslint, prettier and dependency-cruiser, so jest's tests keep most of
// the CPU they had (a quiet CI run, session 26: jest 902 -> 931 s, the whole run 1,126 -> 1,054 s):
// SCHED_IDLE where Linux's chrt sets it (a CPU only when nothing else wants one; a test's process
// that wakes takes it at once, where at nice 10 it could wait for the checks' turn to end: .ci/run
// says what that cost), and nice 10 (so /proc/stat and scripts/jest-timeline.js count them as
// `nice`). The checks' output is printed as one block once both are done. Arguments go to jest
// (`npm test -- backend/test/fuzz.test.ts`).
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
// `tsc -b shared agent backend`: the build step `npm start` and the images run (deploy/start/build.js).
const [TSC, ...TSC_ARGS] = require('../deploy/start/build.js').BUILD_STEPS[0].command;
const CHECKS = 'npm run typecheck && npm run lint';
const CHECKS_NICE = 10;
/** `chrt --idle 0` where it runs (util-linux, Linux), else nothing: the checks at nice 10 alone. */
const IDLE =
  process.platform === 'linux' && spawnSync('chrt', ['--idle', '0', 'true'], { stdio: 'ignore' }).status === 0
    ? ['chrt', '--idle', '0']
    : [];

/**
 * Runs `command` with `args` in the root; `started` gets the child at once.
 * @returns {Promise<number>} its exit code (1 when it could not start or was killed)
 */
function run(command, args, options, started = () => {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, ...options });
    child.once('error', (error) => {
      process.stderr.write(`npm test: could not run ${command}: ${error.message}\n`);
      resolve(1);
    });
    child.once('close', (code) => resolve(code ?? 1));
    started(child);
  });
}

async function main() {
  const built = await run(TSC, TSC_ARGS, { stdio: 'inherit' });
  if (built !== 0) {
    process.stderr.write(`npm test: ${[TSC, ...TSC_ARGS].join(' ')} failed (exit ${built})\n`);
    return built;
  }
  let output = '';
  const [shell, ...shellArgs] = [...IDLE, 'sh', '-c', CHECKS];
  const checks = run(shell, shellArgs, { stdio: ['ignore', 'pipe', 'pipe'] }, (child) => {
    try {
      os.setPriority(child.pid, CHECKS_NICE);
    } catch {
      // Not permitted: they share the CPU as they are.
    }
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
  });
  const jest = run(process.execPath, [require.resolve('jest/bin/jest'), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  const [jestCode, checksCode] = await Promise.all([jest, checks]);
  process.stdout.write(`\n--- ${CHECKS} (beside jest): exit ${checksCode} ---\n${output}--- end of their output ---\n`);
  if (checksCode !== 0) process.stderr.write(`npm test: the type-check or lint failed (exit ${checksCode}): above\n`);
  if (jestCode !== 0) process.stderr.write(`npm test: jest failed (exit ${jestCode})\n`);
  return checksCode !== 0 ? checksCode : jestCode;
}

main().then((code) => process.exit(code));
