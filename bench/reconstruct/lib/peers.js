// @ts-check
// The peers, fed the same traffic as a HAR file: har-to-openapi (with its URL parameterisation
// on, numbers of any length) and Optic (`optic capture <spec> --har <file> --update automatic`
// on an empty document). Both run as their own command-line tools from this folder's install.
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');

const BIN = path.join(__dirname, '..', 'node_modules', '.bin');

/**
 * Runs a command, bounded in time; resolves with its output, rejects naming it on failure.
 * @param {string} command
 * @param {string[]} args
 * @param {{ cwd: string, timeoutMs: number }} options
 * @returns {Promise<string>}
 */
function run(command, args, { cwd, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (/** @type {Buffer} */ chunk) => {
      output = (output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else
        reject(
          new Error(
            `${path.basename(command)} ${args.join(' ')} ended with ${signal ?? `exit code ${code}`}: ${output.slice(-1_000)}`,
          ),
        );
    });
  });
}

/**
 * @param {string} harFile
 * @param {string} workDir
 * @returns {Promise<any>} the OpenAPI document
 */
async function runHarToOpenapi(harFile, workDir) {
  const out = path.join(workDir, 'har-to-openapi.json');
  await run(
    path.join(BIN, 'har-to-openapi'),
    [
      harFile,
      '-f',
      'json',
      '-o',
      out,
      '--attempt-to-parameterize-url',
      '--min-length-for-numeric-path',
      '1',
      '--force-all-requests-in-same-spec',
    ],
    { cwd: workDir, timeoutMs: 600_000 },
  );
  return JSON.parse(fs.readFileSync(out, 'utf8'));
}

/**
 * @param {string} harFile
 * @param {string} workDir
 * @returns {Promise<any>} the OpenAPI document Optic wrote
 */
async function runOptic(harFile, workDir) {
  const spec = path.join(workDir, 'optic.json');
  fs.writeFileSync(
    spec,
    JSON.stringify({ openapi: '3.0.3', info: { title: 'bench', version: '0' }, paths: {} }, null, 2),
  );
  await run(path.join(BIN, 'optic'), ['capture', spec, '--har', harFile, '--update', 'automatic'], {
    cwd: workDir,
    timeoutMs: 900_000,
  });
  return JSON.parse(fs.readFileSync(spec, 'utf8'));
}

module.exports = { runHarToOpenapi, runOptic };
