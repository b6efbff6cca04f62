// The demo posts API observed in Spectator's walkthrough (the tour of docs/README.md),
// plus the landing page whose traffic service.yml ignores. Plain node:http, no dependencies, so it
// runs anywhere Node runs: `node deploy/demo-api/server.js --port 3000` (or PORT=3000).
'use strict';

const { Buffer } = require('node:buffer');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { URL } = require('node:url');

/** Largest request body read, in bytes; a larger one is answered 413. */
const MAX_BODY_BYTES = 64 * 1024;

/** `application/json` and `application/*+json`, with any parameters (RFC 6838 subtype characters). */
const JSON_MEDIA_TYPE = /^application\/(?:[!#$&^_.+\w-]+\+)?json$/;

/** The landing page and its assets, served from ./public. */
const STATIC_FILES = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/script.js': ['script.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
  '/favicon.ico': ['favicon.ico', 'image/x-icon'],
};

/** An error answered as `{statusCode, error, message}`, the error body of Spectator's own API. */
class HttpError extends Error {
  /** @param {number} statusCode @param {string} message @param {Record<string, string>} [headers] */
  constructor(statusCode, message, headers = {}) {
    super(message);
    this.statusCode = statusCode;
    this.headers = headers;
  }
}

/**
 * @typedef {{ id: number, title: string, author: string }} Post
 * @typedef {(req: http.IncomingMessage, params: string[]) => Promise<[number, unknown, Record<string, string>?]>} Handler
 */

/**
 * A demo posts API server, not yet listening. Each server keeps its own posts in memory, with
 * ids from 1.
 * @returns {http.Server}
 */
function createDemoApi() {
  /** @type {Map<number, Post>} */
  const posts = new Map();
  let nextId = 1;
  /** The landing page's little store behind /db. */
  /** @type {Record<string, unknown>} */
  let db = { visits: 0 };
  const assets = loadStaticFiles();

  /** @type {Array<{ pattern: RegExp, methods: Record<string, Handler> }>} */
  const routes = [
    {
      pattern: /^\/posts$/,
      methods: {
        GET: async () => [200, [...posts.values()]],
        POST: async (req) => {
          const { title, author } = requirePostFields(await readJsonBody(req));
          const post = { id: nextId++, title, author };
          posts.set(post.id, post);
          return [201, post, { Location: `/posts/${post.id}` }];
        },
      },
    },
    {
      pattern: /^\/posts\/([^/]+)$/,
      methods: {
        GET: async (_req, [rawId]) => {
          const id = parsePostId(rawId);
          const post = posts.get(id);
          if (!post) throw new HttpError(404, `post ${id} not found`);
          return [200, post];
        },
      },
    },
    {
      pattern: /^\/db$/,
      methods: {
        GET: async () => [200, db],
        POST: async (req) => {
          requireObject(await readJsonBody(req), 'the /db event');
          return [200, db];
        },
        PUT: async (req) => {
          db = requireObject(await readJsonBody(req), 'the /db document');
          return [200, db];
        },
      },
    },
    ...Object.entries(assets).map(([route, file]) => ({
      pattern: new RegExp(`^${route.replace(/\./g, '\\.')}$`),
      methods: { GET: async () => /** @type {[number, unknown]} */ ([200, file]) },
    })),
  ];

  return http.createServer((req, res) => {
    handle(routes, req)
      .then(([status, body, headers]) => send(res, status, body, headers))
      .catch((error) => {
        const known = error instanceof HttpError;
        if (!known) console.error('demo-api: unexpected error', error);
        send(
          res,
          known ? error.statusCode : 500,
          errorBody(known ? error.statusCode : 500, known ? error.message : 'internal error'),
          known ? error.headers : {},
        );
      });
  });
}

/**
 * Route a request: 404 for an unknown path, 405 (with `Allow`) for a known path and another method.
 * HEAD is answered as GET (Node leaves the body out).
 * @param {Array<{ pattern: RegExp, methods: Record<string, Handler> }>} routes
 * @param {http.IncomingMessage} req
 */
async function handle(routes, req) {
  const url = new URL(req.url ?? '/', 'http://demo.invalid');
  // One trailing slash is not significant: /posts/ is /posts.
  const pathname = url.pathname.length > 1 ? url.pathname.replace(/\/$/, '') : url.pathname;
  const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
  for (const route of routes) {
    const match = route.pattern.exec(pathname);
    if (!match) continue;
    const handler = route.methods[method];
    if (!handler) {
      const allowed = Object.keys(route.methods).join(', ');
      throw new HttpError(405, `${req.method} is not allowed on ${pathname}; allowed: ${allowed}`, { Allow: allowed });
    }
    return handler(req, match.slice(1));
  }
  throw new HttpError(404, `no route for ${req.method} ${pathname}`);
}

/**
 * The JSON body of a request. 415 without a JSON Content-Type, 413 when too large, 400 when it
 * does not parse.
 * @param {http.IncomingMessage} req
 * @returns {Promise<unknown>}
 */
async function readJsonBody(req) {
  const contentType = req.headers['content-type'];
  const mediaType = (contentType ?? '').split(';', 1)[0].trim().toLowerCase();
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    req.resume(); // drain, so the connection can be reused
    const got = contentType === undefined ? 'no Content-Type header' : `Content-Type "${contentType}"`;
    throw new HttpError(415, `the request body must be JSON, sent with Content-Type: application/json (got ${got})`);
  }
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new HttpError(413, `the request body is larger than ${MAX_BODY_BYTES} bytes`, { Connection: 'close' });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new HttpError(400, 'the request body is empty; send a JSON object');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `the request body is not valid JSON: ${/** @type {Error} */ (error).message}`);
  }
}

/**
 * `title` and `author` of a new post: each a non-empty string. 400 naming every field that is wrong.
 * @param {unknown} body
 * @returns {{ title: string, author: string }}
 */
function requirePostFields(body) {
  const record = requireObject(body, 'the request body (a JSON object with "title" and "author")');
  const problems = ['title', 'author'].flatMap((field) => {
    const value = record[field];
    if (value === undefined || value === null) return [`"${field}" is required (a string)`];
    if (typeof value !== 'string')
      return [`"${field}" must be a string, got ${Array.isArray(value) ? 'array' : typeof value}`];
    if (value.trim() === '') return [`"${field}" must not be empty`];
    return [];
  });
  if (problems.length > 0) throw new HttpError(400, problems.join('; '));
  return { title: /** @type {string} */ (record.title), author: /** @type {string} */ (record.author) };
}

/**
 * @param {unknown} value
 * @param {string} what
 * @returns {Record<string, unknown>}
 */
function requireObject(value, what) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(
      400,
      `${what} must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`,
    );
  }
  return /** @type {Record<string, unknown>} */ (value);
}

/** @param {string} raw */
function parsePostId(raw) {
  if (!/^[1-9]\d{0,14}$/.test(raw))
    throw new HttpError(400, `post id must be a positive integer, got "${decodeURIComponentSafe(raw)}"`);
  return Number(raw);
}

/** @param {string} text */
function decodeURIComponentSafe(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * @param {http.ServerResponse} res
 * @param {number} status
 * @param {unknown} body JSON, or a static file
 * @param {Record<string, string>} [headers]
 */
function send(res, status, body, headers = {}) {
  const file = body instanceof StaticFile ? body : null;
  const bytes = file ? file.bytes : Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    'Content-Type': file ? file.contentType : 'application/json; charset=utf-8',
    'Content-Length': bytes.length,
    ...headers,
  });
  res.end(bytes);
}

/** @param {number} statusCode @param {string} message */
function errorBody(statusCode, message) {
  return { statusCode, error: http.STATUS_CODES[statusCode] ?? 'Error', message };
}

class StaticFile {
  /** @param {Buffer} bytes @param {string} contentType */
  constructor(bytes, contentType) {
    this.bytes = bytes;
    this.contentType = contentType;
  }
}

/** Read the landing page's files once, at start. @returns {Record<string, StaticFile>} */
function loadStaticFiles() {
  return Object.fromEntries(
    Object.entries(STATIC_FILES).map(([route, [name, contentType]]) => [
      route,
      new StaticFile(fs.readFileSync(path.join(__dirname, 'public', name)), contentType),
    ]),
  );
}

/**
 * Start a demo API and wait until it listens.
 * @param {{ port?: number, host?: string }} [options] port 0 (the default) picks a free port; host defaults to 127.0.0.1
 * @returns {Promise<{ server: http.Server, port: number, url: string, close: () => Promise<void> }>}
 */
function startDemoApi({ port = 0, host = '127.0.0.1' } = {}) {
  const server = createDemoApi();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = /** @type {import('node:net').AddressInfo} */ (server.address());
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve({
        server,
        port: address.port,
        url: `http://${shownHost}:${address.port}`,
        close: () =>
          new Promise((done, fail) => {
            server.close((error) => (error ? fail(error) : done()));
            server.closeAllConnections();
          }),
      });
    });
  });
}

/**
 * Port and host from `--port N` / `--port=N` / `PORT`, and `--host H` / `HOST`. Throws naming
 * what is wrong.
 * @param {string[]} argv arguments after the script
 * @param {Record<string, string | undefined>} env
 * @returns {{ port: number, host: string }}
 */
function parseOptions(argv, env) {
  /** @type {Record<string, string | undefined>} */
  const flags = {};
  for (let i = 0; i < argv.length; i++) {
    const match = /^--(port|host)(?:=(.*))?$/.exec(argv[i]);
    if (!match) throw new Error(`unknown argument "${argv[i]}"; usage: server.js [--port N] [--host H]`);
    flags[match[1]] = match[2] ?? argv[++i];
    if (flags[match[1]] === undefined) throw new Error(`--${match[1]} needs a value`);
  }
  const portText = flags.port ?? env.PORT ?? '3000';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535)
    throw new Error(
      `port must be an integer from 0 to 65535, got "${portText}" (from ${flags.port !== undefined ? '--port' : 'PORT'})`,
    );
  return { port, host: flags.host ?? env.HOST ?? '127.0.0.1' };
}

async function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (error) {
    console.error(`demo-api: ${/** @type {Error} */ (error).message}`);
    process.exit(2);
  }
  try {
    const api = await startDemoApi(options);
    console.log(`demo posts API listening on ${api.url}`);
    const stop = () => {
      api.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } catch (error) {
    const code = /** @type {NodeJS.ErrnoException} */ (error).code;
    const hint =
      code === 'EADDRINUSE'
        ? `port ${options.port} is in use; choose another with --port or PORT`
        : /** @type {Error} */ (error).message;
    console.error(`demo-api: cannot listen on ${options.host}:${options.port}: ${hint}`);
    process.exit(1);
  }
}

if (require.main === module) void main();

module.exports = { createDemoApi, startDemoApi, parseOptions, MAX_BODY_BYTES };
