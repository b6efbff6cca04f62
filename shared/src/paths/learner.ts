/**
 * Path templates learned from the structure of traffic (docs/paths.md, Learned parameters): a
 * position whose sibling values lead to the same continuation (the same following segments, or
 * responses of the same shape) is a parameter after as few as two values, even when its values
 * are plain words (`/users/alice`, `/users/bob` → `/users/{user}`).
 */
import type { Shape } from '../shape/types';
import {
  encodeSegment,
  introducesNames,
  isVersionLike,
  joinSegments,
  parameterNoun,
  splitPath,
  type Segment,
} from './segments';

export interface PathLearnerOptions {
  /** Distinct observations (template, method, status, response keys) kept as evidence at most. Default 5,000. */
  maxRecords?: number;
  /** Observations of one value compared with those of another at most. Default 32. */
  maxCompared?: number;
}

/** What one observation says about its path: kept once per distinct content. */
interface PathRecord {
  /** The path as the detectors templated it (identifiers already parameters). */
  segments: Segment[];
  method: string;
  /** Top-level field names of a 2xx JSON response (`[]`-prefixed for a list of objects), sorted; null when unknown. */
  keys: readonly string[] | null;
}

/** One record seen at one position: the record, its current resolved form, and the position. */
interface Placed {
  record: PathRecord;
  resolved: Segment[];
  at: number;
}

/** A position learned as a parameter: under its prefix, every literal but the exceptions is a value. */
interface LearnedPosition {
  /** Sibling values whose continuations contradict the others' (route words, `/users/me`). */
  exceptions: Set<string>;
}

/**
 * Words that name an action or a view rather than a thing, never learned as values however alike
 * their answers (`/vectors/upsert` beside `/vectors/delete`, `/users/me` beside `/users/alice`).
 */
const ROUTE_WORDS: ReadonlySet<string> = new Set(
  (
    'all batch bulk cancel config count create current delete describe details download edit export fetch find health history import info ' +
    'latest list login logout me mine new query remove search self settings stats status summary sync unmask update upload upsert validate verify ' +
    'active archived draft drafts featured inactive pending popular private public published recent top trending unpublished'
  ).split(' '),
);

/** A parameter placed by the learner; named once the whole template is known (see `nameRuns`). */
const LEARNED = '';

/**
 * Learns which positions are parameters from what follows them. Bounded: at most `maxRecords`
 * distinct observations are kept (later ones only use what was learned), and learned positions
 * are at most one per kept observation and position.
 *
 * Rules (docs/paths.md):
 * - Two sibling values are alike when some continuation of the one matches some continuation of
 *   the other (the same following segments, the last one a literal; or no following segment and
 *   2xx JSON responses whose top-level fields mostly agree), and no continuation contradicts (the
 *   same following segments, both answered 2xx JSON with different fields). Two alike values make
 *   their position a parameter; a value that contradicts stays literal (an exception).
 * - The first segment, a segment after `api`, a version, a literal date or a detected identifier,
 *   version-like values (`v1`, `2.0`), positions that already have a detected identifier among
 *   their values (`/pets/17` beside `/pets/findByStatus`) and route words (a value seen after two
 *   different values of the position before: `issues` in `/repos/a/web/issues`,
 *   `/repos/b/cli/issues`; a collection, right before a detected identifier and after a literal:
 *   `calls` in `/self/calls/17`; an action or view word of ROUTE_WORDS: `upsert`, `search`, `me`)
 *   are never learned: names live there.
 */
export class PathLearner {
  private readonly maxRecords: number;
  private readonly maxCompared: number;
  private readonly records: PathRecord[] = [];
  private readonly recordKeys = new Set<string>();
  /** Resolved prefix (see `prefixKey`) → the position after it, learned as a parameter. */
  private readonly learned = new Map<string, LearnedPosition>();
  /** Resolved prefix → literal value → where it was seen (rebuilt when something is learned). */
  private index = new Map<string, Map<string, Placed[]>>();
  /** Resolved prefixes whose next position has a detected identifier among its values. */
  private identifierPositions = new Set<string>();
  private learnedCount = 0;
  /** Position and literal → the literals seen right before it (two at most: see `isRouteWord`). */
  private readonly parentsOf = new Map<string, Set<string>>();

  constructor(options: PathLearnerOptions = {}) {
    this.maxRecords = options.maxRecords ?? 5_000;
    this.maxCompared = options.maxCompared ?? 32;
  }

  /** Grows by one each time a position is learned: templates resolved before may have changed. */
  get generation(): number {
    return this.learnedCount;
  }

  /** Distinct observations kept as evidence. */
  get size(): number {
    return this.records.length;
  }

  /**
   * Take one observation as evidence. `template` is the path as `templatePath` gave it (without
   * documented templates: those are never learned from), `keys` the top-level field names of a 2xx
   * JSON response (see `responseKeys`), or null. Returns true when a position was learned.
   */
  observe(template: string, method: string, keys: readonly string[] | null): boolean {
    const recordKey = `${method} ${template} ${keys === null ? '-' : keys.join(',')}`;
    if (this.recordKeys.has(recordKey) || this.records.length >= this.maxRecords) return false;
    this.recordKeys.add(recordKey);
    const record: PathRecord = { segments: splitPath(template), method, keys };
    this.records.push(record);
    this.noteParents(record.segments);
    this.place(record);
    const before = this.learnedCount;
    this.settle(record);
    return this.learnedCount !== before;
  }

  /** The template for a path as `templatePath` gave it, with learned positions made parameters. */
  resolve(template: string): string {
    return joinSegments(nameRuns(this.resolveSegments(splitPath(template))));
  }

  /**
   * May the literal at each position of `template` (as `resolve` gave it) still become a
   * parameter? True when some literal sits where a value may live: not the first segment, not
   * after `api` or a version, not a version itself, not a position with identifiers among its values.
   */
  undecided(template: string): boolean {
    const segments = splitPath(template);
    let key = '';
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      if (segment.kind === 'literal' && !this.learned.has(key) && this.mayLearn(segments, i, key)) return true;
      key = extendKey(key, segment);
    }
    return false;
  }

  /** Resolved segments; learned parameters are still unnamed (`LEARNED`). */
  private resolveSegments(segments: readonly Segment[]): Segment[] {
    const out: Segment[] = [];
    let key = '';
    for (const [at, segment] of segments.entries()) {
      const position = segment.kind === 'literal' ? this.learned.get(key) : undefined;
      const value =
        position !== undefined &&
        segment.kind === 'literal' &&
        !position.exceptions.has(segment.text) &&
        !isVersionLike(segment.text) &&
        !ROUTE_WORDS.has(segment.text.toLowerCase());
      // A collection stays a literal even where values live (`/bills/ocd-bill/{id}` beside `/bills/{owner}/{bill}/{id}`).
      const next: Segment =
        value && !isCollection([...out, segment, ...segments.slice(at + 1, at + 2)], at)
          ? { kind: 'param', name: LEARNED }
          : segment;
      out.push(next);
      key = extendKey(key, next);
    }
    return out;
  }

  /** Can the literal at `at` (under the resolved prefix `key`) be learned as a parameter? */
  private mayLearn(resolved: readonly Segment[], at: number, key: string): boolean {
    const segment = resolved[at]!;
    if (segment.kind !== 'literal' || at === 0 || isVersionLike(segment.text)) return false;
    const previous = resolved[at - 1]!;
    // After a detected identifier come route words (`/posts/{postId}/comments`).
    if (previous.kind === 'param' && previous.name !== LEARNED) return false;
    if (isCollection(resolved, at)) return false;
    return !introducesNames(previous) && !this.identifierPositions.has(key) && !this.isRouteWord(at, segment.text);
  }

  /**
   * A value seen right after two different values of a position that may hold values is a route
   * word: `issues` after the repositories `web` and `cli`, `actions` after two organisations.
   * Names recur across values far less than the words of a route do.
   */
  private isRouteWord(at: number, text: string): boolean {
    const key = `${at}/${text}`;
    return ROUTE_WORDS.has(text.toLowerCase()) || (this.parentsOf.get(key)?.size ?? 0) >= 2;
  }

  /** Note the parents of each literal of a record (see `isRouteWord`). */
  private noteParents(segments: readonly Segment[]): void {
    for (let at = 2; at < segments.length; at++) {
      const segment = segments[at]!;
      const parent = segments[at - 1]!;
      if (
        segment.kind !== 'literal' ||
        parent.kind !== 'literal' ||
        introducesNames(segments[at - 2]) ||
        isVersionLike(parent.text)
      )
        continue;
      const key = `${at}/${segment.text}`;
      let parents = this.parentsOf.get(key);
      if (parents === undefined) this.parentsOf.set(key, (parents = new Set()));
      if (parents.size < 2) parents.add(parent.text);
    }
  }

  /** Index a record at each of its positions, by its resolved prefix. */
  private place(record: PathRecord): void {
    const resolved = this.resolveSegments(record.segments);
    let key = '';
    for (let at = 0; at < resolved.length; at++) {
      const segment = resolved[at]!;
      if (segment.kind === 'param' && segment.name !== LEARNED) this.identifierPositions.add(key);
      if (segment.kind === 'literal') {
        let byValue = this.index.get(key);
        if (byValue === undefined) this.index.set(key, (byValue = new Map()));
        let placed = byValue.get(segment.text);
        if (placed === undefined) byValue.set(segment.text, (placed = []));
        if (placed.length < this.maxCompared) placed.push({ record, resolved, at });
      }
      key = extendKey(key, segment);
    }
  }

  /** Learn what `record` decides, then what that in turn decides, until nothing changes. */
  private settle(record: PathRecord): void {
    let pending: PathRecord[] = [record];
    while (pending.length > 0) {
      let learnedAny = false;
      for (const next of pending) if (this.decide(next)) learnedAny = true;
      if (!learnedAny) return;
      // Prefixes merged (`/users/alice/…` and `/users/bob/…` are now one): index again, look at everything again.
      this.index = new Map();
      this.identifierPositions = new Set();
      for (const kept of this.records) this.place(kept);
      pending = this.records;
    }
  }

  /** Look at each undecided position of `record`; true when one was learned. */
  private decide(record: PathRecord): boolean {
    const resolved = this.resolveSegments(record.segments);
    let key = '';
    for (let at = 0; at < resolved.length; at++) {
      const segment = resolved[at]!;
      if (
        segment.kind === 'literal' &&
        !this.learned.has(key) &&
        this.mayLearn(resolved, at, key) &&
        this.decidePosition(key, segment.text)
      )
        return true;
      key = extendKey(key, segment);
    }
    return false;
  }

  /** Compare `value` with its siblings under `key`; learn the position when one is alike. */
  private decidePosition(key: string, value: string): boolean {
    const siblings = this.index.get(key);
    const mine = siblings?.get(value);
    if (!siblings || !mine || siblings.size < 2) return false;
    let alike = false;
    let same = 0;
    const exceptions = new Set<string>();
    for (const [other, theirs] of siblings) {
      if (other === value || isVersionLike(other)) continue;
      if (this.isRouteWord(mine[0]!.at, other) || theirs.some((placed) => isCollection(placed.resolved, placed.at))) {
        exceptions.add(other);
        continue;
      }
      const verdict = compare(mine, theirs);
      if (verdict === 'alike') alike = true;
      else if (verdict === 'same') same++;
      else if (verdict === 'contradicts') exceptions.add(other);
    }
    if (!alike && same + 1 < MANY_SIBLINGS) return false;
    this.learned.set(key, { exceptions });
    this.learnedCount++;
    return true;
  }
}

/**
 * A collection: a literal right before a detected identifier, itself after a literal
 * (`/self/calls/{id}`). After a learned parameter it may be a name still
 * (`/bills/{owner}/wonka-mobile/{id}`, a session before a bill id).
 */
function isCollection(resolved: readonly Segment[], at: number): boolean {
  const next = resolved[at + 1];
  const previous = resolved[at - 1];
  return next?.kind === 'param' && next.name !== LEARNED && !(previous?.kind === 'param' && previous.name === LEARNED);
}

/**
 * How two sibling values' continuations relate. `same`: the same following segments and nothing
 * else to compare (no answers with fields): alike only when many siblings are (MANY_SIBLINGS).
 */
type Verdict = 'alike' | 'contradicts' | 'same' | 'unknown';

/**
 * Sibling values with the same continuation and nothing against it that make a position a
 * parameter even without answers to compare (`/v0/data/alice`, `/v0/data/bob`, … answered 4xx).
 */
const MANY_SIBLINGS = 4;

function compare(a: readonly Placed[], b: readonly Placed[]): Verdict {
  let agree = false;
  let same = false;
  for (const x of a) {
    for (const y of b) {
      if (x.record.method !== y.record.method) continue;
      const verdict = compareContinuations(x, y);
      if (verdict === 'contradicts') return 'contradicts';
      if (verdict === 'alike') agree = true;
      if (verdict === 'same') same = true;
    }
  }
  return agree ? 'alike' : same ? 'same' : 'unknown';
}

/** Two continuations (what follows each value) of one method. */
function compareContinuations(x: Placed, y: Placed): Verdict {
  const restX = x.resolved.length - x.at - 1;
  const restY = y.resolved.length - y.at - 1;
  if (restX !== restY) return 'unknown';
  let identical = true;
  let sharedLiteral = false;
  for (let k = 1; k <= restX; k++) {
    const s = x.resolved[x.at + k]!;
    const t = y.resolved[y.at + k]!;
    if (s.kind === 'literal' && t.kind === 'literal' && s.text === t.text) sharedLiteral = true;
    else if (s.kind !== 'param' || t.kind !== 'param') identical = false;
  }
  const fields = compareKeys(x.record.keys, y.record.keys);
  if (identical) {
    // The same following segments: the responses decide when both are known, a shared literal otherwise.
    if (fields !== 'unknown') return fields;
    return sharedLiteral ? 'alike' : 'same';
  }
  // Different values further on too (`alice/web/issues`, `bob/cli/issues`): alike when they end the same.
  const lastX = x.resolved[x.resolved.length - 1]!;
  const lastY = y.resolved[y.resolved.length - 1]!;
  const sameEnd =
    (lastX.kind === 'literal' && lastY.kind === 'literal' && lastX.text === lastY.text) ||
    (lastX.kind === 'param' && lastY.kind === 'param');
  // Or, one value following each (a name and a slug: `/articles/alice/my-post`, `/articles/bob/hello`), when the answers agree.
  return restX > 0 && ((sameEnd && fields !== 'contradicts') || (restX === 1 && fields === 'alike'))
    ? 'alike'
    : 'unknown';
}

/** Top-level field names agree when at least half of all of them are shared (Jaccard ≥ 0.5). */
function compareKeys(a: readonly string[] | null, b: readonly string[] | null): Verdict {
  if (a === null || b === null || a.length === 0 || b.length === 0) return 'unknown';
  const inA = new Set(a);
  let shared = 0;
  for (const key of b) if (inA.has(key)) shared++;
  return shared * 2 >= inA.size + b.length - shared ? 'alike' : 'contradicts';
}

/** The prefix key one segment further: literals by their canonical text, every parameter as `{}`. */
function extendKey(key: string, segment: Segment): string {
  return `${key}/${segment.kind === 'param' ? '{}' : encodeSegment(segment.text)}`;
}

/**
 * Names learned parameters after the route's nouns. A run of consecutive learned parameters is
 * named from the last literal before it: the last one is the noun's singular (`/users/{user}`), the
 * one before `owner`, the one before that `namespace` (`/repos/{owner}/{repo}`). Detected
 * identifiers keep their names, but those right after learned ones, named after what turned out a
 * value, take the noun's (`/bills/{owner}/{bill}/{billId}`, never `{daveId}`). Names stay unique
 * within the template.
 */
function nameRuns(segments: Segment[]): Segment[] {
  if (!segments.some((s) => s.kind === 'param' && s.name === LEARNED)) return segments;
  const taken = new Set(segments.flatMap((s) => (s.kind === 'param' && s.name !== LEARNED ? [s.name] : [])));
  const out = [...segments];
  for (let start = 0; start < out.length;) {
    const first = out[start]!;
    if (first.kind !== 'param' || first.name !== LEARNED) {
      start++;
      continue;
    }
    // A run of learned parameters, named from the last literal before them.
    let end = start;
    while (end < out.length && out[end]!.kind === 'param' && (out[end] as { name: string }).name === LEARNED) end++;
    let before = start - 1;
    while (before >= 0 && out[before]!.kind === 'param') before--;
    const noun = parameterNoun(out[before]) ?? 'name';
    const names = [noun, 'owner', 'namespace'];
    const length = end - start;
    for (let i = length - 1, k = 0; i >= 0; i--, k++)
      out[start + i] = { kind: 'param', name: unique(names[k] ?? `${noun}Part${length - k}`, taken) };
    // Detected identifiers right after them were named after a literal that turned out a value (`{daveId}`): named after the noun instead.
    for (; end < out.length && out[end]!.kind === 'param' && (out[end] as { name: string }).name !== LEARNED; end++) {
      taken.delete((out[end] as { name: string }).name);
      out[end] = { kind: 'param', name: unique(`${noun === 'name' ? '' : noun}Id`.replace(/^Id$/, 'id'), taken) };
    }
    start = end;
  }
  return out;
}

function unique(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) candidate = `${name}${n}`;
  taken.add(candidate);
  return candidate;
}

/**
 * The top-level field names of a response shape, as the learner compares them: an object's field
 * names, a list's item field names prefixed `[]` (so a list never agrees with one of its items);
 * null for anything else (a scalar, an empty list: nothing to compare).
 */
export function responseKeys(shape: Shape | undefined): readonly string[] | null {
  if (shape === undefined) return null;
  if (shape.kind === 'object') return shape.fields.length === 0 ? null : shape.fields.map((f) => f.name);
  if (shape.kind === 'array' && shape.items.kind === 'object' && shape.items.fields.length > 0)
    return shape.items.fields.map((f) => `[]${f.name}`);
  return null;
}
