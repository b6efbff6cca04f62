/**
 * Path patterns of ignore rules, compiled to anchored, case-insensitive regular expressions.
 * Syntax (docs/ignore-rules.md): literal text; `*` one segment (or any run of characters within
 * one); `**` any number of segments; `:name` and `{name}` one segment; `(regex)` a JavaScript
 * regular expression, which may cross `/` (`OPTIONS (.*)`, `GET (.*).css`).
 *
 * Matching must stay fast on paths an attacker chooses, so patterns that can backtrack badly are
 * refused: repeated groups (`(a+)+`, exponential), back-references and lookarounds, and more than
 * {@link MAX_OPEN_ENDED} open-ended wildcards (each one multiplies the work by the path length).
 */
import { decodeOrKeep } from '../paths/segments';

/** Open-ended wildcards (`**`, `(.*)`, `*` inside a segment, …) allowed in one pattern. */
export const MAX_OPEN_ENDED = 2;
/** Patterns with two open-ended wildcards test paths up to this length: their worst case is quadratic in it. */
export const MAX_QUADRATIC_PATH_LENGTH = 1024;

export interface CompiledPattern {
  regex: RegExp;
  /** How many open-ended wildcards the pattern has: the degree of its worst-case matching time. */
  openEnded: number;
}

/** A pattern that cannot be used; the message says what is wrong with it. */
export class PatternError extends Error {}

/** Compile a path pattern; throws a PatternError saying what is wrong. */
export function compilePattern(pattern: string): CompiledPattern {
  if (!/^[/(*]/.test(pattern)) {
    throw new PatternError(`the path must start with "/" (or be a pattern such as "(.*)" or "**"), got "${pattern}"`);
  }
  // Paths are matched percent-decoded, so a pattern is too (`/hello%20world` is `/hello world`);
  // one trailing slash is not significant, as in the paths matched (`/db/` is `/db`).
  const decoded = decodePercent(pattern);
  const source = decoded.length > 1 && decoded.endsWith('/') && !decoded.endsWith('\\/') ? decoded.slice(0, -1) : decoded;
  let regex = '';
  let openEnded = 0;
  for (let i = 0; i < source.length; ) {
    const c = source[i]!;
    const segmentStart = i === 0 || source[i - 1] === '/';
    if (c === '(') {
      const end = groupEnd(source, i);
      const inner = source.slice(i + 1, end);
      openEnded += checkRegexGroup(inner);
      regex += `(?:${inner})`;
      i = end + 1;
    } else if (c === ')') {
      throw new PatternError(`unbalanced ")" at character ${i + 1} of the path`);
    } else if (source.startsWith('**', i)) {
      const wholeSegments = segmentStart && isSegmentEnd(source, i + 2);
      // `/a/**` matches `/a` and everything below it; `/a/**/b` matches `/a/b`, `/a/x/y/b`.
      regex = wholeSegments && regex.endsWith('/') ? `${regex.slice(0, -1)}(?:/.*)?` : `${regex}.*`;
      openEnded++;
      i += 2;
    } else if (c === '*' || c === '{' || (c === ':' && segmentStart && /[A-Za-z_]/.test(source[i + 1] ?? ''))) {
      const end = c === '*' ? i + 1 : parameterEnd(source, i);
      const wholeSegment = segmentStart && isSegmentEnd(source, end);
      regex += wholeSegment ? '[^/]+' : '[^/]*';
      if (!wholeSegment) openEnded++; // segment-bounded, but several in one segment multiply
      i = end;
    } else if (c === '?') {
      throw new PatternError('a path pattern has no query: rules match the path without its query (remove "?" and what follows)');
    } else if (c === '\\') {
      regex += escapeRegex(source[i + 1] ?? '\\');
      i += 2;
    } else {
      regex += escapeRegex(c);
      i++;
    }
  }
  if (openEnded > MAX_OPEN_ENDED) {
    throw new PatternError(
      `too many open-ended wildcards (${openEnded}; at most ${MAX_OPEN_ENDED} of "**", "(.*)", "*" inside a segment, …), so that matching stays fast`,
    );
  }
  return { regex: new RegExp(`^${regex}$`, 'i'), openEnded };
}

/** Index of the `)` closing the group opened at `start`, skipping escapes and `[…]` classes. */
function groupEnd(source: string, start: number): number {
  let depth = 0;
  let inClass = false;
  for (let i = start; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i;
  }
  throw new PatternError(`unbalanced "(" at character ${start + 1} of the path: no matching ")"`);
}

/** End (exclusive) of a `{name}` or `:name` parameter starting at `start`. */
function parameterEnd(source: string, start: number): number {
  const match = source[start] === '{' ? /^\{([A-Za-z_][\w-]*)\}/.exec(source.slice(start)) : /^:[A-Za-z_]\w*/.exec(source.slice(start));
  if (!match) throw new PatternError(`bad parameter at character ${start + 1} of the path: write "{name}" or ":name" with a letter first`);
  return start + match[0].length;
}

function isSegmentEnd(source: string, i: number): boolean {
  return i === source.length || source[i] === '/';
}

/**
 * Check the inside of a `(regex)` group and count its open-ended quantifiers. Throws on
 * constructs that can backtrack exponentially or that the group cannot hold.
 */
function checkRegexGroup(inner: string): number {
  try {
    new RegExp(inner);
  } catch (error) {
    throw new PatternError(`invalid regular expression "(${inner})": ${(error as Error).message}`);
  }
  let openEnded = 0;
  let inClass = false;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    const next = inner[i + 1] ?? '';
    if (c === '\\') {
      if (/[1-9k]/.test(next)) throw new PatternError(`back-references ("\\${next}") are not supported in "(${inner})"`);
      i++;
    } else if (inClass) {
      inClass = c !== ']';
    } else if (c === '[') {
      inClass = true;
    } else if (c === '(' && /^\?<?[=!]/.test(inner.slice(i + 1))) {
      throw new PatternError(`lookarounds ("(?=", "(?!", "(?<=", "(?<!") are not supported in "(${inner})"`);
    } else if (c === ')' && /[*+{]/.test(next)) {
      throw new PatternError(`a repeated group ("(…)${next}") can take exponential time to match; repeat a character or a class instead, in "(${inner})"`);
    } else if (c === '*' || c === '+' || (c === '{' && /^\{\d+,\}/.test(inner.slice(i)))) {
      openEnded++;
    }
  }
  return openEnded;
}

/**
 * Percent-decode a path or pattern as `decodeURI` does: reserved characters (`%2F`, `%3F`, …)
 * stay encoded, so decoding never adds a segment; malformed escapes are kept as text.
 */
export function decodePercent(text: string): string {
  return decodeOrKeep(text, decodeURI);
}

function escapeRegex(text: string): string {
  // `/` needs no escape in a RegExp built from a string; leaving it bare lets `**` see the last slash.
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
