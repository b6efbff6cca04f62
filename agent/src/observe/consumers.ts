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
/** Header values whose pseudonyms are kept, per source; past it the cache starts afresh. */
const CACHE_MAX = 10_000;
const BEARER = /^bearer\s+/i;

/** A claim's value as `jwtClaim` gives it: a string as it is, a number as text, anything else none. */
function claimText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : NONE;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f]/;
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\n' || c === '\r' || c === '\t';

/**
 * The top-level claim of a JSON object text as `claimText` gives it, read without parsing the
 * text: the last occurrence at the object's first level (JSON.parse keeps the last of duplicate
 * keys), '' when there is none. `undefined` when the text is not plainly such an object (a
 * backslash, a string or number it cannot read): the caller parses the text then.
 */
export function scanClaim(text: string, claim: string): string | undefined {
  if (text.includes('\\')) return undefined;
  const n = text.length;
  let i = 0;
  while (isSpace(text[i])) i++;
  if (text[i] !== '{') return undefined;
  let depth = 0;
  /** At the first level, after `{` or `,`: the next string is a key. */
  let expectKey = false;
  let found = NONE;
  while (i < n) {
    const c = text[i] as string;
    if (c === '"') {
      // Without a backslash, a string ends at the next quote.
      const end = text.indexOf('"', i + 1);
      if (end < 0) return undefined;
      const isKey = depth === 1 && expectKey;
      const key = isKey ? text.slice(i + 1, end) : '';
      i = end + 1;
      if (!isKey) continue;
      expectKey = false;
      while (isSpace(text[i])) i++;
      if (text[i] !== ':') return undefined;
      i++;
      while (isSpace(text[i])) i++;
      if (key !== claim) continue;
      const v = text[i];
      if (v === '"') {
        const close = text.indexOf('"', i + 1);
        if (close < 0) return undefined;
        found = text.slice(i + 1, close);
        if (CONTROL.test(found)) return undefined; // not JSON: the parse decides
        i = close + 1;
      } else if (v === '-' || (v !== undefined && v >= '0' && v <= '9')) {
        let e = i + 1;
        while (e < n && '+-.eE0123456789'.includes(text[e] as string)) e++;
        const literal = text.slice(i, e);
        if (!JSON_NUMBER.test(literal)) return undefined;
        found = String(Number(literal));
        i = e;
      } else found = NONE; // an object, an array, true, false or null names no consumer
      continue;
    }
    if (c === '{' || c === '[') {
      depth++;
      expectKey = depth === 1;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) {
        i++;
        while (isSpace(text[i])) i++;
        return i === n ? found : undefined;
      }
    } else if (c === ',' && depth === 1) expectKey = true;
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

/** A claim of a JWT's payload segment as text; '' when it is no JSON object or lacks the claim. Decoded, never verified. */
function payloadClaim(segment: string, claim: JwtClaim): string {
  const text = Buffer.from(segment, 'base64url').toString('utf8');
  const scanned = scanClaim(text, claim);
  if (scanned !== undefined) return scanned;
  try {
    const payload = JSON.parse(text) as unknown;
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
 * sends the same token or key with many requests, so pseudonyms are cached by the header's text
 * (bounded) and by connection for certificates: most requests cost a map lookup.
 */
export class ConsumerIds {
  private readonly key: Buffer;
  private readonly sources: readonly ConsumerSource[];
  /** Per source, header text (a JWT's payload segment) → pseudonym ('' when it names no consumer). */
  private readonly caches: Map<string, string>[];
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
    this.caches = config.sources.map(() => new Map());
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
    // A token is cached by its payload segment: hashing a whole token (its signature mostly) for
    // the lookup cost more than reading the segment did (observe.bench.ts).
    const text = source.kind === 'jwt' ? bearerPayload(header) : header;
    if (text === NONE) return NONE;
    const cache = this.caches[i] as Map<string, string>;
    let id = cache.get(text);
    if (id === undefined) {
      const value = source.kind === 'jwt' ? payloadClaim(text, source.claim) : text.trim();
      id = value === NONE ? NONE : this.pseudonymOf(value);
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(text, id);
    }
    return id;
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
