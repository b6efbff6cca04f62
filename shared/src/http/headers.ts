/**
 * Request headers that are not part of an API's contract: what HTTP, browsers, proxies, HTTP
 * clients and tracing add to every request whatever the API. Documenting them would bury the
 * headers an API really asks for (`x-tenant`, `idempotency-key`) under `user-agent` and
 * `accept-encoding`, and make every new browser or proxy a "change".
 */
const STANDARD_HEADERS: ReadonlySet<string> = new Set([
  // Hop-by-hop and connection management (RFC 9110 §7.6.1) and HTTP/1.1 framing.
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'expect',
  'max-forwards',
  // The body's media type and encoding are documented with the body.
  'content-type',
  'content-encoding',
  'content-language',
  'content-md5',
  // Client identity and credentials: every client sends them, the security scheme covers them.
  'user-agent',
  'authorization',
  'cookie',
  'from',
  // Proxies and load balancers.
  'forwarded',
  'via',
  'x-real-ip',
  'x-client-ip',
  'true-client-ip',
  'x-requested-with',
  // Browsers.
  'origin',
  'referer',
  'dnt',
  'upgrade-insecure-requests',
  'priority',
  'purpose',
  'save-data',
  'early-data',
  'date',
  // Caching and conditional requests.
  'cache-control',
  'pragma',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'if-range',
  'range',
  // Tracing.
  'traceparent',
  'tracestate',
  'baggage',
  'b3',
  'x-request-id',
  'x-correlation-id',
  'x-amzn-trace-id',
  'x-cloud-trace-context',
  'uber-trace-id',
  'sentry-trace',
]);

/** Families of standard headers, by prefix: `accept`, `accept-encoding`, `x-forwarded-for`, `sec-fetch-mode`, … */
const STANDARD_PREFIXES: readonly string[] = [
  'accept',
  'x-forwarded-',
  'sec-',
  'access-control-request-',
  'x-b3-',
  'x-datadog-',
  'x-envoy-',
  'cf-',
  'x-amz-cf-',
  ':',
];

/**
 * Whether a request header name (any letter case) is worth documenting as part of an API: false
 * for the standard and transport headers above (hop-by-hop, `host`, `content-*`, `accept*`,
 * `user-agent`, `authorization`, `cookie`, `x-forwarded-*`, `forwarded`, `via`, `sec-*`, `origin`,
 * `referer`, caching and conditional headers, tracing headers, HTTP/2 pseudo-headers).
 */
export function isDocumentableHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return !STANDARD_HEADERS.has(lower) && !STANDARD_PREFIXES.some((prefix) => lower.startsWith(prefix));
}
