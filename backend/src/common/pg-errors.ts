/** PostgreSQL error codes we react to (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
const UNIQUE_VIOLATION = '23505';

/** True for a unique-constraint violation raised by pg (directly or wrapped by TypeORM). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: { code?: unknown } };
  return e?.code === UNIQUE_VIOLATION || e?.driverError?.code === UNIQUE_VIOLATION;
}

/**
 * SQLSTATE classes and codes that say PostgreSQL cannot be reached or is going away: connection
 * exceptions (class 08), shutdown or start-up in progress (57P01–57P03), too many connections (53300).
 */
const UNAVAILABLE_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket errors of a connection that could not be made or was cut. */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/** The pg driver's own words for a connection lost or never made (it gives them no code). */
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end)/;

/**
 * True when `error` (from pg, directly or wrapped by TypeORM) means PostgreSQL is unavailable rather
 * than that the statement was wrong: the request may succeed when retried, so it is answered 503.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (const e of [error, (error as { driverError?: unknown } | null)?.driverError]) {
    const candidate = e as { code?: unknown; message?: unknown } | null | undefined;
    if (candidate === null || typeof candidate !== 'object') continue;
    const code = candidate.code;
    if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_CODES.has(code))) return true;
    if (typeof code === 'string' && UNAVAILABLE_SOCKET_CODES.has(code)) return true;
    if (typeof candidate.message === 'string' && UNAVAILABLE_MESSAGE.test(candidate.message)) return true;
  }
  return false;
}
