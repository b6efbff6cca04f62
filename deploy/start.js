// @ts-check
/* global setTimeout, AbortController -- Node globals the shared ESLint config does not list for .js */
// `npm start`: the whole product on one machine. Builds what is missing or stale, starts the
// backend on an embedded PostgreSQL (data under ./.spectator), makes the demo project, starts the
// demo posts API with the agent in front of it, plays a short story of traffic, and prints the
// dashboard's address with a sign-in link (it asks before signing in). Ctrl-C stops everything;
// a later start keeps the data; `npm start -- --fresh` starts over.
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { createApiClient } = require('./start/api');
const { startBackendProcess } = require('./start/backend-process');
const { buildIfNeeded } = require('./start/build');
const { ensureDemoProject } = require('./start/project');
const { playEnvironmentStory, playWalkthrough } = require('./start/story');

const ROOT = path.resolve(__dirname, '..');

const USAGE = `Usage: npm start [-- options]

  --fresh             start over: delete the demo's data first
  --port <n>          port of the backend and dashboard (default 3000; 0 picks a free one)
  --proxy-port <n>    port of the agent's proxy, in front of the demo API (default 4000; 0 picks a free one)
  --data-dir <dir>    where the embedded PostgreSQL and the demo's tokens live (default ./.spectator)
  --verbose           show the backend's and the agents' logs
  --help              this text`;

/** A bad command line: the message names the argument. */
class UsageError extends Error {}

/** Thrown at the next step once Ctrl-C was pressed during the start. */
class StopRequested extends Error {}

/**
 * @typedef {object} StartOptions
 * @property {boolean} fresh
 * @property {number} port
 * @property {number} proxyPort
 * @property {string} dataDir absolute
 * @property {boolean} verbose
 * @property {boolean} help
 */

/**
 * Reads the command line.
 * @param {string[]} argv arguments after `start.js`
 * @returns {StartOptions}
 * @throws UsageError naming the argument that is wrong
 */
function parseArgs(argv) {
  /** @type {StartOptions} */
  const options = {
    fresh: false,
    port: 3000,
    proxyPort: 4000,
    dataDir: path.join(ROOT, '.spectator'),
    verbose: false,
    help: false,
  };
  for (let index = 0; index < argv.length; index++) {
    const [flag, inline] = /** @type {[string, string | undefined]} */ (String(argv[index]).split(/=(.*)/s, 2));
    const value = () => {
      const given = inline ?? argv[++index];
      if (given === undefined || given === '') throw new UsageError(`${flag} needs a value`);
      return given;
    };
    const port = () => {
      const text = value();
      if (!/^\d{1,5}$/.test(text) || Number(text) > 65535)
        throw new UsageError(`${flag} must be a port number from 0 to 65535, got "${text}"`);
      return Number(text);
    };
    if (flag === '--fresh') options.fresh = true;
    else if (flag === '--verbose') options.verbose = true;
    else if (flag === '--help' || flag === '-h') options.help = true;
    else if (flag === '--port') options.port = port();
    else if (flag === '--proxy-port') options.proxyPort = port();
    else if (flag === '--data-dir') options.dataDir = path.resolve(value());
    else throw new UsageError(`unknown option "${argv[index]}"`);
  }
  if (options.port !== 0 && options.port === options.proxyPort)
    throw new UsageError(`--port and --proxy-port are both ${options.port}; they need two ports`);
  return options;
}

/**
 * Resolves when nothing listens on host:port, so a taken port is reported before the slow start.
 * @param {number} port
 * @param {string} flag the option that chooses it, for the message
 * @returns {Promise<void>}
 */
function assertPortFree(port, flag) {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (error) =>
      reject(/** @type {NodeJS.ErrnoException} */ (error).code === 'EADDRINUSE' ? portInUse(port, flag) : error),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve()));
  });
}

/**
 * @param {number} port
 * @param {string} flag
 * @returns {Error}
 */
function portInUse(port, flag) {
  return new Error(
    `port ${port} is in use (another program, or an earlier npm start still running). Stop it, or choose another port: npm start -- ${flag} ${port + 1}`,
  );
}

/**
 * Deletes the data directory for --fresh, refusing anything that is not clearly ours.
 * @param {string} dataDir
 * @param {(line: string) => void} progress
 */
function removeData(dataDir, progress) {
  if (!fs.existsSync(dataDir)) return;
  const ours = ['pg', 'admin-token', 'demo-tokens.json'].some((entry) => fs.existsSync(path.join(dataDir, entry)));
  if (!ours)
    throw new Error(
      `--fresh: ${dataDir} does not look like Spectator's data (no pg/, admin-token or demo-tokens.json); not deleting it`,
    );
  fs.rmSync(dataDir, { recursive: true, force: true });
  progress(`deleted ${path.relative(process.cwd(), dataDir) || dataDir} (--fresh)`);
}

/**
 * Starts everything, step by step.
 * @param {StartOptions} options
 * @param {object} hooks
 * @param {(stop: () => Promise<void>) => void} hooks.register called with each part's stop function as soon as the part runs
 * @param {(line: string) => void} hooks.progress prints a progress line; throws StopRequested after Ctrl-C, so the start ends at the next step
 * @param {AbortSignal} hooks.signal aborted on Ctrl-C: ends a build under way
 * @returns {Promise<void>}
 */
async function start(options, { register, progress, signal }) {
  const logLevel = options.verbose ? 'info' : 'error';
  console.log('Starting Spectator…');
  if (options.fresh) removeData(options.dataDir, progress);
  await assertPortFree(options.port, '--port');
  await assertPortFree(options.proxyPort, '--proxy-port');
  await buildIfNeeded(ROOT, progress, signal);

  const { startAgent } = require(path.join(ROOT, 'agent/dist/src/index.js'));
  const { startDemoApi } = require(path.join(ROOT, 'deploy/demo-api/server.js'));

  const usesEmbedded = !process.env.DATABASE_URL;
  progress(
    usesEmbedded
      ? `starting the backend on an embedded PostgreSQL (data in ${display(options.dataDir)})`
      : 'starting the backend on DATABASE_URL',
  );
  const startedAt = Date.now();
  const backend = await startBackendProcess({ port: options.port, dataDir: options.dataDir, logLevel }).catch(
    (/** @type {NodeJS.ErrnoException} */ error) => {
      if (error.code === 'EADDRINUSE') throw portInUse(options.port, '--port');
      if (error.code === 'DATABASE_START' && usesEmbedded) {
        throw new Error(
          `${error.message}. Is another npm start using ${display(options.dataDir)}? Stop it, or choose another folder with --data-dir; npm start -- --fresh starts over.`,
        );
      }
      throw error;
    },
  );
  register(() => backend.close());
  progress(`backend ready at ${backend.url} in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`);
  const adminToken = backend.adminToken || process.env.SPECTATOR_ADMIN_TOKEN || '';
  if (!adminToken)
    throw new Error(
      `the admin token of the data in ${display(options.dataDir)} is lost (its admin-token file is gone). Set SPECTATOR_ADMIN_TOKEN to it, or start over: npm start -- --fresh`,
    );

  const demo = await ensureDemoProject(
    createApiClient(backend.url, adminToken),
    path.join(options.dataDir, 'demo-tokens.json'),
  );
  const dashboardApi = createApiClient(backend.url, demo.dashboardToken);
  progress(
    demo.created ? `created the demo project "${demo.slug}"` : `found the demo project "${demo.slug}" and its data`,
  );
  const configPath = path.join(ROOT, 'deploy/service.yml');
  if (demo.created) {
    progress('playing the story of pull requests #1 and #2, staging and production builds');
    await playEnvironmentStory({
      startAgent,
      backendUrl: backend.url,
      agentToken: demo.agentToken,
      api: dashboardApi,
      project: demo.slug,
      configPath,
      logLevel,
      progress,
    }).catch((error) => {
      if (error instanceof StopRequested) throw error;
      // The project exists now, so a plain restart would not replay the story.
      throw new Error(
        `${error.message}\n(the story is played for a new project only: npm start -- --fresh plays it again)`,
      );
    });
  }

  const demoApi = await startDemoApi({ port: 0, host: '127.0.0.1' });
  register(() => demoApi.close());
  progress(`demo posts API at ${demoApi.url}`);
  /** @type {{ proxyUrl: string, captureId(): string, close(): Promise<void> }} */
  const agent = await startAgent({
    listen: `127.0.0.1:${options.proxyPort}`,
    upstream: demoApi.url,
    backend: backend.url,
    token: demo.agentToken,
    environment: { kind: 'local' },
    configPath,
    admin: null,
    logLevel,
  }).catch((/** @type {NodeJS.ErrnoException} */ error) => {
    throw error.code === 'EADDRINUSE' ? portInUse(options.proxyPort, '--proxy-port') : error;
  });
  register(async () => {
    const captureId = agent.captureId();
    await agent.close();
    // The agent's last message ends its capture; let the backend record it before it stops
    // (only tidier: a capture left open is closed by the next one).
    await waitForCapture(dashboardApi, demo.slug, captureId, (capture) => capture.endedAt !== null, 3_000).catch(
      () => undefined,
    );
  });
  progress(`agent proxying ${agent.proxyUrl} → ${demoApi.url}`);
  const { requests, observed } = await playWalkthrough(agent.proxyUrl);
  // Ready means the dashboard already shows the walkthrough: wait for the agent's batch to land.
  await waitForCapture(
    dashboardApi,
    demo.slug,
    agent.captureId(),
    (capture) => capture.interactions >= observed,
    10_000,
  );
  progress(`walkthrough: ${requests} requests through the agent (landing page, two POST /posts, GET /posts)`);

  /** @type {{ method: string, path: string, count: number }[]} */
  const undocumented = await dashboardApi.call(
    'GET',
    `/projects/${demo.slug}/captures/${agent.captureId()}/undocumented`,
  );
  const createPost = undocumented.find((endpoint) => endpoint.method === 'POST' && endpoint.path === '/posts');
  // On a later start POST /posts may be documented already: say what the dashboard shows then.
  const firstStep = createPost
    ? `the newest capture lists POST /posts as undocumented (${createPost.count} to review).
     Document it ("Create a new post. Accepts author, title as JSON in request body") and commit.`
    : 'POST /posts is documented already: the newest capture shows its traffic, and a diff if its shape changed.';
  const signIn = `${backend.url}/#/signin?token=${encodeURIComponent(demo.dashboardToken)}&project=${encodeURIComponent(demo.slug)}`;
  console.log(`
Spectator is ready.

  Dashboard  ${signIn}
             (the link opens the sign-in for the demo project: press Sign in)
  Proxy      ${agent.proxyUrl}
             (send requests here: the demo posts API, with the agent in front)
  API        ${backend.url}/api/v1   (reference: ${backend.url}/api/docs)

Try next:
  1. Open the dashboard: ${firstStep}
  2. Send more traffic through the agent and watch it arrive:
       curl -X POST ${agent.proxyUrl}/posts -H 'Content-Type: application/json' -d '{"title":"Hi","author":"Lin"}'
  3. Versions: GET /posts is 1.0 in PR #1, staging s-101 and production p-101, and 1.1 in PR #2
     and staging s-102. Once POST /posts is documented it shows N/A there until evidence arrives.
  4. Proposals: "Posts show their likes" is Implemented and in Staging, not yet in Production.

Ctrl-C stops everything; the data stays in ${display(options.dataDir)} (npm start -- --fresh starts over).`);
}

/**
 * Resolves once the backend shows a capture in the state `done` looks for.
 * @param {import('./start/api').ApiClient} api
 * @param {string} project
 * @param {string} captureId
 * @param {(capture: { interactions: number, endedAt: string | null }) => boolean} done
 * @param {number} timeoutMs
 * @returns {Promise<void>}
 * @throws Error when the capture is not in that state within `timeoutMs`
 */
async function waitForCapture(api, project, captureId, done, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    /** @type {{ interactions: number, endedAt: string | null } | null} */
    const capture = await api.call('GET', `/projects/${project}/captures/${captureId}`).catch((error) => {
      if (error.status === 404) return null;
      throw error;
    });
    if (capture && done(capture)) return;
    if (Date.now() > deadline)
      throw new Error(
        `the backend did not show capture ${captureId} as expected within ${timeoutMs / 1000} s (it has ${JSON.stringify(capture)})`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A path as the user would type it from here.
 * @param {string} target
 * @returns {string}
 */
function display(target) {
  const relative = path.relative(process.cwd(), target);
  return relative && !relative.startsWith('..') ? `./${relative}` : target;
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`npm start: ${/** @type {Error} */ (error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    console.log(USAGE);
    return;
  }

  /** @type {(() => Promise<void>)[]} */
  const running = [];
  let stopping = false;
  const stopAll = async () => {
    // Last started stops first: the agent flushes to the backend before the backend goes.
    for (const stop of running.splice(0).reverse()) {
      await stop().catch((error) => console.error(`  · while stopping: ${error.message}`));
    }
  };
  const abort = new AbortController();
  const starting = start(options, {
    signal: abort.signal,
    register: (stop) => running.push(stop),
    progress: (line) => {
      if (stopping) throw new StopRequested('stopped during the start');
      console.log(`  · ${line}`);
    },
  });

  const onSignal = (/** @type {NodeJS.Signals} */ signal) => {
    if (stopping) {
      console.error(
        '\nStopping already; a second signal forces the exit (the embedded PostgreSQL may be left running; the next start stops it).',
      );
      process.exit(130);
    }
    stopping = true;
    abort.abort();
    console.log(`\n${signal === 'SIGINT' ? 'Ctrl-C' : signal}: stopping…`);
    // Let the step under way finish (it may be starting the database), then stop every part.
    starting
      .catch(() => undefined)
      .then(stopAll)
      .then(() => {
        console.log('Spectator stopped.');
        process.exit(0);
      });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    await starting;
  } catch (error) {
    if (stopping) return;
    stopping = true;
    console.error(`\nSpectator could not start: ${/** @type {Error} */ (error).message}`);
    await stopAll();
    process.exit(1);
  }
}

if (require.main === module) void main();

module.exports = { parseArgs, UsageError, USAGE };
