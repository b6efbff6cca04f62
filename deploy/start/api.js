// @ts-check
/* global fetch, AbortSignal -- Node 20 globals the shared ESLint config does not list for .js */
// A small client of the management API for `npm start` and the compose setup: JSON in and out,
// and an error that says which call failed and what the backend answered.

/**
 * @typedef {object} ApiClient
 * @property {string} baseUrl the backend's base URL, e.g. http://127.0.0.1:3000
 * @property {<T>(method: string, path: string, body?: unknown) => Promise<T>} call a call under `/api/v1`; rejects on any status but 2xx
 */

/** A management API answer other than 2xx. */
class ApiCallError extends Error {
  /**
   * @param {string} what `METHOD /path`
   * @param {number} status
   * @param {string} detail the backend's message
   */
  constructor(what, status, detail) {
    super(`${what} answered ${status}: ${detail}`);
    this.name = 'ApiCallError';
    this.status = status;
  }
}

/**
 * A client that sends `Authorization: Bearer <token>` to `<baseUrl>/api/v1`.
 * @param {string} baseUrl
 * @param {string} token
 * @returns {ApiClient}
 */
function createApiClient(baseUrl, token) {
  return {
    baseUrl,
    async call(method, path, body) {
      const what = `${method} /api/v1${path}`;
      const response = await fetch(`${baseUrl}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      if (!response.ok) {
        let detail = text.slice(0, 500);
        try {
          detail = JSON.parse(text).message ?? detail;
        } catch {
          // Not JSON: the raw text says enough.
        }
        throw new ApiCallError(what, response.status, String(detail));
      }
      return text === '' ? undefined : JSON.parse(text);
    },
  };
}

module.exports = { ApiCallError, createApiClient };
