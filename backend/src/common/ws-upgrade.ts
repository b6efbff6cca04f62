import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { bearerOf } from '../auth/bearer';
import { apiError } from './error.filter';
import { DomainError, httpStatusOf } from './errors';

/** Heartbeat period of our WebSockets: a peer that misses a whole period is terminated. */
export const HEARTBEAT_MS = 30_000;

/** Refuses a WebSocket upgrade with an HTTP status and the standard error body. */
export function refuseUpgrade(socket: Duplex, statusCode: number, message: string): void {
  const body = JSON.stringify(apiError(statusCode, message));
  socket.end(
    `HTTP/1.1 ${statusCode} ${apiError(statusCode, message).error}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** Refuses an upgrade for an error thrown while authenticating (domain errors keep their status). */
export function refuseUpgradeFor(socket: Duplex, error: unknown): boolean {
  if (error instanceof DomainError) {
    refuseUpgrade(socket, httpStatusOf(error.code), error.message);
    return true;
  }
  refuseUpgrade(socket, 500, 'internal error');
  return false;
}

/**
 * The token of a WebSocket upgrade: `Authorization: Bearer`, else a `token` query parameter, else
 * a `Sec-WebSocket-Protocol` entry `bearer.<token>` (browsers cannot set headers on WebSockets).
 */
export function upgradeToken(request: IncomingMessage, url: URL): string | null {
  const bearer = bearerOf(request.headers);
  if (bearer) return bearer;
  const query = url.searchParams.get('token');
  if (query) return query;
  const protocols = request.headers['sec-websocket-protocol'];
  if (typeof protocols === 'string') {
    for (const entry of protocols.split(',').map((p) => p.trim())) {
      if (entry.startsWith('bearer.')) return entry.slice('bearer.'.length);
    }
  }
  return null;
}

/** The sub-protocol we answer: `spectator.v1` when offered, else the first one (a browser needs one echoed). */
export function chooseProtocol(protocols: Set<string>): string | false {
  if (protocols.has('spectator.v1')) return 'spectator.v1';
  const first = protocols.values().next();
  return first.done ? false : first.value;
}

/** Pings a socket every period and terminates it when the previous ping went unanswered. */
export function keepAlive(ws: import('ws').WebSocket): () => void {
  let alive = true;
  ws.on('pong', () => {
    alive = true;
  });
  const timer = setInterval(() => {
    if (!alive) {
      ws.terminate();
      return;
    }
    alive = false;
    ws.ping();
  }, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
