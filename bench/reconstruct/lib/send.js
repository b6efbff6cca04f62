// @ts-check
// Plays planned requests against a base URL one at a time and keeps each exchange, which the
// bench scores against and writes as HAR for the peers.

/** @typedef {import('./traffic').PlannedRequest} PlannedRequest */

/**
 * @typedef {object} Exchange
 * @property {PlannedRequest} request
 * @property {string} url
 * @property {string} startedAt ISO time
 * @property {number} ms
 * @property {number} status 0 when the request failed
 * @property {Record<string, string>} responseHeaders
 * @property {string} responseText
 */

/**
 * @param {string} baseUrl
 * @param {PlannedRequest[]} requests
 * @param {{ timeoutMs?: number }} [options]
 * @returns {Promise<Exchange[]>}
 */
async function sendAll(baseUrl, requests, { timeoutMs = 15_000 } = {}) {
  /** @type {Exchange[]} */
  const exchanges = [];
  for (const request of requests) {
    const url = `${baseUrl}${request.path}`;
    const started = Date.now();
    /** @type {Exchange} */
    const exchange = {
      request,
      url,
      startedAt: new Date(started).toISOString(),
      ms: 0,
      status: 0,
      responseHeaders: {},
      responseText: '',
    };
    try {
      const response = await fetch(url, {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      exchange.responseText = await response.text();
      exchange.status = response.status;
      response.headers.forEach((value, name) => {
        exchange.responseHeaders[name] = value;
      });
    } catch (error) {
      exchange.responseText = String(/** @type {Error} */ (error).message);
    }
    exchange.ms = Date.now() - started;
    exchanges.push(exchange);
  }
  return exchanges;
}

/**
 * The exchanges as a HAR 1.2 log.
 * @param {Exchange[]} exchanges
 * @returns {object}
 */
function toHar(exchanges) {
  return {
    log: {
      version: '1.2',
      creator: { name: 'spectator-bench-reconstruct', version: '1' },
      entries: exchanges
        .filter((exchange) => exchange.status > 0)
        .map((exchange) => {
          const url = new URL(exchange.url);
          const requestType = exchange.request.headers['content-type'];
          const responseType = exchange.responseHeaders['content-type'] ?? 'application/octet-stream';
          return {
            startedDateTime: exchange.startedAt,
            time: exchange.ms,
            request: {
              method: exchange.request.method,
              url: exchange.url,
              httpVersion: 'HTTP/1.1',
              cookies: [],
              headers: Object.entries({ host: url.host, ...exchange.request.headers }).map(([name, value]) => ({
                name,
                value,
              })),
              queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
              ...(exchange.request.body === undefined
                ? {}
                : { postData: { mimeType: requestType ?? 'application/json', text: exchange.request.body } }),
              headersSize: -1,
              bodySize: exchange.request.body === undefined ? 0 : Buffer.byteLength(exchange.request.body),
            },
            response: {
              status: exchange.status,
              statusText: '',
              httpVersion: 'HTTP/1.1',
              cookies: [],
              headers: Object.entries(exchange.responseHeaders).map(([name, value]) => ({ name, value })),
              content: {
                size: Buffer.byteLength(exchange.responseText),
                mimeType: responseType,
                text: exchange.responseText,
              },
              redirectURL: '',
              headersSize: -1,
              bodySize: Buffer.byteLength(exchange.responseText),
            },
            cache: {},
            timings: { send: 0, wait: exchange.ms, receive: 0 },
          };
        }),
    },
  };
}

module.exports = { sendAll, toHar };
