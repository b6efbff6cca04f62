import net from 'node:net';
import tls from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../log';
import { failureBody, upstreamFailure } from './errors';
import { forwardedHeaders, isForwardedHeader } from './headers';

/**
 * Pass an upgrade (WebSocket) through to the upstream as raw bytes: the request head is replayed
 * with `x-forwarded-*` added (Connection and Upgrade stay, they are the point of this request),
 * then both sockets are piped. Frames are not observed.
 * @returns the upstream socket, so the server can close tunnels on shutdown.
 */
export function tunnelUpgrade(
  upstream: URL,
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  log: Logger,
  upstreamTls?: tls.ConnectionOptions,
): Duplex {
  const port = Number(upstream.port) || (upstream.protocol === 'https:' ? 443 : 80);
  const host = upstream.hostname.replace(/^\[|\]$/g, '');
  // SNI takes host names only (an IP address there is refused with a warning).
  const server =
    upstream.protocol === 'https:'
      ? tls.connect({ ...upstreamTls, host, port, ...(net.isIP(host) === 0 ? { servername: host } : {}) })
      : net.connect({ host, port });
  let connected = false;
  server.once(upstream.protocol === 'https:' ? 'secureConnect' : 'connect', () => {
    connected = true;
    server.write(requestHead(req));
    if (head.length > 0) server.write(head);
    server.pipe(client);
    client.pipe(server);
  });
  server.on('error', (err) => {
    if (!connected && client.writable) {
      const failure = upstreamFailure(err);
      log.warn({ code: failure.code, status: failure.statusCode }, 'upgrade to upstream failed');
      const body = failureBody(failure);
      client.end(
        `HTTP/1.1 ${failure.statusCode} ${failure.error}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    client.destroy();
  });
  client.on('error', () => server.destroy());
  client.on('close', () => server.destroy());
  server.on('close', () => client.destroy());
  return server;
}

function requestHead(req: IncomingMessage): string {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (isForwardedHeader((raw[i] as string).toLowerCase())) continue;
    lines.push(`${raw[i]}: ${raw[i + 1]}`);
  }
  for (const [name, value] of forwardedHeaders(req)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}
