// @ts-check
/* global fetch, AbortSignal, setTimeout -- Node 20 globals the shared ESLint config does not list for .js */
// The demo project and its tokens: made on first use, found again on later starts. `npm start`
// uses it, and so does deploy/docker-compose.yml (run as a script, it writes the agent token to
// a file the agent container reads).
const fs = require('node:fs');
const path = require('node:path');
const { createApiClient } = require('./api');

const DEMO_PROJECT = { slug: 'demo', name: 'Demo posts API' };

/**
 * @typedef {object} DemoTokens
 * @property {string} agentToken agent-scoped: what the demo's agents send with
 * @property {string} dashboardToken admin-scoped for the demo project: the one-click sign-in
 * @property {string[]} tokenIds ids of both, to check on a later start that they still work
 */

/**
 * Tokens kept by an earlier start, or null when there are none (or the file is unreadable).
 * @param {string} file
 * @returns {DemoTokens | null}
 */
function readTokens(file) {
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8'));
    return typeof value.agentToken === 'string' &&
      typeof value.dashboardToken === 'string' &&
      Array.isArray(value.tokenIds)
      ? value
      : null;
  } catch {
    return null;
  }
}

/**
 * Makes the demo project unless it exists, and tokens for it unless those kept in `tokensFile`
 * are still valid (not revoked). Tokens are shown once by the API, so they are kept in that file
 * (mode 0600, beside the embedded database).
 * @param {import('./api').ApiClient} admin a client with the admin token
 * @param {string} tokensFile
 * @returns {Promise<DemoTokens & { slug: string, created: boolean }>}
 */
async function ensureDemoProject(admin, tokensFile) {
  /** @type {{ slug: string }[]} */
  const projects = await admin.call('GET', '/projects');
  const created = !projects.some((project) => project.slug === DEMO_PROJECT.slug);
  if (created) await admin.call('POST', '/projects', DEMO_PROJECT);

  let tokens = created ? null : readTokens(tokensFile);
  if (tokens) {
    /** @type {{ id: string, revokedAt: string | null }[]} */
    const existing = await admin.call('GET', `/projects/${DEMO_PROJECT.slug}/tokens`);
    const valid = new Set(existing.filter((token) => token.revokedAt === null).map((token) => token.id));
    if (!tokens.tokenIds.every((id) => valid.has(id))) tokens = null;
  }
  if (!tokens) {
    /** @type {{ id: string, token: string }} */
    const agent = await admin.call('POST', `/projects/${DEMO_PROJECT.slug}/tokens`, {
      name: 'demo agents',
      scope: 'agent',
    });
    /** @type {{ id: string, token: string }} */
    const dashboard = await admin.call('POST', `/projects/${DEMO_PROJECT.slug}/tokens`, {
      name: 'demo dashboard sign-in',
      scope: 'admin',
    });
    tokens = { agentToken: agent.token, dashboardToken: dashboard.token, tokenIds: [agent.id, dashboard.id] };
    fs.mkdirSync(path.dirname(tokensFile), { recursive: true });
    fs.writeFileSync(tokensFile, `${JSON.stringify(tokens, null, 2)}\n`, { mode: 0o600 });
  }
  return { ...tokens, slug: DEMO_PROJECT.slug, created };
}

/**
 * Waits until `GET <baseUrl>/api/v1/health` answers 200.
 * @param {string} baseUrl
 * @param {number} timeoutMs
 * @returns {Promise<void>}
 */
async function waitForHealth(baseUrl, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${baseUrl}/api/v1/health`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) return;
      last = `status ${response.status}`;
    } catch (error) {
      last = /** @type {Error} */ (error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  throw new Error(`${baseUrl}/api/v1/health did not answer 200 within ${timeoutMs / 1000} s (last: ${last})`);
}

/**
 * Compose setup: `node project.js <agent-token-file> <state-file>` with SPECTATOR_URL and
 * SPECTATOR_ADMIN_TOKEN set; waits for the backend, ensures the demo project (tokens kept in the
 * state file, which stays with the setup) and writes only the agent token where the agent reads it.
 * @returns {Promise<void>}
 */
async function main() {
  const [tokenFile, stateFile] = process.argv.slice(2);
  const { SPECTATOR_URL: url, SPECTATOR_ADMIN_TOKEN: adminToken } = process.env;
  const missing = [
    !tokenFile && 'the agent token file argument',
    !stateFile && 'the state file argument',
    !url && 'SPECTATOR_URL',
    !adminToken && 'SPECTATOR_ADMIN_TOKEN',
  ].filter(Boolean);
  if (!tokenFile || !stateFile || !url || !adminToken)
    throw new Error(
      `usage: SPECTATOR_URL=… SPECTATOR_ADMIN_TOKEN=… node project.js <agent-token-file> <state-file>; missing ${missing.join(', ')}`,
    );
  await waitForHealth(url, 120_000);
  const tokens = await ensureDemoProject(createApiClient(url, adminToken), stateFile);
  fs.writeFileSync(tokenFile, tokens.agentToken, { mode: 0o644 });
  console.log(
    `demo project "${tokens.slug}" ${tokens.created ? 'created' : 'found'}; agent token written to ${tokenFile}`,
  );
}

if (require.main === module) {
  main().catch((error) => {
    console.error(`spectator setup: ${error.message}`);
    process.exit(1);
  });
}

module.exports = { DEMO_PROJECT, ensureDemoProject, waitForHealth };
