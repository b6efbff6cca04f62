// @ts-check
// The agent on a saved run's traffic (`--replay <dir>`): each exchange handed to the agent's own
// observation pipeline (templating, the path learner, the hold of undecided paths, noise, bounded
// cardinality) in the order it was sent, on a clock read from the saved times, rows drained every
// second as the agent sends them, and the templates the agent says it learned (`learned` covers)
// regrouped as the backend regroups them. The operations it ends with are scored: seconds instead of
// minutes, to try a learner change on the seen sets. Not a figure: no backend, no bodies documented,
// and the saved times are the bench's own run's, not this machine's.
const path = require('node:path');

/**
 * @typedef {object} AgentParts what the replay needs of the agent and `@spectator/shared`
 * @property {new (options: any) => any} ObservationPipeline
 * @property {new () => any} Metrics
 * @property {(captureId: string, path: string) => string} pathDigest
 * @property {(template: string, path: string) => boolean} sameRoute
 */

/**
 * The agent's pipeline and `pathDigest`, from this checkout's build (`tsc -b shared agent backend`).
 * @param {string} root the repository
 * @returns {AgentParts}
 */
function agentPartsOf(root) {
  const { ObservationPipeline } = require(path.join(root, 'agent/dist/src/observe/pipeline.js'));
  const { Metrics } = require(path.join(root, 'agent/dist/src/metrics.js'));
  const { pathDigest, sameRoute } = require(path.join(root, 'shared/dist/src/index.js'));
  return { ObservationPipeline, Metrics, pathDigest, sameRoute };
}

/** How often the agent drains its rows (its default `flushIntervalMs`). */
const FLUSH_MS = 1_000;
const CAPTURE = 'replay';
/** How the agent's answers to failed upstream requests begin (agent/src/proxy/errors.ts). */
const AGENT_FAILURE = '{"statusCode":50';

/** A logger that says nothing. @type {any} */
const SILENT = { error() {}, warn() {}, info() {}, debug() {}, trace() {}, child: () => SILENT };

/**
 * The operations the agent's rows end with for a document's traffic, as an OpenAPI document of operations only.
 * @param {import('./send').Exchange[]} exchanges in the order they were sent
 * @param {AgentParts} agent
 * @param {import('./cost').CostMeter | null} [meter] counts the learner's work and CPU (`--cost`)
 * @returns {{ openapi: string, info: { title: string, version: string }, paths: Record<string, Record<string, { responses: {} }>> }}
 */
function replayAgent(exchanges, { ObservationPipeline, Metrics, pathDigest, sameRoute }, meter = null) {
  let clock = 0;
  const pipeline = new ObservationPipeline({
    bodyLimit: 1024 * 1024,
    captureId: () => CAPTURE,
    rules: () => [],
    metrics: new Metrics(),
    log: SILENT,
    now: () => clock,
    samplerClock: () => clock,
    // Every body shaped (`--shape-budget 100`): the default budget admits by measured CPU time, which
    // would make the replay differ from run to run.
    sampler: { budgetShare: 1, burstMs: Infinity, maxPerKeyPerSecond: Infinity },
  });
  meter?.watch(pipeline);
  /** Method and path of each row the backend would store (method, space, path). */
  const rows = new Set();
  /** Digests of covered literal paths → their template: later rows under them are stored under it too. */
  const moved = new Map();
  /** @type {string[]} the templates learned so far */
  const learned = [];
  const flush = () => {
    for (const group of pipeline.drain()) {
      for (const { method, path } of group.observations)
        rows.add(
          `${method} ${moved.get(pathDigest(CAPTURE, path)) ?? learned.find((template) => sameRoute(template, path)) ?? path}`,
        );
      // The backend's regroup: rows stored under a covered literal path move to the template.
      for (const [template, digests] of Object.entries(group.learned ?? {})) {
        learned.push(template);
        for (const digest of digests) moved.set(digest, template);
        for (const row of [...rows]) {
          const [method, path] = row.split(' ');
          // The same route under other parameter names (`/{id}/trim` of `/{name}/trim`) joins it too.
          const into =
            moved.get(pathDigest(CAPTURE, String(path))) ?? (sameRoute(template, String(path)) ? template : undefined);
          if (into === undefined || into === path) continue;
          rows.delete(row);
          rows.add(`${method} ${into}`);
        }
      }
    }
  };
  let nextFlush = -1;
  for (const exchange of exchanges) {
    if (exchange.status === 0) continue;
    const at = Date.parse(exchange.startedAt) + exchange.ms;
    if (nextFlush < 0) nextFlush = at + FLUSH_MS;
    for (; at >= nextFlush; nextFlush += FLUSH_MS) {
      clock = nextFlush;
      flush();
    }
    clock = at;
    const { request } = exchange;
    // The agent's own answer to a request its upstream failed (`upstream gave an invalid response`):
    // counted apart by the agent, no row.
    if (exchange.status >= 502 && exchange.status <= 504 && exchange.responseText.startsWith(AGENT_FAILURE)) continue;
    const requestTap = pipeline.tap(request.headers['content-type'], undefined, true);
    if (request.body !== undefined && request.body !== '') requestTap.write(Buffer.from(request.body));
    const headers = exchange.responseHeaders;
    const sampled = pipeline.sample(request.method, request.path, exchange.status, headers, requestTap.copied);
    const responseTap = pipeline.tap(headers['content-type'], headers['content-encoding'], sampled !== 0);
    if (exchange.responseText !== '') responseTap.write(Buffer.from(exchange.responseText));
    pipeline.record({
      captureId: CAPTURE,
      method: request.method,
      target: request.path,
      status: exchange.status,
      requestHeaders: request.headers,
      responseHeaders: headers,
      request: requestTap.bytes > 0 ? requestTap : null,
      response: responseTap.bytes > 0 ? responseTap : null,
      at,
      sampledBytes: sampled,
      firstByte: exchange.ms,
      lastByte: exchange.ms,
      clientLeft: false,
      socket: undefined,
    });
  }
  // The agent stops: what is held goes out.
  clock = Math.max(clock, nextFlush);
  flush();
  pipeline.releaseAll();
  flush();
  meter?.end();
  /** @type {Record<string, Record<string, { responses: {} }>>} */
  const paths = {};
  for (const row of rows) {
    const [method, path] = row.split(' ');
    paths[String(path)] = { ...paths[String(path)], [String(method).toLowerCase()]: { responses: {} } };
  }
  return { openapi: '3.0.3', info: { title: 'replayed through the agent', version: '0' }, paths };
}

module.exports = { replayAgent, agentPartsOf };
