import type { StringFormat } from './types';

// Checked by hand where it is cheap (uuid, date, date-time): this runs for every sampled string,
// and a character loop costs a fraction of a RegExp call. The patterns left are anchored and free
// of nested quantifiers, so each test is linear in the length.
const EMAIL = /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s]+$/;

/** Longest string given a format hint: an e-mail address is at most 254 characters, URLs rarely pass 2,048. */
const MAX_FORMATTED_LENGTH = 2048;

const DASH = 45; // '-'
const COLON = 58; // ':'

/**
 * The format hint of a string (RFC 4122 uuid, RFC 3339 date-time and full-date, e-mail address,
 * absolute URI with `scheme://`), or `null`. Only the hint is kept, never the string.
 */
export function detectStringFormat(text: string): StringFormat | null {
  const length = text.length;
  if (length < 6 || length > MAX_FORMATTED_LENGTH) return null;
  if (length === 36 && text.charCodeAt(8) === DASH) return isUuid(text) ? 'uuid' : null;
  if (text.charCodeAt(4) === DASH && isFullDate(text)) {
    if (length === 10) return 'date';
    return isTimeWithZone(text) ? 'date-time' : null;
  }
  if (text.indexOf('://') > 0) return URI.test(text) ? 'uri' : null;
  if (length <= 254 && text.indexOf('@') > 0) return EMAIL.test(text) ? 'email' : null;
  return null;
}

function isUuid(text: string): boolean {
  for (let i = 0; i < 36; i++) {
    const code = text.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (code !== DASH) return false;
    } else if (!((code >= 48 && code <= 57) || (code >= 97 && code <= 102) || (code >= 65 && code <= 70))) {
      return false;
    }
  }
  return true;
}

/** `YYYY-MM-DD` at the start of `text`, month 01–12, day 01–31. */
function isFullDate(text: string): boolean {
  if (text.length < 10 || text.charCodeAt(7) !== DASH) return false;
  if (!(isDigit(text, 0) && isDigit(text, 1) && isDigit(text, 2) && isDigit(text, 3))) return false;
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

/** After a full date: `THH:MM:SS[.fraction](Z|±HH:MM)` to the end of `text`. */
function isTimeWithZone(text: string): boolean {
  const length = text.length;
  if (length < 20) return false;
  const separator = text.charCodeAt(10);
  if (separator !== 84 && separator !== 116) return false; // T or t
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return false;
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  const second = twoDigits(text, 17);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return false;
  let at = 19;
  if (text.charCodeAt(at) === 46) {
    // '.' then at least one digit
    at++;
    if (!isDigit(text, at)) return false;
    while (isDigit(text, at)) at++;
  }
  const zone = text.charCodeAt(at);
  if (zone === 90 || zone === 122) return at + 1 === length; // Z or z
  if ((zone !== 43 && zone !== DASH) || at + 6 !== length || text.charCodeAt(at + 3) !== COLON) return false;
  const zoneHour = twoDigits(text, at + 1);
  const zoneMinute = twoDigits(text, at + 4);
  return zoneHour >= 0 && zoneHour <= 23 && zoneMinute >= 0 && zoneMinute <= 59;
}

function isDigit(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return code >= 48 && code <= 57;
}

/** The number written by two digits at `at`, or -1. */
function twoDigits(text: string, at: number): number {
  return isDigit(text, at) && isDigit(text, at + 1) ? (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48 : -1;
}
