import { isJsonMediaType } from '@spectator/shared';

/**
 * Bodies up to this size are kept (by reference, no copy) even when sampled out, so a new
 * variant can be noticed and shaped (docs/agent.md, Novel variants). Larger ones are not looked at.
 */
export const NOVELTY_BYTES = 16 * 1024;

/** Distinct variants noticed per key (method, template, status) at most; past it no more are looked for. */
export const NOVELTY_VARIANTS = 32;

/** Keys hashed per body at most. */
const MAX_KEYS = 128;

/** Bytes of a body looked at for its keys: the first item of a list, the top of an object. */
export const SCAN_BYTES = 256;

const QUOTE = 0x22;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
/** FNV-1a's offset basis as a signed 32-bit value, so the hash stays a small integer throughout. */
const FNV_BASIS = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;
const SCRATCH = new Int32Array(MAX_KEYS);

/**
 * A structural fingerprint of a JSON text's keys, without parsing it or building its shape: the
 * set of object keys (every string followed by `:`, at any depth) in its first SCAN_BYTES, each
 * hashed (FNV-1a) and combined regardless of order and repeats, so a list of 3 items and one of 30
 * give the same value while a field more or less gives another. One pass over the bytes in plain
 * JavaScript (no call per key): every string is hashed while its end is looked for, and hashed
 * again only when it holds an escape and turns out a key. Types of values are not looked at (the
 * shape fingerprint does that once the body is shaped), nor keys past SCAN_BYTES. 0 for a body with no key.
 */
export function keyFingerprint(text: Buffer): number {
  const end = Math.min(text.length, SCAN_BYTES);
  // Distinct key hashes so far, in a scratch array: bodies hold few distinct keys, so a linear
  // look-up beats a Set (no allocation per body).
  let distinct = 0;
  let combined = 0;
  for (let i = 0; i < end; i++) {
    if (text[i] !== QUOTE) continue;
    // A string: find its closing quote, hashing as it goes (string values are hashed for nothing,
    // which costs less than walking the key's bytes twice).
    const start = i + 1;
    let close = start;
    let hash = FNV_BASIS;
    let escaped = false;
    while (close < end) {
      const byte = text[close] as number;
      if (byte === QUOTE) break;
      if (byte === BACKSLASH) {
        // An escaped character is part of the string, never its end.
        close += 2;
        escaped = true;
      } else {
        hash = Math.imul(hash ^ byte, FNV_PRIME);
        close++;
      }
    }
    // A string the scanned bytes cut off holds no key, and nothing after it is outside a string.
    if (close >= end) break;
    let next = close + 1;
    while (next < end) {
      const byte = text[next] as number;
      if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) break;
      next++;
    }
    if (next < end && text[next] === COLON) {
      // The escape and the escaped character are not hashed.
      if (escaped) hash = escapedKeyHash(text, start, close);
      let seen = false;
      for (let k = 0; k < distinct; k++) {
        if (SCRATCH[k] === hash) {
          seen = true;
          break;
        }
      }
      if (!seen && distinct < MAX_KEYS) {
        SCRATCH[distinct++] = hash;
        combined = (combined + Math.imul(hash, 0x9e3779b1)) | 0;
      }
    }
    i = close;
  }
  return combined >>> 0;
}

/** The FNV-1a hash of a key's bytes from `start` to `close`, each escape and the character it escapes left out. */
function escapedKeyHash(text: Buffer, start: number, close: number): number {
  let hash = FNV_BASIS;
  for (let k = start; k < close; k++) {
    const byte = text[k] as number;
    if (byte === BACKSLASH) k++;
    else hash = Math.imul(hash ^ byte, FNV_PRIME);
  }
  return hash;
}

/** Media types seen (a handful) → JSON or not: asked for every watched body. */
const jsonTypes = new Map<string, boolean>();

/** Is a body of this media type (lower-case, no parameters) JSON? Memoized. */
export function isJson(mediaType: string): boolean {
  let json = jsonTypes.get(mediaType);
  if (json === undefined) {
    json = isJsonMediaType(mediaType);
    if (jsonTypes.size >= 256) jsonTypes.clear();
    jsonTypes.set(mediaType, json);
  }
  return json;
}

/** Can a body with this `content-encoding` be fingerprinted as it came (none, or `identity`)? */
export function isIdentity(contentEncoding: string): boolean {
  return contentEncoding === '' || contentEncoding.toLowerCase() === 'identity';
}
