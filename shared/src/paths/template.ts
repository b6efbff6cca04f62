/**
 * Path templates (DESIGN.md, Paths; docs/paths.md): the agent turns every raw path into a template
 * before anything leaves the pod, so identifiers never do.
 */
import {
  decodeSegment,
  identifierStrength,
  introducesNames,
  isDottedVersion,
  isVersionSegment,
  joinSegments,
  ParameterNames,
  splitPath,
  type Segment,
} from './segments';

export { CardinalityLimiter, type CardinalityLimiterOptions } from './limiter';
export { PathLearner, responseKeys, type PathLearnerOptions } from './learner';
export { isVersionLike } from './segments';

/**
 * Raw path → template: `/posts/17` → `/posts/{postId}`, `/users/ab12cd34ef/posts/5?x=1` →
 * `/users/{userId}/posts/{postId}`. The query, fragment, empty segments and a trailing slash are
 * dropped; literals are percent-decoded and re-encoded canonically.
 *
 * `known` templates (documented in the backend) are matched first; when several match, the most
 * specific wins (a literal beats a parameter at the first position where they differ), so
 * `/users/me` gives `/users/me` when both `/users/me` and `/users/{userId}` are known. A known
 * template is returned in canonical form. Idempotent: a template gives itself. `keep` may keep a
 * weak identifier literal after the segments templated before it: a version number the traffic
 * showed (`PathLearner.keepsVersion`, `/oauth2/1/authorize`).
 */
export function templatePath(
  rawPath: string,
  known: readonly string[] = [],
  keep?: (before: readonly Segment[], text: string) => boolean,
): string {
  const segments = splitPath(rawPath);
  const documented = bestKnownTemplate(segments, known);
  if (documented) return joinSegments(documented);

  const names = new ParameterNames(segments);
  const templated: Segment[] = [];
  for (const segment of segments) {
    // Decide on what the previous segment became: a date that turned into a parameter names nothing.
    const previous = templated[templated.length - 1];
    const strength =
      segment.kind === 'literal' && !isDottedVersion(segment.text) ? identifierStrength(segment.text) : 'none';
    const isParameter =
      strength === 'strong' ||
      (strength === 'weak' &&
        (!introducesNames(previous) || numberAfterVersion(previous, segment)) &&
        !(keep !== undefined && segment.kind === 'literal' && keep(templated, segment.text)));
    templated.push(isParameter ? names.after(previous) : segment);
  }
  return joinSegments(templated);
}

/**
 * A number right after a `v1`-style version (`/send/v1/110085/digital-account`): the version was
 * just given, so the number is no second one but a value, as it is anywhere else. After `api`
 * (`/api/2/users`) and at the first segment a number may be the version itself and stays.
 */
function numberAfterVersion(previous: Segment | undefined, segment: Segment): boolean {
  return (
    previous?.kind === 'literal' &&
    isVersionSegment(previous.text) &&
    segment.kind === 'literal' &&
    /^\d+$/.test(segment.text)
  );
}

/**
 * The most specific of `templates` that `path` (a raw path or a template) matches, in canonical
 * form, or undefined when none does. See `templatePath` for "most specific".
 */
export function bestTemplate(path: string, templates: readonly string[]): string | undefined {
  const best = bestKnownTemplate(splitPath(path), templates);
  return best ? joinSegments(best) : undefined;
}

/**
 * Is `path` another template of the same route as `template`, differing only in its parameters'
 * names (`/{id}/components/trim` and `/{name}/components/trim`)? OpenAPI holds such paths to be one
 * (paths that differ only in parameter names must not both exist), so their rows belong together.
 * Both in canonical form (as the agent writes them).
 */
export function sameRoute(template: string, path: string): boolean {
  return path !== template && path.includes('{') && routeOf(path) === routeOf(template);
}

/**
 * A template's route: its parameters unnamed (`/repos/{owner}/{repo}` → `/repos/{}/{}`), so that templates of one route
 * (see `sameRoute`) give one key. In canonical form (as the agent writes templates).
 */
export function routeOf(template: string): string {
  return template
    .split('/')
    .map((segment) => (segment.startsWith('{') ? '{}' : segment))
    .join('/');
}

/** Does a template hold at least one `{parameter}` segment? */
export function hasParameter(template: string): boolean {
  return splitPath(template).some((segment) => segment.kind === 'param');
}

/**
 * Does a raw path (or a template) match a template? A parameter matches any one non-empty
 * segment; a literal matches the same text after percent-decoding (case-sensitive, as paths are).
 * A parameter in `path` only matches a parameter of `template`, so for templates this reads
 * "every path of `path` is a path of `template`". Query and trailing slash are ignored.
 */
export function matchTemplate(template: string, path: string): boolean {
  return segmentsMatch(splitPath(template), splitPath(path));
}

/**
 * Parameter names of a query string (`?a=1&b=2&a=3` → `['a','b']`), sorted and unique; never
 * values. Accepts a search (`?a=1`), a bare query (`a=1`) or a whole path (`/x?a=1#f`). Names are
 * decoded (`+` is a space), array indices are generalised (`ids[0]` → `ids[]`), and a name that is
 * itself an identifier (`?1700000000`, a token used as a flag) is left out, as it is a value.
 */
export function queryNames(search: string): string[] {
  const start = search.indexOf('?');
  const hasQuery = start >= 0 || !search.startsWith('/');
  if (!hasQuery) return [];
  let query = start >= 0 ? search.slice(start + 1) : search;
  const fragment = query.indexOf('#');
  if (fragment >= 0) query = query.slice(0, fragment);

  const names = new Set<string>();
  for (const pair of query.split('&')) {
    const rawName = pair.split('=', 1)[0]!;
    const name = decodeSegment(rawName.replace(/\+/g, ' ')).replace(/\[\d+\]/g, '[]');
    if (name !== '' && identifierStrength(name) === 'none') names.add(name);
  }
  return [...names].sort();
}

/** Does a list of template segments match a list of path segments, position by position? */
function segmentsMatch(template: readonly Segment[], path: readonly Segment[]): boolean {
  if (template.length !== path.length) return false;
  return template.every((t, i) => {
    const p = path[i]!;
    return t.kind === 'param' ? p.kind === 'param' || p.text !== '' : p.kind === 'literal' && p.text === t.text;
  });
}

/** The most specific known template matching `segments`, or undefined. */
function bestKnownTemplate(segments: readonly Segment[], known: readonly string[]): Segment[] | undefined {
  let best: Segment[] | undefined;
  for (const template of known) {
    const candidate = splitPath(template);
    if (segmentsMatch(candidate, segments) && (best === undefined || moreSpecific(candidate, best))) best = candidate;
  }
  return best;
}

/** Literal beats parameter at the first position where the two differ in kind. */
function moreSpecific(a: readonly Segment[], b: readonly Segment[]): boolean {
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.kind !== b[i]!.kind) return a[i]!.kind === 'literal';
  }
  return false;
}
