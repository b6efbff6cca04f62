// @ts-check
/* global fetch, AbortSignal -- Node 20 globals the shared ESLint config does not list for .js */
// The traffic `npm start` plays so the dashboard is worth opening at once:
// - the spec's walkthrough through the local agent in front of the demo posts API (landing-page
//   traffic that service.yml ignores, two POST /posts, a GET /posts);
// - a short history of the posts API's GET endpoints in other environments, played by agents
//   tagged like CI, staging and production agents: documented at 1.0, implemented in PR #1,
//   seen in staging and production builds; then a new response field documented as 1.1,
//   implemented in PR #2 and seen in a later staging build, not yet in production. The
//   versions table and the proposal timelines then have content.
const { createHash } = require('node:crypto');
const http = require('node:http');

/**
 * Sends one request and reads the JSON answer (if any).
 * @param {string} baseUrl
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<{ status: number, json: unknown }>}
 */
async function send(baseUrl, method, path, body) {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    // The landing page and its assets are not JSON.
  }
  return { status: response.status, json };
}

/**
 * The landing page's traffic: ignored by deploy/service.yml.
 * @type {[method: string, path: string, body?: unknown][]}
 */
const LANDING_TRAFFIC = [
  ['GET', '/'],
  ['GET', '/script.js'],
  ['GET', '/style.css'],
  ['GET', '/favicon.ico'],
  ['GET', '/db'],
  ['POST', '/db', { event: 'visit' }],
  ['PUT', '/db', { visits: 1 }],
];

const WALKTHROUGH_POSTS = [
  { title: 'Hello, Spectator', author: 'Ada' },
  { title: 'Shapes, not values', author: 'Grace' },
];

/**
 * The spec's walkthrough through the agent's proxy: landing traffic, two POST /posts, a GET /posts.
 * @param {string} proxyUrl
 * @returns {Promise<{ requests: number, observed: number }>} requests sent, and how many of them
 *   service.yml does not ignore (the interactions the capture will count)
 * @throws Error naming the request whose answer was not the expected one
 */
async function playWalkthrough(proxyUrl) {
  /** @type {[method: string, path: string, body?: unknown][]} */
  const requests = [
    ...LANDING_TRAFFIC,
    ...WALKTHROUGH_POSTS.map((post) => /** @type {[string, string, unknown]} */ (['POST', '/posts', post])),
    ['GET', '/posts'],
  ];
  for (const [method, path, body] of requests) {
    const { status } = await send(proxyUrl, method, path, body);
    const expected = method === 'POST' && path === '/posts' ? 201 : 200;
    if (status !== expected)
      throw new Error(`walkthrough: ${method} ${path} through the agent answered ${status}, expected ${expected}`);
  }
  return { requests: requests.length, observed: requests.length - LANDING_TRAFFIC.length };
}

/**
 * A stand-in for other builds of the posts API, serving GET /posts and GET /posts/:id. Version
 * 'v2' adds a `likes` number to each post: a non-breaking change (a new response field).
 * @param {'v1' | 'v2'} variant
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
async function startStoryApi(variant) {
  const posts = WALKTHROUGH_POSTS.map((post, index) => ({
    id: index + 1,
    ...post,
    ...(variant === 'v2' ? { likes: 3 * index } : {}),
  }));
  const server = http.createServer((req, res) => {
    const match = /^\/posts(?:\/(\d+))?$/.exec((req.url ?? '/').split('?')[0] ?? '/');
    const found = match?.[1] === undefined ? posts : posts.find((post) => post.id === Number(match[1]));
    const [status, body] =
      req.method !== 'GET' || !match
        ? [404, { message: 'not found' }]
        : found
          ? [200, found]
          : [404, { message: 'no such post' }];
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  };
}

/**
 * A commit id for a story step: deterministic, so a replay tags the same commit.
 * @param {string} label
 * @returns {string}
 */
function storyCommit(label) {
  return createHash('sha1').update(`spectator demo ${label}`).digest('hex');
}

/**
 * @typedef {object} StoryContext
 * @property {(options: object) => Promise<{ proxyUrl: string, captureId(): string, close(): Promise<void> }>} startAgent the agent package's startAgent
 * @property {string} backendUrl
 * @property {string} agentToken
 * @property {import('./api').ApiClient} api a client allowed to document (write scope or more)
 * @property {string} project the project's slug
 * @property {string} configPath service.yml for the agents
 * @property {string} logLevel
 * @property {(line: string) => void} progress
 */

/**
 * Runs one build of the API behind an agent tagged with an environment, sends its GET traffic,
 * and stops the agent (which waits for the backend to acknowledge what it sent).
 * @param {StoryContext} context
 * @param {'v1' | 'v2'} variant
 * @param {{ kind: string, pullRequest?: string, build?: string, commit: string }} environment
 * @returns {Promise<string>} the capture's id
 */
async function runBuild(context, variant, environment) {
  const api = await startStoryApi(variant);
  try {
    const agent = await context.startAgent({
      listen: '127.0.0.1:0',
      upstream: api.url,
      backend: context.backendUrl,
      token: context.agentToken,
      environment,
      configPath: context.configPath,
      admin: null,
      logLevel: context.logLevel,
    });
    try {
      for (const path of ['/posts', '/posts/1', '/posts/2']) {
        const { status } = await send(agent.proxyUrl, 'GET', path);
        if (status !== 200)
          throw new Error(`story: GET ${path} through a ${environment.kind} agent answered ${status}`);
      }
      return agent.captureId();
    } finally {
      await agent.close();
    }
  } finally {
    await api.close();
  }
}

/**
 * Documents (or accepts the changes of) the GET endpoints seen in a capture.
 * @param {StoryContext} context
 * @param {string} captureId
 * @param {string} message
 * @returns {Promise<string[]>} `METHOD path version` of each endpoint documented
 */
async function documentGets(context, captureId, message) {
  /** @type {{ method: string, path: string }[]} */
  const undocumented = await context.api.call('GET', `/projects/${context.project}/captures/${captureId}/undocumented`);
  /** @type {{ method: string, path: string }[]} */
  const diffs = await context.api.call('GET', `/projects/${context.project}/captures/${captureId}/diffs`);
  const endpoints = [...undocumented, ...diffs]
    .filter((endpoint) => endpoint.method === 'GET')
    .map((endpoint) => ({
      method: endpoint.method,
      path: endpoint.path,
      description: endpoint.path === '/posts' ? 'List the posts.' : 'One post, by its id.',
      documentBodies: true,
    }));
  if (endpoints.length === 0) throw new Error(`story: capture ${captureId} shows no GET endpoint to document`);
  /** @type {{ versions: { method: string, path: string, version: string }[] }} */
  const result = await context.api.call('POST', `/projects/${context.project}/documentation`, {
    captureId,
    endpoints,
    message,
  });
  return result.versions.map((version) => `${version.method} ${version.path} ${version.version}`);
}

/**
 * The environments story (see the top of this file). Meant for a new project: a replay adds
 * captures again but no new versions.
 * @param {StoryContext} context
 * @returns {Promise<void>}
 */
async function playEnvironmentStory(context) {
  const { progress } = context;
  const v1Local = await runBuild(context, 'v1', { kind: 'local', commit: storyCommit('v1') });
  progress(`story: documented ${(await documentGets(context, v1Local, 'Document the posts API')).join(', ')}`);
  await runBuild(context, 'v1', { kind: 'ci', pullRequest: '1', commit: storyCommit('v1') });
  progress('story: CI run of pull request #1');
  await runBuild(context, 'v1', { kind: 'staging', build: 's-101', commit: storyCommit('v1') });
  await runBuild(context, 'v1', { kind: 'production', build: 'p-101', commit: storyCommit('v1') });
  progress('story: staging build s-101 and production build p-101');
  const v2Local = await runBuild(context, 'v2', { kind: 'local', commit: storyCommit('v2') });
  progress(
    `story: accepted a new response field: ${(await documentGets(context, v2Local, 'Posts show their likes')).join(', ')}`,
  );
  await runBuild(context, 'v2', { kind: 'ci', pullRequest: '2', commit: storyCommit('v2') });
  progress('story: CI run of pull request #2');
  await runBuild(context, 'v2', { kind: 'staging', build: 's-102', commit: storyCommit('v2') });
  progress('story: staging build s-102 (production still runs p-101)');
}

module.exports = {
  LANDING_TRAFFIC,
  WALKTHROUGH_POSTS,
  playEnvironmentStory,
  playWalkthrough,
  startStoryApi,
  storyCommit,
};
