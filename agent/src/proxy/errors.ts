/**
 * The one list of upstream failures and the answer the agent gives for each. The body is short
 * JSON in the shape of the management API's errors, and never echoes anything from the request.
 */
export interface UpstreamFailure {
  statusCode: 502 | 503 | 504;
  error: 'Bad Gateway' | 'Service Unavailable' | 'Gateway Timeout';
  message: string;
  /** The error code seen (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`, …) for logs and metrics. */
  code: string;
}

const UNAVAILABLE = [
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
];
const TIMEOUT = ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT'];

/** Map an error from the upstream request to 502 (bad answer or reset), 503 (not reachable) or 504 (too slow). */
export function upstreamFailure(err: unknown): UpstreamFailure {
  const code = errorCode(err);
  if (UNAVAILABLE.includes(code))
    return { statusCode: 503, error: 'Service Unavailable', message: 'upstream is not accepting connections', code };
  if (TIMEOUT.includes(code))
    return { statusCode: 504, error: 'Gateway Timeout', message: 'upstream did not answer in time', code };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE')
    return { statusCode: 502, error: 'Bad Gateway', message: 'upstream closed the connection', code };
  return { statusCode: 502, error: 'Bad Gateway', message: 'upstream gave an invalid response', code };
}

/** The JSON body of a failure answer. */
export function failureBody(failure: UpstreamFailure): string {
  return JSON.stringify({ statusCode: failure.statusCode, error: failure.error, message: failure.message });
}

/** `err.code`, also looking one `cause` deep (undici wraps socket errors). */
export function errorCode(err: unknown): string {
  const candidate = err as { code?: unknown; cause?: { code?: unknown } } | null;
  if (typeof candidate?.code === 'string') return candidate.code;
  if (typeof candidate?.cause?.code === 'string') return candidate.cause.code;
  return 'UNKNOWN';
}
