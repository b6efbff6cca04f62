import type { StringFormat } from './types';

// Patterns are anchored and free of nested quantifiers, so each test is linear in the length.
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DATE = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$/;
const DATE_TIME = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[Tt](?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60)(?:\.\d+)?(?:[Zz]|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s]+$/;

/** Longest string given a format hint: an e-mail address is at most 254 characters, URLs rarely pass 2,048. */
const MAX_FORMATTED_LENGTH = 2048;

const DASH = 45; // '-'
const AT = 64; // '@'

/**
 * The format hint of a string (RFC 4122 uuid, RFC 3339 date-time and full-date, e-mail address,
 * absolute URI with `scheme://`), or `null`. Only the hint is kept, never the string. Cheap
 * character checks run before any pattern, because this is called for every sampled string.
 */
export function detectStringFormat(text: string): StringFormat | null {
  const length = text.length;
  if (length < 6 || length > MAX_FORMATTED_LENGTH) return null;
  if (length === 36 && text.charCodeAt(8) === DASH) return UUID.test(text) ? 'uuid' : null;
  if (text.charCodeAt(4) === DASH && isDigit(text.charCodeAt(0))) {
    if (length === 10) return DATE.test(text) ? 'date' : null;
    if (length >= 20) return DATE_TIME.test(text) ? 'date-time' : null;
    return null;
  }
  if (text.indexOf('://') > 0) return URI.test(text) ? 'uri' : null;
  if (length <= 254 && text.indexOf('@') > 0 && text.charCodeAt(0) !== AT) return EMAIL.test(text) ? 'email' : null;
  return null;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
