/**
 * Path templates learned from the structure of traffic (docs/paths.md, Learned parameters): a
 * position whose sibling values lead to the same continuation (the same following segments, or
 * responses of the same shape) is a parameter after as few as two values, even when its values
 * are plain words (`/users/alice`, `/users/bob` → `/users/{user}`).
 */
import type { Field, Shape } from '../shape/types';
import {
  encodeSegment,
  introducesNames,
  isVersionLike,
  joinSegments,
  parameterNoun,
  splitPath,
  type Segment,
} from './segments';
import { VersionNumbers } from './versions';

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
  /** The same, as a string: what `noteQuery` keeps query names by. */
  path: string;
  method: string;
  /** Top-level field names of a 2xx JSON response (`[]`-prefixed for a list of objects), sorted; null when unknown. */
  keys: readonly string[] | null;
  /** Top-level field names of the JSON request body the API accepted, the same way; null when unknown. */
  requestKeys: readonly string[] | null;
  /** The kind of a 2xx JSON answer that is a scalar (`number`, `string`, `boolean`; see `responseKeys`). */
  scalar?: string;
  /** What follows each of its segments (see `continuations`), once placed. */
  rests?: string[];
}

/** One record seen at one position: the record, its current resolved form, and the position. */
interface Placed {
  record: PathRecord;
  resolved: Segment[];
  at: number;
  /** Its route from `at` on (see `routeOf`), once asked. */
  route?: string;
}

/** A position learned as a parameter: under its prefix, every literal but the exceptions is a value. */
interface LearnedPosition {
  /** Sibling values whose continuations contradict the others' (route words, `/users/me`). */
  exceptions: Set<string>;
  /**
   * The first segment only: the values shown alike (see `rootShared`), the only ones made
   * parameters there, as names live at the first segment (`/health`, a scanner's `/wp-admin`).
   */
  members?: Set<string>;
  /**
   * Right after a detected identifier or a route word, where route words live: supported only by
   * many alike values (see `enoughSiblings`).
   */
  strict?: boolean;
  /**
   * Learned from names right before a detected identifier (`/sales_tax/acme/17`, `/sales_tax/erin/18`),
   * where a collection sits otherwise: its values are no collections (see `enoughSiblings`).
   */
  names?: boolean;
  /**
   * Learned from values (`/sets/{set}`), whose names right before a detected identifier were shown values too
   * (`/sets/globex/17`, `/sets/hooli/18`, … four, see `decideNames`): those are values there, not collections.
   */
  namesToo?: boolean;
  /**
   * Right after `api`, a version or a literal date (`/v3/{name}/brands`), where an API's resources live as at
   * the first segment (`/v1/users`, `/v1/orgs`): learned from four alike values among sixteen or more there
   * (see `decide`); its values are not held (every path of a versioned API has a segment there).
   */
  afterNames?: boolean;
  /**
   * At the end of paths where detected identifiers are seen too (`/v1/ua/type/7GNZ757EV`), learned from many
   * literals there each read once (`/v1/ua/type/Heidi34`, `…/K9`, `…/4SNH`, see `onceBesideIdentifiers`): they are
   * values of that identifier, named as it is (`/v1/ua/type/{typeId}`); a literal read again is a route word there.
   */
  identifiers?: boolean;
}

/** A parameter placed by the learner; named once the whole template is known (see `nameRuns`). */
const LEARNED = '';
const LEARNED_PARAM: Segment = { kind: 'param', name: LEARNED };

/**
 * Learns which positions are parameters from what follows them. Bounded: at most `maxRecords`
 * distinct observations are kept (later ones only use what was learned), and learned positions
 * are at most one per kept observation and position.
 *
 * Rules (docs/paths.md), from structure only (no list of words):
 * - Two sibling values are alike when some continuation of the one matches some continuation of
 *   the other (the same following segments, the last one a literal; or no following segment and
 *   2xx JSON responses, or accepted JSON request bodies, whose top-level fields mostly agree), and
 *   no continuation contradicts (the same following segments, bodies with different fields). Two
 *   alike values make their position a parameter; a value whose continuations contradict a
 *   sibling's and agree with none stays literal (an exception, looked at again as evidence comes).
 * - Sibling actions (values only posted to, as the last segment) alike count as the same only.
 * - The first segment is learned from shared whole routes only; right after a detected identifier
 *   or a route word, from four alike values only. A segment after `api`, a version, a literal date,
 *   and version-like values (`v1`, `2.0`) are never learned. Route words: a literal
 *   beside detected identifiers with the same continuation (`/pets/findByStatus` beside
 *   `/pets/17`; `me` of `/articles/me` and `/articles/me/all` beside `/articles/17`); a value seen
 *   after two different values, and at least half of those, of the position before (`issues` in
 *   `/repos/a/web/issues`, `/repos/b/cli/issues`); a collection, right before a detected
 *   identifier and after a literal (`calls` in `/self/calls/17`).
 * - What is learned is checked again when a route word or a position of identifiers appears, and
 *   forgotten when nothing supports it any more: the same traffic in another order learns the same.
 */
export class PathLearner {
  private readonly maxRecords: number;
  private readonly maxCompared: number;
  private readonly records: PathRecord[] = [];
  private readonly recordKeys = new Set<string>();
  /** The paths of the kept records (see `noteQuery`). */
  private readonly recordPaths = new Set<string>();
  /** Resolved prefix (see `prefixKey`) → the position after it, learned as a parameter. */
  private readonly learned = new Map<string, LearnedPosition>();
  /** Resolved prefix → literal value → where it was seen (rebuilt when something is learned). */
  private index = new Map<string, Map<string, Placed[]>>();
  /**
   * Resolved prefix and continuation (`/pets|`, `/articles|{}/unpublish`) of positions with a
   * detected identifier among their values: literals there, with that continuation, are route
   * words (`/pets/findByStatus` beside `/pets/17`).
   */
  private identifierPositions = new Set<string>();
  /** Position (as `identifierPositions`) → the name of the first detected identifier seen there (see `identifiers`). */
  private readonly identifierNames = new Map<string, string>();
  /** Resolved prefix → literal value → the continuations it was seen with (see `besideIdentifiers`). */
  private literalRests = new Map<string, Map<string, Set<string>>>();
  /** Resolved prefix → the continuations of detected identifiers there (`identifierPositions` by prefix). */
  private identifierRests = new Map<string, Set<string>>();
  /** Resolved prefix → the continuations of the literals there (`literalRests` of every literal at once). */
  private literalRestsAny = new Map<string, Set<string>>();
  private learnedCount = 0;
  /** Changes other than learning that may change how templates resolve (see `revision`). */
  private changes = 0;
  /** Position and literal → the literals seen right before it (see `isRouteWord`; `MAX_PARENTS` at most). */
  private readonly parentsOf = new Map<string, Set<string>>();
  /** Position → the literals seen there followed by a literal (`MAX_PARENTS` at most). */
  private readonly parentsAt = new Map<number, Set<string>>();
  /** Raw prefix → the literals seen right after it followed by a literal (`MAX_PARENTS` at most; see `isRouteWord`). */
  private readonly followedUnder = new Map<string, Set<string>>();
  /** Raw prefix, space, position and literal → the literals seen right before it under that prefix (see `isRouteWord`). */
  private readonly parentsUnder = new Map<string, Set<string>>();
  /** Position → the literals there seen after two parents or more: those that may be route words. */
  private readonly wordsAt = new Map<number, Set<string>>();
  /**
   * Raw prefix → the literals seen two positions after it, after a literal (`/project` → `cyberdyne`,
   * `erin-cli` of `/project/acme/cyberdyne`; `MAX_GRANDCHILDREN` at most; see `amongManyValues`).
   */
  private readonly grandchildren = new Map<string, Set<string>>();
  /** Raw prefix → how many of its `grandchildren` were seen after two parents or more. */
  private readonly grandRecurring = new Map<string, number>();
  /** Position and literal → the raw prefixes two positions before it (`MAX_GRANDS` at most). */
  private readonly grandsOf = new Map<string, Set<string>>();
  /** Raw prefix → the literals seen right after it (see `noteMirrors`; `MAX_PARENTS` at most). */
  private readonly siblingsUnder = new Map<string, Set<string>>();
  /** Raw prefix → literal seen two positions after it → the literals seen between (see `noteMirrors`). */
  private readonly childrenUnder = new Map<string, Map<string, Set<string>>>();
  /**
   * Position and literal of route words shown by a mirrored route: a literal seen both beside the
   * values of a position and right after one of them (`/v1/company/id/17`,
   * `/v1/company/competitor/id/17`): both are route words (see `noteMirrors`).
   */
  private readonly mirrorWords = new Set<string>();
  /**
   * Raw prefix and mirrored word (with the kinds of what follows it) → the qualifiers seen mirroring it there
   * (`MANY_QUALIFIERS` at most), and position and literal of a qualifier → those groups: a qualifier is a route word
   * while one of its groups has fewer than `MANY_QUALIFIERS` (see `mirror`).
   */
  private readonly mirrorGroups = new Map<string, Set<string>>();
  private readonly qualifierGroups = new Map<string, Set<string>>();
  /** Qualifiers noted so far (see `mirror`): a change of route words. */
  private qualifierChanges = 0;
  /**
   * Position and literal of collections (a literal right before a detected identifier, after a
   * literal: `get` of `/articles/get/17`): a route word at that position under every parent
   * (`/journals/get`). Rebuilt with the index.
   */
  private collectionWords = new Set<string>();
  /**
   * Position and literal right after a detected identifier → digests of the identifier values seen
   * right before it (`MAX_PARENTS` at most; see `noteIdentifiers`). The values stay in the agent's
   * memory as digests only.
   */
  private readonly identifierParentsOf = new Map<string, Set<number>>();
  /**
   * Position and literal right before a detected identifier → digests of the identifier values seen right after it
   * (`MAX_PARENTS` at most; see `noteIdentifiersAfter`): a collection is followed by many (`findByAuthor` of
   * `/documents/findByAuthor/17`, `/18`, `/19`), a name by the few of its own. In the agent's memory only, as digests.
   */
  private readonly identifiersAfter = new Map<string, Set<number>>();
  /**
   * Position and literal right after a literal, and that literal → digests of the values seen two positions before
   * it (`MAX_PARENTS` at most; see `afterValuesTwice`): the words of a resource's route recur after each of its values,
   * after the same word (`document` of `/customer/acme/landlord/document`, `/customer/erin/landlord/document`).
   * The values stay in the agent's memory as digests only. `leafWords`: the position and literal of those seen so
   * after three values.
   */
  private readonly grandValuesOf = new Map<string, Set<number>>();
  private readonly leafWords = new Set<string>();
  /**
   * Resolved prefix → segments after the position → the first values seen there with that many
   * segments after them (`MAX_REST_VALUES` at most; see `unseenContinuation`). Rebuilt with the index.
   */
  private restValues = new Map<string, Map<number, string[]>>();
  /** The values of the first segment as the evidence shows them now (see `rootMembers`); cleared as it grows. */
  private rootCache: Set<string> | undefined;
  /** Depth and literal (`1/alice`) → the kept records with that literal there (see `affectsOthers`). */
  private readonly literalsAt = new Map<string, number>();
  /** Identifier positions and collections the last `place` found new (see `affectsOthers`). */
  private readonly found: { identifiers: string[]; collections: string[] } = { identifiers: [], collections: [] };
  /**
   * Resolved prefix → what `namesShown` last found there, and the state it found it in: the index's map of
   * that prefix, the revision and how many placements its compared values had (see `namesShown`).
   */
  private readonly namesMemo = new Map<
    string,
    { siblings: ReadonlyMap<string, readonly Placed[]>; revision: number; placements: number; shown: boolean }
  >();
  /**
   * The index's first segment by whole route (see `rootMembers`): route → value → what was seen on it, and
   * the routes with two values or more, the only ones that pair values. Rebuilt with the index.
   */
  private rootRouteIndex = new Map<string, Map<string, RootRoute[]>>();
  private sharedRootRoutes = new Set<string>();
  /**
   * Raw whole literal routes after the first segment (`api/where/search`) → the first-segment values seen before
   * them (`otp`, `mobile`; the first `MAX_SHARED_ROOTS`), and each pair of those values → the routes both were seen
   * before (the first `MAX_PAIR_ROUTES`): see `sharedRouteWords`. Raw, so what is learned does not change them.
   */
  private readonly rawRootRoutes = new Map<string, Set<string>>();
  private readonly rootPairRoutes = new Map<string, Array<readonly string[]>>();
  /**
   * Position and literal (`3/search`) past the second segment: siblings under one raw prefix of whole routes that two
   * first-segment values share, four or more for the pair there (`/otp/api/where/search`, `/mobile/api/where/search`,
   * `…/statistics`, `…/trip-details`, `…/route-details` under both): route words, whatever they answer (see `routeWord`).
   */
  private readonly sharedRouteWords = new Set<string>();
  /** The pairs of first-segment values (`otp\nmobile`) whose shared routes gave route words (see `rootMembers`). */
  private readonly routeWordPairs = new Set<string>();
  /** A pair of first-segment values and a prefix → the literals their shared routes part at after it. */
  private readonly pairWords = new Map<string, Set<string>>();
  /**
   * Raw literal segments after the first up to a position (`2|api/where`) → the literals seen right after them
   * (`search`, `plan-trip`, …; the first `MAX_PARENTS`), and of those the shared route words (see `servedRoutes`); each
   * literal (`3/plan-trip`) → the prefixes it was seen after (the first `MAX_GRANDS`).
   */
  private readonly servedUnder = new Map<string, { words: Set<string>; shared: Set<string> }>();
  private readonly servedOf = new Map<string, Set<string>>();
  /**
   * Raw paths read (`GET /nh/fish`) → the item fields of the list of objects they answered (`[]` taken off), and raw
   * paths → the fields their children (`GET /nh/fish/trent`) answered, a few each: see `listedCollections`.
   */
  private readonly listedItems = new Map<string, readonly string[]>();
  private readonly childAnswers = new Map<string, Array<readonly string[]>>();
  /** Raw path → the lists read right under it (the first `MAX_PARENTS`), and the lists a child answered the items of. */
  private readonly listsUnder = new Map<string, string[]>();
  private readonly listedAlike = new Set<string>();
  /** The raw paths of the collections the last `noteListed` found (see `observe`). */
  private readonly listedFound: string[] = [];
  /**
   * Position and literal (`1/fish`) after a literal, read as a list of objects whose fields a child of it answers
   * alone (`GET /nh/fish` answering `[{name, price}]`, `GET /nh/fish/trent` answering `{name, price}`), beside a
   * sibling listing items of other fields (`GET /nh/clothing` answering `[{name, variations}]`): a collection, a
   * route word, however alike some siblings answer (`/nh/bugs`, `/nh/sea` listing critters too). The values of one
   * position list items of one kind (`/v2/repositories/alice`, `/v2/repositories/bob`): no collections for this.
   */
  private readonly listedCollections = new Set<string>();
  /** The plain numbers at the first segment in the index (see `numberMembers`). Rebuilt with the index. */
  private rootNumbers = new Set<string>();
  /** Resolved prefix → its first `MAX_COMPARED_VALUES` values in the index, the only ones compared. */
  private firstValues = new Map<string, Set<string>>();
  /**
   * Resolved prefix → method and continuation (`GET /brands`) → the first `MAX_ROUTE_PARTNERS` values seen
   * there with it: the values a value past the first ones is compared with too (see `partners`). Rebuilt with
   * the index.
   */
  private routeValues = new Map<string, Map<string, string[]>>();

  /** Continuations compared, records placed in the index and route words looked at so far (see `work`). */
  private counted = 0;
  /** `counted` at the last yield of work in steps (see `pause`). */
  private stepFrom = 0;
  /** Records placed in the index so far (each `place`): what the indexes are, with `revision` (see `lookedFresh`). */
  private placements = 0;
  /**
   * Grows when what the index gives a route word may have changed (see `routeWordsFresh`): a collection or a position
   * of identifiers found, a literal new under a prefix, a continuation new beside identifiers; the index cleared.
   */
  private routeStamp = 0;
  /** Requests counted and identifier values noted after literals, as they change (see `manyOnce`). */
  private requestsNoted = 0;
  /** `manyOnce`'s answers by key, with what they were computed from. */
  private readonly manyOnceKept = new Map<string, { stamp: string; answer: boolean }>();
  /**
   * While `settle` decides records and `reindex` places them: answers kept until what they depend on changes (see
   * `routeWordsFresh`, `lookedFresh`). The traffic's own counts (parents, grandchildren, identifier values) change
   * in `observe` and the `note…` methods only, before: nothing is kept there. Each record of a route is placed and
   * decided again after each position learned (thousands of looks at once on deep, wide APIs): the same route word,
   * prefix and value are looked at once.
   */
  private keeping = false;
  private readonly routeWordsAt = { stamp: -1, revision: -1 };
  private readonly lookedAtAt = { stamp: -1, revision: -1 };
  /** Position and text (and whether collections count) → whether a route word (see `isRouteWord`). */
  private readonly routeWordsKept = new Map<string, boolean>();
  /** Literals (a set of parents) → position → how many are values there (see `valuesAmong`), kept with route words. */
  private readonly valuesKept = new Map<ReadonlySet<string>, Map<number, number>>();
  /** Prefix and value reconsidered, or decided and not learned (see `reconsider`, `decidePosition`). */
  private readonly lookedAt = new Set<string>();
  /** Prefix and value (and whether names count) → whether comparable (see `comparable`), kept with `lookedAt`. */
  private readonly comparableKept = new Map<string, boolean>();
  /**
   * Grows whenever what `readAgainWithNames` reads changes: a record placed, the index swapped (see `useIndexes`), a
   * path's requests or query names noted.
   */
  private evidenceStamp = 0;
  /** `evidenceStamp` when `readAgainKept` was kept. */
  private evidenceAt = -1;
  /** `readAgainWithNames`' answers by prefix and value, while `evidenceStamp` is `evidenceAt`. */
  private readonly readAgainKept = new Map<string, boolean>();
  /**
   * Prefix and value made an exception while one record settles (see `settleFrom`), kept one until a sibling
   * shows it alike: undefined between records.
   */
  private settledExceptions: Set<string> | undefined;
  /**
   * Path (as the detectors templated it) → the query parameter names sent on it that the API answered
   * (`MAX_QUERY_PATHS` paths, `MAX_QUERY_NAMES` names each at most; see `noteQuery`). Names, no values.
   */
  private readonly queries = new Map<string, Set<string>>();
  /** Path (as the detectors templated it) → how many requests of it the API answered (see `requests`). */
  private readonly requested = new Map<string, number>();
  /**
   * Where literals run to a path's end (as the detectors templated it): the path's length and its segments before
   * the run → the first `MAX_RUN_PATHS` such paths, each split in its segments' texts (see `namesInRow`).
   */
  private readonly runs = new Map<string, Array<{ path: string; texts: string[] }>>();
  /**
   * The paths of `requested` by position, their length and their text there (see `requests`); each position's index is
   * grown with new paths only (`grouped`: how many of `requested`'s paths, in insertion order, it holds).
   */
  private readonly requestedAt = new Map<number, { grouped: number; paths: Map<string, string[]> }>();
  /** Paths of `requested` as `resolve` gave them at `revision` (see `requests`). */
  private readonly requestedResolved = { revision: -1, of: new Map<string, string>() };

  /**
   * Are the values under `key` (a position after a route word, see `enoughSiblings`) many values each requested
   * once? Four or more of its first values read with nothing after them (`GET /v1/airport/autocomplete/tyrell`),
   * each path requested once, three in four of them at least: route words there are few and recur with every
   * request of their routes (`/stats/outbound/bounces`), values are many and rarely repeat, so answers that vary
   * (`{}`, `{disclaimer}`, `{airport_list}`) do not keep them literal. Right after a detected identifier, only values
   * seen after identifier values none of the others was seen after count (see `aloneAfterIdentifiers`).
   */
  private manyOnce(key: string): boolean {
    // Asked again for each record decided (every code of threatjammer's `/v1/ua/type/{}` as it comes, every record once
    // more after something is learned): kept while nothing it reads changed.
    const stamp = `${this.revision}/${this.placements}/${this.routeStamp}/${this.requestsNoted}`;
    const kept = this.manyOnceKept.get(key);
    if (kept?.stamp === stamp) return kept.answer;
    const answer = this.manyOnceNow(key);
    if (this.manyOnceKept.size >= MAX_QUERY_PATHS) this.manyOnceKept.clear();
    this.manyOnceKept.set(key, { stamp, answer });
    return answer;
  }

  /** See `manyOnce`. */
  private manyOnceNow(key: string): boolean {
    const siblings = this.index.get(key);
    if (siblings === undefined || siblings.size < MANY_SIBLINGS) return false;
    // Right after a detected identifier, words after one resource are its routes (`/posts/5/comments`, `/posts/5/likes`).
    const at = siblings.values().next().value![0]!.at;
    if (this.recursAfterIdentifiers(at, siblings)) return false;
    const alone = this.aloneAfterIdentifiers(at, siblings.keys());
    let once = 0;
    let values = 0;
    for (const [value, placed] of siblings) {
      if (values++ >= MAX_COMPARED_VALUES) break;
      if (
        this.requestedOnce(placed) &&
        (alone.has(value) || (this.identifierParentsOf.get(`${at}/${value}`)?.size ?? 0) === 0)
      )
        once++;
    }
    return once >= MANY_SIBLINGS && once * 4 >= values * 3;
  }

  /**
   * Was a value (placed as `placed`) only read, replaced or deleted (`GET`, `PUT`, `DELETE`: an action is posted or
   * patched), with nothing after it, each of its paths requested once (see `requests`; a path `noteQuery` did not
   * count is not)?
   */
  private requestedOnce(placed: readonly Placed[]): boolean {
    return placed.every(
      (one) =>
        one.at === one.resolved.length - 1 &&
        (one.record.method === 'GET' || one.record.method === 'PUT' || one.record.method === 'DELETE') &&
        this.requests(one.record, one.at) === 1,
    );
  }

  /**
   * The requests answered on `path` (as the detectors templated it) and on every other path the learned positions
   * resolve as it with the same text at `at` (the position looked at, learned or not): `/enm/{db}/substance/{uuid}/study`
   * is requested with each database, `/enm/nanoreg1/…/study` once. Only the paths with the same text at `at` (and
   * length) are resolved, each once a revision: threatjammer's hundreds of codes resolved all again with every
   * revision cost it a quarter of its learner's CPU (session 31).
   */
  private requests(record: PathRecord, at: number): number {
    let byText = this.requestedAt.get(at);
    if (byText === undefined) this.requestedAt.set(at, (byText = { grouped: 0, paths: new Map() }));
    if (byText.grouped < this.requested.size) {
      let index = 0;
      for (const one of this.requested.keys()) {
        if (index++ < byText.grouped) continue;
        const segments = splitPath(one);
        if (at >= segments.length) continue;
        const key = `${segments.length}|${segmentText(segments[at])}`;
        const paths = byText.paths.get(key);
        if (paths === undefined) byText.paths.set(key, [one]);
        else paths.push(one);
      }
      byText.grouped = this.requested.size;
    }
    const path = record.path;
    const others = byText.paths.get(`${record.segments.length}|${segmentText(record.segments[at])}`);
    if (others === undefined) return this.requested.get(path) ?? 0;
    // Only the paths with the same text there are resolved (a value's own few), not every path each revision.
    const resolved = this.resolvedRequest(path);
    let sum = 0;
    for (const one of others) if (this.resolvedRequest(one) === resolved) sum += this.requested.get(one) ?? 0;
    // `path` itself when `requested` holds no more paths (see `MAX_QUERY_PATHS`).
    return sum === 0 ? (this.requested.get(path) ?? 0) : sum;
  }

  /** `resolve(path)`, kept per revision (see `requests`). */
  private resolvedRequest(path: string): string {
    const kept = this.requestedResolved;
    if (kept.revision !== this.revision) {
      kept.revision = this.revision;
      kept.of.clear();
    }
    let resolved = kept.of.get(path);
    if (resolved === undefined) {
      resolved = this.resolve(path);
      if (kept.of.size < MAX_QUERY_PATHS) kept.of.set(path, resolved);
    }
    return resolved;
  }

  /** Short numbers shown versions by the raw paths (`/oauth2/1/authorize`, see `keepsVersion`). */
  private readonly versions = new VersionNumbers();

  /**
   * For `templatePath`: is the short number `text` after the segments `before` a version the traffic
   * showed (followed by four different routes, never on its own, few numbers there)? Then it stays literal.
   */
  readonly keepsVersion = (before: readonly Segment[], text: string): boolean => this.versions.keeps(before, text);

  /** Has the traffic shown any version number, or shown one none after all (see `keepsVersion`)? */
  get knowsVersions(): boolean {
    return this.versions.changes > 0;
  }

  constructor(options: PathLearnerOptions = {}) {
    this.maxRecords = options.maxRecords ?? 5_000;
    this.maxCompared = options.maxCompared ?? 32;
  }

  /** Grows by one each time a position is learned or forgotten. */
  get generation(): number {
    return this.learnedCount;
  }

  /**
   * Grows each time what `resolve` and `undecided` give may have changed: a position learned or
   * forgotten, a route word found or lost (`wonka` of `/api/organizations/wonka/articles` is one
   * while it follows two of few literals, no more once more follow), an exception found or lost.
   * Templates resolved and sent before are looked at again then.
   */
  get revision(): number {
    return this.learnedCount + this.changes;
  }

  /** Distinct observations kept as evidence. */
  get size(): number {
    return this.records.length;
  }

  /** Takes no more evidence (`maxRecords` kept). */
  get full(): boolean {
    return this.records.length >= this.maxRecords;
  }

  /**
   * The work done so far, in steps: each pair of continuations compared and each route word looked at (with each
   * literal it counts values among, see `valuesAmong`) counts one, each record placed in the index or decided one per
   * segment; answers kept while settling (see `keeping`) count nothing. What bounds the learner's cost (tests count
   * it, not time), and what its work in steps yields on (see `observeSteps`).
   */
  get work(): number {
    return this.counted;
  }

  /**
   * Take one observation as evidence. `template` is the path as `templatePath` gave it (without
   * documented templates: those are never learned from), `keys` the top-level field names of a 2xx
   * JSON response (see `responseKeys`), or null. Returns true when a position was learned.
   */
  observe(
    template: string,
    method: string,
    keys: readonly string[] | null,
    requestKeys: readonly string[] | null = null,
  ): boolean {
    const before = this.learnedCount;
    finish(this.observeSteps(template, method, keys, requestKeys));
    return this.learnedCount !== before;
  }

  /**
   * `observe` in steps: yields after each piece of work of `STEP_WORK` steps or more (see `work`), where nothing is
   * half done (a record decided, the index built whole, a round of `revalidate`), so the agent's pipeline can let the
   * app's answers through between them (its slices). Run it to its end before any other call that takes evidence.
   * Undefined when there is nothing to do (evidence seen before): most requests.
   */
  observeSteps(
    template: string,
    method: string,
    keys: readonly string[] | null,
    requestKeys: readonly string[] | null = null,
  ): Generator<void> | undefined {
    const recordKey = `${method} ${template} ${keys === null ? '-' : keys.join(',')} ${requestKeys === null ? '-' : requestKeys.join(',')}`;
    if (this.recordKeys.has(recordKey) || this.records.length >= this.maxRecords) return undefined;
    return this.observeRecord(template, method, keys, requestKeys, recordKey);
  }

  private *observeRecord(
    template: string,
    method: string,
    keys: readonly string[] | null,
    requestKeys: readonly string[] | null,
    recordKey: string,
  ): Generator<void> {
    this.stepFrom = this.counted;
    this.recordKeys.add(recordKey);
    this.recordPaths.add(template);
    const scalar = scalarOf(keys);
    const record: PathRecord = {
      segments: splitPath(template),
      path: template,
      method,
      keys: scalar === undefined ? keys : null,
      requestKeys: scalarOf(requestKeys) === undefined ? requestKeys : null,
    };
    if (scalar !== undefined) record.scalar = scalar;
    this.records.push(record);
    for (const [at, segment] of record.segments.entries())
      if (segment.kind === 'literal') {
        const word = `${at}/${segment.text}`;
        this.literalsAt.set(word, (this.literalsAt.get(word) ?? 0) + 1);
      }
    // A literal that became a route word (or stopped being one), or a new position of identifiers, changes
    // how kept records resolve and what supports what was learned: index them again, look again.
    const words = this.noteParents(record.segments);
    const mirrors = this.noteMirrors(record.segments);
    const shared = this.noteRootRoutes(record);
    this.listedFound.length = 0;
    const listed = this.noteListed(record);
    this.place(record);
    if (words || mirrors || shared || listed || this.affectsOthers()) {
      yield* this.reindexSteps();
      yield* this.pause();
      yield* this.revalidateSteps();
      this.changes++;
    } else if (this.found.identifiers.length > 0 || this.found.collections.length > 0)
      // Nothing kept resolves otherwise (`/tax/acme/{id}`: no other literal sits under `/tax/acme`, nor is `acme`
      // seen at that depth elsewhere): the index stays as it is, but what was learned is looked at again as before.
      yield* this.revalidateSteps();
    yield* this.settleSteps(record);
    // What follows a collection found now was decided under it as a value (`/nh/{nh}/trent`): decided again, whatever
    // order the traffic came in.
    const found = [...this.listedFound];
    for (const path of found)
      for (const kept of [...this.records])
        if (kept !== record && kept.path.startsWith(`${path}/`)) yield* this.settleSteps(kept);
  }

  /**
   * Take the identifier values of one raw path as evidence (once per distinct raw path the API
   * answered): a literal right after a detected identifier that follows three different values of it
   * is a route word (`/reservations/17/check_in`, `…/18/check_in`, `…/19/check_in`), as a literal
   * after three values of a position of names is (see `isRouteWord`): names recur across
   * identifiers far less than the words of a route do. `template` is `raw` as `templatePath` gave
   * it. Returns true when a position was learned or forgotten.
   */
  noteIdentifiers(template: string, raw: string): boolean {
    const before = this.learnedCount;
    finish(this.noteIdentifiersSteps(template, raw));
    return this.learnedCount !== before;
  }

  /** `noteIdentifiers` in steps (see `observeSteps`); undefined when nothing is left to do. */
  noteIdentifiersSteps(template: string, raw: string): Generator<void> | undefined {
    const segments = splitPath(template);
    const values = splitPath(raw);
    if (values.length !== segments.length) return undefined;
    // A short number shown a version (or no more one) changes how raw paths are templated: a new revision.
    if (this.versions.note(template, raw)) this.changes++;
    let changed = false;
    /** Literals (and their positions) seen after an identifier value for the first time. */
    const counted: Array<[number, string]> = [];
    for (let at = 1; at < segments.length; at++) {
      const segment = segments[at]!;
      const parent = segments[at - 1]!;
      const value = values[at - 1]!;
      // Two positions after an identifier (`tagged` of `/projects/{projectId}/images/tagged`): see `afterValuesTwice`.
      if (
        at > 1 &&
        at === segments.length - 1 &&
        segment.kind === 'literal' &&
        parent.kind === 'literal' &&
        segments[at - 2]!.kind === 'param'
      ) {
        const grand = values[at - 2]!;
        if (grand.kind === 'literal' && this.noteGrandValue(`${at}/${segment.text}`, parent.text, grand.text))
          changed = true;
      }
      if (segment.kind !== 'literal' || parent.kind !== 'param' || value.kind !== 'literal') continue;
      const parents = noteDigest(this.identifierParentsOf, `${at}/${segment.text}`, value.text);
      if (parents > 0) this.requestsNoted++;
      if (parents === ROUTE_WORD_PARENTS) changed = true;
      if (parents === 1) counted.push([at, segment.text]);
    }
    if (changed) return this.afterRouteWord();
    return counted.length > 0 ? this.settleCounted(segments, counted) : undefined;
  }

  /** A new route word (see `noteIdentifiers`): what it made a value is no value any more (as when `observe` finds one). */
  private *afterRouteWord(): Generator<void> {
    this.stepFrom = this.counted;
    yield* this.reindexSteps();
    yield* this.pause();
    yield* this.revalidateSteps();
    this.changes++;
  }

  /**
   * Literals counted after an identifier value for the first time (see `noteIdentifiers`) may be the fourth name after
   * other identifier values (`/orders/{orderId}/alice`, see `enoughSiblings`): look at their observations again.
   */
  private *settleCounted(segments: readonly Segment[], counted: ReadonlyArray<[number, string]>): Generator<void> {
    this.stepFrom = this.counted;
    const resolved = this.resolveSegments(segments);
    for (const [at, text] of counted) {
      let key = '';
      for (let k = 0; k < at; k++) key = extendKey(key, resolved[k]!);
      const placed = this.index.get(key)?.get(text);
      if (placed !== undefined && placed.length > 0) yield* this.settleSteps(placed[0]!.record);
    }
  }

  /**
   * Note, once per distinct raw path the API answered (not 404/405), the identifier values right after each literal
   * (`/documents/findByAuthor/17`): a literal followed by three different ones is a collection, no value in waiting
   * (see `pending`). Changes nothing learned.
   */
  noteIdentifiersAfter(template: string, raw: string): void {
    const segments = splitPath(template);
    const values = splitPath(raw);
    if (values.length !== segments.length) return;
    for (let at = 1; at < segments.length; at++) {
      const segment = segments[at]!;
      const before = segments[at - 1]!;
      const value = values[at]!;
      if (segment.kind === 'param' && before.kind === 'literal' && value.kind === 'literal')
        noteDigest(this.identifiersAfter, `${at - 1}/${before.text}`, value.text);
    }
  }

  /** Was the literal at `at` seen followed by three different detected identifier values (a collection)? */
  private manyIdentifiersAfter(at: number, text: string): boolean {
    return (this.identifiersAfter.get(`${at}/${text}`)?.size ?? 0) >= ROUTE_WORD_PARENTS;
  }

  /**
   * Note the query parameter names of one request the API answered (other than 404/405) on `template`
   * (the path as `templatePath` gave it). The routes of an API take their own query parameters, the values
   * of one parameter those of their one route: values with nothing else to compare whose query names
   * disagree are no values of one position (`/offers/fares/allfares?origin&destination&travel-date`,
   * `/offers/fares/fares?carriers&segments&fare-types`; see `queriesAgree`). Returns true when a position
   * was learned or forgotten.
   */
  noteQuery(template: string, names: readonly string[]): boolean {
    const before = this.learnedCount;
    finish(this.noteQuerySteps(template, names));
    return this.learnedCount !== before;
  }

  /** `noteQuery` in steps (see `observeSteps`); undefined when nothing is left to do (most requests). */
  noteQuerySteps(template: string, names: readonly string[]): Generator<void> | undefined {
    if (this.requested.size < MAX_QUERY_PATHS || this.requested.has(template)) {
      const count = (this.requested.get(template) ?? 0) + 1;
      this.requested.set(template, count);
      this.evidenceStamp++;
      this.requestsNoted++;
      if (count === 1) this.noteRun(template);
      // A value ending its path read again with query names may be a route word beside identifiers now (see
      // `readAgainWithNames`).
      else if (
        count === 2 &&
        names.length > 0 &&
        this.recordPaths.has(template) &&
        this.learned.size > 0 &&
        this.leafAtValues(template)
      ) {
        this.noteNames(template, names);
        return this.revalidateForQueries();
      }
    }
    if (!this.noteNames(template, names) || !this.recordPaths.has(template) || this.learned.size === 0)
      return undefined;
    // New names on a path already taken as evidence: what they made a value of is looked at again.
    return this.revalidateForQueries();
  }

  /**
   * Does `template` end in a literal where detected identifiers are seen (see `besideIdentifiers`) or at a learned
   * position (see `readAgainWithNames`)?
   */
  private leafAtValues(template: string): boolean {
    const segments = splitPath(template);
    const last = segments.length - 1;
    if (last < 1 || segments[last]!.kind !== 'literal') return false;
    const resolved = this.resolveSegments(segments);
    let key = '';
    for (let at = 0; at < last; at++) key = extendKey(key, resolved[at]!);
    return this.identifierRests.has(key) || this.learned.has(key);
  }

  /** Keep the query names of a request on `template` (see `noteQuery`); true when they were new. */
  private noteNames(template: string, names: readonly string[]): boolean {
    if (names.length === 0) return false;
    let seen = this.queries.get(template);
    if (seen === undefined) {
      if (this.queries.size >= MAX_QUERY_PATHS) return false;
      this.queries.set(template, (seen = new Set()));
    }
    const size = seen.size;
    for (const name of names) if (seen.size < MAX_QUERY_NAMES) seen.add(name);
    this.evidenceStamp++;
    return seen.size !== size;
  }

  /** See `noteQuery`: a new revision when what was learned changed. */
  private *revalidateForQueries(): Generator<void> {
    this.stepFrom = this.counted;
    const before = this.learnedCount;
    yield* this.revalidateSteps();
    if (this.learnedCount !== before) this.changes++;
  }

  /**
   * Do the query parameter names sent with two values' paths agree (see `noteQuery`)? They do unless each
   * took two names or more the other never took: an optional name sent with one value and not the other
   * tells nothing, names of their own on both sides are routes of their own (`allfares` with `travelers`,
   * `return-date`; `bestfares` with `range`, `trip-duration`).
   */
  private queriesAgree(mine: readonly Placed[], theirs: readonly Placed[]): boolean {
    const a = this.queryNamesOf(mine);
    const b = this.queryNamesOf(theirs);
    return ownNames(a, b) < OWN_QUERY_NAMES || ownNames(b, a) < OWN_QUERY_NAMES;
  }

  /** The query parameter names sent with these observations' paths (see `noteQuery`). */
  private queryNamesOf(placed: readonly Placed[]): Set<string> {
    const out = new Set<string>();
    for (const one of placed) for (const name of this.queries.get(one.record.path) ?? []) out.add(name);
    return out;
  }

  /** The template for a path as `templatePath` gave it, with learned positions made parameters. */
  resolve(template: string): string {
    return joinSegments(nameRuns(this.resolveSegments(splitPath(template))));
  }

  /**
   * May the literal at each position of `template` (as `resolve` gave it) still become a
   * parameter? True when some literal sits where a value may live: not the first segment, not
   * after `api` or a version, not a version itself, not a position with identifiers among its
   * values. Right after a detected identifier too (`/snapshots/{id}/alice`): four alike values may
   * make that position a parameter, so its first values are held like any other, and so are its
   * values once learned (`/snapshots/{id}/{snapshot}`), as actions may yet show it was none.
   */
  undecided(template: string, inferred?: string, raw?: string): boolean {
    // A short number that may yet be shown a version (`/oauth2/1/authorize`, see `keepsVersion`).
    if (raw !== undefined && inferred !== undefined && this.versions.undecided(inferred, raw)) return true;
    const given = inferred === undefined ? undefined : splitPath(inferred);
    const segments = placedSegments(template, inferred);
    let key = '';
    let previousKey = '';
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      if (segment.kind === 'literal' && !this.learned.has(key) && this.mayLearn(segments, i, key)) return true;
      // A name before a detected identifier (`/v1/quotes/acme/{date}`, `…/wonka/{date}`): a collection or names, learned
      // from four (see `decideNames`); held, and decided when its hold ends (see `pending`).
      if (segment.kind === 'literal' && this.namesOpen(key) && this.nameBeforeIdentifier(segments, i, key, previousKey))
        return true;
      // An exception of a learned position (a route word by its answers, `/users/me`): held like a new literal, as what
      // comes within its hold may show it a value (see `reconsider`); a misread exception would leave at once otherwise.
      if (
        segment.kind === 'literal' &&
        this.learned.get(key)?.exceptions.has(segment.text) === true &&
        !this.isRouteWord(i, segment.text)
      )
        return true;
      if (segment.kind === 'param') {
        // A value of a position learned right after an identifier: route words there show only after three
        // identifier values (see `noteIdentifiers`), so what was learned may be forgotten; held till its hold ends.
        if (this.learned.get(key)?.strict === true) return true;
        const value = given?.[i];
        if (value?.kind === 'literal') {
          if (this.unseenContinuation(key, value.text, segments.length - i - 1)) return true;
          // Right after another learned value (`/my/ships/alice/chart`) route words live too, and show
          // themselves only as they recur after other values (see `isRouteWord`): held till its hold ends.
          if (i > 1 && segments[i - 1]!.kind === 'param' && given![i - 1]!.kind === 'literal') return true;
        }
      }
      previousKey = key;
      key = extendKey(key, segment);
    }
    return false;
  }

  /**
   * Is the literal at `at` (under `key`) right before a detected identifier where names before identifiers may be
   * learned (see `decideNames`), and not shown a collection or a route word? A few look-ups, no comparison:
   * `undecided` runs for each new path.
   */
  private nameBeforeIdentifier(segments: readonly Segment[], at: number, key: string, previousKey: string): boolean {
    if (!this.namePosition(segments, at, key, previousKey)) return false;
    const text = (segments[at] as { text: string }).text;
    const mine = this.index.get(key)?.get(text);
    return mine === undefined ? !this.isRouteWord(at, text, false) : this.comparable(key, text, mine, true);
  }

  /** Is the literal at `at` right before a detected identifier where names are learned from four (see `decideNames`)? */
  private namePosition(segments: readonly Segment[], at: number, key: string, previousKey: string): boolean {
    return (
      at > 0 &&
      !this.manyIdentifiersAfter(at, (segments[at] as { text: string }).text) &&
      isCollection(segments, at) &&
      !namesAfter(segments, at - 1) &&
      !this.afterWord(segments, at, previousKey) &&
      !this.identifierPositions.has(`${key}|${continuation(segments, at)}`)
    );
  }

  /**
   * `template` (as `resolve` gave it, for the path `inferred` as the detectors gave it) with every literal that
   * is still a value in waiting made a parameter: at a position not learned where a value may be learned (see
   * `undecided`; before a detected identifier too, where names are learned from four, see `decideNames`), with a
   * sibling there it may be one value with (alike or the same, nothing against it: see `compare`). What the
   * agent sends for a held path still undecided when its hold ends (docs/paths.md, Holding undecided literals):
   * two or more such values are no route word shown, so none leaves the agent. `template` itself when there is
   * none (a single value, or siblings that contradict it: routes).
   */
  pending(template: string, inferred?: string): string {
    const segments = placedSegments(template, inferred);
    let key = '';
    let previousKey = '';
    let changed = false;
    /** Detected identifiers right after a name that goes out as it is (alone): not named after it (`{acmeId}`). */
    const plain = new Set<number>();
    const out: Segment[] = [];
    for (let at = 0; at < segments.length; at++) {
      const segment = segments[at]!;
      const waiting =
        segment.kind === 'literal' && at > 0 && this.namesOpen(key) && this.waiting(segments, at, key, previousKey);
      if (waiting) changed = true;
      else if (segment.kind === 'literal' && this.nameBefore(segments, at, key, previousKey)) plain.add(at + 1);
      out.push(waiting ? LEARNED_PARAM : segment);
      previousKey = key;
      key = extendKey(key, segment);
    }
    // Names in a row to the end, never as they are (see `namesInRow`), or a sibling of such names read again (see
    // `rowOfSiblings`).
    const row =
      inferred === undefined
        ? -1
        : Math.max(this.namesInRow(segments, inferred), this.rowOfSiblings(segments, inferred));
    for (let at = Math.max(row, 0); row >= 0 && at < out.length; at++) out[at] = LEARNED_PARAM;
    if (row >= 0) changed = true;
    const named = nameRuns(out);
    if (plain.size === 0) return changed ? joinSegments(named) : template;
    // `{id}` (`/trades/acme/{id}`), unique among the template's names.
    const taken = new Set<string>();
    for (const [at, segment] of named.entries())
      if (segment.kind === 'param' && !plain.has(at)) taken.add(segment.name);
    return joinSegments(
      named.map((segment, at): Segment => (plain.has(at) ? { kind: 'param', name: unique('id', taken) } : segment)),
    );
  }

  /**
   * Note a path new to `requested` under each prefix its literals run to its end from (see `namesInRow`): up to
   * `MAX_RUN_PATHS` paths a prefix, `MAX_QUERY_PATHS` prefixes.
   */
  private noteRun(template: string): void {
    const segments = splitPath(template);
    const texts = segments.map(segmentText);
    for (let at = segments.length - 1; at >= 1 && segments[at]!.kind === 'literal'; at--) {
      if (at > segments.length - 2) continue;
      const prefix = runPrefix(texts, at);
      let paths = this.runs.get(prefix);
      if (paths === undefined) {
        if (this.runs.size >= MAX_QUERY_PATHS) continue;
        this.runs.set(prefix, (paths = []));
      }
      if (paths.length < MAX_RUN_PATHS) paths.push({ path: template, texts });
    }
  }

  /**
   * Where names run in a row to the end of `inferred` (as the detectors templated it; `segments` as the learner resolves
   * it, learned positions placed), two positions or more: from the deepest position where the literals left to the end,
   * none a version or a route word, differ every one from those of another path under the same segments before them,
   * both paths requested once (`/api2/json/genderGeo/Dave29/bob-blue/initech-infra` beside
   * `…/genderGeo/Oscar84/Bob93/erin`). Names drawn for each request (first and last names, a person's country) do so,
   * too few of a route for four alike to decide; a route's words recur with each of its requests. -1 when none.
   */
  private namesInRow(segments: readonly Segment[], inferred: string): number {
    if ((this.requested.get(inferred) ?? 0) !== 1) return -1;
    const given = splitPath(inferred);
    const texts = given.map(segmentText);
    if (texts.length !== segments.length) return -1;
    const keys = [''];
    for (let at = 0; at < segments.length - 1; at++) keys.push(extendKey(keys[at]!, segments[at]!));
    for (let at = segments.length - 1; at >= 1; at--) {
      const segment = segments[at]!;
      if (segment.kind !== 'literal' || versionAt(segments, at) || this.isRouteWord(at, segment.text)) return -1;
      if (at > segments.length - 2) continue;
      // Requested again under another value of a learned position before it: a route's words (see `recursUnder`).
      if (this.recursUnder(keys[at]!, segment.text, at, inferred, continuation(given, at))) return -1;
      const others = this.runs.get(runPrefix(texts, at)) ?? [];
      const apart = (other: readonly string[]): boolean => {
        for (let k = at; k < texts.length; k++) if (other[k] === texts[k]) return false;
        return true;
      };
      if (others.some((other) => apart(other.texts) && this.requested.get(other.path) === 1)) return at;
    }
    return -1;
  }

  /**
   * Where names in a row (see `namesInRow`) start on a sibling of the literal ending `inferred` (as the detectors
   * templated it; `segments` as the learner resolves it), when that path was requested more than once and so is no
   * run of names itself: a sibling alike or the same (nothing against it, query names agreeing), requested once, whose
   * names run in a row to the end. A CI run reads a fixture again as it reads a route: appwrite's
   * `/avatars/flags/umbrella-search` (held-out 17, read with `width`, then `height`) beside `…/flags/Carol13` and
   * `…/flags/Judy25`, images with nothing to compare, each once and sent as `/avatars/{owner}/{avatar}`, went out as
   * it is. -1 when none.
   */
  private rowOfSiblings(segments: readonly Segment[], inferred: string): number {
    const last = segments.length - 1;
    const segment = segments[last];
    if (last < 2 || segment?.kind !== 'literal' || (this.requested.get(inferred) ?? 0) < 2) return -1;
    let key = '';
    for (let at = 0; at < last; at++) key = extendKey(key, segments[at]!);
    const siblings = this.index.get(key);
    const mine = siblings?.get(segment.text);
    if (siblings === undefined || mine === undefined) return -1;
    let looked = 0;
    for (const [other, theirs] of siblings) {
      // With the first values of the position only (see `MAX_COMPARED_VALUES`).
      if (looked++ >= MAX_COMPARED_VALUES) break;
      if (other === segment.text) continue;
      const verdict = this.compare(mine, theirs);
      if ((verdict !== 'alike' && verdict !== 'same') || !this.queriesAgree(mine, theirs)) continue;
      for (const one of theirs) {
        const path = one.record.path;
        if (one.at !== last || this.requested.get(path) !== 1) continue;
        const row = this.namesInRow(placedSegments(this.resolve(path), path), path);
        if (row >= 0) return row;
      }
    }
    return -1;
  }

  /**
   * Was `text` at `at` (under the resolved prefix `key`) followed by `rest` on another path than `inferred` (both as
   * the detectors templated them)? Then the literals from `at` on recur under other values of a learned position
   * before them: gamesparks' `/restv2/game/{game}/admin/pushNotifications/test/amazon`, requested with many games.
   */
  private recursUnder(key: string, text: string, at: number, inferred: string, rest: string): boolean {
    const placed = this.index.get(key)?.get(text);
    if (placed === undefined) return false;
    this.counted += placed.length;
    return placed.some((one) => one.at === at && one.record.path !== inferred && one.record.rests?.[at] === rest);
  }

  /**
   * Does `template` (as `resolve` gave it, for `inferred`) hold an undecided name right before a detected identifier
   * (`/trades/acme/{date}`), alone or not? Such a path is held up to the agent's `pendingMs`, so a sibling coming
   * later still decides it (see `pending`); not a literal followed by three identifier values (a collection).
   */
  holdsName(template: string, inferred?: string): boolean {
    const segments = placedSegments(template, inferred);
    let key = '';
    let previousKey = '';
    for (let at = 0; at < segments.length; at++) {
      const segment = segments[at]!;
      if (this.nameBefore(segments, at, key, previousKey)) return true;
      previousKey = key;
      key = extendKey(key, segment);
    }
    return false;
  }

  /**
   * Is the segment at `at` (under `key`) an undecided literal right before a detected identifier, where a name may be
   * learned (see `holdsName`)?
   */
  private nameBefore(segments: readonly Segment[], at: number, key: string, previousKey: string): boolean {
    const segment = segments[at]!;
    const next = segments[at + 1];
    return (
      segment.kind === 'literal' &&
      at > 0 &&
      this.namesOpen(key) &&
      next?.kind === 'param' &&
      next.name !== LEARNED &&
      !this.manyIdentifiersAfter(at, segment.text) &&
      (this.mayLearn(segments, at, key) || this.namePosition(segments, at, key, previousKey))
    );
  }

  /**
   * May names right before a detected identifier still be learned under `key`: not learned, or learned from values
   * only (`/sets/{set}` beside `/sets/globex/17`, see `namesToo`)?
   */
  private namesOpen(key: string): boolean {
    const position = this.learned.get(key);
    return position === undefined || plainPosition(position);
  }

  /** Is the literal at `at` (under `key`) a value in waiting (see `pending`)? */
  private waiting(segments: readonly Segment[], at: number, key: string, previousKey: string): boolean {
    const text = (segments[at] as { text: string }).text;
    const siblings = this.index.get(key);
    const mine = siblings?.get(text);
    if (siblings === undefined || mine === undefined || siblings.size < 2) return false;
    if (this.waitingAfterIdentifier(segments, at, key, text, mine, siblings)) return true;
    // Else only a name right before a detected identifier (`/quotes/wonka/{date}`, `/project/{project}/erin-dinner/{id}`).
    const next = segments[at + 1];
    if (next?.kind !== 'param' || next.name === LEARNED || this.manyIdentifiersAfter(at, text)) return false;
    let names: boolean;
    if (!this.learned.has(key) && this.mayLearn(segments, at, key)) names = false;
    else if (this.namePosition(segments, at, key, previousKey)) names = true;
    else return false;
    if (!this.comparable(key, text, mine, names)) return false;
    let partners = 0;
    for (const [other, theirs] of siblings) {
      if (partners++ >= MAX_COMPARED_VALUES) break;
      if (other === text || !this.comparable(key, other, theirs, names)) continue;
      const verdict = this.compare(mine, theirs);
      // Routes take query parameters of their own (see `noteQuery`): no value in waiting beside another route.
      if (verdict === 'alike' || (verdict === 'same' && this.queriesAgree(mine, theirs))) return true;
    }
    return false;
  }

  /**
   * Is the literal at `at` (under `key`, not learned) right after a detected identifier a value in waiting (see
   * `pending`)? Learned there from four (`strict`, see `enoughSiblings`); with fewer, a name that was seen after one
   * identifier value only, none another value there was seen after, with a sibling seen so too whose answers are
   * alike or the same (billbee's `/orders/find/209427/stark-core`, `…/815320/stark-billing`, `…/254210/oscar-payments`,
   * each once answering `{}`). A resource's route words recur after its identifier values (`/posts/5/comments`,
   * `/posts/6/comments`) and share them (`/posts/5/likes`): never values in waiting.
   */
  private waitingAfterIdentifier(
    segments: readonly Segment[],
    at: number,
    key: string,
    text: string,
    mine: readonly Placed[],
    siblings: ReadonlyMap<string, readonly Placed[]>,
  ): boolean {
    const previous = segments[at - 1];
    if (previous?.kind !== 'param' || previous.name === LEARNED || this.learned.has(key)) return false;
    if (!this.mayLearn(segments, at, key) || !this.comparable(key, text, mine)) return false;
    if (mine[0]!.at !== at || this.recursAfterIdentifiers(at, siblings)) return false;
    const once = (value: string): boolean => this.identifierParentsOf.get(`${at}/${value}`)?.size === 1;
    const alone = this.aloneAfterIdentifiers(at, siblings.keys());
    if (!alone.has(text) || !once(text)) return false;
    let partners = 0;
    for (const [other, theirs] of siblings) {
      if (partners++ >= MAX_COMPARED_VALUES) break;
      if (other === text || !alone.has(other) || !once(other) || !this.comparable(key, other, theirs)) continue;
      const verdict = this.compare(mine, theirs);
      if ((verdict === 'alike' || verdict === 'same') && this.queriesAgree(mine, theirs)) return true;
    }
    return false;
  }

  /**
   * Is `value` a value of the learned position under `key` by default only, for a path with `after`
   * segments after it: no other value there but exceptions was seen with as many
   * (`/messages/schedule/alice`, with `/messages/{message}` learned from `/messages/alice` and
   * `/messages/bob`)? Nothing yet tells such a value from a route word with routes of its own
   * (`schedule`, once `GET /messages/schedule` answers other fields): held, not decided (see `undecided`).
   */
  private unseenContinuation(key: string, value: string, after: number): boolean {
    const position = this.learned.get(key);
    if (position === undefined || key === '') return false;
    const values = this.restValues.get(key)?.get(after);
    return values === undefined || !values.some((other) => other !== value && !position.exceptions.has(other));
  }

  /**
   * May `template` (as `resolve` gave it) ever change as more is learned? When some literal sits
   * where a value may one day be learned: not a version, not right after `api` or a version, and at
   * the first segment (`/xml/Teams/{team}` before `/json/…` and `/xml/…` share two routes; `/bitcoin`
   * alone before `/{blockchain}/v2/…` is learned, see `aloneMembers`). Wider than `undecided`, which is what holds a path now: whether a word is a
   * route word (and so decided) may change as more values are seen, and names live at the first
   * segment (not held there). What was sent under such a template is regrouped once it changes.
   */
  changeable(template: string): boolean {
    const segments = splitPath(template);
    for (let at = 0; at < segments.length; at++) {
      const segment = segments[at]!;
      if (segment.kind !== 'literal' || versionAt(segments, at)) continue;
      // Past the first segment, right after `api` or a version too: many alike values learn it there (see `mayLearn`).
      // Right after `api` or a version too, but for a collection (`/v2/tx/{txId}`): values among many may be learned
      // there (see `mayLearn`).
      if (
        at === 0
          ? !introducesNames(segment) || isPlainNumber(segment.text)
          : !namesAfter(segments, at - 1) || segments[at + 1]?.kind !== 'param'
      )
        return true;
    }
    return false;
  }

  /** Resolved segments; learned parameters are still unnamed (`LEARNED`). */
  private resolveSegments(segments: readonly Segment[]): Segment[] {
    const out: Segment[] = [];
    let key = '';
    let previousKey = '';
    for (const [at, segment] of segments.entries()) {
      const position = segment.kind === 'literal' ? this.learned.get(key) : undefined;
      const value =
        position !== undefined &&
        segment.kind === 'literal' &&
        (position.members === undefined
          ? !position.exceptions.has(segment.text)
          : position.members.has(segment.text)) &&
        !versionAt(segments, at) &&
        ((position.identifiers === true && at === segments.length - 1) ||
          (!this.identifierPositions.has(`${key}|${continuation(segments, at)}`) &&
            !this.besideIdentifiers(key, segment.text))) &&
        !this.isRouteWord(at, segment.text) &&
        // After a detected identifier or a route word only where that is how the position was learned
        // (`/snapshots/{id}/{language}`, `/messages/schedule/{schedule}`).
        (position.strict === true || !this.afterWord(out, at, previousKey));
      // A collection stays a literal even where values live (`/bills/ocd-bill/{id}` beside `/bills/{owner}/{bill}/{id}`),
      // and a number at the first segment is none. Where names before identifiers were learned
      // (`/sales_tax/{salesTax}/{id}`), only those are values: `/sales_tax/summary` keeps its text.
      const collection = isCollection([...out, segment, ...segments.slice(at + 1, at + 2)], at);
      const next: Segment =
        value &&
        (position?.names === true
          ? collection
          : !collection || position?.namesToo === true || (at === 0 && isPlainNumber(segment.text)))
          ? { kind: 'param', name: position?.identifiers === true ? this.identifierName(key) : LEARNED }
          : segment;
      out.push(next);
      previousKey = key;
      key = extendKey(key, next);
    }
    return out;
  }

  /**
   * A literal seen at a position (with some continuation length) where detected identifiers are
   * seen too (with that length) is a route word there, whatever follows it: `me` of
   * `/articles/me` and `/articles/me/all` beside `/articles/17`, `latest` beside `/articles/17`.
   */
  private besideIdentifiers(key: string, text: string): boolean {
    const rests = this.literalRests.get(key)?.get(text);
    const identifiers = this.identifierRests.get(key);
    if (rests === undefined || identifiers === undefined) return false;
    // An action ending a path where identifiers are seen, whatever follows them (`POST /recipes/analyze` beside
    // `/recipes/17/information`): one on the collection, not a value of another parameter at the identifier's place.
    if (rests.has('') && isAction(this.index.get(key)?.get(text) ?? [])) return true;
    // A leaf read again with query names of its own (`GET /recipes/autocomplete?query` beside
    // `/recipes/findByIngredients?ingredients&ranking` and `/recipes/17/information`), see `readAgainWithNames`.
    if (rests.has('') && this.readAgainWithNames(key, text)) return true;
    // The fewer looked up in the more: a first segment may lead to thousands of continuations, identifiers to few.
    const [few, many] = rests.size <= identifiers.size ? [rests, identifiers] : [identifiers, rests];
    for (const rest of few) if (many.has(rest)) return true;
    return false;
  }

  /**
   * Is `text` (under `key`, where detected identifiers are seen) read again with query names of its own? Its paths
   * read (`GET`) with nothing after them, each requested twice or more, taking a query name another such sibling never
   * took while that one takes a name it never took: spoonacular's `/recipes/autocomplete?number&query`,
   * `/recipes/findByIngredients?ingredients&ranking&…`, `/recipes/quickAnswer?q`, each requested 6 to 13 times beside
   * `/recipes/17/information`, answering alike lists. The routes of an API recur and take their own query names; the
   * values of one position take their route's (`/users/alice?fields`, `/users/bob?fields`), and names beside
   * identifiers are rarely read again (held-out 14's flinkster `/providernetworks/grace` beside
   * `/providernetworks/17/prices`, each once). No value where no identifier is seen either (see `comparableNow`):
   * brex.io's `/api/v1/ein-verification/lookup?name&state&zip`, `…/comprehensive-check?ein`, 9 requests each.
   */
  private readAgainWithNames(key: string, text: string): boolean {
    // Looked at by every question about a literal (see `besideIdentifiers`, `comparableNow`) and the same until the
    // evidence changes: each looked at once (the same value's siblings read again on each look counted +14 % of
    // threatjammer.com's work).
    if (this.evidenceAt !== this.evidenceStamp) {
      this.evidenceAt = this.evidenceStamp;
      this.readAgainKept.clear();
    }
    const kept = `${key}\n${text}`;
    let answer = this.readAgainKept.get(kept);
    if (answer === undefined) this.readAgainKept.set(kept, (answer = this.readAgainWithNamesNow(key, text)));
    return answer;
  }

  private readAgainWithNamesNow(key: string, text: string): boolean {
    const siblings = this.index.get(key);
    const mine = siblings?.get(text);
    if (siblings === undefined || mine === undefined) return false;
    const names = this.namesReadAgain(mine);
    if (names === undefined) return false;
    let looked = 0;
    for (const [other, theirs] of siblings) {
      // With the first values of the position only (see `MAX_COMPARED_VALUES`).
      if (looked++ >= MAX_COMPARED_VALUES) break;
      if (other === text) continue;
      const their = this.namesReadAgain(theirs);
      if (their !== undefined && ownNames(names, their) > 0 && ownNames(their, names) > 0) return true;
    }
    return false;
  }

  /**
   * The query names (see `noteQuery`) of a value placed as `placed` when it was only read, with nothing after it, and
   * each of its paths (as the detectors templated them, see `requested`) requested twice or more; undefined otherwise
   * or without names.
   */
  private namesReadAgain(placed: readonly Placed[]): Set<string> | undefined {
    this.counted += placed.length;
    if (!placed.every((one) => this.queries.has(one.record.path))) return undefined;
    for (const one of placed)
      if (
        one.at !== one.resolved.length - 1 ||
        one.record.method !== 'GET' ||
        (this.requested.get(one.record.path) ?? 0) < 2
      )
        return undefined;
    return this.queryNamesOf(placed);
  }

  /**
   * Is the segment at `at` right after a detected identifier or after a route word of a position
   * that may hold values (an exception of a learned position, or a word beside identifiers)? Route
   * words follow there, as they follow an identifier: `/posts/{postId}/comments`, `/articles/me/all`;
   * so a position there is learned only from many alike values (`strict`, see `enoughSiblings`).
   */
  private afterWord(resolved: readonly Segment[], at: number, previousKey: string): boolean {
    const previous = at > 0 ? resolved[at - 1] : undefined;
    if (previous === undefined) return false;
    if (previous.kind === 'param') return previous.name !== LEARNED;
    return (
      this.learned.get(previousKey)?.exceptions.has(previous.text) === true ||
      this.besideIdentifiers(previousKey, previous.text)
    );
  }

  /**
   * Can the literal at `at` (under the resolved prefix `key`) be learned as a parameter? Right after
   * a detected identifier or a route word too, from many alike values (see `enoughSiblings`).
   */
  private mayLearn(resolved: readonly Segment[], at: number, key: string, afterNames = false): boolean {
    const segment = resolved[at]!;
    if (segment.kind !== 'literal' || at === 0 || versionAt(resolved, at)) return false;
    if (isCollection(resolved, at)) return false;
    return (
      namesAfter(resolved, at - 1) === afterNames &&
      ((!this.identifierPositions.has(`${key}|${continuation(resolved, at)}`) &&
        !this.besideIdentifiers(key, segment.text)) ||
        (!afterNames && this.onceBesideIdentifiers(resolved, at, key))) &&
      !this.isRouteWord(at, segment.text)
    );
  }

  /**
   * Is the literal at `at` (under `key`) at the end of a path where detected identifiers end paths too, among many
   * values each read once there (see `manyOnce`)? Such literals are values of the identifier (`/v1/ua/type/Heidi34`,
   * `…/K9`, `…/4SNH` beside `/v1/ua/type/7GNZ757EV`: codes the detectors take for words half the time, names), not
   * the few route words that live beside identifiers and recur (`/pets/findByStatus` beside `/pets/17`).
   */
  private onceBesideIdentifiers(resolved: readonly Segment[], at: number, key: string): boolean {
    return at === resolved.length - 1 && this.identifierPositions.has(`${key}|`) && this.manyOnce(key);
  }

  /**
   * A detected identifier ending its path (at `at` under `key`) may come after the literals beside it: learn their
   * position then (see `onceBesideIdentifiers`), from one of them read once. True when learned.
   */
  private onceIdentifiersLearned(resolved: readonly Segment[], at: number, key: string): boolean {
    const siblings = this.index.get(key);
    if (siblings === undefined || siblings.size < MANY_SIBLINGS || !this.onceBesideIdentifiers(resolved, at, key))
      return false;
    const position = this.learned.get(key);
    // Learned from them before the identifiers came (see `manyOnce`): theirs now.
    if (position !== undefined) {
      position.identifiers = true;
      this.learnedCount++;
      for (const other of siblings.keys()) this.reconsider(key, other, position);
      return true;
    }
    for (const [value, placed] of siblings)
      if (this.requestedOnce(placed)) return this.decidePosition(key, value, true, false, true, true);
    return false;
  }

  /** The name of the detected identifiers ending paths under `key` (see `identifiers`). */
  private identifierName(key: string): string {
    return this.identifierNames.get(`${key}|`) ?? LEARNED;
  }

  /**
   * A value seen right after three different values of a position that may hold values, or after
   * two and at least half of them, is a route word: `issues` after the repositories `web` and `cli`,
   * `dock` after three of sixty ships. Names recur across values far less than the words of a route do.
   */
  private isRouteWord(at: number, text: string, collections = true): boolean {
    if (!this.routeWordsFresh()) return this.routeWord(at, text, collections);
    const kept = `${collections ? '' : '-'}${at}/${text}`;
    let answer = this.routeWordsKept.get(kept);
    if (answer === undefined) this.routeWordsKept.set(kept, (answer = this.routeWord(at, text, collections)));
    return answer;
  }

  /**
   * Are the route words kept (see `keeping`) still what the indexes give? Forgets them when the index changed what
   * a route word depends on (`routeStamp`) or the revision changed. False when nothing is kept.
   */
  private routeWordsFresh(): boolean {
    return this.keptFresh(this.routeWordsAt, this.routeStamp, () => {
      this.routeWordsKept.clear();
      this.valuesKept.clear();
    });
  }

  /**
   * Are the prefixes and values looked at (see `keeping`) still so? Forgets them when a record was placed or the
   * revision changed since. False when nothing is kept.
   */
  private lookedFresh(): boolean {
    return this.keptFresh(this.lookedAtAt, this.placements, () => {
      this.lookedAt.clear();
      this.comparableKept.clear();
    });
  }

  /** Is what was kept at `at` still fresh for `stamp` and the revision (`forget` it when not)? False when not keeping. */
  private keptFresh(at: { stamp: number; revision: number }, stamp: number, forget: () => void): boolean {
    if (!this.keeping) return false;
    const revision = this.revision;
    if (at.stamp !== stamp || at.revision !== revision) {
      at.stamp = stamp;
      at.revision = revision;
      forget();
    }
    return true;
  }

  /** Keep answers (see `keeping`) or not, as before `keptSteps`: nothing kept is left when not. */
  private keepAgain(keeping: boolean): void {
    this.keeping = keeping;
    if (!keeping) {
      this.routeWordsKept.clear();
      this.valuesKept.clear();
      this.lookedAt.clear();
      this.comparableKept.clear();
    }
  }

  /**
   * Run work in steps keeping answers (see `keeping`) or not, as it was before after: between its steps the learner
   * keeps as it did before (a `resolve` of the app's requests meanwhile keeps nothing); what was kept stays for the
   * next step, fresh as `keptFresh` says.
   */
  private *keptSteps(keep: boolean, steps: Generator<void>): Generator<void> {
    const keeping = this.keeping;
    this.keeping = keep;
    try {
      while (!steps.next().done) {
        this.keeping = keeping;
        yield;
        this.keeping = keep;
      }
    } finally {
      this.keepAgain(keeping);
    }
  }

  /**
   * A point where the work is whole (a record decided, the index built, a round of `revalidate`): yields when the work
   * since the last yield (see `work`) reached `STEP_WORK`.
   */
  private *pause(): Generator<void> {
    if (this.counted - this.stepFrom < STEP_WORK) return;
    yield;
    this.stepFrom = this.counted;
  }

  /** See `isRouteWord`: each look counts as work, with each literal it counts values among (see `work`). */
  private routeWord(at: number, text: string, collections: boolean): boolean {
    this.counted++;
    const word = `${at}/${text}`;
    // A word of routes two first-segment values share (see `sharedRouteWords`).
    if (this.sharedRouteWords.has(word) || this.servedRoutes(word)) return true;
    // A collection its children's answers show (see `listedCollections`).
    if (this.listedCollections.has(word) && !this.amongManyValues(word)) return true;
    // A mirrored route or a collection shown by values that happen to recur (`/project/cyberdyne/initech`
    // beside `/project/bob/cyberdyne`) is none.
    if ((this.mirrored(word) || (collections && this.collectionWords.has(word))) && !this.amongManyValues(word))
      return true;
    if ((this.identifierParentsOf.get(word)?.size ?? 0) >= ROUTE_WORD_PARENTS) return true;
    if (this.afterValuesTwice(word)) return true;
    if (this.besideIdentifiersOfSibling(word, text)) return true;
    if (at === 1) return this.afterRootValues(text);
    const parents = this.parentsOf.get(word);
    if (parents === undefined || parents.size < 2 || this.amongManyValues(word)) return false;
    // Parents that are route words themselves (`get`, `search` of `/journals/get/wonka`, `/repositories/search/wonka`) are no values.
    const values = this.valuesAmong(at - 1, parents);
    // After at least half of them: a slug that two names happen to share (`alice/intro`, `bob/intro`) is no route word.
    if (
      values >= ROUTE_WORD_PARENTS ||
      (values >= 2 && values * 2 >= this.valuesAmong(at - 1, this.parentsAt.get(at - 1)))
    )
      return true;
    // Or after every literal followed by one under one prefix, two or more: names at that depth under other prefixes
    // (`/messages/outbound/alice/dump`) do not hide the words of one (`platforms` after `clicks` and `opens` of
    // `/stats/outbound`, the only words followed by one there).
    for (const grand of this.grandsOf.get(word) ?? []) {
      const under = this.valuesAmong(at - 1, this.parentsUnder.get(`${grand} ${word}`));
      if (under >= 2 && under >= this.valuesAmong(at - 1, this.followedUnder.get(grand))) return true;
    }
    return false;
  }

  /**
   * Is `text` (at the position and text `word`) a word beside identifiers under one parent (`random` of `/gifs/random`
   * beside `/gifs/17`) whose parent shares two such words or more with another parent under the same prefix
   * (`/stickers/random`, `/stickers/search` beside `/gifs/search`)? Then it is a route word under every parent
   * there: siblings of one API mirror one another's routes, while values rarely meet two route words of a sibling.
   */
  private besideIdentifiersOfSibling(word: string, text: string): boolean {
    // Nothing is beside identifiers where none was seen (see `besideIdentifiers`).
    if (this.identifierRests.size === 0) return false;
    for (const grand of this.grandsOf.get(word) ?? []) {
      const parents = this.parentsUnder.get(`${grand} ${word}`);
      if (parents === undefined || parents.size < 2) continue;
      for (const parent of parents) {
        const key = `${grand}/${encodeSegment(parent)}`;
        if (!this.besideIdentifiers(key, text)) continue;
        const words = [...(this.literalRests.get(key)?.keys() ?? [])].filter((one) => this.besideIdentifiers(key, one));
        if (words.length < 2) continue;
        for (const other of parents) {
          const children = other === parent ? undefined : this.literalRests.get(`${grand}/${encodeSegment(other)}`);
          if (children !== undefined && words.filter((one) => children.has(one)).length >= 2) return true;
        }
      }
    }
    return false;
  }

  /**
   * Note `value` seen two positions before the literal `word` (position and text), a literal between: true
   * when that makes `word` a route word (see `afterValuesTwice`).
   */
  private noteGrandValue(word: string, between: string, value: string): boolean {
    if (noteDigest(this.grandValuesOf, `${word} ${between}`, value) !== ROUTE_WORD_PARENTS || this.leafWords.has(word))
      return false;
    this.leafWords.add(word);
    return true;
  }

  /**
   * Is the literal `word` (position and text) seen, after a literal, two positions after three different
   * values (names or detected identifiers)? Then it is a word of their route, as a literal right after three
   * values is (see `isRouteWord`): `document` of `/customer/acme/landlord/document`, `…/erin/landlord/document`,
   * `…/ivan/landlord/document`; `tagged` of `/projects/{projectId}/images/tagged`. A value there (a name after
   * the route word `landlord`) follows one resource, rarely three. Not where the literals are many values that
   * happen to recur (see `amongManyValues`).
   */
  private afterValuesTwice(word: string): boolean {
    return this.leafWords.has(word) && !this.amongManyValues(word);
  }

  /**
   * Is the literal `word` (position and text) one of many values that happen to recur, not a route word?
   * Under some prefix the literals two positions on (past a value) are many, and few of them recur after
   * two values or more: names drawn from a few dozen (`/project/{owner}/cyberdyne` after five of sixty
   * owners, beside fifty repositories seen once), where route words recur after every value they follow
   * (`dock`, `orbit` after three of sixty ships, nothing else there).
   */
  private amongManyValues(word: string): boolean {
    for (const grand of this.grandsOf.get(word) ?? []) if (this.manyValuesUnder(grand)) return true;
    return false;
  }

  /** Are the literals two positions after the raw prefix `grand` many values (see `amongManyValues`)? */
  private manyValuesUnder(grand: string): boolean {
    const kids = this.grandchildren.get(grand)?.size ?? 0;
    return kids >= MANY_VALUES && (this.grandRecurring.get(grand) ?? 0) * RECURRING_VALUES_SHARE <= kids;
  }

  /**
   * How many of `literals` (seen at `at`) are not route words there: of a mirrored route, collections, leaf words of
   * a resource's route (`screens`, `snippets` of `/game/{game}/manage/…`, see `afterValuesTwice`: a name under two of
   * them is no route word for that), or words after the values of a learned first segment (`Schedule`, `SeasonTeams`
   * after `json`, `xml`).
   */
  private valuesAmong(at: number, literals: ReadonlySet<string> | undefined): number {
    if (literals === undefined) return 0;
    // The same sets (the parents at a position) are counted for every literal after them: kept while route words are.
    const keep = this.routeWordsFresh();
    const kept = keep ? this.valuesKept.get(literals)?.get(at) : undefined;
    if (kept !== undefined) return kept;
    this.counted += literals.size;
    const root = at === 1 && this.learned.get('')?.members !== undefined;
    let count = 0;
    for (const literal of literals)
      if (
        !this.mirrored(`${at}/${literal}`) &&
        !this.collectionWords.has(`${at}/${literal}`) &&
        !this.recurs(at, literal) &&
        !this.afterValuesTwice(`${at}/${literal}`) &&
        !(root && this.afterRootValues(literal))
      )
        count++;
    if (keep) {
      let byAt = this.valuesKept.get(literals);
      if (byAt === undefined) this.valuesKept.set(literals, (byAt = new Map()));
      byAt.set(at, count);
    }
    return count;
  }

  /**
   * Is the literal at `at` seen after three different literals, or three identifier values, of the
   * position before? Then it is a route word itself (`repositories` of
   * `/namespaces/{namespace}/repositories/wayne`), not one of the values of a position: a name seen after it
   * and after another route word at the same depth (`/scim/2.0/ResourceTypes/wayne`) is no route word for that.
   * One level only (the count of parents, not whether those are values), so it costs a lookup.
   */
  private recurs(at: number, literal: string): boolean {
    const word = `${at}/${literal}`;
    return (
      (this.parentsOf.get(word)?.size ?? 0) >= ROUTE_WORD_PARENTS ||
      (this.identifierParentsOf.get(word)?.size ?? 0) >= ROUTE_WORD_PARENTS
    );
  }

  /**
   * After values of a learned first segment, the same way: a literal seen right after two of its
   * values, and after at least half of those followed by a literal (`Teams` in `/json/Teams`,
   * `/xml/Teams`). Parents at the first segment count only once they are values: names live
   * there, and `/users/alice`, `/orgs/alice` do not make `alice` a route word.
   */
  private afterRootValues(text: string): boolean {
    const members = this.learned.get('')?.members;
    const parents = this.parentsOf.get(`1/${text}`);
    if (members === undefined || parents === undefined) return false;
    let count = 0;
    for (const parent of parents) if (members.has(parent)) count++;
    let followed = 0;
    for (const parent of this.parentsAt.get(0) ?? []) if (members.has(parent)) followed++;
    return count >= 2 && count * 2 >= followed;
  }

  /**
   * Note mirrored routes (see `mirrorWords`): under one raw prefix, a literal seen both as a
   * sibling of a value and right after one. A name is never followed by one of its own siblings
   * (`/orgs/acme/actions` has no `/orgs/actions`), a qualifier is (`/company/competitor/id/17`
   * beside `/company/id/17`). True when route words changed.
   */
  private noteMirrors(segments: readonly Segment[]): boolean {
    const before = this.mirrorWords.size + this.qualifierChanges;
    let prefix = '';
    for (let at = 0; at < segments.length; at++) {
      const segment = segments[at]!;
      const next = segments[at + 1];
      if (segment.kind === 'param' && at > 0 && next?.kind === 'literal') {
        // A detected identifier's word (`pro` of `/racecards/2393/pro`) also seen beside it (`/racecards/pro`), followed
        // alike: a route word both, as a qualifier's is (below), the identifier no literal to mark.
        this.noteFollower(prefix, at, IDENTIFIER, next.text, segments);
      }
      if (segment.kind === 'literal' && at > 0) {
        // A literal with the kinds of what follows it (`id|/{}`): a word and a name that only share their text differ there.
        const mine = `${segment.text}|${restKinds(segments, at)}`;
        let siblings = this.siblingsUnder.get(prefix);
        if (siblings === undefined) this.siblingsUnder.set(prefix, (siblings = new Set()));
        if (!siblings.has(mine) && siblings.size < MAX_PARENTS) siblings.add(mine);
        // This literal was seen after a sibling before, followed alike: both are route words.
        for (const parent of this.childrenUnder.get(prefix)?.get(mine) ?? []) this.mirror(prefix, at, parent, mine);
        if (next?.kind === 'literal' && next.text !== segment.text)
          this.noteFollower(prefix, at, segment.text, next.text, segments);
      }
      prefix = extendKey(prefix, segment);
    }
    return this.mirrorWords.size + this.qualifierChanges !== before;
  }

  /**
   * `word`, the literal after position `at` of `segments` (with the kinds of what follows it), noted under `prefix` as
   * seen after `parent` (the literal at `at`, or `IDENTIFIER`), and mirrored when it was seen beside `parent` too.
   */
  private noteFollower(prefix: string, at: number, parent: string, word: string, segments: readonly Segment[]): void {
    const child = `${word}|${restKinds(segments, at + 1)}`;
    let children = this.childrenUnder.get(prefix);
    if (children === undefined) this.childrenUnder.set(prefix, (children = new Map()));
    let parents = children.get(child);
    if (parents === undefined && children.size < MAX_PARENTS) children.set(child, (parents = new Set()));
    if (parents !== undefined && parents.size < MAX_PARENTS) parents.add(parent);
    if (this.siblingsUnder.get(prefix)?.has(child) === true) this.mirror(prefix, at, parent, child);
  }

  /**
   * `child` (a word with the kinds of what follows it) seen under `prefix` beside `qualifier` (at `at`) and right after
   * it: route words both, where each was seen. But a route is qualified a few ways (`/company/competitor/id/17`), while
   * the values of a position before a sibling's word are many (`/techniques/17/directives` beside
   * `/techniques/17/alice/directives`, `/techniques/18/bob/directives`, … a version of each technique): four or more
   * qualifiers of one word under one prefix are no route words for this.
   */
  private mirror(prefix: string, at: number, qualifier: string, child: string): void {
    const word = child.slice(0, child.lastIndexOf('|'));
    if (qualifier !== IDENTIFIER) {
      const group = `${prefix} ${child}`;
      let qualifiers = this.mirrorGroups.get(group);
      if (qualifiers === undefined) {
        if (this.mirrorGroups.size >= MAX_MIRRORS) return;
        this.mirrorGroups.set(group, (qualifiers = new Set()));
      }
      if (!qualifiers.has(qualifier) && qualifiers.size < MANY_QUALIFIERS) {
        qualifiers.add(qualifier);
        this.qualifierChanges++;
        const key = `${at}/${qualifier}`;
        let groups = this.qualifierGroups.get(key);
        if (groups === undefined) this.qualifierGroups.set(key, (groups = new Set()));
        if (groups.size < MAX_PARENTS) groups.add(group);
      }
    }
    if (this.mirrorWords.size >= MAX_MIRRORS) return;
    this.mirrorWords.add(`${at}/${word}`);
    this.mirrorWords.add(`${at + 1}/${word}`);
  }

  /** Is `word` (position and literal) a route word of a mirrored route (see `mirror`)? */
  private mirrored(word: string): boolean {
    if (this.mirrorWords.has(word)) return true;
    for (const group of this.qualifierGroups.get(word) ?? [])
      if ((this.mirrorGroups.get(group)?.size ?? MANY_QUALIFIERS) < MANY_QUALIFIERS) return true;
    return false;
  }

  /**
   * Note the raw whole route of a record after its first segment, every segment a literal (see `sharedRouteWords`):
   * true when route words changed. Each new first value of a route pairs with the route's other values; each route a
   * pair gains is set beside the pair's others, and where two part at one position past the second segment after the
   * same segments (`api/where/search`, `api/where/statistics`), the literals there are route words once the pair has
   * four or more of them after that prefix. Values recur under two first segments far less often than the words of the
   * routes an API serves under each (`/{dialect}/api/where/search`, `dialect` one of `otp`, `mobile`), and only a few
   * values of an enumerated position do (`/catalog/metadata_templates/basic`, `…/extra` beside `/monitoring/…`); names
   * part earlier (`/users/alice/repos` beside `/orgs/alice/repos`: at the second segment, never route words for this).
   * The literals after each prefix are noted too (see `servedRoutes`).
   */
  private noteRootRoutes(record: PathRecord): boolean {
    const segments = record.segments;
    const first = segments[0];
    if (first?.kind !== 'literal' || segments.length < 3) return false;
    const texts: string[] = [];
    for (let at = 1; at < segments.length; at++) {
      const segment = segments[at]!;
      if (segment.kind !== 'literal') break;
      texts.push(segment.text);
    }
    // Whether the literals after each prefix are mostly shared route words, before and after (see `servedRoutes`).
    const prefixes: string[] = [];
    for (let at = 1; at < texts.length; at++) prefixes.push(`${at + 1}|${texts.slice(0, at).join('/')}`);
    const served = prefixes.map((prefix) => this.servedPrefix(prefix));
    let changed = false;
    for (let at = 1; at < texts.length; at++) {
      const prefix = prefixes[at - 1]!;
      let under = this.servedUnder.get(prefix);
      if (under === undefined) {
        if (this.servedUnder.size >= MAX_IDENTIFIER_WORDS) continue;
        this.servedUnder.set(prefix, (under = { words: new Set(), shared: new Set() }));
      }
      if (under.words.has(texts[at]!) || under.words.size >= MAX_PARENTS) continue;
      under.words.add(texts[at]!);
      const word = `${at + 1}/${texts[at]!}`;
      let of = this.servedOf.get(word);
      if (of === undefined && this.servedOf.size < MAX_IDENTIFIER_WORDS) this.servedOf.set(word, (of = new Set()));
      if (of !== undefined && of.size < MAX_GRANDS) of.add(prefix);
      // A new literal after a prefix whose literals are route words (see `servedRoutes`) is one: where it was seen at
      // that position before, records resolve otherwise; elsewhere only the kept answers do.
      if (served[at - 1]) {
        if ((of?.size ?? 0) > 1) changed = true;
        else this.routeStamp++;
      }
    }
    if (texts.length === segments.length - 1)
      changed = this.noteSharedRoute(record.method, first.text, texts) || changed;
    if (prefixes.some((prefix, i) => this.servedPrefix(prefix) !== served[i])) changed = true;
    if (changed) this.routeStamp++;
    return changed;
  }

  /** See `noteRootRoutes`: pair a whole literal route's first value with its others; true when route words changed. */
  private noteSharedRoute(method: string, first: string, texts: readonly string[]): boolean {
    const route = `${method} ${texts.join('/')}`;
    let values = this.rawRootRoutes.get(route);
    if (values === undefined) {
      if (this.rawRootRoutes.size >= MAX_IDENTIFIER_WORDS) return false;
      this.rawRootRoutes.set(route, (values = new Set()));
    }
    if (values.has(first) || values.size >= MAX_SHARED_ROOTS) return false;
    const before = this.sharedRouteWords.size;
    for (const other of values) {
      const pair = other < first ? `${other}\n${first}` : `${first}\n${other}`;
      let routes = this.rootPairRoutes.get(pair);
      if (routes === undefined) this.rootPairRoutes.set(pair, (routes = []));
      if (routes.length >= MAX_PAIR_ROUTES) continue;
      for (const theirs of routes) {
        this.counted++;
        // Where the two part: past the second segment (`search`, `statistics` after `api/where`), both literals.
        let at = 0;
        while (at < texts.length && at < theirs.length && texts[at] === theirs[at]) at++;
        if (at === 0 || at >= texts.length || at >= theirs.length) continue;
        // Four or more such words of one pair after one prefix: the few values of an enumerated position recur so
        // too (`/catalog/metadata_templates/basic`, `…/extra` beside `/monitoring/metadata_templates/basic`, `…/extra`).
        const prefix = `${at + 1}|${texts.slice(0, at).join('/')}`;
        const id = `${pair}\n${prefix}`;
        let words = this.pairWords.get(id);
        if (words === undefined) {
          if (this.pairWords.size >= MAX_IDENTIFIER_WORDS) continue;
          this.pairWords.set(id, (words = new Set()));
        }
        words.add(texts[at]!);
        words.add(theirs[at]!);
        if (words.size < MANY_SIBLINGS) continue;
        this.routeWordPairs.add(pair);
        for (const text of words) {
          this.sharedRouteWords.add(`${at + 1}/${text}`);
          this.servedUnder.get(prefix)?.shared.add(text);
        }
      }
      routes.push(texts);
    }
    values.add(first);
    return this.sharedRouteWords.size !== before;
  }

  /**
   * Is the literal `word` (position and text) seen after a prefix (after the first segment) whose literals are mostly
   * shared route words, two or more (see `sharedRouteWords`)? Then it is one of the routes the API serves there,
   * under one first-segment value only (`/mobile/api/where/plan-trip` beside twenty routes under both `mobile` and
   * `otp`), not a value: the values of one position recur under two first segments now and then, not most of them.
   */
  private servedRoutes(word: string): boolean {
    for (const prefix of this.servedOf.get(word) ?? []) if (this.servedPrefix(prefix)) return true;
    return false;
  }

  /** Are the literals after `prefix` mostly shared route words, two or more (see `servedRoutes`)? */
  private servedPrefix(prefix: string): boolean {
    const under = this.servedUnder.get(prefix);
    return under !== undefined && under.shared.size > 0 && under.shared.size * 2 >= under.words.size;
  }

  /**
   * Note what a read record answered as a list of objects or as one object (see `listedCollections`): true when a
   * collection was found.
   */
  private noteListed(record: PathRecord): boolean {
    const segments = record.segments;
    const keys = record.keys;
    if (record.method !== 'GET' || keys === null || keys.length === 0 || segments.length < 2) return false;
    const last = segments[segments.length - 1]!;
    const parent = record.path.slice(0, record.path.lastIndexOf('/'));
    if (keys.every((key) => key.startsWith('[]'))) {
      if (last.kind !== 'literal' || segments[segments.length - 2]!.kind !== 'literal') return false;
      if (this.listedItems.has(record.path) || this.listedItems.size >= MAX_QUERY_PATHS) return false;
      const items = keys.map((key) => key.slice(2)).filter((key) => key !== '');
      this.listedItems.set(record.path, items);
      let lists = this.listsUnder.get(parent);
      if (lists === undefined) this.listsUnder.set(parent, (lists = []));
      if (lists.length < MAX_PARENTS) lists.push(record.path);
      if ((this.childAnswers.get(record.path) ?? []).some((child) => this.answersItems(items, child)))
        this.listedAlike.add(record.path);
      return this.markListed(parent);
    }
    if (keys.some((key) => key.startsWith('[]'))) return false;
    let children = this.childAnswers.get(parent);
    if (children === undefined) {
      if (this.childAnswers.size >= MAX_QUERY_PATHS) return false;
      this.childAnswers.set(parent, (children = []));
    }
    if (children.length >= MAX_REST_VALUES) return false;
    children.push(keys);
    const items = this.listedItems.get(parent);
    if (items === undefined || this.listedAlike.has(parent) || !this.answersItems(items, keys)) return false;
    this.listedAlike.add(parent);
    return this.markListed(parent.slice(0, parent.lastIndexOf('/')));
  }

  /** Does a child's answer (`keys`) hold the fields of the items a list answered? */
  private answersItems(items: readonly string[], keys: readonly string[]): boolean {
    this.counted++;
    return compareKeys(items, keys, true) === 'alike';
  }

  /**
   * Mark the lists under the raw path `parent` whose children answer their items, beside a list there whose items
   * have other fields, collections (see `listedCollections`): true when one was found.
   */
  private markListed(parent: string): boolean {
    const lists = this.listsUnder.get(parent) ?? [];
    let changed = false;
    for (const path of lists) {
      if (!this.listedAlike.has(path)) continue;
      const segments = splitPath(path);
      const word = `${segments.length - 1}/${(segments[segments.length - 1] as { text: string }).text}`;
      if (this.listedCollections.has(word)) continue;
      const items = this.listedItems.get(path)!;
      const other = lists.some((one) => {
        this.counted++;
        return one !== path && compareKeys(items, this.listedItems.get(one)!, true) === 'contradicts';
      });
      if (!other) continue;
      this.listedCollections.add(word);
      this.listedFound.push(path);
      changed = true;
    }
    if (changed) this.routeStamp++;
    return changed;
  }

  /** Note the parents of each literal of a record (see `isRouteWord`). */
  private noteParents(segments: readonly Segment[]): boolean {
    let changed = false;
    let grand = '';
    for (let at = 1; at < segments.length; at++) {
      if (at > 1) grand = extendKey(grand, segments[at - 2]!);
      const segment = segments[at]!;
      const parent = segments[at - 1]!;
      if (
        segment.kind !== 'literal' ||
        parent.kind !== 'literal' ||
        (at > 1 && namesAfter(segments, at - 2)) ||
        namesAfter(segments, at - 1) ||
        versionAt(segments, at - 1)
      )
        continue;
      const key = `${at}/${segment.text}`;
      // A literal value two positions before (`acme` of `/customer/acme/landlord/document`): see `afterValuesTwice`.
      const grandValue = at > 1 && at === segments.length - 1 ? segments[at - 2]! : undefined;
      if (grandValue?.kind === 'literal' && this.noteGrandValue(key, parent.text, grandValue.text)) changed = true;
      let parents = this.parentsOf.get(key);
      if (parents === undefined) this.parentsOf.set(key, (parents = new Set()));
      let seen = this.parentsAt.get(at - 1);
      if (seen === undefined) this.parentsAt.set(at - 1, (seen = new Set()));
      let followed = this.followedUnder.get(grand);
      if (followed === undefined && this.followedUnder.size < MAX_GRAND_PREFIXES)
        this.followedUnder.set(grand, (followed = new Set()));
      let under = this.parentsUnder.get(`${grand} ${key}`);
      if (under === undefined && this.parentsUnder.size < MAX_IDENTIFIER_WORDS)
        this.parentsUnder.set(`${grand} ${key}`, (under = new Set()));
      const newUnder =
        (followed !== undefined && !followed.has(parent.text) && followed.size < MAX_PARENTS) ||
        (under !== undefined && !under.has(parent.text) && under.size < MAX_PARENTS);
      if (parents.has(parent.text) && seen.has(parent.text) && !newUnder) continue;
      // Route words at this position and the next before and after (few: those after two parents or more): a
      // literal here that now recurs (see `recurs`) counts as a value before the next no more.
      let words = this.wordsAt.get(at);
      if (words === undefined) this.wordsAt.set(at, (words = new Set()));
      const before = this.routeWordsFrom(at);
      const recurred = parents.size >= 2;
      if (parents.size < MAX_PARENTS) parents.add(parent.text);
      if (seen.size < MAX_PARENTS) seen.add(parent.text);
      if (followed !== undefined && followed.size < MAX_PARENTS) followed.add(parent.text);
      if (under !== undefined && under.size < MAX_PARENTS) under.add(parent.text);
      if (parents.size >= 2 && words.size < MAX_PARENTS) words.add(segment.text);
      if (this.noteGrandchild(grand, key, parents.size >= 2, !recurred && parents.size >= 2)) changed = true;
      const after = this.routeWordsFrom(at);
      if (after.length !== before.length || after.some((word, i) => word !== before[i])) changed = true;
    }
    return changed;
  }

  /**
   * Note `word` (position and text) two positions after the raw prefix `grand` (see `amongManyValues`);
   * `recurs`: it was seen after two parents or more, `recurred`: since this observation. True when the
   * literals under a prefix became many values or stopped being so (route words may have changed).
   */
  private noteGrandchild(grand: string, word: string, recurs: boolean, recurred: boolean): boolean {
    const prefixes = [...(this.grandsOf.get(word) ?? []), grand];
    const before = prefixes.map((one) => this.manyValuesUnder(one));
    this.countGrandchild(grand, word, recurs, recurred);
    return prefixes.some((one, i) => this.manyValuesUnder(one) !== before[i]);
  }

  /** Count `word` two positions after `grand` (see `noteGrandchild`). */
  private countGrandchild(grand: string, word: string, recurs: boolean, recurred: boolean): void {
    let kids = this.grandchildren.get(grand);
    if (kids === undefined) {
      if (this.grandchildren.size >= MAX_GRAND_PREFIXES) return;
      this.grandchildren.set(grand, (kids = new Set()));
    }
    let grands = this.grandsOf.get(word);
    if (!kids.has(word)) {
      if (kids.size >= MAX_GRANDCHILDREN || (grands?.size ?? 0) >= MAX_GRANDS) return;
      if (grands === undefined) this.grandsOf.set(word, (grands = new Set()));
      kids.add(word);
      grands.add(grand);
      if (recurs && !recurred) this.grandRecurring.set(grand, (this.grandRecurring.get(grand) ?? 0) + 1);
    }
    // Recurring from now on: counted under every prefix it was seen under.
    if (recurred) for (const one of grands ?? []) this.grandRecurring.set(one, (this.grandRecurring.get(one) ?? 0) + 1);
  }

  /** The literals at `at` and at the next position (of those that may be) that are route words now. */
  private routeWordsFrom(at: number): string[] {
    const out: string[] = [];
    for (const depth of [at, at + 1])
      for (const word of this.wordsAt.get(depth) ?? []) if (this.isRouteWord(depth, word)) out.push(`${depth}/${word}`);
    return out;
  }

  /**
   * Do the identifier positions and collections the last `place` found change how any kept record
   * resolves? A position of identifiers does where a literal was seen under its prefix with its
   * continuation (`/pets/findByStatus` once `/pets/17` comes: see `besideIdentifiers`); a collection does
   * where its literal was seen at its depth in another record (`/journals/get` once `/articles/get/17`
   * comes: see `isRouteWord`). Names before identifiers, each under its own prefix (`/tax/acme/17`,
   * `/tax/erin/18`, …), change nothing: no index again for each (a pass over every record).
   */
  private affectsOthers(): boolean {
    for (const position of this.found.identifiers) {
      const split = position.lastIndexOf('|');
      if (this.literalRestsAny.get(position.slice(0, split))?.has(position.slice(split + 1)) === true) return true;
    }
    for (const word of this.found.collections) if ((this.literalsAt.get(word) ?? 0) > 1) return true;
    return false;
  }

  /** Index a record placed at the first segment by its whole route (see `rootRouteIndex`). */
  private placeRoot(value: string, record: PathRecord): void {
    if (isPlainNumber(value)) this.rootNumbers.add(value);
    const route = rootRoute(record);
    if (route === undefined) return;
    let values = this.rootRouteIndex.get(route.route);
    if (values === undefined) this.rootRouteIndex.set(route.route, (values = new Map()));
    let seen = values.get(value);
    if (seen === undefined) {
      values.set(value, (seen = []));
      if (values.size === 2) this.sharedRootRoutes.add(route.route);
    }
    seen.push(route);
  }

  /** Index a record at each of its positions, by its resolved prefix. */
  private place(record: PathRecord): void {
    this.rootCache = undefined;
    this.placements++;
    this.found.identifiers.length = 0;
    this.found.collections.length = 0;
    const resolved = this.resolveSegments(record.segments);
    // Each segment resolved and indexed counts (see `work`).
    this.counted += Math.max(1, resolved.length);
    // Every continuation at once, from the end (each record is placed again at every index: see `reindex`).
    const rests = (record.rests ??= continuations(record.segments));
    const routes = continuations(resolved);
    let key = '';
    for (let at = 0; at < resolved.length; at++) {
      const segment = resolved[at]!;
      const rest = rests[at]!;
      if (segment.kind === 'param' && segment.name !== LEARNED) {
        const position = `${key}|${rest}`;
        if (!this.identifierNames.has(position)) this.identifierNames.set(position, segment.name);
        if (!this.identifierPositions.has(position)) {
          this.routeStamp++;
          this.identifierPositions.add(position);
          this.found.identifiers.push(position);
          let rests = this.identifierRests.get(key);
          if (rests === undefined) this.identifierRests.set(key, (rests = new Set()));
          rests.add(rest);
        }
      }
      if (
        segment.kind === 'literal' &&
        at > 0 &&
        isCollection(resolved, at) &&
        this.collectionWords.size < MAX_MIRRORS
      ) {
        const word = `${at}/${segment.text}`;
        if (!this.collectionWords.has(word)) {
          this.routeStamp++;
          this.collectionWords.add(word);
          this.found.collections.push(word);
        }
      }
      // Values of learned positions are indexed by their text too: whether one is an exception is looked at again.
      const text = literalText(record.segments[at]!, segment);
      if (text !== undefined) {
        let rests = this.literalRests.get(key);
        if (rests === undefined) this.literalRests.set(key, (rests = new Map()));
        let seen = rests.get(text);
        // Route words beside identifiers (see `besideIdentifiersOfSibling`) look at the literals under a prefix and,
        // where identifiers are, at their continuations.
        if (seen === undefined) {
          rests.set(text, (seen = new Set()));
          if (this.identifierRests.size > 0) this.routeStamp++;
        }
        if (!seen.has(rest) && this.identifierRests.has(key)) this.routeStamp++;
        seen.add(rest);
        let any = this.literalRestsAny.get(key);
        if (any === undefined) this.literalRestsAny.set(key, (any = new Set()));
        any.add(rest);
        let byRest = this.restValues.get(key);
        if (byRest === undefined) this.restValues.set(key, (byRest = new Map()));
        const after = resolved.length - at - 1;
        const values = byRest.get(after);
        if (values === undefined) byRest.set(after, [text]);
        else if (values.length < MAX_REST_VALUES && !values.includes(text)) values.push(text);
        let byValue = this.index.get(key);
        if (byValue === undefined) this.index.set(key, (byValue = new Map()));
        let placed = byValue.get(text);
        if (placed === undefined) {
          byValue.set(text, (placed = []));
          let first = this.firstValues.get(key);
          if (first === undefined) this.firstValues.set(key, (first = new Set()));
          if (first.size < MAX_COMPARED_VALUES) first.add(text);
        }
        let byRoute = this.routeValues.get(key);
        if (byRoute === undefined) this.routeValues.set(key, (byRoute = new Map()));
        const route = `${record.method} ${routes[at]!}`;
        const partners = byRoute.get(route);
        if (partners === undefined) byRoute.set(route, [text]);
        else if (partners.length < MAX_ROUTE_PARTNERS && !partners.includes(text)) partners.push(text);

        if (placed.length < this.maxCompared) {
          // Whether a literal is an action beside identifiers (see `besideIdentifiers`) may change with each record.
          if (rest === '' && this.identifierRests.has(key)) this.routeStamp++;
          placed.push({ record, resolved, at });
          if (at === 0) this.placeRoot(text, record);
        }
      }
      key = extendKey(key, segment);
    }
    this.evidenceStamp++;
  }

  /** Learn what `record` decides, then what that in turn decides, until nothing changes. */
  private settleSteps(record: PathRecord): Generator<void> {
    return this.keptSteps(true, this.settleFrom(record));
  }

  private *settleFrom(record: PathRecord): Generator<void> {
    this.settledExceptions = new Set();
    try {
      yield* this.settleMoving(record);
    } finally {
      this.settledExceptions = undefined;
    }
  }

  private *settleMoving(record: PathRecord): Generator<void> {
    let pending: PathRecord[] = [record];
    let moves = 0;
    while (pending.length > 0) {
      const changes = this.changes;
      let learnedAny = false;
      // Records taken meanwhile wait for the next pass, as they did before the steps.
      const count = pending.length;
      for (let i = 0; i < count; i++) {
        if (yield* this.decide(pending[i]!)) learnedAny = true;
        yield* this.pause();
      }
      // An exception found or lost moves what follows it to another prefix (`/messages/schedule/alice`, once
      // `schedule` is one, no more under `/messages/{}`): index again too, a few times at most.
      const moved = this.changes !== changes && moves++ < MAX_MOVES;
      if (!learnedAny && !moved) return;
      // Prefixes merged (`/users/alice/…` and `/users/bob/…` are now one): index again, look at everything again.
      yield* this.reindexSteps();
      yield* this.pause();
      if (moved) yield* this.revalidateSteps();
      pending = this.records;
    }
  }

  /**
   * Forget learned positions that what came since no longer supports (their alike values turned
   * out collections or route words: `/self/calls/count`, `/self/events/count` before `/self/calls/17`),
   * so the order traffic comes in does not decide them.
   */
  private revalidateSteps(): Generator<void> {
    // Positions are forgotten one by one before the revision moves: nothing kept meanwhile (see `keeping`).
    return this.keptSteps(false, this.revalidateAll());
  }

  private *revalidateAll(): Generator<void> {
    for (let rounds = 0; rounds < 8; rounds++) {
      let changed = false;
      for (const [key, position] of [...this.learned]) {
        // Learned before what precedes it turned out a route word (`schedule` of `/messages/schedule/{…}`, an
        // exception found later), or beside a route word found later (`platforms` of `/stats/outbound/clicks/…` once it
        // follows `opens` too): it is held to the strict rule from now on.
        if (
          position.strict !== true &&
          key !== '' &&
          (this.learnedAfterWord(key) || this.learnedBesideRouteWord(key))
        ) {
          position.strict = true;
          changed = true;
        }
        // Names before identifiers that later values show collections after all (see `namesShown`).
        if (position.namesToo === true && !this.namesShown(key, this.index.get(key) ?? new Map())) {
          position.namesToo = false;
          changed = true;
        }
        if (!(yield* this.supported(key))) {
          this.learned.delete(key);
          changed = true;
        }
        yield* this.pause();
      }
      if (!changed) return;
      this.learnedCount++;
      yield* this.reindexSteps();
      yield* this.pause();
    }
  }

  /** Is the position learned under `key` right after a detected identifier or a route word (see `afterWord`)? */
  private learnedAfterWord(key: string): boolean {
    const first = this.index.get(key)?.values().next().value?.[0];
    if (first === undefined) return false;
    let previousKey = '';
    for (let at = 0; at < first.at - 1; at++) previousKey = extendKey(previousKey, first.resolved[at]!);
    return this.afterWord(first.resolved, first.at, previousKey);
  }

  /**
   * Is one of the first values under `key` (at `at`) a collection (`timezones` of `/locale/timezones/17`)?
   * Its siblings that end their paths are then likely the parent's other routes (`/locale/currencies`,
   * `/locale/languages`), not names (those lead on as the collection does: `/bills/peggy/wonka-mobile/17`
   * beside `/bills/ocd-bill/18`): such a value decides its position from many alike values only, as after a
   * route word (see `enoughSiblings`). Not where the literals are many values that happen to recur (see
   * `amongManyValues`).
   */
  private besideCollection(key: string, at: number): boolean {
    for (const value of this.firstValues.get(key) ?? []) {
      const word = `${at}/${value}`;
      if (this.collectionWords.has(word) && !this.amongManyValues(word)) return true;
    }
    return false;
  }

  /** Is the position learned under `key` beside a route word (see `besideRouteWord`)? */
  private learnedBesideRouteWord(key: string): boolean {
    const first = this.index.get(key)?.values().next().value?.[0];
    return first !== undefined && this.besideRouteWord(key, first.at);
  }

  /**
   * Is one of the first values under `key` (at `at`) a route word shown by the literals before it (see `isRouteWord`;
   * not one after identifiers only, `unpublish` of `/articles/{id}/unpublish`), or by a mirrored route (`pro` of
   * `/racecards/pro` beside `/racecards/2393/pro`, see `noteMirrors`)?
   */
  private besideRouteWord(key: string, at: number): boolean {
    const words = this.wordsAt.get(at);
    for (const value of this.firstValues.get(key) ?? [])
      if ((words?.has(value) === true || this.mirrored(`${at}/${value}`)) && this.isRouteWord(at, value)) return true;
    return false;
  }

  /**
   * Do two comparable values at a learned position still make it one (alike, or many the same)? In steps between the
   * values looked at (up to 64 siblings compared with each): it only reads what is known.
   */
  private *supported(key: string): Generator<void, boolean> {
    if (key === '') return this.rootMembers().size > 0;
    const siblings = this.index.get(key);
    if (siblings === undefined) return false;
    const position = this.learned.get(key);
    if (position?.afterNames === true && siblings.size < MANY_VALUES) return false;
    if (position?.strict === true && this.manyOnce(key)) return true;
    if (position?.identifiers === true) return false;
    const rule =
      position?.names === true
        ? 'names'
        : position?.afterNames === true
          ? 'many'
          : position?.strict === true
            ? 'strict'
            : 'values';
    for (const [value, mine] of siblings) {
      if (this.comparable(key, value, mine) && this.enoughSiblings(key, value, mine, siblings, rule)) return true;
      yield* this.pause();
    }
    return false;
  }

  /**
   * Do the siblings of `value` (placed as `mine` under `key`) make its position a parameter? One
   * alike sibling does, or three with the same continuation and nothing against it (`same`,
   * `/v0/data/alice` … `/dave`). Sibling actions (see `isAction`) alike count as the same only: two
   * of them are what `POST /message/send` and `POST /message/flash` look like. `strict`, right after a
   * detected identifier or a route word where route words live (`/posts/{postId}/comments`): three
   * alike siblings, or three the same where each of the four was seen after identifier values no
   * other value there was seen after (names of different resources, `/orders/{orderId}/alice`,
   * `/orders/{orderId2}/bob`; not the words of one, `/orders/100/lines`, `/orders/100/notes`).
   * `names`, right before a detected identifier where a collection sits otherwise (`/sales_tax/acme/17`,
   * `/sales_tax/erin/18`): one alike sibling (answers or accepted bodies of the same fields) and three alike or
   * the same (four values in all), as a parent has few collections and they lead to different resources.
   * `many`, right after `api` or a version: as `strict`, and the value agrees with more siblings than it contradicts.
   */
  private enoughSiblings(
    key: string,
    value: string,
    mine: readonly Placed[],
    siblings: ReadonlyMap<string, readonly Placed[]>,
    rule: 'values' | 'strict' | 'names' | 'many',
  ): boolean {
    const strict = rule === 'strict' || rule === 'many';
    const action = rule === 'values' && isAction(mine);
    const at = mine[0]!.at;
    // Right after identifiers, a value there seen after two of their values already shows the routes of a
    // resource (`/accounts/{accountId}/balances` of two accounts): alike words there are its routes, no values.
    if (strict && this.recursAfterIdentifiers(at, siblings)) return false;
    const alone = strict ? this.aloneAfterIdentifiers(at, siblings.keys()) : undefined;
    let alike = 0;
    let against = 0;
    let partners = 0;
    const sameOnes: Array<readonly Placed[]> = [];
    for (const [other, theirs] of siblings) {
      // With the first values of the position only (see `MAX_COMPARED_VALUES`).
      if (partners++ >= MAX_COMPARED_VALUES) break;
      if (other === value || !this.comparable(key, other, theirs, rule === 'names')) continue;
      const verdict = this.compare(mine, theirs);
      if (verdict === 'contradicts') against++;
      if (verdict === 'alike' && !(action && isAction(theirs))) alike++;
      else if (
        (verdict === 'alike' || verdict === 'same') &&
        (alone === undefined || (alone.has(value) && alone.has(other))) &&
        // Routes take query parameters of their own, a parameter's values those of its route (see `noteQuery`).
        this.queriesAgree(mine, theirs)
      )
        sameOnes.push(theirs);
    }
    const same = this.compatible(sameOnes, MANY_SIBLINGS - 1 - (rule === 'values' ? 0 : alike));
    if (rule === 'names') return alike > 0 && alike + same + 1 >= MANY_SIBLINGS;
    // Where names live (right after `api` or a version) an API's resources sit too, each answering its own: a few of
    // them alike (lists in one paged envelope) among more that contradict them are resources, not values.
    if (rule === 'many' && against >= alike) return false;
    return strict ? alike + same + 1 >= MANY_SIBLINGS : alike > 0 || same + 1 >= MANY_SIBLINGS;
  }

  /**
   * How many of `ones` (siblings the same as a value, nothing to compare with it) do not contradict one another,
   * up to `enough`: the values of one position answer alike, routes need not (`POST /auth/logout`, with nothing to
   * compare, is the same as `/auth/login` and `/auth/ping`, which answer other fields: routes, not values). The
   * first `MAX_REST_VALUES` only, so its work stays bounded.
   */
  private compatible(ones: ReadonlyArray<readonly Placed[]>, enough: number): number {
    if (ones.length < enough) return ones.length;
    const kept: Array<readonly Placed[]> = [];
    for (const one of ones.slice(0, MAX_REST_VALUES)) {
      if (kept.every((other) => this.compare(one, other) !== 'contradicts')) kept.push(one);
      if (kept.length >= enough) break;
    }
    return kept.length;
  }

  /** How two values' observations relate (see `compare`), counted as work (see `work`). */
  private compare(mine: readonly Placed[], theirs: readonly Placed[]): Verdict {
    this.counted += mine.length * theirs.length;
    return compare(mine, theirs);
  }

  /**
   * Were more than one in four of `values` (at `at`, right after a detected identifier) seen after two
   * identifier values or more? A resource's routes recur so (`balances`, `party` of two accounts each); a
   * few names drawn from a few dozen may too, among many seen once (see `amongManyValues`).
   */
  private recursAfterIdentifiers(at: number, values: ReadonlyMap<string, unknown>): boolean {
    let recurring = 0;
    for (const value of values.keys())
      if ((this.identifierParentsOf.get(`${at}/${value}`)?.size ?? 0) >= 2) recurring++;
    return recurring > 0 && recurring * RECURRING_SHARE > values.size;
  }

  /**
   * The values (at `at`, right after a detected identifier) seen after identifier values (see
   * `noteIdentifiers`) that none of the other values was seen after.
   */
  private aloneAfterIdentifiers(at: number, values: Iterable<string>): Set<string> {
    const seen = new Map<number, number>();
    const parents: Array<[string, ReadonlySet<number>]> = [];
    for (const value of values) {
      const digests = this.identifierParentsOf.get(`${at}/${value}`);
      if (digests === undefined || digests.size === 0) continue;
      parents.push([value, digests]);
      for (const digest of digests) seen.set(digest, (seen.get(digest) ?? 0) + 1);
    }
    const alone = new Set<string>();
    for (const [value, digests] of parents)
      if ([...digests].every((digest) => seen.get(digest) === 1)) alone.add(value);
    return alone;
  }

  /**
   * Index every kept record again, as they resolve now, in steps (see `pause`): each pass is built into maps of its
   * own while the index as it was goes on answering the app's requests between steps, and takes its place whole.
   */
  private reindexSteps(): Generator<void> {
    return this.keptSteps(true, this.reindexAll());
  }

  private *reindexAll(): Generator<void> {
    yield* this.pause();
    const serving = this.indexes();
    // Twice: where identifiers sit (found by the first pass) changes how the second resolves.
    this.useIndexes(emptyIndexes());
    for (const kept of this.records) this.place(kept);
    const first = this.indexes();
    if (this.counted - this.stepFrom >= STEP_WORK) {
      this.useIndexes(serving);
      yield* this.pause();
    }
    // Collections too: a collection found late in the first pass (`device` of `/v1/ua/device/7EIWB12AH`) is a route
    // word for the records placed before it (`/v1/ua/device/IRF`), which are placed under it, not under a value.
    const { identifierPositions, identifierRests, literalRests, literalRestsAny, collectionWords } = first;
    this.useIndexes({
      ...emptyIndexes(),
      identifierPositions,
      identifierRests,
      literalRests,
      literalRestsAny,
      collectionWords,
    });
    for (const kept of this.records) this.place(kept);
  }

  /** The maps the index is made of (see `reindex`). */
  private indexes(): Indexes {
    return {
      index: this.index,
      firstValues: this.firstValues,
      routeValues: this.routeValues,
      rootRouteIndex: this.rootRouteIndex,
      sharedRootRoutes: this.sharedRootRoutes,
      rootNumbers: this.rootNumbers,
      identifierPositions: this.identifierPositions,
      identifierRests: this.identifierRests,
      literalRests: this.literalRests,
      literalRestsAny: this.literalRestsAny,
      collectionWords: this.collectionWords,
      restValues: this.restValues,
    };
  }

  /** Make `maps` the index: what was kept of the one before (see `routeWordsFresh`, `rootMembers`) is no more. */
  private useIndexes(maps: Indexes): void {
    ({
      index: this.index,
      firstValues: this.firstValues,
      routeValues: this.routeValues,
      rootRouteIndex: this.rootRouteIndex,
      sharedRootRoutes: this.sharedRootRoutes,
      rootNumbers: this.rootNumbers,
      identifierPositions: this.identifierPositions,
      identifierRests: this.identifierRests,
      literalRests: this.literalRests,
      literalRestsAny: this.literalRestsAny,
      collectionWords: this.collectionWords,
      restValues: this.restValues,
    } = maps);
    this.routeStamp++;
    this.evidenceStamp++;
    this.rootCache = undefined;
  }

  /** Look at each undecided position of `record`; true when one was learned. In steps, between positions (see `pause`). */
  private *decide(record: PathRecord): Generator<void, boolean> {
    const resolved = this.resolveSegments(record.segments);
    this.counted += Math.max(1, resolved.length);
    let key = '';
    let previousKey = '';
    for (let at = 0; at < resolved.length; at++) {
      const segment = resolved[at]!;
      const position = this.learned.get(key);
      const text = literalText(record.segments[at]!, segment);
      if (at === 0) {
        // The first segment: learned (or joined) from values that share whole routes, see `rootMembers`.
        if (text !== undefined && !(position?.members?.has(text) ?? false) && this.learnRoot()) return true;
      }
      // A literal at a learned position: is it an exception (a route word) or a value, with what is known now?
      else if (text !== undefined && position !== undefined) {
        // Names before identifiers at a position learned from values (`/sets/globex/17` beside `/sets/{set}`).
        if (
          segment.kind === 'literal' &&
          plainPosition(position) &&
          isCollection(resolved, at) &&
          !this.afterWord(resolved, at, previousKey) &&
          this.namesBefore(resolved, at, key)
        ) {
          position.namesToo = true;
          this.learnedCount++;
          return true;
        }
        this.reconsider(key, text, position);
      } else if (segment.kind === 'literal' && this.mayLearn(resolved, at, key)) {
        // A value ending its path beside a collection (`/locale/currencies` beside `/locale/timezones/17`).
        const leaf = at === resolved.length - 1 && this.besideCollection(key, at);
        // Right after a value of a position learned after a version (`/v3/{name}/brands`): its route words.
        // Beside a route word of other parents (`platforms` of `/stats/outbound/clicks/platforms`, after `opens` too):
        // its siblings are likely the parent's other routes (`…/clicks/location`), learned from many alike only.
        // Beside identifiers ending paths, many values each read once only (see `onceBesideIdentifiers`).
        const identifiers = this.identifierPositions.has(`${key}|${continuation(resolved, at)}`);
        const strict =
          identifiers ||
          this.afterWord(resolved, at, previousKey) ||
          leaf ||
          this.learned.get(previousKey)?.afterNames === true ||
          this.besideRouteWord(key, at);
        if (this.decidePosition(key, segment.text, strict, false, strict && this.manyOnce(key), identifiers))
          return true;
      } else if (
        segment.kind === 'param' &&
        segment.name !== LEARNED &&
        (position === undefined || (position.strict === true && position.identifiers !== true)) &&
        this.onceIdentifiersLearned(resolved, at, key)
      ) {
        return true;
      } else if (segment.kind === 'literal' && this.mayLearn(resolved, at, key, true)) {
        // Right after `api` or a version (`/v3/acme/brands`), where an API's resources live too (`/v1/users`): from
        // four alike values among sixteen or more, as an API has few resources there, and names are many.
        if (this.decidePosition(key, segment.text, false, true)) return true;
      } else if (
        segment.kind === 'literal' &&
        isCollection(resolved, at) &&
        !this.afterWord(resolved, at, previousKey) &&
        this.decideNames(resolved, at, key)
      )
        return true;
      yield* this.pause();
      previousKey = key;
      key = extendKey(key, segment);
    }
    return false;
  }

  /**
   * Learn the first segment, or grow its values, from what is known now: true when they changed.
   * Order does not matter: the values are computed again from all the evidence each time.
   */
  private learnRoot(): boolean {
    const members = this.rootMembers();
    const position = this.learned.get('');
    const before = position?.members;
    if (before !== undefined && before.size === members.size && [...members].every((value) => before.has(value)))
      return false;
    if (members.size === 0) {
      if (position === undefined) return false;
      this.learned.delete('');
    } else this.learned.set('', { exceptions: new Set(), members });
    this.learnedCount++;
    return true;
  }

  /**
   * The first segment holds names (`/users`, `/health`), so its values are told apart more
   * strictly: two values are alike when they lead to two or more of the same whole routes, every
   * segment the same literal, on one of them at least with answers (or accepted bodies) of the same
   * fields on both (`/json/Teams`, `/xml/Teams` and `/json/Players`, `/xml/Players`; the VIN of
   * `/{vin}/components` and `/{vin}/vehicle`), and no answer against it. Once two are, a value
   * sharing one such route with one of them, nothing against it, is a value too; nothing else is
   * (a scanner's `/wp-admin/setup.php`, `/health`).
   */
  private rootMembers(): Set<string> {
    if (this.rootCache !== undefined) return this.rootCache;
    const members = new Set<string>();
    this.rootCache = members;
    const siblings = this.index.get('');
    if (siblings === undefined || siblings.size < 2) return members;
    // Route → value → the fields seen on it; a value whose answers disagree with another's on a route shares nothing
    // with it. Only routes two values or more were seen on (see `rootRouteIndex`): the others pair no values.
    const eligibility = new Map<string, boolean>();
    const eligible = (value: string): boolean => {
      let ok = eligibility.get(value);
      if (ok === undefined) {
        const placed = siblings.get(value) ?? [];
        ok = !(
          isVersionLike(value) ||
          introducesNames({ kind: 'literal', text: value }) ||
          this.besideIdentifiers('', value) ||
          placed.some((one) => isCollection(one.resolved, one.at))
        );
        eligibility.set(value, ok);
      }
      return ok;
    };
    // A route a collection leads to too (`/employees/count` beside `/employees/17`) is one of an API's sibling
    // resources' routes, which they share (`/projects/count`, `/activities/count`): it pairs no values.
    const collections = new Map<string, boolean>();
    const collection = (value: string): boolean => {
      let is = collections.get(value);
      if (is === undefined) {
        is = (siblings.get(value) ?? []).some((one) => isCollection(one.resolved, one.at));
        collections.set(value, is);
      }
      return is;
    };
    const byRoute = new Map<string, Map<string, RootRoute[]>>();
    for (const route of this.sharedRootRoutes) {
      if (identifierRoute(route)) continue;
      const values = new Map<string, RootRoute[]>();
      const all = this.rootRouteIndex.get(route)!;
      let shared = false;
      for (const value of all.keys()) if ((shared = collection(value))) break;
      if (shared) continue;
      for (const [value, seen] of all) {
        if (eligible(value)) values.set(value, seen);
        // Pairs grow as the square of the values: the first ones only.
        if (values.size >= MAX_ROUTE_VALUES) break;
      }
      if (values.size >= 2) byRoute.set(route, values);
    }
    // Pair of values → the routes they share (`agreeing`: with answers known and alike on both); `routes` null
    // once their answers disagree on one, but for a pair whose shared routes are an API's routes served under each
    // (route words, see `sharedRouteWords`): there optional fields left out make an answer disagree now and then
    // (`against` counts them), and the pair is one of values while twice as many routes agree.
    const pairs = new Map<
      string,
      { a: string; b: string; routes: Set<string> | null; agreeing: Set<string>; against: number }
    >();
    for (const [route, values] of byRoute) {
      const list = [...values];
      for (let i = 0; i < list.length; i++)
        for (let j = i + 1; j < list.length; j++) {
          const [a, ra] = list[i]!;
          const [b, rb] = list[j]!;
          const id = a < b ? `${a}\n${b}` : `${b}\n${a}`;
          let pair = pairs.get(id);
          if (pair === undefined) pairs.set(id, (pair = { a, b, routes: new Set(), agreeing: new Set(), against: 0 }));
          if (pair.routes === null) continue;
          const x = mergeRoutes(ra);
          const y = mergeRoutes(rb);
          if (fieldsDisagree(x, y)) {
            if (this.routeWordPairs.has(id)) pair.against++;
            else pair.routes = null;
          } else {
            pair.routes.add(route);
            if (fieldsAgree(x, y)) pair.agreeing.add(route);
          }
        }
    }
    for (const pair of pairs.values())
      if (pair.against > 0 && pair.agreeing.size < 2 * pair.against) pair.routes = null;
    for (const { a, b, routes, agreeing } of pairs.values())
      if (routes !== null && routes.size >= 2 && agreeing.size >= 1) {
        members.add(a);
        members.add(b);
      }
    for (let grown = members.size > 0; grown;) {
      grown = false;
      for (const { a, b, routes } of pairs.values()) {
        if (routes === null || members.has(a) === members.has(b)) continue;
        members.add(a);
        members.add(b);
        grown = true;
      }
    }
    // A value seen only on routes with detected identifiers (`PATCH /Alice19/dashboards/57906/blocks/841215`, a
    // username's dashboard block) has no whole literal route to pair by: it is a value too where it shares such a
    // route with a value shown alike whose fields there do not disagree with its own (the first
    // `MAX_ROUTE_PARTNERS` values shown alike on the route looked at; held-out 20's adafruit.com).
    for (let grown = members.size > 0; grown;) {
      grown = false;
      for (const route of this.sharedRootRoutes) {
        if (!identifierRoute(route)) continue;
        const all = this.rootRouteIndex.get(route)!;
        const partners: RootRoute[] = [];
        let shared = false;
        for (const [value, seen] of all) {
          if ((shared = collection(value))) break;
          if (members.has(value) && partners.length < MAX_ROUTE_PARTNERS) partners.push(mergeRoutes(seen));
        }
        if (shared || partners.length === 0) continue;
        let looked = 0;
        for (const [value, seen] of all) {
          if (members.has(value) || !eligible(value)) continue;
          if (++looked > MAX_ROUTE_VALUES) break;
          const mine = mergeRoutes(seen);
          if (!partners.some((partner) => !fieldsDisagree(mine, partner))) continue;
          members.add(value);
          grown = true;
        }
      }
    }
    const numbers = new Map<string, readonly Placed[]>();
    for (const value of this.rootNumbers) numbers.set(value, siblings.get(value) ?? []);
    for (const value of numberMembers(numbers)) members.add(value);
    for (const value of versionMembers(siblings, eligible)) members.add(value);
    if (members.size > 0) for (const value of aloneMembers(siblings, members, eligible)) members.add(value);
    return members;
  }

  /**
   * Compare `value` with its siblings under `key`; learn the position when they are enough (see
   * `enoughSiblings`). `strict` right after a detected identifier or a route word.
   */
  private decidePosition(
    key: string,
    value: string,
    strict: boolean,
    afterNames = false,
    once = false,
    identifiers = false,
  ): boolean {
    // Decided already, with nothing placed or learned since: the same answer (not learned).
    const looked = `d${strict ? 's' : ''}${afterNames ? 'a' : ''}${once ? 'o' : ''}${identifiers ? 'i' : ''}\n${key}\n${value}`;
    if (this.lookedFresh()) {
      if (this.lookedAt.has(looked)) return false;
      this.lookedAt.add(looked);
    }
    const siblings = this.index.get(key);
    const mine = siblings?.get(value);
    // Right after `api` or a version, among many values only (see `manyAfterNames`).
    if (
      !siblings ||
      !mine ||
      siblings.size < (afterNames ? MANY_VALUES : 2) ||
      !(identifiers ? once && this.requestedOnce(mine) : this.comparable(key, value, mine))
    )
      return false;
    // After a route word, many values each requested once are values whatever they answer (see `manyOnce`).
    if (!once && !this.enoughSiblings(key, value, mine, siblings, afterNames ? 'many' : strict ? 'strict' : 'values'))
      return false;
    const position: LearnedPosition = afterNames
      ? { exceptions: new Set(), afterNames }
      : identifiers
        ? { exceptions: new Set(), strict, identifiers }
        : { exceptions: new Set(), strict };
    this.learned.set(key, position);
    this.learnedCount++;
    for (const other of siblings.keys()) this.reconsider(key, other, position);
    return true;
  }

  /**
   * Can a sibling value be compared with others at all? Not a version, a route word, a word beside
   * identifiers or a collection; `names`, or at a position learned from names (see `enoughSiblings`): only
   * a name right before a detected identifier, where a collection sits otherwise.
   */
  private comparable(key: string, value: string, placed: readonly Placed[], names = false): boolean {
    if (!this.lookedFresh()) return this.comparableNow(key, value, placed, names);
    const kept = `${names ? 'n' : ''}\n${key}\n${value}`;
    let answer = this.comparableKept.get(kept);
    if (answer === undefined) this.comparableKept.set(kept, (answer = this.comparableNow(key, value, placed, names)));
    return answer;
  }

  /** See `comparable`: `placed` is what the index holds of `value` under `key`, so the answer is kept by them. */
  private comparableNow(key: string, value: string, placed: readonly Placed[], names: boolean): boolean {
    const before = names || this.learned.get(key)?.names === true;
    return (
      !isVersionLike(value) &&
      !(placed[0]!.at > 0 && isPlainNumber(value)) &&
      !this.isRouteWord(placed[0]!.at, value, !before) &&
      !this.besideIdentifiers(key, value) &&
      !this.readAgainWithNames(key, value) &&
      placed.every((one) => isCollection(one.resolved, one.at) === before)
    );
  }

  /**
   * Learn a position of names right before a detected identifier (`/sales_tax/{salesTax}/{id}`) when
   * the siblings of the literal at `at` show them values (see `enoughSiblings`). Not after `api` or a
   * version, nor where identifiers are seen with the same continuation.
   */
  private decideNames(resolved: readonly Segment[], at: number, key: string): boolean {
    if (!this.namesBefore(resolved, at, key)) return false;
    const siblings = this.index.get(key)!;
    const position: LearnedPosition = { exceptions: new Set(), names: true };
    this.learned.set(key, position);
    this.learnedCount++;
    for (const other of siblings.keys()) this.reconsider(key, other, position);
    return true;
  }

  /** Do the literal at `at` (right before a detected identifier) and its siblings show names (see `decideNames`)? */
  private namesBefore(resolved: readonly Segment[], at: number, key: string): boolean {
    const segment = resolved[at]!;
    if (segment.kind !== 'literal' || at === 0 || namesAfter(resolved, at - 1)) return false;
    if (this.identifierPositions.has(`${key}|${continuation(resolved, at)}`)) return false;
    const siblings = this.index.get(key);
    const mine = siblings?.get(segment.text);
    if (!siblings || !mine || siblings.size < MANY_SIBLINGS || !this.comparable(key, segment.text, mine, true))
      return false;
    return this.namesShown(key, siblings);
  }

  /**
   * Do the values under `key` show its position one of names before identifiers (see `enoughSiblings`)?
   * The new value may only add a sibling the same as the others (`/sales_tax/ivan/106` answered 404): any
   * value may show it. Only the first `MAX_COMPARED_VALUES` values are compared, each with the others of them,
   * and the answer is kept until the revision, the index or those values' observations change: thousands of
   * names before identifiers that never turn out alike (each looked at again as every record is decided
   * again) cost a look-up each, not a comparison with every other.
   */
  private namesShown(key: string, siblings: ReadonlyMap<string, readonly Placed[]>): boolean {
    let placements = 0;
    let counted = 0;
    for (const placed of siblings.values()) {
      if (counted++ >= MAX_COMPARED_VALUES) break;
      placements += placed.length;
    }
    const memo = this.namesMemo.get(key);
    if (
      memo !== undefined &&
      memo.siblings === siblings &&
      memo.revision === this.revision &&
      memo.placements === placements
    )
      return memo.shown;
    let shown = false;
    let candidates = 0;
    for (const [value, placed] of siblings) {
      if (candidates++ >= MAX_COMPARED_VALUES) break;
      if (this.comparable(key, value, placed, true) && this.enoughSiblings(key, value, placed, siblings, 'names')) {
        shown = true;
        break;
      }
    }
    this.namesMemo.set(key, { siblings, revision: this.revision, placements, shown });
    return shown;
  }

  /**
   * The values under `key` a value (placed as `mine`) is compared with: the first `MAX_COMPARED_VALUES` of the
   * position, then the first few seen with one of its own continuations (see `routePartners`): a value past the
   * first ones (`/v3/erin/accountLinks` among hundreds of names) meets values that lead where it does.
   */
  private *partners(
    key: string,
    mine: readonly Placed[],
    siblings: ReadonlyMap<string, readonly Placed[]>,
  ): Generator<[string, readonly Placed[]]> {
    let partners = 0;
    for (const sibling of siblings) {
      // With the first values of the position only (see `MAX_COMPARED_VALUES`).
      if (partners++ >= MAX_COMPARED_VALUES) break;
      yield sibling;
    }
    if (partners <= MAX_COMPARED_VALUES) return;
    const first = this.firstValues.get(key);
    for (const other of this.routePartners(key, mine)) {
      if (first?.has(other) === true) continue;
      const theirs = siblings.get(other);
      if (theirs !== undefined) yield [other, theirs];
    }
  }

  /** The first values under `key` seen with one of the continuations of `mine` (see `routeValues`). */
  private routePartners(key: string, mine: readonly Placed[]): Set<string> {
    const byRoute = this.routeValues.get(key);
    const out = new Set<string>();
    if (byRoute === undefined) return out;
    for (const one of mine) for (const other of byRoute.get(routeOf(one)) ?? []) out.add(other);
    return out;
  }

  /**
   * Does `value` (placed as `mine`) show little of its own, so that what contradicts is answers and bodies that left
   * optional fields out, not a route word's other shape (`/users/me` answering `{plan, email, quota}` beside users'
   * `{login, id, name}`)? Either every field of its answers and accepted bodies, on each of its routes, was seen on
   * that route from two or more of its partners (see `partners`; `POST /v3/heidi/accountLinks` taking `{status}` where
   * others take `{name, status, target}`, `{name, target}`). Or, right after a literal (right after a parameter route
   * words live: `/games/{gameId}/achievements`, `…/reddit` answering `{id, name, …}`), each of its routes (method and
   * what follows) was seen with another value too, and half or more of two or more top-level fields it showed were
   * seen, on any route, from two or more partners showing fields: `PUT /1/sandboxes/tyrell-blue` taking and answering
   * parts of what `GET /1/sandboxes/alice` answers, `GET /providers/trent` answering `{href, provider}` beside
   * `{provider, category, …}` (held-out 14; a route of its own, `/nh/fossils/all/wayne` beside `/nh/art/alice`, or
   * one field, tells nothing).
   */
  private littleOfItsOwn(
    key: string,
    value: string,
    mine: readonly Placed[],
    siblings: ReadonlyMap<string, readonly Placed[]>,
  ): boolean {
    const { routes, pool, partners } = this.partnerFields(key, value, mine, siblings);
    const inside = (one: Placed): boolean => {
      const seen = routes.get(routeOf(one))!;
      return (
        seen.values >= 2 &&
        (one.record.keys ?? []).every((name) => seen.keys.has(name)) &&
        (one.record.requestKeys ?? []).every((name) => seen.requestKeys.has(name))
      );
    };
    if (mine.every(inside)) return true;
    if (partners < 2 || mine[0]!.resolved[mine[0]!.at - 1]?.kind !== 'literal') return false;
    const byRoute = this.routeValues.get(key);
    for (const one of mine) if (byRoute?.get(routeOf(one))?.some((other) => other !== value) !== true) return false;
    if (ownTwice(mine, pool)) return false;
    const fields = new Set<string>();
    let own = 0;
    for (const one of mine)
      for (const name of fieldsOf(one))
        if (topLevel(name) && !fields.has(name)) {
          fields.add(name);
          if (!pool.has(name)) own++;
        }
    return fields.size >= 2 && own * 2 <= fields.size;
  }

  /**
   * What the partners of `value` (placed as `mine`; see `partners`) showed: per route of `mine`, how many of them were
   * seen there and the fields of their answers and accepted bodies there; every field they showed on any route
   * (`pool`); and how many of them showed fields at all.
   */
  private partnerFields(
    key: string,
    value: string,
    mine: readonly Placed[],
    siblings: ReadonlyMap<string, readonly Placed[]>,
  ): {
    routes: Map<string, { values: number; keys: Set<string>; requestKeys: Set<string> }>;
    pool: Set<string>;
    partners: number;
  } {
    const routes = new Map<string, { values: number; keys: Set<string>; requestKeys: Set<string> }>();
    for (const one of mine) routes.set(routeOf(one), { values: 0, keys: new Set(), requestKeys: new Set() });
    const pool = new Set<string>();
    let partners = 0;
    for (const [other, theirs] of this.partners(key, mine, siblings)) {
      if (other === value || !this.comparable(key, other, theirs)) continue;
      const counted = new Set<string>();
      if (theirs.some(withFields)) partners++;
      for (const one of theirs) {
        this.counted++;
        const seen = routes.get(routeOf(one));
        if (seen !== undefined && !counted.has(routeOf(one))) {
          counted.add(routeOf(one));
          seen.values++;
        }
        for (const name of one.record.keys ?? []) seen?.keys.add(name);
        for (const name of one.record.requestKeys ?? []) seen?.requestKeys.add(name);
        for (const name of fieldsOf(one)) pool.add(name);
      }
    }
    return { routes, pool, partners };
  }

  /**
   * Is `value` (placed as `mine` under `key`) a name before identifiers among names before identifiers? Seen only
   * with a detected identifier after it, after one value at most of the position before, where another value of
   * its position was seen with one of its continuations (`GET /project/initech-river/erin-dinner/70439` beside
   * `GET /project/Erin44/Mallory54/67768`; `POST /project/Alice68/walter/65802/cancel` beside other cancels). An
   * identified resource's answers vary with it (optional fields), and a route word there is a collection of every
   * value before it (`/project/{owner}/builds/17` of many owners) that recurs (see `isRouteWord`). So answers of
   * other fields do not make it an exception that would leave the agent as it is and name the identifier after it
   * (`{erinDinnerId}`).
   */
  private nameAmongNames(key: string, value: string, mine: readonly Placed[]): boolean {
    const at = mine[0]!.at;
    if ((this.parentsOf.get(`${at}/${value}`)?.size ?? 0) > 1) return false;
    for (const one of mine) if (!identifierAfter(one)) return false;
    const byRoute = this.routeValues.get(key);
    return mine.some((one) => byRoute?.get(routeOf(one))?.some((other) => other !== value) === true);
  }

  /**
   * Is a value of a learned position an exception (a route word such as `/users/me`)? When its
   * continuations contradict a sibling's and agree with none; or when it is an action (see
   * `isAction`) alike with fewer than three other actions and with no other value (`POST
   * /batch/send`, `POST /batch/schedule` beside `GET /batch/{batch}`). Looked at again with each new
   * observation of the value and each time something is learned, so the order traffic came in
   * does not decide it.
   */
  private reconsider(key: string, value: string, position: LearnedPosition, others = true): void {
    // Reconsidered already (with the exceptions after it), with nothing placed, learned or changed since: the same.
    if (this.lookedFresh()) {
      const looked = `${others ? 'r' : 'x'}\n${key}\n${value}`;
      if (this.lookedAt.has(looked)) return;
      const revision = this.revision;
      this.reconsiderFrom(key, value, position, others);
      // Kept only when it changed nothing: the same look at the same state changes nothing again.
      if (this.revision === revision) this.lookedAt.add(looked);
      return;
    }
    this.reconsiderFrom(key, value, position, others);
  }

  private reconsiderFrom(key: string, value: string, position: LearnedPosition, others = true): void {
    const siblings = this.index.get(key);
    const mine = siblings?.get(value);
    if (siblings === undefined || mine === undefined) return;
    // A route word (see `isRouteWord`) keeps its text whatever it answers: no exception. As one, it would make the
    // positions after it strict (see `afterWord`), and what they then learn or forget would decide it in turn
    // (`monthly` of `/metrics/{}/{}/{}`: an exception while `…/monthly/{}` is learned, which it then forgets).
    if (this.isRouteWord(mine[0]!.at, value)) {
      if (position.exceptions.delete(value)) this.changes++;
      return;
    }
    const action = position.strict !== true && isAction(mine);
    let contradicts = false;
    let alike = false;
    let same = false;
    let actions = 0;
    for (const [other, theirs] of this.partners(key, mine, siblings)) {
      if (other === value || !this.comparable(key, other, theirs)) continue;
      const verdict = this.compare(mine, theirs);
      if (verdict === 'alike' || verdict === 'same') {
        if (action && isAction(theirs)) {
          actions++;
          continue;
        }
        // The same following segments with nothing to compare agree too (a position learned from many such
        // values), but only where nothing contradicts: a sibling whose answers were not looked at (sampled out)
        // does not make `schedule` a value when `GET /messages/schedule` answers other fields than `/messages/alice`.
        if (verdict === 'same') {
          same = true;
          continue;
        }
        alike = true;
        break;
      }
      if (verdict === 'contradicts') contradicts = true;
    }
    const was = position.exceptions.has(value);
    // Free text (`esse dolor`, `New York`) is a value someone sent, never a route word: no exception. Nor is a name
    // before an identifier among names before identifiers (`/project/{owner}/erin-dinner/{id}`, see `nameAmongNames`).
    // Nor one of many values each requested once after a route word (see `manyOnce`).
    if (
      hasSpace(value) ||
      (contradicts &&
        (this.nameAmongNames(key, value, mine) ||
          (position.strict === true && this.requestedOnce(mine) && this.manyOnce(key))))
    )
      contradicts = false;
    const fewActions = action && !alike && !same && actions > 0 && actions + 1 < MANY_SIBLINGS;
    // An exception made while this record settles moved what follows it to a prefix of its own, where each
    // follower (`/v1/airport/autocomplete/tyrell`) is a continuation of its own, its answers no more merged with the
    // others' (one sparse answer then agrees with a sibling's): that is no evidence against it. It stays one until
    // the record is settled; else it flips back and forth with each index, and the last pass allowed decides.
    const made = `${key}\n${value}`;
    const kept = was && this.settledExceptions?.has(made) === true;
    // A value whose bodies left optional fields out contradicts its siblings, but shows little they lack.
    // Beside identifiers, a literal read again is a route word there (see `identifiers`).
    const readAgain = position.identifiers === true && !this.requestedOnce(mine);
    if (
      (contradicts && !alike && actions === 0 && !this.littleOfItsOwn(key, value, mine, siblings)) ||
      fewActions ||
      kept ||
      readAgain
    )
      position.exceptions.add(value);
    else position.exceptions.delete(value);
    if (position.exceptions.has(value) !== was) {
      this.changes++;
      if (!was) this.settledExceptions?.add(made);
    }
    // What this value shows may settle the exceptions so far (a value alike with an exception makes it one no more);
    // a value past the first ones is compared with those that lead where it does only.
    if (!others || position.exceptions.size === 0) return;
    const compared = this.firstValues.get(key)?.has(value) === true ? undefined : this.routePartners(key, mine);
    for (const other of [...position.exceptions])
      if (other !== value && (compared === undefined || compared.has(other)))
        this.reconsider(key, other, position, false);
  }
}

/** Is a detected identifier among the segments after the value of `one` (`/{project}/{id}/cancel`)? */
function identifierAfter(one: Placed): boolean {
  for (let k = one.at + 1; k < one.resolved.length; k++) {
    const segment = one.resolved[k]!;
    if (segment.kind === 'param' && segment.name !== LEARNED) return true;
  }
  return false;
}

/**
 * Did two of the records of a value (placed as `mine`) show one field, at any depth, that its partners never showed
 * (`pool`, see `partnerFields`)? Then it is a field of its own, not an optional one the others happened to leave out:
 * postmark's `GET /messages/outbound/clicks` and `…/clicks/{messageid}` both answering `Clicks[].ClickLocation` beside
 * messages answering `{Body}` and `{TextBody, From, …}`; thesmsworks' `POST /batch/any` taking `[]ttl` three times.
 */
function ownTwice(mine: readonly Placed[], pool: ReadonlySet<string>): boolean {
  const once = new Set<string>();
  for (const one of mine)
    for (const name of new Set(fieldsOf(one))) {
      if (pool.has(name)) continue;
      if (once.has(name)) return true;
      once.add(name);
    }
  return false;
}

/** Did `one` answer or take a body with fields? */
function withFields(one: Placed): boolean {
  return (one.record.keys?.length ?? 0) > 0 || (one.record.requestKeys?.length ?? 0) > 0;
}

/** The fields of the answer and of the accepted request body of `one`, response fields first. */
function fieldsOf(one: Placed): readonly string[] {
  const { keys, requestKeys } = one.record;
  return requestKeys === null ? (keys ?? []) : keys === null ? requestKeys : [...keys, ...requestKeys];
}

/** Is a field name (see `responseKeys`) a top-level field of its body (`name`, `[]name` of a list), not one below? */
function topLevel(name: string): boolean {
  const below = name.startsWith('[]') ? name.slice(2) : name;
  return !below.includes('.') && !below.includes('[]');
}

/** Does a literal hold words apart (`esse dolor`)? Route words are single tokens. */
function hasSpace(text: string): boolean {
  return /\S\s+\S/.test(text);
}

/**
 * An action: a value only ever sent to, never read, as the last segment of its path, with a POST
 * among its methods (`POST /message/send`; `POST` and `DELETE /AuthTokens/Secondary`). RPC-style
 * actions take and answer bodies of the same fields often: alike, they still need as many
 * siblings as values with nothing to compare (see `enoughSiblings`).
 */
function isAction(placed: readonly Placed[]): boolean {
  let post = false;
  for (const one of placed) {
    if (one.record.method === 'GET') return false;
    // Sent to as the last segment; routes under it sent to as well, never read (`POST /auth/login/apinf`).
    if (one.at === one.resolved.length - 1 && one.record.method === 'POST') post = true;
  }
  return post;
}

/**
 * Values kept per position and number of segments after it (see `unseenContinuation`): enough that
 * a few exceptions among them still leave another value to show the continuation is no value's own.
 */
const MAX_REST_VALUES = 8;

/** The maps of the index (see `PathLearner.reindex`): each resolved prefix's values, continuations and routes. */
interface Indexes {
  index: Map<string, Map<string, Placed[]>>;
  firstValues: Map<string, Set<string>>;
  routeValues: Map<string, Map<string, string[]>>;
  rootRouteIndex: Map<string, Map<string, RootRoute[]>>;
  sharedRootRoutes: Set<string>;
  rootNumbers: Set<string>;
  identifierPositions: Set<string>;
  identifierRests: Map<string, Set<string>>;
  literalRests: Map<string, Map<string, Set<string>>>;
  literalRestsAny: Map<string, Set<string>>;
  collectionWords: Set<string>;
  restValues: Map<string, Map<number, string[]>>;
}

function emptyIndexes(): Indexes {
  return {
    index: new Map(),
    firstValues: new Map(),
    routeValues: new Map(),
    rootRouteIndex: new Map(),
    sharedRootRoutes: new Set(),
    rootNumbers: new Set(),
    identifierPositions: new Set(),
    identifierRests: new Map(),
    literalRests: new Map(),
    literalRestsAny: new Map(),
    collectionWords: new Set(),
    restValues: new Map(),
  };
}

/**
 * Work (see `PathLearner.work`) after which the learner's work in steps yields at its next whole point (see
 * `PathLearner.pause`): about a millisecond on wikimedia-like traffic (docs/paths.md).
 */
const STEP_WORK = 2_000;

/** Run work in steps (see `PathLearner.observeSteps`) to its end. */
function finish(steps: Generator<void> | undefined): void {
  if (steps !== undefined) while (steps.next().done !== true);
}

/** Times one observation indexes the evidence again because exceptions changed, at most (see `settle`). */
const MAX_MOVES = 4;

/** Parents of a literal, and literals at a position, counted at most (see `isRouteWord`). */
const MAX_PARENTS = 64;
/** Different values before a literal that make it a route word (see `isRouteWord`, `noteIdentifiers`). */
const ROUTE_WORD_PARENTS = 3;
/** Literals two positions after one prefix that are many (see `amongManyValues`). */
const MANY_VALUES = 16;
/** At most one in this many recurring (see `recursAfterIdentifiers`, `versionMembers`). */
const RECURRING_SHARE = 4;
/**
 * Literals two positions after one prefix, at most one in this many of them recurring: values that happen to recur,
 * not route words (see `manyValuesUnder`). Names drawn from a few dozen recur more as traffic grows (held-out 15's
 * botify.com: 28 of 111 names after `/analyses/{username}`, 187 requests); route words recur after every value they
 * follow, and are few.
 */
const RECURRING_VALUES_SHARE = 3;
/** Literals kept two positions after one prefix, prefixes kept, and prefixes kept per literal, at most. */
const MAX_GRANDCHILDREN = 256;
const MAX_GRAND_PREFIXES = 1_000;
const MAX_GRANDS = 4;
/** Literals after detected identifiers whose identifier values are counted, at most (see `noteIdentifiers`). */
const MAX_IDENTIFIER_WORDS = 10_000;

/** A 32-bit FNV-1a digest of a segment's text: identifier values are counted, never kept. */
function digestOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/**
 * Adds the digest of `value` to the set of `word` in `sets` (at most MAX_IDENTIFIER_WORDS words of
 * MAX_PARENTS digests each; the values stay in memory as digests only).
 * @returns the set's size once added, or 0 when nothing was added (seen before, or a bound reached).
 */
function noteDigest(sets: Map<string, Set<number>>, word: string, value: string): number {
  let digests = sets.get(word);
  if (digests === undefined) {
    if (sets.size >= MAX_IDENTIFIER_WORDS) return 0;
    sets.set(word, (digests = new Set()));
  }
  const digest = digestOf(value);
  if (digests.has(digest) || digests.size >= MAX_PARENTS) return 0;
  digests.add(digest);
  return digests.size;
}

/** Paths whose query parameter names are kept at most (see `noteQuery`). */
const MAX_QUERY_PATHS = 10_000;
/** Query parameter names kept per path at most (see `noteQuery`). */
const MAX_QUERY_NAMES = 32;
/** Paths noted under one prefix of a run of literals (see `noteRun`). */
const MAX_RUN_PATHS = 8;
/** Names of its own each of two values' query names must have for them to disagree (see `queriesAgree`). */
const OWN_QUERY_NAMES = 2;

/** How many of the names in `a` are not in `b`. */
function ownNames(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let own = 0;
  for (const name of a) if (!b.has(name)) own++;
  return own;
}

/** A detected identifier among the literals a word was seen after (see `noteMirrors`): `{` is never a literal's text. */
const IDENTIFIER = '{}';

/** Route words of mirrored routes kept at most (see `noteMirrors`), and mirrored groups likewise. */
const MAX_MIRRORS = 1_024;

/** Qualifiers of one mirrored word under one prefix that are values, not route words (see `mirror`). */
const MANY_QUALIFIERS = 4;

/** The kinds of the segments after `at` (`/s/{}`): what follows a literal, without its text. */
function restKinds(segments: readonly Segment[], at: number): string {
  let out = '';
  for (let k = at + 1; k < segments.length; k++) out += segments[k]!.kind === 'param' ? '/{}' : '/s';
  return out;
}

/**
 * A position learned from values only (strict too: `/team/{team}/media/tag/{tag}`, its values ending paths beside the
 * names `/media/tag/wonka-infra/52031`): not the first segment's, after names, of names or of identifiers' values (see
 * `namesToo`).
 */
function plainPosition(position: LearnedPosition): boolean {
  return (
    position.members === undefined &&
    position.identifiers !== true &&
    position.names !== true &&
    position.namesToo !== true &&
    position.afterNames !== true
  );
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
type Verdict = 'alike' | 'contradicts' | 'same' | 'unknown' | 'differs';

/**
 * Sibling values with the same continuation and nothing against it that make a position a
 * parameter even without answers to compare (`/v0/data/alice`, `/v0/data/bob`, … answered 4xx).
 */
const MANY_SIBLINGS = 4;

function compare(a: readonly Placed[], b: readonly Placed[]): Verdict {
  let agree = false;
  let same = false;
  let differs = false;
  for (const x of mergeFields(a)) {
    for (const y of mergeFields(b)) {
      if (x.record.method !== y.record.method) continue;
      const verdict = compareContinuations(x, y);
      if (verdict === 'contradicts') return 'contradicts';
      if (verdict === 'alike') agree = true;
      if (verdict === 'same') same = true;
      if (verdict === 'differs') differs = true;
    }
  }
  return agree ? 'alike' : differs ? 'contradicts' : same ? 'same' : 'unknown';
}

/**
 * A value's observations with the same method and continuation as one, their fields merged: a real API
 * leaves optional fields out of some answers and not of others (`{id}`, `{id, name, bio}` of one
 * `GET /users/alice`), and what the value answers is every field it was seen with.
 */
function mergeFields(placed: readonly Placed[]): readonly Placed[] {
  if (placed.length < 2) return placed;
  // Kept per list while it holds as many placements (lists only grow, and records never change): a value is
  // compared with dozens of siblings, again each time its records are decided.
  const kept = mergedFields.get(placed);
  if (kept !== undefined && kept.length === placed.length) return kept.merged;
  const merged = mergeFieldsOf(placed);
  mergedFields.set(placed, { length: placed.length, merged });
  return merged;
}

/** What `mergeFields` gave each list of placements, and for how many placements. */
const mergedFields = new WeakMap<readonly Placed[], { length: number; merged: readonly Placed[] }>();

function mergeFieldsOf(placed: readonly Placed[]): readonly Placed[] {
  const byRoute = new Map<string, Placed[]>();
  for (const one of placed) {
    const route = routeOf(one);
    const same = byRoute.get(route);
    if (same === undefined) byRoute.set(route, [one]);
    else same.push(one);
  }
  if (byRoute.size === placed.length) return placed;
  const out: Placed[] = [];
  for (const same of byRoute.values()) {
    const first = same[0]!;
    if (same.length === 1) out.push(first);
    else
      out.push({
        ...first,
        record: {
          ...first.record,
          keys: unionKeys(same.map((one) => one.record.keys)),
          requestKeys: unionKeys(same.map((one) => one.record.requestKeys)),
        },
      });
  }
  return out;
}

/** The fields of several bodies of one route merged (null when none has any). */
function unionKeys(lists: ReadonlyArray<readonly string[] | null>): readonly string[] | null {
  let out: Set<string> | undefined;
  for (const keys of lists) {
    if (keys === null) continue;
    out ??= new Set();
    for (const key of keys) out.add(key);
  }
  return out === undefined ? null : [...out];
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
  const answers = scalarsDiffer(x.record, y.record) ? 'contradicts' : compareKeys(x.record.keys, y.record.keys, true);
  const requests = compareKeys(x.record.requestKeys, y.record.requestKeys);
  // Bodies the API accepted and answers tell apart alike: both must agree where both are known.
  const fields =
    answers === 'contradicts' || requests === 'contradicts'
      ? 'contradicts'
      : answers === 'alike' || requests === 'alike'
        ? 'alike'
        : 'unknown';
  if (identical) {
    // The same following segments: the bodies decide when known, a shared literal otherwise.
    if (fields !== 'unknown') return fields;
    return sharedLiteral ? 'alike' : 'same';
  }
  // Different values further on too (`alice/web/issues`, `bob/cli/issues`): alike when they end the same, in an
  // identifier only past a literal both share (`alice/web/issues/17`, `bob/cli/issues/18`). Words and names all along
  // before one (`agg/second/wayne/{date}`, `forex/walter-billing/victor/{date}`) are what routes look like too: the
  // same below when the answers agree (four make a parameter, MANY_SIBLINGS), as names all along are.
  const lastX = x.resolved[x.resolved.length - 1]!;
  const lastY = y.resolved[y.resolved.length - 1]!;
  const sameEnd =
    (lastX.kind === 'literal' && lastY.kind === 'literal' && lastX.text === lastY.text) ||
    (lastX.kind === 'param' && lastY.kind === 'param' && sharedLiteral);
  // Or, one value following each (a name and a slug: `/articles/alice/my-post`, `/articles/bob/hello`), when the answers
  // agree; when they disagree (`/articles/me/all` a list, `/articles/alice/my-post` an article), they contradict.
  if (restX > 0 && ((sameEnd && fields !== 'contradicts') || (restX === 1 && fields === 'alike'))) return 'alike';
  // Names all along with agreeing answers (`/projects/acme/web/alice`, `/projects/bob/cli/dave`), as route words may
  // be (`/repos/dave/web/issues`, `/repos/erin/cli/pulls`): alike only when many siblings are (MANY_SIBLINGS).
  if (restX > 1 && fields === 'alike') return 'same';
  // One other value after each and nothing to compare (`/route/alice/bob`, `/route/carol/dave`): the same, as leaves are.
  if (
    restX === 1 &&
    fields === 'unknown' &&
    x.resolved[x.at + 1]!.kind === 'literal' &&
    y.resolved[y.at + 1]!.kind === 'literal'
  )
    return 'same';
  // Names all along and nothing to compare (`DELETE /peppol_identifiers/acme/umbrella-river/wayne`, `…/frank/oscar/stark`):
  // the same, as one other value after each is; four make a parameter (MANY_SIBLINGS).
  if (restX > 1 && !sharedLiteral && bodiless(x) && bodiless(y) && namesAllAlong(x) && namesAllAlong(y)) return 'same';
  // One other value after each (`/articles/me/all` a list, `/articles/alice/my-post` an article); an identifier after one
  // and a word after the other (`/project/{owner}/docs/17`, `/project/{owner}/web/envvar`) are other routes, nothing against.
  return restX === 1 &&
    fields === 'contradicts' &&
    x.resolved[x.at + 1]!.kind === 'literal' &&
    y.resolved[y.at + 1]!.kind === 'literal'
    ? 'differs'
    : 'unknown';
}

/**
 * Did two records answer on one route a scalar of one kind and a scalar of another, or a body with fields? The values of
 * one position answer alike (zoomconnect.com's `POST /messages/analyse/message-length` a number, `…/message-encoding` a
 * string, `…/full` an object: routes, taking the same body).
 */
function scalarsDiffer(x: PathRecord, y: PathRecord): boolean {
  if (x.scalar === undefined && y.scalar === undefined) return false;
  if (x.scalar !== undefined && y.scalar !== undefined) return x.scalar !== y.scalar;
  return (x.scalar === undefined ? x.keys : y.keys) !== null;
}

/** The kind of a scalar answer as `responseKeys` gives it (`=number`), if `keys` is one. */
function scalarOf(keys: readonly string[] | null): string | undefined {
  const only = keys?.length === 1 ? keys[0]! : '';
  return only.startsWith(SCALAR) ? only.slice(SCALAR.length) : undefined;
}

/** Did `one` answer and take no body with fields (`DELETE` answered 204)? */
function bodiless(one: Placed): boolean {
  return one.record.keys === null && one.record.requestKeys === null;
}

/** Is everything after the value of `one` a literal? */
function namesAllAlong(one: Placed): boolean {
  for (let k = one.at + 1; k < one.resolved.length; k++) if (one.resolved[k]!.kind !== 'literal') return false;
  return true;
}

/**
 * Field names agree when at least half of all of them are shared (Jaccard ≥ 0.5), or when the fewer,
 * two or more, are (but for one in five) among the others: a body that left optional fields out
 * (`{login, id}` beside `{login, id, name, url, plan}`). One field inside another body tells nothing:
 * an answer of it neither agrees nor disagrees (`answers`: `{name}` beside `{name, city, founded}`), an
 * accepted request body disagrees as before (`{orientation}` beside `{cog, lat, lon, orientation}`).
 */
function compareKeys(a: readonly string[] | null, b: readonly string[] | null, answers = false): Verdict {
  if (a === null || b === null || a.length === 0 || b.length === 0) return 'unknown';
  const inA = new Set(a);
  let shared = 0;
  for (const key of b) if (inA.has(key)) shared++;
  if (shared * 2 >= inA.size + b.length - shared) return 'alike';
  // One mostly inside the other: a body that left optional fields out (`{id}` beside `{id, name, bio}`).
  const fewer = Math.min(inA.size, b.length);
  if (fewer >= 2 && shared * 5 >= fewer * 4) return 'alike';
  // An answer of one field among another's: the rest left out, or another shape; nothing to tell by.
  // Two answers of one field each: two parts of one shape as likely as two shapes (answers leave optional fields out).
  return answers && fewer === 1 && (shared === 1 || Math.max(inA.size, b.length) === 1) ? 'unknown' : 'contradicts';
}

/** A whole route after a first segment, every segment a literal: its method and text, and the fields seen. */
interface RootRoute {
  route: string;
  keys: readonly string[] | null;
  requestKeys: readonly string[] | null;
}

/**
 * The whole route after the first segment of a record (`GET /Teams`), if it is one: literals all along, or a
 * literal first and detected identifiers among them (`PATCH /dashboards/{}/blocks/{}`, see `identifierRoute`).
 */
function rootRoute(record: PathRecord): RootRoute | undefined {
  const segments = record.segments;
  if (segments.length < 2 || segments[1]!.kind !== 'literal') return undefined;
  return { route: `${record.method} ${continuation(segments, 0)}`, keys: record.keys, requestKeys: record.requestKeys };
}

/** Is a first-segment route (see `rootRoute`) one with detected identifiers in it? */
function identifierRoute(route: string): boolean {
  return route.includes('/{}');
}

/** What one value answered on one route, its fields merged (see `mergeFields`). */
function mergeRoutes(seen: readonly RootRoute[]): RootRoute {
  if (seen.length === 1) return seen[0]!;
  return {
    route: seen[0]!.route,
    keys: unionKeys(seen.map((one) => one.keys)),
    requestKeys: unionKeys(seen.map((one) => one.requestKeys)),
  };
}

/** Are the fields seen on one route after two first-segment values known on both sides, and alike? */
function fieldsAgree(x: RootRoute, y: RootRoute): boolean {
  return compareKeys(x.keys, y.keys) === 'alike' || compareKeys(x.requestKeys, y.requestKeys) === 'alike';
}

/** Do the fields seen on one route after two first-segment values disagree? */
function fieldsDisagree(x: RootRoute, y: RootRoute): boolean {
  return (
    compareKeys(x.keys, y.keys, true) === 'contradicts' || compareKeys(x.requestKeys, y.requestKeys) === 'contradicts'
  );
}

/** First-segment values noted before one raw whole route at most (see `noteRootRoutes`): pairs grow as their square. */
const MAX_SHARED_ROOTS = 8;

/** Whole routes noted per pair of first-segment values at most (see `noteRootRoutes`): each new one is set beside them. */
const MAX_PAIR_ROUTES = 64;

/** First-segment values compared on one route at most (see `rootMembers`): pairs grow as their square. */
const MAX_ROUTE_VALUES = 64;

/**
 * Values of one position a value is compared with at most: the first seen there (in the order of the
 * kept evidence). Thousands of names that never turn out alike (`/tax/acme/17`, `/tax/erin/18`, …) cost
 * each new one as many comparisons at most, not one with every other (and every other again each time
 * the records are decided again).
 */
const MAX_COMPARED_VALUES = 64;

/** Values kept per position and continuation, compared besides the first ones of the position (see `partners`). */
const MAX_ROUTE_PARTNERS = 8;

/** A plain number (`1707`): at the first segment a version perhaps (`/2/users`), or an identifier. */
function isPlainNumber(text: string): boolean {
  return /^\d+$/.test(text);
}

/**
 * Is the segment at `at` a version: `v1`, `2.0`, or a plain number past the first segment (the
 * detectors leave one literal there only as a version: `/api/2/users`, `/oauth2/1/authorize`)?
 */
function versionAt(segments: readonly Segment[], at: number): boolean {
  const segment = segments[at];
  return segment?.kind === 'literal' && (isVersionLike(segment.text) || (at > 0 && isPlainNumber(segment.text)));
}

/** Do names live right after the segment at `at` (`api`, a version, a literal date; see `introducesNames`)? */
function namesAfter(segments: readonly Segment[], at: number): boolean {
  return introducesNames(segments[at]) || (at > 0 && versionAt(segments, at));
}

/**
 * Plain numbers at the first segment keep their text, as one there may be a version (`/2/users`).
 * But an API has few versions: four or more numbers followed alike (the same following segments,
 * identifiers as `{}`, whatever the method: `/1707/{id}`, `/3568/{id}`; or nothing after them), with no two
 * of them answering (or accepting) other fields on one method, are values (`/{appId}/{cardId}`), and so is
 * every number followed so.
 */
function numberMembers(siblings: ReadonlyMap<string, readonly Placed[]>): Set<string> {
  const members = new Set<string>();
  /** Continuation → number → what was seen after it (method and fields). */
  const byRest = new Map<string, Map<string, PathRecord[]>>();
  for (const [value, placed] of siblings) {
    if (!isPlainNumber(value)) continue;
    for (const { record } of placed) {
      const rest = continuation(record.segments, 0);
      let values = byRest.get(rest);
      if (values === undefined) byRest.set(rest, (values = new Map()));
      let records = values.get(value);
      if (records === undefined) values.set(value, (records = []));
      records.push(record);
    }
  }
  for (const values of byRest.values()) {
    if (values.size < MANY_SIBLINGS) continue;
    const list = [...values].slice(0, MAX_ROUTE_VALUES);
    const disagree = list.some(([, ra], i) =>
      list
        .slice(i + 1)
        .some(([, rb]) =>
          ra.some((x) =>
            rb.some(
              (y) =>
                x.method === y.method &&
                (compareKeys(x.keys, y.keys) === 'contradicts' ||
                  compareKeys(x.requestKeys, y.requestKeys) === 'contradicts'),
            ),
          ),
        ),
    );
    if (!disagree) for (const [value] of values) members.add(value);
  }
  return members;
}

/**
 * First-segment values before a version (`/{blockchain}/v2/tickers`, `/{tenant}/v1/…`). An API names
 * a version after a prefix of its own (`/api/v1`, `/rest/v1`), and a gateway one per service
 * (`/users/v2/…`, `/geofences/v2/…`), each service with routes of its own beside the few all share
 * (`health`, `version`). Values lead to the same routes instead: four or more first segments followed by
 * one version, at most one in four of them followed there by a word (the segment after the version) that
 * follows no other, and no two answering (or accepting) other fields on one method and continuation, are
 * values, every one of them.
 */
function versionMembers(
  siblings: ReadonlyMap<string, readonly Placed[]>,
  eligible: (value: string) => boolean,
): Set<string> {
  const members = new Set<string>();
  /** Version → value → the words after the version and what was seen on each continuation. */
  const byVersion = new Map<string, Map<string, { words: Set<string>; records: PathRecord[] }>>();
  for (const [value, placed] of siblings) {
    for (const { record } of placed) {
      const version = record.segments[1];
      if (version?.kind !== 'literal' || !isVersionLike(version.text) || !eligible(value)) continue;
      let values = byVersion.get(version.text);
      if (values === undefined) byVersion.set(version.text, (values = new Map()));
      let seen = values.get(value);
      if (seen === undefined) values.set(value, (seen = { words: new Set(), records: [] }));
      const word = record.segments[2];
      seen.words.add(word === undefined ? '' : word.kind === 'param' ? '{}' : encodeSegment(word.text));
      seen.records.push(record);
    }
  }
  for (const values of byVersion.values()) {
    if (values.size < MANY_SIBLINGS) continue;
    const followed = new Map<string, number>();
    for (const { words } of values.values())
      for (const word of words) followed.set(word, (followed.get(word) ?? 0) + 1);
    let own = 0;
    for (const { words } of values.values()) if ([...words].some((word) => followed.get(word) === 1)) own++;
    if (own * RECURRING_SHARE > values.size) continue;
    if (!versionValuesDisagree([...values.values()].slice(0, MAX_ROUTE_VALUES)))
      for (const value of values.keys()) members.add(value);
  }
  return members;
}

/**
 * Does a value before a version answer (or accept) on one method and continuation fields the other values
 * there never showed? Answers leave optional fields out (`{mempool, mempoolSize}` beside `{page,
 * totalPages}`), so each value's fields are compared with all the others' together; one field tells nothing.
 */
function versionValuesDisagree(values: ReadonlyArray<{ records: readonly PathRecord[] }>): boolean {
  /** Method and continuation → per value, the answer and request fields seen there. */
  const byRest = new Map<string, { keys: Set<string>; requestKeys: Set<string> }[]>();
  for (const { records } of values) {
    const mine = new Map<string, { keys: Set<string>; requestKeys: Set<string> }>();
    for (const record of records) {
      const rest = `${record.method} ${continuation(record.segments, 0)}`;
      let fields = mine.get(rest);
      if (fields === undefined) mine.set(rest, (fields = { keys: new Set(), requestKeys: new Set() }));
      for (const key of record.keys ?? []) fields.keys.add(key);
      for (const key of record.requestKeys ?? []) fields.requestKeys.add(key);
    }
    for (const [rest, fields] of mine) {
      let seen = byRest.get(rest);
      if (seen === undefined) byRest.set(rest, (seen = []));
      seen.push(fields);
    }
  }
  const against = (mine: Set<string>, others: Set<string>[]): boolean => {
    if (mine.size < 2) return false;
    const union = new Set<string>();
    for (const other of others) for (const key of other) union.add(key);
    return compareKeys([...mine], [...union]) === 'contradicts';
  };
  for (const seen of byRest.values()) {
    if (seen.length < 2) continue;
    for (const [i, fields] of seen.entries()) {
      const others = seen.filter((_, j) => j !== i);
      if (
        against(
          fields.keys,
          others.map((other) => other.keys),
        ) ||
        against(
          fields.requestKeys,
          others.map((other) => other.requestKeys),
        )
      )
        return true;
    }
  }
  return false;
}

/**
 * First-segment values requested alone (`GET /bitcoin`) once the first segment is learned: a value seen
 * only so, answering (or accepting) the fields a value shown alike answers alone on that method, is a value
 * too (`/{blockchain}`); `/health` answers other fields.
 */
function aloneMembers(
  siblings: ReadonlyMap<string, readonly Placed[]>,
  members: ReadonlySet<string>,
  eligible: (value: string) => boolean,
): Set<string> {
  const alone: PathRecord[] = [];
  for (const value of [...members].slice(0, MAX_ROUTE_VALUES))
    for (const { record } of siblings.get(value) ?? []) if (record.segments.length === 1) alone.push(record);
  const found = new Set<string>();
  if (alone.length === 0) return found;
  for (const [value, placed] of siblings) {
    if (members.has(value) || !placed.every(({ record }) => record.segments.length === 1) || !eligible(value)) continue;
    const verdicts = placed.flatMap(({ record }) =>
      alone
        .filter((other) => other.method === record.method)
        .map((other) => {
          const answers = compareKeys(record.keys, other.keys, true);
          return answers === 'unknown' ? compareKeys(record.requestKeys, other.requestKeys) : answers;
        }),
    );
    if (verdicts.includes('alike') && !verdicts.includes('contradicts')) found.add(value);
  }
  return found;
}

/** A segment's text, `{}` for a parameter (see `PathLearner.requests`). */
function segmentText(segment: Segment | undefined): string {
  return segment?.kind === 'literal' ? segment.text : '{}';
}

/** The key of `runs` for a path of `texts` whose literals run to its end from `at` (see `namesInRow`). */
function runPrefix(texts: readonly string[], at: number): string {
  return `${texts.length}${JSON.stringify(texts.slice(0, at))}`;
}

/** The text of a literal as given, when it is still a literal or a learned value; undefined for an identifier. */
function literalText(given: Segment, resolved: Segment): string | undefined {
  if (resolved.kind === 'literal') return resolved.text;
  // A learned value named as the identifiers beside it (see `identifiers`) is one too.
  return given.kind === 'literal' ? given.text : undefined;
}

/** A placement's method and what follows it (`GET /brands`): its route from that position on. */
function routeOf(one: Placed): string {
  // Kept on the placement: its record and resolved segments never change.
  return (one.route ??= `${one.record.method} ${continuation(one.resolved, one.at)}`);
}

/** What follows each position (see `continuation`), from the first to the last. */
function continuations(segments: readonly Segment[]): string[] {
  const out = new Array<string>(segments.length);
  let rest = '';
  for (let at = segments.length - 1; at >= 0; at--) {
    out[at] = rest;
    const segment = segments[at]!;
    rest = `/${segment.kind === 'param' ? '{}' : encodeSegment(segment.text)}${rest}`;
  }
  return out;
}

/** What follows position `at`, as a key: literals by their canonical text, parameters as `{}`. */
function continuation(segments: readonly Segment[], at: number): string {
  let out = '';
  for (let k = at + 1; k < segments.length; k++) {
    const segment = segments[k]!;
    out += `/${segment.kind === 'param' ? '{}' : encodeSegment(segment.text)}`;
  }
  return out;
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

/**
 * The segments of `template` (as `resolve` gave it for the path `inferred`), a parameter the learner placed (a literal
 * in `inferred`) marked as such: it is no detected identifier, and the literal before it is no collection
 * (`/ships/alice/{ship}` before `/ships/{ship}` is learned).
 */
function placedSegments(template: string, inferred: string | undefined): Segment[] {
  const given = inferred === undefined ? undefined : splitPath(inferred);
  return splitPath(template).map((segment, i): Segment =>
    segment.kind === 'param' && given?.[i]?.kind === 'literal' ? LEARNED_PARAM : segment,
  );
}

function unique(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) candidate = `${name}${n}`;
  taken.add(candidate);
  return candidate;
}

/**
 * The fields of a body shape, as the learner compares them: an object's field names and, one level
 * down, the names of the fields of its object fields (`engine.color`) and of their list items
 * (`items[].id`), so two answers that share an envelope or a few fields but carry different
 * objects (`{status, engine: {…}}`, `{status, paint: {…}}`) do not read alike; a list's items the
 * same way, prefixed `[]` (so a list never agrees with one of its items); a list of scalars as
 * `[]` and the kind (`[]string`); a scalar as `=` and its kind (`=number`: no fields, but values of one route
 * answer one kind, see `scalarsDiffer`); null for anything else (an empty list, `null`: nothing to compare).
 */
export function responseKeys(shape: Shape | undefined): readonly string[] | null {
  if (shape === undefined) return null;
  if (SCALAR_KINDS.has(shape.kind)) return [`${SCALAR}${shape.kind}`];
  if (shape.kind === 'object') return shape.fields.length === 0 ? null : objectKeys(shape.fields, '');
  if (shape.kind !== 'array') return null;
  const items = shape.items;
  if (items.kind === 'object') return items.fields.length === 0 ? null : objectKeys(items.fields, '[]');
  return SCALAR_KINDS.has(items.kind) ? [`[]${items.kind}`] : null;
}

const SCALAR_KINDS: ReadonlySet<Shape['kind']> = new Set(['string', 'number', 'boolean']);

/** How `responseKeys` marks a scalar answer (`=number`): no field name starts so. */
const SCALAR = '=';

/** Field names, and those of the fields of object fields (and of object list items) one level down. */
function objectKeys(fields: readonly Field[], prefix: string): string[] {
  const keys: string[] = [];
  for (const field of fields) {
    const name = `${prefix}${field.name}`;
    keys.push(name);
    const inner = field.shape.kind === 'array' ? field.shape.items : field.shape;
    if (inner.kind !== 'object') continue;
    const at = field.shape.kind === 'array' ? `${name}[].` : `${name}.`;
    for (const child of inner.fields) keys.push(`${at}${child.name}`);
  }
  return keys;
}
