import { isJsonMediaType } from '@spectator/shared';
import { refilled } from './token-bucket';

/**
 * Bodies up to this size are kept (by reference, no copy) even when sampled out, so a new
 * variant can be noticed and shaped (docs/agent.md, Novel variants). Larger ones are not looked at.
 * 64 KiB: one chunk as undici hands a response over; 16 KiB until session 15 left out one answer in
 * 150 of the bench's traffic, whose missing fields then went unseen.
 */
export const NOVELTY_BYTES = 64 * 1024;

/** Distinct variants noticed per key (method, template, status) at most; past it no more are looked for. */
export const NOVELTY_VARIANTS = 32;

/** Keys hashed per body at most. */
const MAX_KEYS = 128;

/** Bytes of a body looked at for its keys: the first item of a list, the top of an object. */
export const SCAN_BYTES = 256;

const QUOTE = 0x22;
const COLON = 0x3a;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
/** FNV-1a's offset basis as a signed 32-bit value, so the hash stays a small integer throughout. */
const FNV_BASIS = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
/** Spreads a hash over the bits before it is added to others (the golden ratio's fraction). */
const GOLDEN = 0x9e3779b1 | 0;
const SCRATCH = new Int32Array(MAX_KEYS);

/** What the last `readString` found beside the position it gave (the agent is single-threaded and a read never yields). */
const STRING_READ = { hash: 0, escaped: false };

/**
 * The position of the quote closing a string whose bytes start at `start`, looked for before `stop`
 * (`stop` or past it when none is there; an escaped character is part of the string, never its end),
 * its bytes hashed as they are read: `STRING_READ.hash` (FNV-1a, each escape and the character it
 * escapes left out, as `keyHash`), `STRING_READ.escaped` when it held one.
 */
function readString(text: Buffer, start: number, stop: number): number {
  let close = start;
  let hash = FNV_BASIS;
  let escaped = false;
  while (close < stop) {
    const byte = text[close] as number;
    if (byte === QUOTE) break;
    if (byte === BACKSLASH) {
      close += 2;
      escaped = true;
    } else {
      hash = Math.imul(hash ^ byte, FNV_PRIME);
      close++;
    }
  }
  STRING_READ.hash = hash;
  STRING_READ.escaped = escaped;
  return close;
}

/**
 * A structural fingerprint of a JSON text's keys, without parsing it or building its shape: the
 * set of object keys (every string followed by `:`, at any depth) in its first SCAN_BYTES, each
 * hashed (FNV-1a) and combined regardless of order and repeats, so a list of 3 items and one of 30
 * give the same value while a field more or less gives another. One pass over the bytes in plain
 * JavaScript (`readString` for each string): every string is hashed while its end is looked for, and
 * hashed again only when it holds an escape and turns out a key. Types of values are not looked at (the
 * shape fingerprint does that once the body is shaped), nor keys past SCAN_BYTES. 0 for a body with no key.
 * Also tells (`KEY_SCAN.flat`) whether the text, read whole, is one object holding no container:
 * its structure is then known from the value (`flatStructure`), with no second read.
 */
export function keyFingerprint(text: Buffer): number {
  const end = Math.min(text.length, SCAN_BYTES);
  // Distinct key hashes so far, in a scratch array: bodies hold few distinct keys, so a linear
  // look-up beats a Set (no allocation per body).
  let distinct = 0;
  let combined = 0;
  // One flat object so far: every byte is read, and the brackets outside strings are its `{` (then
  // `brackets` 1) and `}` (2) only, every key is inside them, and no key repeats.
  let flat = end === text.length;
  let brackets = 0;
  for (let i = 0; i < end; i++) {
    const byte = text[i] as number;
    if (byte !== QUOTE) {
      if (flat && (byte === OPEN_OBJECT || byte === CLOSE_OBJECT || byte === OPEN_ARRAY || byte === CLOSE_ARRAY))
        flat = byte === (brackets === 0 ? OPEN_OBJECT : CLOSE_OBJECT) && ++brackets <= 2;
      continue;
    }
    // A string: find its closing quote, hashing as it goes (string values are hashed for nothing,
    // which costs less than walking the key's bytes twice).
    const start = i + 1;
    const close = readString(text, start, end);
    let hash = STRING_READ.hash;
    const escaped = STRING_READ.escaped;
    // A string the scanned bytes cut off holds no key, and nothing after it is outside a string.
    if (close >= end) {
      flat = false;
      break;
    }
    let next = close + 1;
    while (next < end) {
      const byte = text[next] as number;
      if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) break;
      next++;
    }
    if (next < end && text[next] === COLON) {
      // The escape and the escaped character are not hashed.
      if (escaped) hash = keyHash(text, start, close, true);
      let seen = false;
      for (let k = 0; k < distinct; k++) {
        if (SCRATCH[k] === hash) {
          seen = true;
          break;
        }
      }
      if (!seen && distinct < MAX_KEYS) {
        SCRATCH[distinct++] = hash;
        combined = (combined + Math.imul(hash, GOLDEN)) | 0;
      } else flat = false; // a structure adds a key once per time it is there; past MAX_KEYS keys are left out
      if (brackets !== 1) flat = false;
    }
    i = close;
  }
  KEY_SCAN.flat = flat && brackets === 2;
  return combined >>> 0;
}

/** What the last `keyFingerprint` found besides its value (the agent is single-threaded and a scan never yields). */
export const KEY_SCAN = { flat: false };

/**
 * `structureFingerprint` of a text `keyFingerprint` found flat (`KEY_SCAN.flat`) with value `keys`:
 * its one object's keys at the root. Equal to the scan's value for every such text (novelty.spec).
 */
export function flatStructure(keys: number): number {
  return Math.imul(mixHashes(FNV_BASIS, keys | 0), GOLDEN) >>> 0;
}

/** Containers deeper than this are read past: their objects' keys are not part of the fingerprint. */
const MAX_DEPTH = 64;

/** Distinct object structures counted per body at most (a body past it is fingerprinted by its first ones). */
const MAX_STRUCTURES = 128;

/** Bytes of a string looked through one by one before the native search takes over. */
const SHORT_STRING = 32;
// What a byte is to the scan, from a table (one look-up instead of six comparisons a byte).
const OTHER = 0;
const STRING = 1;
const OPEN = 2;
const CLOSE = 3;
const BLANK = 4;
const SEPARATOR = 5;
const BYTE_KIND = new Uint8Array(256);
BYTE_KIND[QUOTE] = STRING;
BYTE_KIND[OPEN_OBJECT] = OPEN;
BYTE_KIND[OPEN_ARRAY] = OPEN;
BYTE_KIND[CLOSE_OBJECT] = CLOSE;
BYTE_KIND[CLOSE_ARRAY] = CLOSE;
for (const blank of [0x20, 0x0a, 0x0d, 0x09]) BYTE_KIND[blank] = BLANK;
BYTE_KIND[COMMA] = SEPARATOR;
/** Mixed into a place's hash for the items of an array there (`items[]`), so `{"a":{…}}` and `{"a":[{…}]}` differ. */
const ITEMS = 0x5bdd5d | 0;

// Scratch state of one scan (the agent is single-threaded and a scan never yields), so a body costs no allocation.
/** Per open container: the hash of its place (the keys leading to it, `[]` for items). */
const PLACE = new Int32Array(MAX_DEPTH);
/** Per open object: its keys' hashes combined so far, regardless of order. */
const KEYS = new Int32Array(MAX_DEPTH);
/** Per open object: the hash of its last key (the place of a container that is its value). */
const LAST_KEY = new Int32Array(MAX_DEPTH);
/** Per open container: 1 for an object, 0 for an array. */
const IS_OBJECT = new Uint8Array(MAX_DEPTH);
/** Open-addressing set of the object structures of the current scan (a slot counts when its stamp is the scan's). */
const TABLE_SIZE = 256;
const TABLE = new Int32Array(TABLE_SIZE);
const STAMP = new Int32Array(TABLE_SIZE);
let scan = 0;

/** Two hashes as one, order mattering (a place and a key; a place and a key set). */
export function mixHashes(a: number, b: number): number {
  const mixed = Math.imul(a ^ Math.imul(b, GOLDEN), FNV_PRIME);
  return (mixed ^ (mixed >>> 15)) | 0;
}

/**
 * The structure of a whole JSON text, without parsing it or building its shape: the set of its
 * objects' structures, each the set of an object's keys at its place (the keys leading to it from
 * the root, `[]` for an array's items). So
 * - a list of 3 items and one of 30 alike give the same value, and so do any values, whatever
 *   their types, and any order of keys;
 * - a field more or less anywhere gives another value: also in one item of a long list, far past
 *   the bytes `keyFingerprint` reads, or in a nested object (`{"a":{"x":1}}`, `{"a":{"y":1}}`).
 * Two texts with the same value have the same shape but for value types: a list's items are merged
 * into one shape where a field is optional when some item lacks it, which the set of item key sets
 * decides. One pass over the bytes in plain JavaScript: a string's end is looked for byte by byte
 * (by the native search past its first SHORT_STRING bytes), and only a key (a string followed by
 * `:`) is hashed: as it is read when it starts where a key does (after an object's `{` or a `,`, as
 * every key of a JSON text does), else read again once its `:` is found. Objects deeper than MAX_DEPTH
 * are not counted, nor structures past the first MAX_STRUCTURES distinct ones. About 1.2-1.6 ns a
 * byte before session 20 read each key twice (2.3 KB: 3-4 µs, ten times `keyFingerprint`):
 * too much for every request, so it is taken within a `ScanBudget`. 0 for a text with no object.
 */
export function structureFingerprint(text: Buffer): number {
  const end = text.length;
  scan = (scan + 1) | 0;
  // Containers open; past MAX_DEPTH only counted.
  let depth = 0;
  let distinct = 0;
  let combined = 0;
  // Where a key would start: right after an object's `{` or a `,` and the blanks after them. A string
  // there is hashed as it is read (the usual key: short, no escape), so a key's bytes are read once.
  let keyAt = -1;
  for (let i = 0; i < end; i++) {
    const kind = BYTE_KIND[text[i] as number] as number;
    if (kind === OTHER) continue;
    if (kind === STRING) {
      // A string: find its closing quote (an escaped character is part of it, never its end); a long
      // one (a description, a URL) by the native search once the first bytes held no quote.
      const start = i + 1;
      let close = start;
      let escaped = false;
      const stop = Math.min(end, start + SHORT_STRING);
      const top = depth - 1;
      const inObject = top >= 0 && top < MAX_DEPTH && IS_OBJECT[top] === 1;
      // A string where a key starts, hashed as it is read (escapes left out, as `keyHash` does);
      // -1 for one not hashed (a value, or a key longer than SHORT_STRING: `keyHash` reads it then).
      let hashed = -1;
      if (inObject && i === keyAt) {
        close = readString(text, start, stop);
        escaped = STRING_READ.escaped;
        if (close < stop) hashed = STRING_READ.hash;
      } else
        while (close < stop) {
          const inner = text[close] as number;
          if (inner === QUOTE) break;
          if (inner === BACKSLASH) {
            close += 2;
            escaped = true;
          } else close++;
        }
      if (close >= stop && close < end) {
        close = closingQuote(text, close, end);
        escaped = true;
      }
      if (close >= end) break; // the text ends inside a string
      i = close;
      if (!inObject) continue;
      let next = close + 1;
      while (next < end && BYTE_KIND[text[next] as number] === BLANK) next++;
      if (next >= end || text[next] !== COLON) continue;
      // A key of the object open at `top`.
      const hash = hashed !== -1 ? hashed : keyHash(text, start, close, escaped);
      LAST_KEY[top] = hash;
      KEYS[top] = (KEYS[top]! + Math.imul(hash, GOLDEN)) | 0;
      i = next;
    } else if (kind === OPEN) {
      if (depth < MAX_DEPTH) {
        const outer = depth - 1;
        PLACE[depth] =
          outer < 0 ? FNV_BASIS : mixHashes(PLACE[outer]!, IS_OBJECT[outer] === 1 ? LAST_KEY[outer]! : ITEMS);
        IS_OBJECT[depth] = text[i] === OPEN_OBJECT ? 1 : 0;
        KEYS[depth] = 0;
        LAST_KEY[depth] = 0;
      }
      if (text[i] === OPEN_OBJECT) keyAt = i + 1;
      depth++;
    } else if (kind === SEPARATOR) keyAt = i + 1;
    else if (kind === BLANK) {
      if (keyAt === i) keyAt = i + 1;
    } else if (kind === CLOSE) {
      if (depth === 0) continue;
      depth--;
      if (depth >= MAX_DEPTH || IS_OBJECT[depth] === 0 || distinct >= MAX_STRUCTURES) continue;
      // An object ends: its structure counts once per body.
      const structure = mixHashes(PLACE[depth]!, KEYS[depth]!);
      let slot = (structure ^ (structure >>> 16)) & (TABLE_SIZE - 1);
      while (STAMP[slot] === scan && TABLE[slot] !== structure) slot = (slot + 1) & (TABLE_SIZE - 1);
      if (STAMP[slot] === scan) continue;
      STAMP[slot] = scan;
      TABLE[slot] = structure;
      distinct++;
      combined = (combined + Math.imul(structure, GOLDEN)) | 0;
    }
  }
  return combined >>> 0;
}

/**
 * The position of the quote closing a string whose bytes from `from` on hold no quote seen yet
 * (`end` when the text ends first): the next quote not escaped, found by the native search.
 */
function closingQuote(text: Buffer, from: number, end: number): number {
  let at = from;
  for (;;) {
    const quote = text.indexOf(QUOTE, at);
    if (quote < 0 || quote >= end) return end;
    let backslashes = 0;
    while (text[quote - backslashes - 1] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

/** The FNV-1a hash of a key's bytes from `start` to `close`, each escape and the character it escapes left out. */
function keyHash(text: Buffer, start: number, close: number, escaped: boolean): number {
  let hash = FNV_BASIS;
  for (let k = start; k < close; k++) {
    const byte = text[k] as number;
    if (escaped && byte === BACKSLASH) k++;
    else hash = Math.imul(hash ^ byte, FNV_PRIME);
  }
  return hash;
}

/**
 * Bytes of bodies `structureFingerprint` may read a second in the long run, on the shape sampler's
 * clock: about 0.3 % of a core (1.2-1.6 ns a byte), and the 1,000 answers of 2 KB a second a key's
 * watching is capped at (`maxWatchedPerKeyPerSecond`). 8 MiB a second until session 21: a flood of
 * 100 KB answers at one connection then read 80 of them a second, three quarters of the agent's
 * observing code per request (perf samples, docs/benchmarks.md).
 */
export const SCAN_BYTES_PER_SECOND = 2 * 1024 * 1024;

/**
 * Bytes of the scan budget saved up at most (four seconds' worth): under it (a CI run, a burst of
 * a few thousand answers after a quiet spell) every watched body is read whole, so a variant
 * anywhere in it is noticed; an endpoint flooded longer spends it and the rest of its bodies are
 * judged by `keyFingerprint` alone.
 */
export const SCAN_BURST_BYTES = 8 * 1024 * 1024;

/** A token bucket of bytes for `structureFingerprint` (see SCAN_BYTES_PER_SECOND, SCAN_BURST_BYTES). */
export class ScanBudget {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly now: () => number,
    private readonly perSecond = SCAN_BYTES_PER_SECOND,
    private readonly burst = SCAN_BURST_BYTES,
  ) {
    this.tokens = burst;
    this.refilledAt = now();
  }

  /** May `bytes` more be read now? Takes them when yes. */
  take(bytes: number): boolean {
    const now = this.now();
    this.tokens = refilled(this.tokens, this.refilledAt, now, this.perSecond, this.burst);
    this.refilledAt = now; // also after a wall clock set back: counts from now
    if (this.tokens < bytes) return false;
    this.tokens -= bytes;
    return true;
  }
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
