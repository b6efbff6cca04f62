import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pipeline } from 'node:stream';
import type { DashboardEvent } from '@spectator/shared';
import { WebSocketServer, type WebSocket } from 'ws';

/** A canned answer: a JSON body, or a function of the request; optionally late (to see loading states). */
export type FixtureAnswer =
  | { status?: number; body?: unknown; delayMs?: number }
  | ((request: RecordedRequest) => { status?: number; body?: unknown; delayMs?: number });

export interface RecordedRequest {
  method: string;
  /** Path under /api/v1 with its query, e.g. `/projects/demo/captures`. */
  path: string;
  token: string | null;
  /** The request's media type, null without a body. */
  contentType: string | null;
  body: unknown;
}

export interface FixtureApi {
  url: string;
  requests: RecordedRequest[];
  /** Sets the answer to `METHOD /path` (path under /api/v1, query included when given). */
  answer(key: string, answer: FixtureAnswer): void;
  /** Sends a dashboard event to every connected events socket; resolves with how many got it. */
  emit(event: DashboardEvent): number;
  /** Resolves once `count` events sockets are connected. */
  eventSockets(count: number): Promise<void>;
  /** Cuts every events socket (as a backend restart does) and resolves once they are closed. */
  dropEventSockets(): Promise<void>;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.map': 'application/json',
};

/**
 * A stand-in for the backend's HTTP surface, for browser tests of screens whose data is hard to
 * make for real (1,000 endpoints, a 100 × 100 matrix, failures, slow answers). It serves the built
 * dashboard like the backend does, answers /api/v1 from a table (404 with the standard error body
 * otherwise) and offers the events WebSocket. The real backend is exercised by walkthrough.e2e.
 */
export async function startFixtureApi(distDir: string, token: string): Promise<FixtureApi> {
  const answers = new Map<string, FixtureAnswer>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<WebSocket>();
  const waiters: Array<() => void> = [];

  const sendJson = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(body === undefined ? '' : JSON.stringify(body));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fixture');
    if (!url.pathname.startsWith('/api/v1/')) {
      const file = path.join(distDir, url.pathname === '/' ? 'index.html' : path.normalize(url.pathname));
      if (!file.startsWith(distDir) || !existsSync(file) || !statSync(file).isFile())
        return sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: url.pathname });
      res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream' });
      pipeline(createReadStream(file), res, () => undefined); // a page gone mid-file ends its answer
      return;
    }
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const apiPath = url.pathname.slice('/api/v1'.length) + url.search;
      const auth = req.headers.authorization ?? '';
      const contentType = req.headers['content-type'] ?? null;
      // JSON bodies parsed; others (a YAML upload) kept as text.
      const body: unknown = !text
        ? undefined
        : contentType === null || contentType.startsWith('application/json')
          ? JSON.parse(text)
          : text;
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        path: apiPath,
        token: auth.startsWith('Bearer ') ? auth.slice(7) : null,
        contentType,
        body,
      };
      requests.push(recorded);
      if (recorded.token !== token)
        return sendJson(res, 401, { statusCode: 401, error: 'Unauthorized', message: 'unknown or revoked token' });
      const key = `${recorded.method} ${apiPath}`;
      const found = answers.get(key) ?? answers.get(`${recorded.method} ${url.pathname.slice('/api/v1'.length)}`);
      if (!found)
        return sendJson(res, 404, { statusCode: 404, error: 'Not Found', message: `${key} is not in the fixture` });
      const reply = typeof found === 'function' ? found(recorded) : found;
      setTimeout(() => sendJson(res, reply.status ?? 200, reply.body), reply.delayMs ?? 0);
    });
  });

  // As the backend: the token comes as a `bearer.<token>` sub-protocol, never in the URL, and the
  // answer is `spectator.v1`.
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => (offered.has('spectator.v1') ? 'spectator.v1' : false),
  });
  server.on('upgrade', (req, socket, head) => {
    // Node takes its own error listener off an upgraded socket: a page that resets it (a refused
    // or closed connection) must not throw in the test process.
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://fixture');
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim());
    if (
      !/^\/api\/v1\/projects\/[^/]+\/events$/.test(url.pathname) ||
      url.search !== '' ||
      !offered.includes(`bearer.${token}`)
    ) {
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.on('error', () => undefined); // a closed page ends its socket as it likes
      ws.on('close', () => sockets.delete(ws));
      waiters.splice(0).forEach((wake) => wake());
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer: (key, answer) => void answers.set(key, answer),
    emit: (event) => {
      for (const ws of sockets) ws.send(JSON.stringify(event));
      return sockets.size;
    },
    eventSockets: async (count) => {
      while (sockets.size < count) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    dropEventSockets: async () => {
      await Promise.all(
        [...sockets].map(
          (ws) =>
            new Promise<void>((resolve) => {
              ws.once('close', () => resolve());
              ws.terminate();
            }),
        ),
      );
    },
    close: async () => {
      for (const ws of sockets) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
