/**
 * Path patterns of ignore rules, compiled to anchored, case-insensitive regular expressions run by
 * RE2 (the `re2js` port: pure JavaScript, so it runs in the agent, the backend and the browser).
 * Syntax (docs/ignore-rules.md): literal text; `*` one segment (or any run of characters within
 * one); `**` any number of segments; `:name` and `{name}` one segment; `(regex)` a regular
 * expression in JavaScript syntax, which may cross `/` (`OPTIONS (.*)`, `GET (.*).css`).
 *
 * Paths are chosen by whoever sends a request, and an agent's rules are untrusted input to the
 * backend, so matching must stay fast whatever the pattern: RE2 never backtracks, its time is
 * linear in the path length times the size of the compiled program, and that size is bounded
 * ({@link MAX_PROGRAM_SIZE}). What RE2 cannot do in linear time (back-references, lookarounds)
 * it refuses.
 */
import { RE2JS, RE2JSException } from 're2js';
import { decodeOrKeep } from '../paths/segments';

/**
 * Largest compiled program of one pattern, in RE2 instructions. A pattern's work per path
 * character is bounded by its program size; counted repeats (`.{0,150}`) are what make programs
 * big (`GET /assets/**` is 13 instructions, `(.{0,100}.{0,100}Z)` 404, `(.{0,150}.{0,150}.{0,150}.{0,150}Z)` 1,204).
 */
export const MAX_PROGRAM_SIZE = 500;

export interface CompiledPattern {
  /** Whole-path, case-insensitive matcher; compiled once, tested per request. */
  regex: RE2JS;
  /** Instructions in the compiled program: the bound on work per path character. */
  programSize: number;
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
  const source =
    decoded.length > 1 && decoded.endsWith('/') && !decoded.endsWith('\\/') ? decoded.slice(0, -1) : decoded;
  let regex = '';
  for (let i = 0; i < source.length;) {
    const c = source[i]!;
    const segmentStart = i === 0 || source[i - 1] === '/';
    if (c === '(') {
      const end = groupEnd(source, i);
      regex += `(?:${regexGroup(source.slice(i + 1, end))})`;
      i = end + 1;
    } else if (c === ')') {
      throw new PatternError(`unbalanced ")" at character ${i + 1} of the path`);
    } else if (source.startsWith('**', i)) {
      const wholeSegments = segmentStart && isSegmentEnd(source, i + 2);
      // `/a/**` matches `/a` and everything below it; `/a/**/b` matches `/a/b`, `/a/x/y/b`.
      regex = wholeSegments && regex.endsWith('/') ? `${regex.slice(0, -1)}(?:/.*)?` : `${regex}.*`;
      i += 2;
    } else if (c === '*' || c === '{' || (c === ':' && segmentStart && /[A-Za-z_]/.test(source[i + 1] ?? ''))) {
      const end = c === '*' ? i + 1 : parameterEnd(source, i);
      regex += segmentStart && isSegmentEnd(source, end) ? '[^/]+' : '[^/]*';
      i = end;
    } else if (c === '?') {
      throw new PatternError(
        'a path pattern has no query: rules match the path without its query (remove "?" and what follows)',
      );
    } else if (c === '\\') {
      regex += escapeRegex(source[i + 1] ?? '\\');
      i += 2;
    } else {
      regex += escapeRegex(c);
      i++;
    }
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(regex, RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    throw new PatternError(`the pattern cannot be compiled: ${error.message}`);
  }
  const programSize = compiled.programSize();
  if (programSize > MAX_PROGRAM_SIZE) {
    throw new PatternError(
      `the pattern is too large (${programSize} instructions compiled, at most ${MAX_PROGRAM_SIZE}), so that matching stays fast; use fewer or smaller counted repeats such as "{0,150}"`,
    );
  }
  return { regex: compiled, programSize };
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
  const match =
    source[start] === '{'
      ? /^\{([A-Za-z_][\w-]*)\}/.exec(source.slice(start))
      : /^:[A-Za-z_]\w*/.exec(source.slice(start));
  if (!match)
    throw new PatternError(
      `bad parameter at character ${start + 1} of the path: write "{name}" or ":name" with a letter first`,
    );
  return start + match[0].length;
}

function isSegmentEnd(source: string, i: number): boolean {
  return i === source.length || source[i] === '/';
}

/**
 * The inside of a `(regex)` group, written in JavaScript syntax, as RE2 syntax (`(?<name>`,
 * `\u0041`, a bare `/`). Throws when RE2 cannot run it: back-references and lookarounds need
 * backtracking, so RE2 has none.
 */
function regexGroup(inner: string): string {
  try {
    const translated = RE2JS.translateRegExp(inner);
    RE2JS.compile(translated); // alone, so that an error names this group
    return translated;
  } catch (error) {
    if (!(error instanceof RE2JSException)) throw error;
    const hint = /\\[1-9k]|\(\?<?[=!]/.test(inner)
      ? ' (back-references and lookarounds are not supported: they cannot be matched in linear time)'
      : '';
    throw new PatternError(`invalid regular expression "(${inner})": ${error.message}${hint}`);
  }
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
