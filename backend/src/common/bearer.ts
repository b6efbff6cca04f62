import type { IncomingMessage } from 'node:http';

/** The bearer token of a request, from `Authorization: Bearer <token>`. */
export function bearerOf(headers: IncomingMessage['headers']): string | null {
  const header = headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}
