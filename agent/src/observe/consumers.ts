import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { TLSSocket } from 'node:tls';
import { CONSUMER_ID_LENGTH } from '@spectator/shared';

/** Claims of a bearer JWT a consumer may be named by. */
export const JWT_CLAIMS = ['sub', 'client_id', 'azp'] as const;
export type JwtClaim = (typeof JWT_CLAIMS)[number];

/**
 * Where a request's consumer is read from (`--consumer`): a claim of the bearer JWT (decoded, not
 * verified), a request header (an API key, a client id), or the subject of the client certificate
 * (when the agent serves HTTPS itself).
 */
export type ConsumerSource = { kind: 'jwt'; claim: JwtClaim } | { kind: 'header'; name: string } | { kind: 'cert' };

/** Consumer identification: its sources, the agent's secret and the project its pseudonyms are for. */
export interface ConsumerConfig {
  /** Tried in order: the first that gives a value names the consumer. */
  sources: ConsumerSource[];
  /** `SPECTATOR_CONSUMER_KEY` (from the agent's Secret): never sent, never logged. */
  key: string;
  /** The project slug pseudonyms are derived for (`--project`): one client has another pseudonym in another project. */
  project: string;
}

/** Characters of `SPECTATOR_CONSUMER_KEY` at least. */
export const MIN_CONSUMER_KEY_LENGTH = 16;

const SOURCES_HELP = 'jwt:sub, jwt:client_id, jwt:azp, header:<name>, cert:subject';
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;

/**
 * `jwt:client_id,header:x-api-key` → its sources, in order.
 * @throws Error naming the entry that is no source.
 */
export function parseConsumerSources(text: string): ConsumerSource[] {
  const sources: ConsumerSource[] = [];
  for (const entry of text.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const colon = entry.indexOf(':');
    const kind = colon < 0 ? entry : entry.slice(0, colon);
    const rest = colon < 0 ? '' : entry.slice(colon + 1);
    if (kind === 'jwt' && (JWT_CLAIMS as readonly string[]).includes(rest))
      sources.push({ kind: 'jwt', claim: rest as JwtClaim });
    else if (kind === 'header' && HEADER_NAME.test(rest)) sources.push({ kind: 'header', name: rest.toLowerCase() });
    else if (kind === 'cert' && rest === 'subject') sources.push({ kind: 'cert' });
    else throw new Error(`"${entry}" is not a consumer source (${SOURCES_HELP})`);
  }
  if (sources.length === 0) throw new Error(`"${text}" names no consumer source (${SOURCES_HELP})`);
  return sources;
}

/** The key of one project's pseudonyms, derived from the agent's secret. */
export function projectConsumerKey(secret: string, project: string): Buffer {
  return createHmac('sha256', secret).update(`spectator consumer v1\u0000${project}`).digest();
}

/** A value's pseudonym: HMAC-SHA256 under the project's key, its first 64 bits in hex. */
export function pseudonym(projectKey: Buffer, value: string): string {
  return createHmac('sha256', projectKey).update(value).digest('hex').slice(0, CONSUMER_ID_LENGTH);
}

/** The pseudonym of `value` in `project` under `secret` (`spectator-agent consumer-id`). */
export function consumerId(secret: string, project: string, value: string): string {
  return pseudonym(projectConsumerKey(secret, project), value);
}

/**
 * A certificate subject as one line, its attributes in the certificate's order joined by commas
 * (`C=DE,O=Acme,CN=mobile`): what `consumer-id` is given for a `cert:subject` consumer.
 */
export function subjectLine(subject: string): string {
  return subject
    .split('\n')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .join(',');
}

const NONE = '';
/** Values whose pseudonyms are kept; past it the cache starts afresh. */
const CACHE_MAX = 10_000;
const BEARER = /^bearer\s+/i;

/** A claim's value as `jwtClaim` gives it: a string as it is, a number as text, anything else none. */
function claimText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : NONE;
}

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const MINUS = 0x2d;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
/** A byte a JSON number may hold: `+-.eE` and digits. */
const isNumberByte = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || c === 0x2b || c === MINUS || c === 0x2e || c === 0x65 || c === 0x45;

function skipSpace(bytes: Uint8Array, at: number, end: number): number {
  while (at < end && isSpace(bytes[at] as number)) at++;
  return at;
}

/** The closing quote of a string whose text starts at `at`; -1 when it has none or holds a backslash. */
function stringEnd(bytes: Uint8Array, at: number, end: number): number {
  for (; at < end; at++) {
    const c = bytes[at] as number;
    if (c === QUOTE) return at;
    if (c === BACKSLASH) return -1;
  }
  return -1;
}

/** Whether the bytes from `start` to `end` are the ASCII text `text`. */
function isText(bytes: Uint8Array, start: number, end: number, text: string): boolean {
  if (end - start !== text.length) return false;
  for (let k = 0; k < text.length; k++) if (bytes[start + k] !== text.charCodeAt(k)) return false;
  return true;
}

/**
 * The top-level claim of a JSON object's UTF-8 bytes (the first `length` of `bytes`) as `claimText`
 * gives it, read without decoding or parsing the text: the last occurrence at the object's first
 * level (JSON.parse keeps the last of duplicate keys), '' when there is none. `undefined` when the
 * bytes are not plainly such an object (a backslash, a control character in the value, a string
 * or number it cannot read): the caller parses the text then. Every byte that tells JSON's
 * structure is ASCII, and UTF-8 never uses an ASCII byte inside a character, so the structure
 * read from the bytes is the text's.
 */
export function scanClaim(bytes: Buffer, length: number, claim: string): string | undefined {
  const n = Math.min(length, bytes.length);
  let i = skipSpace(bytes, 0, n);
  if (i >= n || bytes[i] !== 0x7b) return undefined;
  let depth = 0;
  /** At the first level, after `{` or `,`: the next string is a key. */
  let expectKey = false;
  let found = NONE;
  while (i < n) {
    const c = bytes[i] as number;
    if (c === BACKSLASH) return undefined;
    if (c === QUOTE) {
      const end = stringEnd(bytes, i + 1, n);
      if (end < 0) return undefined;
      const isKey = depth === 1 && expectKey;
      const wanted = isKey && isText(bytes, i + 1, end, claim);
      i = end + 1;
      if (!isKey) continue;
      expectKey = false;
      i = skipSpace(bytes, i, n);
      if (i >= n || bytes[i] !== COLON) return undefined;
      i = skipSpace(bytes, i + 1, n);
      if (!wanted) continue;
      const v = i < n ? (bytes[i] as number) : -1;
      if (v === QUOTE) {
        const close = stringEnd(bytes, i + 1, n);
        if (close < 0) return undefined;
        let high = 0;
        for (let k = i + 1; k < close; k++) {
          const byte = bytes[k] as number;
          if (byte < 0x20) return undefined; // a control character is not JSON: the parse decides
          high |= byte;
        }
        found = bytes.toString(high < 0x80 ? 'latin1' : 'utf8', i + 1, close);
        i = close + 1;
      } else if (v === MINUS || (v >= 0x30 && v <= 0x39)) {
        let e = i + 1;
        while (e < n && isNumberByte(bytes[e] as number)) e++;
        const literal = bytes.toString('latin1', i, e);
        if (!JSON_NUMBER.test(literal)) return undefined;
        found = String(Number(literal));
        i = e;
      } else found = NONE; // an object, an array, true, false or null names no consumer
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      depth++;
      expectKey = depth === 1;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return skipSpace(bytes, i + 1, n) === n ? found : undefined;
    } else if (c === COMMA && depth === 1) expectKey = true;
    i++;
  }
  return undefined;
}

/**
 * The payload segment (base64url) of a bearer JWT in an Authorization header, '' when the header
 * is no bearer JWT. Only this segment names the client: the signature, most of a token, is not read.
 */
export function bearerPayload(header: string): string {
  if (!BEARER.test(header)) return NONE;
  const first = header.indexOf('.');
  const second = first < 0 ? -1 : header.indexOf('.', first + 1);
  return second < 0 ? NONE : header.slice(first + 1, second);
}

/**
 * Where payloads are decoded: one buffer, reused, as the agent reads one payload at a time (and
 * never keeps it); a larger payload gets a buffer of its own.
 */
const scratch = Buffer.allocUnsafe(2048);

/** A claim of a JWT's payload segment as text; '' when it is no JSON object or lacks the claim. Decoded, never verified. */
function payloadClaim(segment: string, claim: JwtClaim): string {
  const size = Buffer.byteLength(segment, 'base64url');
  const bytes = size <= scratch.length ? scratch : Buffer.allocUnsafe(size);
  const length = bytes.write(segment, 0, size, 'base64url');
  const scanned = scanClaim(bytes, length, claim);
  if (scanned !== undefined) return scanned;
  try {
    const payload = JSON.parse(bytes.toString('utf8', 0, length)) as unknown;
    if (payload === null || typeof payload !== 'object') return NONE;
    return claimText((payload as Record<string, unknown>)[claim]);
  } catch {
    return NONE;
  }
}

/** The client certificate's subject line, '' without one. */
function peerSubject(socket: TLSSocket): string {
  const certificate = socket.getPeerX509Certificate();
  return certificate === undefined ? NONE : subjectLine(certificate.subject);
}

/**
 * Names each request's consumer by pseudonym (docs/agent.md, Consumers). The value read (a token,
 * an API key, a subject) stays in this process: only its pseudonym goes into the rows. A client
 * sends the same value with many requests (its claim in every new token), so pseudonyms are cached
 * by value (bounded) and by connection for certificates: most requests cost reading the value and
 * a map lookup, not an HMAC.
 */
export class ConsumerIds {
  private readonly key: Buffer;
  private readonly sources: readonly ConsumerSource[];
  /** Per TLS connection, its certificate's pseudonym ('' for none). */
  private readonly bySocket = new WeakMap<object, string>();
  /**
   * Value (a claim, a key, a subject) → pseudonym: a client whose token changes (a new JWT per
   * request or per minute) keeps its claim, so a new token costs its decoding, not an HMAC.
   */
  private readonly byValue = new Map<string, string>();

  constructor(config: ConsumerConfig) {
    this.key = projectConsumerKey(config.key, config.project);
    this.sources = config.sources;
  }

  /** Whether a source reads the client certificate (the proxy then asks for one). */
  get wantsCertificate(): boolean {
    return this.sources.some((source) => source.kind === 'cert');
  }

  /** The pseudonym of a request's consumer, or null when no source names one. Never throws. */
  identify(headers: IncomingHttpHeaders, socket: object | undefined): string | null {
    for (let i = 0; i < this.sources.length; i++) {
      const id = this.fromSource(i, headers, socket);
      if (id !== NONE) return id;
    }
    return null;
  }

  private fromSource(i: number, headers: IncomingHttpHeaders, socket: object | undefined): string {
    const source = this.sources[i] as ConsumerSource;
    if (source.kind === 'cert') {
      if (!(socket instanceof TLSSocket)) return NONE;
      let id = this.bySocket.get(socket);
      if (id === undefined) {
        const subject = peerSubject(socket);
        this.bySocket.set(socket, (id = subject === NONE ? NONE : this.pseudonymOf(subject)));
      }
      return id;
    }
    const raw = headers[source.kind === 'jwt' ? 'authorization' : source.name];
    const header = Array.isArray(raw) ? raw[0] : raw;
    if (header === undefined || header === '') return NONE;
    let value: string;
    if (source.kind === 'jwt') {
      // Read afresh for every request: a lookup by the token (or its payload segment) was dearer
      // than reading the claim, for a new token of a client (observe.bench.ts).
      const payload = bearerPayload(header);
      value = payload === NONE ? NONE : payloadClaim(payload, source.claim);
    } else value = header.trim();
    return value === NONE ? NONE : this.pseudonymOf(value);
  }

  private pseudonymOf(value: string): string {
    let id = this.byValue.get(value);
    if (id === undefined) {
      id = pseudonym(this.key, value);
      if (this.byValue.size >= CACHE_MAX) this.byValue.clear();
      this.byValue.set(value, id);
    }
    return id;
  }
}
