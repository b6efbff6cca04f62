import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the upstream received it. */
export interface ReceivedRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
}

export interface TestUpstream {
  url: string;
  port: number;
  server: http.Server;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP upstream on 127.0.0.1 (port 0 unless given). The handler gets the request with its
 * body already read (unless `streaming`), and every request is recorded.
 */
export async function startUpstream(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void,
  options: { port?: number; streaming?: boolean } = {},
): Promise<TestUpstream> {
  const received: ReceivedRequest[] = [];
  const server = http.createServer((req, res) => {
    if (options.streaming) {
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.alloc(0),
      });
      handler(req, res, Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
      });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    server,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Reply with JSON. */
export function sendJson(
  res: http.ServerResponse,
  status: number,
  value: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  const text = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** The demo posts API of the spec: POST /posts echoes the record with a server-assigned numeric id. */
export function postsApi(): (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void {
  const posts: { id: number; title: string; author: string }[] = [];
  return (req, res, body) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'POST' && path === '/posts') {
      const input = JSON.parse(body.toString('utf8')) as { title: string; author: string };
      const post = { id: posts.length + 1, title: input.title, author: input.author };
      posts.push(post);
      return sendJson(res, 201, post);
    }
    if (req.method === 'GET' && path === '/posts') return sendJson(res, 200, posts);
    const match = /^\/posts\/(\d+)$/.exec(path ?? '');
    if (req.method === 'GET' && match) {
      const post = posts.find((p) => p.id === Number(match[1]));
      return post ? sendJson(res, 200, post) : sendJson(res, 404, { message: 'not found' });
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html>landing</html>');
  };
}
