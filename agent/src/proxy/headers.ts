import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/**
 * Hop-by-hop headers belong to one connection, not to the message, so a proxy must not forward them
 * (RFC 9110 §7.6.1: Connection, Proxy-Connection, Keep-Alive, TE, Transfer-Encoding, Upgrade, plus
 * every name listed in Connection). `expect` is answered by this hop too (Node sends 100 Continue).
 */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'te',
  'transfer-encoding',
  'upgrade',
  'expect',
]);
const FORWARDED = new Set(['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);

function connectionListed(value: string | string[] | undefined): Set<string> | null {
  if (value === undefined) return null;
  // The usual values name no header beyond the hop-by-hop ones already stripped.
  if (typeof value === 'string' && /^\s*(keep-alive|close)\s*$/i.test(value)) return null;
  const listed = new Set<string>();
  for (const token of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const name = token.trim().toLowerCase();
    if (name) listed.add(name);
  }
  return listed;
}

/**
 * Headers for the upstream request as a flat `[name, value, …]` list (original case and order),
 * without hop-by-hop headers and with `x-forwarded-for/proto/host` set (appended to any chain).
 */
export function upstreamRequestHeaders(req: IncomingMessage): string[] {
  const listed = connectionListed(req.headers.connection);
  const raw = req.rawHeaders;
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || FORWARDED.has(lower) || listed?.has(lower)) continue;
    out.push(name, raw[i + 1] as string);
  }
  for (const [name, value] of forwardedHeaders(req)) out.push(name, value);
  return out;
}

/** `x-forwarded-for` (appended to any chain), `-proto` and `-host` (kept when a proxy before us set them). */
export function forwardedHeaders(req: IncomingMessage): [string, string][] {
  const priorFor = req.headers['x-forwarded-for'];
  const clientAddress = req.socket.remoteAddress ?? '';
  const out: [string, string][] = [
    [
      'x-forwarded-for',
      priorFor ? `${Array.isArray(priorFor) ? priorFor.join(', ') : priorFor}, ${clientAddress}` : clientAddress,
    ],
    [
      'x-forwarded-proto',
      firstValue(req.headers['x-forwarded-proto']) ??
        ((req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http'),
    ],
  ];
  const host = firstValue(req.headers['x-forwarded-host']) ?? req.headers.host;
  if (host !== undefined) out.push(['x-forwarded-host', host]);
  return out;
}

/** True for a hop-by-hop header name (lower-case); they describe a connection, not the exchange. */
export function isHopByHop(lowerCaseName: string): boolean {
  return HOP_BY_HOP.has(lowerCaseName);
}

/** True for the `x-forwarded-*` names this agent sets itself. */
export function isForwardedHeader(lowerCaseName: string): boolean {
  return FORWARDED.has(lowerCaseName);
}

/** Response headers for the client: the upstream's, minus hop-by-hop ones (RFC 9110 §7.6.1). */
export function clientResponseHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const listed = connectionListed(headers.connection);
  const out: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || listed?.has(name)) continue;
    out[name] = headers[name];
  }
  return out;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The media type of a content-type value: lower-case, without parameters; `''` when absent. */
export function mediaType(value: string | string[] | undefined): string {
  const text = firstValue(value);
  if (!text) return '';
  const semicolon = text.indexOf(';');
  return (semicolon < 0 ? text : text.slice(0, semicolon)).trim().toLowerCase();
}
