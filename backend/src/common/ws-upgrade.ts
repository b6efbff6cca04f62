import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { bearerOf } from './bearer';
import { apiError, RETRY_AFTER_SECONDS, serverError } from './error.filter';
import { DomainError, httpStatusOf } from './errors';

/** Heartbeat period of our WebSockets: a peer that misses a whole period is terminated. */
export const HEARTBEAT_MS = 30_000;

/** Refuses a WebSocket upgrade with an HTTP status and the standard error body. */
export function refuseUpgrade(socket: Duplex, statusCode: number, message: string): void {
  const body = JSON.stringify(apiError(statusCode, message));
  const retry = statusCode === 503 ? `Retry-After: ${RETRY_AFTER_SECONDS}\r\n` : '';
  socket.end(
    `HTTP/1.1 ${statusCode} ${apiError(statusCode, message).error}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retry}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * Refuses an upgrade for an error thrown while authenticating (domain errors keep their status,
 * PostgreSQL unavailable is a 503). False when the error was unexpected (the caller logs it).
 */
export function refuseUpgradeFor(socket: Duplex, error: unknown): boolean {
  if (error instanceof DomainError) {
    refuseUpgrade(socket, httpStatusOf(error.code), error.message);
    return true;
  }
  const { statusCode, message } = serverError(error);
  refuseUpgrade(socket, statusCode, message);
  return statusCode === 503;
}

/** The `Sec-WebSocket-Protocol` entry that carries a token: `bearer.<token>`. */
const BEARER_PROTOCOL = 'bearer.';

/**
 * The token of a WebSocket upgrade: `Authorization: Bearer`, else a `Sec-WebSocket-Protocol` entry
 * `bearer.<token>` (browsers cannot set headers on WebSockets). Never the URL: a token there ends
 * up in access logs, proxies' logs and the browser's console (issue 15).
 */
export function upgradeToken(request: IncomingMessage): string | null {
  const bearer = bearerOf(request.headers);
  if (bearer) return bearer;
  const protocols = request.headers['sec-websocket-protocol'];
  if (typeof protocols === 'string') {
    for (const entry of protocols.split(',').map((p) => p.trim())) {
      if (entry.startsWith(BEARER_PROTOCOL)) return entry.slice(BEARER_PROTOCOL.length);
    }
  }
  return null;
}

/**
 * The sub-protocol we answer: `spectator.v1` when offered, else the first one that is not a token
 * (a browser needs one echoed; a token is never sent back in a response header).
 */
export function chooseProtocol(protocols: Set<string>): string | false {
  if (protocols.has('spectator.v1')) return 'spectator.v1';
  for (const protocol of protocols) if (!protocol.startsWith(BEARER_PROTOCOL)) return protocol;
  return false;
}

/**
 * Pings a socket every period and terminates it when nothing came back since the previous ping.
 * Any frame counts, not only the pong: a peer that queued megabytes of batches before our ping
 * sends its pong after them, and under load reading those takes longer than a period (the flood
 * test lost connections that way). A socket we stopped reading (backpressure) cannot read
 * anything: it is not judged while paused.
 */
export function keepAlive(ws: import('ws').WebSocket, periodMs = HEARTBEAT_MS): () => void {
  let alive = true;
  const heard = (): void => {
    alive = true;
  };
  ws.on('pong', heard);
  ws.on('message', heard);
  const timer = setInterval(() => {
    if (ws.isPaused) return;
    if (!alive) {
      ws.terminate();
      return;
    }
    alive = false;
    ws.ping();
  }, periodMs);
  timer.unref();
  return () => clearInterval(timer);
}
