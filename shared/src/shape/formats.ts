import type { StringFormat } from './types';

// Every check is a loop over character codes: this runs for every sampled string, and a loop
// costs a fraction of a RegExp call. Each is linear in the length.

/** Longest string given a format hint: an e-mail address is at most 254 characters, URLs rarely pass 2,048. */
const MAX_FORMATTED_LENGTH = 2048;

const DASH = 45; // '-'
const COLON = 58; // ':'

/**
 * The format hint of a string (RFC 4122 uuid, RFC 3339 date-time and full-date, e-mail address,
 * absolute URI with `scheme://`; a string containing `://` is judged as a URI only), or `null`.
 * Only the hint is kept, never the string.
 */
export function detectStringFormat(text: string): StringFormat | null {
  const length = text.length;
  if (length < 6 || length > MAX_FORMATTED_LENGTH) return null;
  if (length === 36 && text.charCodeAt(8) === DASH && isUuid(text)) return 'uuid';
  if (text.charCodeAt(4) === DASH && isFullDate(text)) {
    if (length === 10) return 'date';
    if (isTimeWithZone(text)) return 'date-time';
  }
  const schemeEnd = text.indexOf('://');
  if (schemeEnd > 0) return isUri(text, schemeEnd) ? 'uri' : null;
  const at = text.indexOf('@');
  if (at > 0 && length <= 254) return isEmail(text, at) ? 'email' : null;
  return null;
}

/** `scheme://rest`: scheme `[A-Za-z][A-Za-z0-9+.-]*`, rest non-empty without white space. */
function isUri(text: string, schemeEnd: number): boolean {
  if (!isLetter(text.charCodeAt(0))) return false;
  for (let i = 1; i < schemeEnd; i++) {
    const code = text.charCodeAt(i);
    if (!(isLetter(code) || (code >= 48 && code <= 57) || code === 43 || code === 45 || code === 46)) return false;
  }
  if (schemeEnd + 3 === text.length) return false;
  for (let i = schemeEnd + 3; i < text.length; i++) if (isSpace(text.charCodeAt(i))) return false;
  return true;
}

/** `local@label.label…`: a local part and two or more non-empty labels, no white space, one `@` (at `at`). */
function isEmail(text: string, at: number): boolean {
  for (let i = 0; i < at; i++) if (isSpace(text.charCodeAt(i))) return false;
  let labels = 0;
  let labelLength = 0;
  for (let i = at + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 46) {
      // '.'
      if (labelLength === 0) return false;
      labels++;
      labelLength = 0;
    } else if (code === 64 || isSpace(code)) {
      return false;
    } else {
      labelLength++;
    }
  }
  return labelLength > 0 && labels >= 1;
}

function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/** What `\s` matches in a JavaScript RegExp. */
function isSpace(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 160) return false;
  return (
    code === 160 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
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
  return isDigit(text, at) && isDigit(text, at + 1)
    ? (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48
    : -1;
}
