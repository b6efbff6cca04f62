// @ts-check
// The agent's path learner alone on a saved run's traffic (`--replay <dir>`): the templates it ends
// with, fed as the agent feeds it (the path as the detectors template it, the field names of 2xx JSON
// answers and of accepted JSON or form request bodies, identifier values once per raw path, 404/405
// left out), without the agent's hold, the backend or bodies. Seconds instead of minutes, to try a
// learner change on the saved traffic of the seen sets. Not a figure: rows the agent sends before
// a position is learned or forgotten are not replayed, so the bench's own run may differ.
const { parseJson } = require('./score');

/**
 * @typedef {object} SharedPaths what the learner needs of `@spectator/shared`
 * @property {(raw: string) => string} templatePath
 * @property {new () => { observe(template: string, method: string, keys: readonly string[] | null, requestKeys?: readonly string[] | null): boolean, noteIdentifiers(template: string, raw: string): boolean, resolve(template: string): string }} PathLearner
 * @property {(shape: any) => readonly string[] | null} responseKeys
 * @property {(value: unknown) => any} inferShape
 */

/**
 * A request body as the agent shapes it for the learner: JSON, or a form's fields (as strings).
 * @param {string | undefined} contentType
 * @param {string | undefined} text
 * @returns {unknown}
 */
function requestValue(contentType, text) {
  if (text === undefined || text === '') return undefined;
  if (/json/i.test(contentType ?? '')) return parseJson(text);
  if (/x-www-form-urlencoded/i.test(contentType ?? '')) return Object.fromEntries(new URLSearchParams(text));
  return undefined;
}

/**
 * The learner's final templates for a document's traffic, as an OpenAPI document of operations only.
 * @param {import('./send').Exchange[]} exchanges in the order they were sent
 * @param {SharedPaths} paths
 * @returns {{ openapi: string, info: { title: string, version: string }, paths: Record<string, Record<string, { responses: {} }>> }}
 */
function replayTemplates(exchanges, { templatePath, PathLearner, responseKeys, inferShape }) {
  const learner = new PathLearner();
  /** Raw paths and methods seen without fields (evidence once), raw paths whose identifiers were counted. */
  const observed = new Set();
  const noted = new Set();
  const answered = exchanges.filter((exchange) => exchange.status > 0);
  for (const exchange of answered) {
    const { status } = exchange;
    if (status === 404 || status === 405) continue;
    const raw = exchange.request.path.split('?')[0] ?? '/';
    const template = templatePath(raw);
    const answer = /json/i.test(exchange.responseHeaders['content-type'] ?? '')
      ? parseJson(exchange.responseText)
      : undefined;
    const keys = status >= 200 && status < 300 && answer !== undefined ? responseKeys(inferShape(answer)) : null;
    const request = requestValue(exchange.request.headers['content-type'], exchange.request.body);
    const requestKeys =
      status >= 200 && status < 400 && request !== undefined ? responseKeys(inferShape(request)) : null;
    const once = `${exchange.request.method} ${raw}`;
    if (keys !== null || requestKeys !== null || !observed.has(once)) {
      observed.add(once);
      learner.observe(template, exchange.request.method, keys, requestKeys);
    }
    if (!noted.has(raw)) {
      noted.add(raw);
      if (template.includes('}/')) learner.noteIdentifiers(template, raw);
    }
  }
  /** @type {Record<string, Record<string, { responses: {} }>>} */
  const operations = {};
  for (const exchange of answered) {
    const template = learner.resolve(templatePath(exchange.request.path.split('?')[0] ?? '/'));
    operations[template] = { ...operations[template], [exchange.request.method.toLowerCase()]: { responses: {} } };
  }
  return { openapi: '3.0.3', info: { title: 'replayed templates', version: '0' }, paths: operations };
}

module.exports = { replayTemplates };
