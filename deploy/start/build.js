// @ts-check
// What `npm start` builds before it runs, and when it needs to. The same commands build the
// container images (Dockerfile.agent, Dockerfile.backend), and CI's type-check runs the same
// `tsc -b`; deploy/test/dockerfiles.test.ts holds them together.
const { Buffer } = require('node:buffer');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

/**
 * @typedef {object} BuildStep
 * @property {string} name what is built, for progress lines
 * @property {string[]} command the command that builds it (`npx …` or `npm …`), run in the root
 * @property {string[]} inputs files and folders (relative to the root) whose changes call for a build
 * @property {string[]} outputs files (relative to the root) the build writes; a missing one calls for a build
 */

/** @type {readonly BuildStep[]} */
const BUILD_STEPS = [
  {
    name: 'TypeScript (shared, agent, backend)',
    command: ['npx', 'tsc', '-b', 'shared', 'agent', 'backend'],
    inputs: [
      'tsconfig.base.json',
      'shared/src',
      'shared/tsconfig.json',
      'shared/package.json',
      'agent/src',
      'agent/tsconfig.json',
      'agent/package.json',
      'backend/src',
      'backend/tsconfig.json',
      'backend/package.json',
    ],
    outputs: [
      'shared/dist/tsconfig.tsbuildinfo',
      'agent/dist/tsconfig.tsbuildinfo',
      'backend/dist/tsconfig.tsbuildinfo',
      'backend/dist/src/index.js',
      'agent/dist/src/index.js',
    ],
  },
  {
    name: 'dashboard (Vite)',
    command: ['npm', 'run', 'build', '-w', '@spectator/dashboard'],
    inputs: [
      'dashboard/src',
      'dashboard/index.html',
      'dashboard/package.json',
      'dashboard/vite.config.mts',
      'dashboard/vite.config.ts',
      'shared/src',
    ],
    outputs: ['dashboard/dist/index.html'],
  },
];

/**
 * Newest modification time (ms) of a file or of the files under a folder; 0 when absent.
 * @param {string} target absolute path
 * @returns {number}
 */
function newestMtime(target) {
  let stat;
  try {
    stat = fs.statSync(target);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of fs.readdirSync(target, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    newest = Math.max(newest, newestMtime(path.join(target, entry.name)));
  }
  return newest;
}

/**
 * Why a step must run, or null when its outputs are newer than every input.
 * @param {BuildStep} step
 * @param {string} root repository root
 * @returns {string | null}
 */
function staleReason(step, root) {
  const missing = step.outputs.find((output) => !fs.existsSync(path.join(root, output)));
  if (missing) return `${missing} is missing`;
  const built = Math.min(...step.outputs.map((output) => fs.statSync(path.join(root, output)).mtimeMs));
  const changed = step.inputs.find((input) => newestMtime(path.join(root, input)) > built);
  return changed ? `${changed} changed since the last build` : null;
}

/**
 * Runs a command in `root`, keeping its output to show only when it fails.
 * @param {string[]} command program and arguments
 * @param {string} root
 * @param {AbortSignal} [signal] kills the command when aborted
 * @returns {Promise<void>}
 */
function run(command, root, signal) {
  const [program, ...args] = command;
  return new Promise((resolve, reject) => {
    // npm and npx are scripts (.cmd on Windows), so a shell finds them there.
    const child = spawn(/** @type {string} */ (program), args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      shell: process.platform === 'win32',
      signal,
    });
    /** @type {Buffer[]} */
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return resolve();
      const text = Buffer.concat(output).toString('utf8').trim().split('\n').slice(-30).join('\n');
      reject(new Error(`\`${command.join(' ')}\` failed (exit code ${code}):\n${text}`));
    });
  });
}

/**
 * Builds what is missing or stale, reporting each step through `progress`.
 * @param {string} root repository root
 * @param {(line: string) => void} progress
 * @param {AbortSignal} [signal] stops the build under way when aborted
 * @returns {Promise<void>}
 */
async function buildIfNeeded(root, progress, signal) {
  for (const step of BUILD_STEPS) {
    const reason = staleReason(step, root);
    if (reason === null) {
      progress(`${step.name}: up to date`);
      continue;
    }
    progress(`building ${step.name} (${reason}): ${step.command.join(' ')}`);
    const started = Date.now();
    await run(step.command, root, signal);
    // tsc -b leaves the stamps of projects it had nothing to do for untouched; mark them all as
    // built now, so an unchanged tree is not rebuilt at every start.
    const now = new Date();
    for (const output of step.outputs) fs.utimesSync(path.join(root, output), now, now);
    progress(`built ${step.name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}

module.exports = { BUILD_STEPS, buildIfNeeded, staleReason };
