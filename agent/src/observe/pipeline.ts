import {
  bestTemplate,
  CardinalityLimiter,
  hasParameter,
  isIgnored,
  matchTemplate,
  PathLearner,
  pathDigest,
  queryNames,
  responseKeys,
  routeOf,
  templatePath,
  type IgnoreRule,
} from '@spectator/shared';
import type { Logger } from '../log';
import type { Counter, Metrics } from '../metrics';
import type { IncomingHttpHeaders } from 'node:http';
// The module's binding, not the global: `globalThis.performance` is a getter Node runs on every read.
import { performance } from 'node:perf_hooks';
import { Aggregator, type CaptureRows, type Observation, type PathEntry } from './aggregator';
import {
  BodyTap,
  type Exchange,
  type ExchangeObserver,
  type FailedExchange,
  type SampleCarrier,
  type StreamLedger,
} from './exchange';
import { ShapeSampler, type SamplerOptions } from './sampler';
import { classifyContentType, summariseBody, summariseUnshaped, type BodySummary, type MediaClass } from './summarise';
import { STREAM_PREFIX_BYTES } from './stream';
import { boundaryOf, MULTIPART_FORM } from './form';
import { isIdentity, NOVELTY_BYTES, NOVELTY_VARIANTS, ScanBudget } from './novelty';
import type { ConsumerIds } from './consumers';

export interface PipelineOptions {
  /** Bytes of each shaped body copied. 0 counts interactions without looking at bodies. */
  bodyLimit: number;
  captureId: () => string;
  rules: () => readonly IgnoreRule[];
  metrics: Metrics;
  log: Logger;
  /** Told when enough rows wait that a batch should go now. */
  onBacklog?: () => void;
  /** Rows that make a batch worth sending before the timer. Default 500. */
  backlogRows?: number;
  /** Samples waiting for shape work at most. Default 1,000. */
  queueMaxItems?: number;
  /** Body bytes held by waiting samples at most. Default 32 MiB. */
  queueMaxBytes?: number;
  /** Longest slice of shape work before yielding to the event loop, ms. Default 8. */
  sliceMs?: number;
  /** Bytes all open streams keep for shape work at most (see `AgentTuning`). Default 16 MiB. */
  streamBytesMax?: number;
  /**
   * How long an interaction whose path holds an undecided literal (`/users/alice` before a second
   * user was seen) is held in the agent before it goes out as it is, ms. Default 3,000.
   */
  holdMs?: number;
  /**
   * How long a held interaction whose undecided literal has a sibling it may be one value with
   * (`PathLearner.pending`: `/airport/autocomplete/alice` beside `…/bob`) is held at most, from when it
   * came, ms; past it (or `holdMax`, or the agent stopping) it goes out with that literal as a
   * parameter, never as it is. Default 30,000.
   */
  pendingMs?: number;
  /** Interactions held at most; past it the oldest goes out at once. Default 10,000. */
  holdMax?: number;
  /** Clock for holding, ms. Default `Date.now`. */
  now?: () => number;
  sampler?: Partial<SamplerOptions>;
  /** Clock of the shape sampler (its budget and windows), ms. Default `Date.now`. */
  samplerClock?: () => number;
  /** Names each interaction's consumer by pseudonym (`--consumer`); none by default. */
  consumers?: ConsumerIds | null;
}

interface Pending {
  observation: Observation;
  request: BodyTap | null;
  response: BodyTap | null;
  bytes: number;
  /** Bytes the sampler reserved shape work for (see `Exchange.sampledBytes`). */
  reserved: number;
}

const TEMPLATE_CACHE_SIZE = 10_000;
/** Distinct unmatched paths counted per capture at most (kept in memory only, never sent). */
const UNMATCHED_PATHS_MAX = 10_000;
/** Paths (by method) whose first answer may be shaped for the learner, at most (see `firstEvidence`): twice the learner's records. */
const EVIDENCED_MAX = 10_000;

/** Methods a path entry's lists (`observed`, `evidenced`) hold at most. */
const PATH_METHODS_MAX = 16;

/** Note `method` in one of a path entry's method lists (bounded: `PATH_METHODS_MAX`). */
function noteMethod(methods: string[], method: string): void {
  if (methods.length < PATH_METHODS_MAX) methods.push(method);
}

interface Held {
  observation: Observation;
  until: number;
  /** When a value in waiting goes out at the latest (see `pendingMs`). */
  pendingUntil: number;
  /** A possible noise held only while its route may yet answer (see `mayAwaitRoute`). */
  awaitsRoute?: boolean;
}

/**
 * Possible noise held at once while only their route may yet answer (see `mayAwaitRoute`): a scanner's flood of
 * identifiers is counted as noise at once past it, and never pushes held values out (`holdMax`).
 */
const AWAITING_ROUTE_MAX = 64;

/** Statuses that, on a path matching no template, mark a request as noise. */
function isNotFound(status: number): boolean {
  return status === 404 || status === 405;
}
const NO_NAMES: readonly string[] = Object.freeze([]);
/** Segments of a template in canonical form (`/a/{b}` → 2). */
function segmentCount(template: string): number {
  let count = 0;
  for (let at = template.indexOf('/'); at >= 0; at = template.indexOf('/', at + 1)) count++;
  return template === '/' ? 0 : count;
}
/** The stages of an interaction's evidence (see `learn`). */
const LEARNING_STAGES = 4;

/** A raw path ending in a short number (`/posts/5`), as a version would be written. */
const SHORT_NUMBER_LAST = /\/[1-9]\d?\/?$/;

/** Methods as node:http's parser gives them, upper-case already. */
const UPPER_CASE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * A method in upper case. node:http hands most methods over in upper case already; `toUpperCase`
 * is a call into the runtime even then, twice a request (0.17 µs in a CPU profile of the agent).
 */
function upperCase(method: string): string {
  return UPPER_CASE_METHODS.has(method) ? method : method.toUpperCase();
}

/** An exchange not looked at (ignored, noise): what its taps kept, and bodies kept whole, are let go. */
function letGo(exchange: Exchange): void {
  exchange.request?.drop();
  exchange.response?.drop();
  exchange.requestBody = null;
  exchange.responseBody = null;
}

/** A body kept whole is a stream's (server-sent events, JSON lines): its tap is made whatever the sampling said (see `wholeCopied`). */
function isStreamBody(exchange: Exchange): boolean {
  return (
    (!!exchange.requestBody && mediaOf(exchange.requestHeaders).stream) ||
    (!!exchange.responseBody && mediaOf(exchange.responseHeaders).stream)
  );
}

/** The media class of a message's body as `tap` takes it: none when its content type cannot be read. */
function mediaOf(headers: IncomingHttpHeaders): MediaClass {
  try {
    return classifyContentType(headers['content-type']);
  } catch {
    return classifyContentType(undefined);
  }
}

function pathOf(target: string): string {
  const question = target.indexOf('?');
  return question < 0 ? target : target.slice(0, question);
}

/**
 * A template sent while what it holds may yet be learned otherwise (see `ObservationPipeline.sentUndecided`): the
 * capture, the first path sent under it (as the detectors templated it), and the others (`SENT_PATHS_MAX` at most;
 * null past them): a template narrower than it later takes its rows only when it takes every one of those.
 */
interface SentUndecided {
  captureId: string;
  inferred: string;
  others?: Set<string> | null;
}

/** Other paths noted per template sent (see `SentUndecided`). */
const SENT_PATHS_MAX = 8;

/** Notes a path sent under a template (see `SentUndecided`). */
function noteSent(sent: SentUndecided, inferred: string): void {
  if (inferred === sent.inferred || sent.others === null || sent.others?.has(inferred) === true) return;
  if ((sent.others?.size ?? 0) >= SENT_PATHS_MAX) sent.others = null;
  else (sent.others ??= new Set()).add(inferred);
}

/**
 * The observing side of the proxy. `record` runs right after a response ended: it applies the ignore
 * rules, templates the path, counts the interaction, and either queues the bodies for shape work
 * or releases them (sampled out, or queue full). Shape work runs later in short slices.
 * Nothing here can throw into the proxy.
 */
export class ObservationPipeline implements ExchangeObserver {
  readonly captureId: () => string;
  private readonly aggregator: Aggregator;
  private readonly consumers: ConsumerIds | null;
  private readonly sampler: ShapeSampler;
  /** Bytes a second read whole for their structure (novelty.ts), beyond the first ones every watched body gets. */
  private readonly scanBudget: ScanBudget;
  /**
   * Exchanges handed over (`record`) and not accepted yet: accepted together once the event loop
   * comes round (or first thing in `drain`), not one by one between the proxy's socket work.
   */
  private incoming: Exchange[] = [];
  private incomingScheduled = false;
  private readonly acceptLater = (): void => {
    this.incomingScheduled = false;
    this.acceptIncoming();
  };
  private readonly queue: Pending[] = [];
  private queueHead = 0;
  private queueBytes = 0;
  private scheduled = false;
  /**
   * The interaction being added, its learner work in steps (see `PathLearner.observeSteps`): resumed in the next
   * slices, so one observation that makes the learner index and decide everything again does not hold the app's
   * answers meanwhile. Interactions counted without shape work wait in `waiting` behind it, in order.
   */
  private adding: Generator<void> | undefined;
  private readonly waiting: Observation[] = [];
  private documented: string[] = [];
  private hints: string[] = [];
  private known: string[] = [];
  private knownCanonical = new Set<string>();
  /** Raw path → what it gives: a documented template (a string) or a `PathEntry`; started afresh when the learner learns. */
  private readonly templates = new Map<string, string | PathEntry>();
  private readonly limiter = new CardinalityLimiter();
  /** A route (parameters unnamed) → the first template the learner resolved it to (see `limited`). */
  private readonly routeNames = new Map<string, string>();
  private readonly learner = new PathLearner();
  /** The learner's revision (see `PathLearner.revision`) the cached templates were made in. */
  private generation = 0;
  /** Templates reported with a non-404/405 status: a 404 on them is the endpoint's own. */
  private readonly confirmed = new Set<string>();
  /** Every prefix of a confirmed template (`/posts` of `/posts/{postId}/comments`, and the template itself). */
  private readonly confirmedPrefixes = new Set<string>();
  /** Confirmed templates with a parameter, by their number of segments (see `ownerOf`). */
  private readonly confirmedRoutes = new Map<number, string[]>();
  /** A 404's path as resolved → the confirmed template it belongs to, or '' (see `ownerOf`); cleared as routes are confirmed. */
  private readonly owners = new Map<string, string>();
  /** Interactions whose path holds an undecided literal, oldest first (see `holdMs`). */
  private held: Held[] = [];
  /** How many of `held` are held only while their route may yet answer (see `mayAwaitRoute`). */
  private awaitingRoute = 0;
  /**
   * Templates sent with a literal that may yet be learned (`PathLearner.changeable`, see `toRows`) →
   * the capture they went out in and the first path (as the detectors templated it) sent under it:
   * regrouped when learned. Resolved from that path, not from the template: a parameter the learner
   * placed reads as a detected identifier there, and what follows one is learned otherwise
   * (`/project/{project}/tyrell` once `/project/{owner}/{project}` is learned).
   */
  private readonly sentUndecided = new Map<string, SentUndecided>();
  /** Templates sent that nothing learned later can change (`changeable` false), so each is looked at once. */
  private readonly sentDecided = new Set<string>();
  /** Per capture, templates learned that cover literal paths already sent → digests of those paths (`pathDigest`). */
  private learnedOut = new Map<string, Map<string, Set<string>>>();
  /** Per capture, noise since the last drain and the distinct noisy paths seen. */
  private readonly unmatched = new Map<string, { requests: number; paths: Set<string>; overflow: number }>();
  /** Raw query names (values cut off) → the names reported. */
  private readonly queries = new Map<string, readonly string[]>();
  private readonly options: Required<Omit<PipelineOptions, 'sampler' | 'samplerClock' | 'onBacklog' | 'consumers'>> &
    Pick<PipelineOptions, 'onBacklog'>;
  /** What the open streams' taps keep, against `streamBytesMax`. */
  private readonly streams: StreamLedger;
  /** Counters touched on every interaction, held rather than looked up by name. */
  private readonly observed: Counter;
  private readonly unshaped: Counter;
  private readonly novelShaped: Counter;
  private readonly evidenceShaped: Counter;
  private readonly evidenceSkipped: Counter;
  /** `method inferred` of the paths whose first answer was shaped for the learner (see `firstEvidence`). */
  private readonly evidenced = new Set<string>();

  constructor(options: PipelineOptions) {
    this.options = {
      backlogRows: 500,
      queueMaxItems: 1_000,
      queueMaxBytes: 32 * 1024 * 1024,
      sliceMs: 8,
      streamBytesMax: 16 * 1024 * 1024,
      holdMs: 3_000,
      pendingMs: 30_000,
      holdMax: 10_000,
      now: Date.now,
      ...options,
    };
    this.streams = { held: 0, limit: this.options.streamBytesMax };
    this.consumers = options.consumers ?? null;
    this.aggregator = new Aggregator(this.consumers !== null, options.metrics.counter('consumers_overflow_total'));
    this.captureId = options.captureId;
    this.sampler = new ShapeSampler(options.sampler, options.samplerClock);
    // On the sampler's clock, which stands still while observing is paused: a paused agent saves up
    // no scan budget to spend at once when observing resumes.
    this.scanBudget = new ScanBudget(() => this.sampler.time());
    this.observed = options.metrics.counter('observed_total');
    this.unshaped = options.metrics.counter('unshaped_total');
    this.novelShaped = options.metrics.counter('novel_shaped_total');
    this.evidenceShaped = options.metrics.counter('evidence_shaped_total');
    this.evidenceSkipped = options.metrics.counter('evidence_skipped_total');
    options.metrics.gauge('queue_depth', () => this.queue.length - this.queueHead);
    options.metrics.gauge('queue_bytes', () => this.queueBytes);
    options.metrics.gauge('stream_bytes', () => this.streams.held);
    options.metrics.gauge('held_interactions', () => this.held.length);
  }

  tap(
    contentType: string | string[] | undefined,
    contentEncoding: string | string[] | undefined,
    copy: boolean,
    keysOnArrival = false,
  ): BodyTap {
    // Called on the hot path, where a throw would end the request handler: whatever goes wrong, the
    // body is still forwarded and counted, only not looked at.
    try {
      const media = classifyContentType(contentType);
      const encoding = Array.isArray(contentEncoding) ? contentEncoding.join(',') : (contentEncoding ?? '');
      return new BodyTap({
        contentType: media.type,
        contentEncoding: encoding,
        limit: this.keptBytes(media),
        copy: copy && media.shaped,
        boundary: media.type === MULTIPART_FORM ? boundaryOf(contentType) : '',
        prefix: media.stream || media.json,
        stream: media.stream,
        ledger: media.stream ? this.streams : null,
        keysOnArrival: keysOnArrival && copy && media.json && isIdentity(encoding),
      });
    } catch (err) {
      this.options.log.error({ err: (err as Error).message }, 'observing failed for one body: counted, not looked at');
      return new BodyTap({ contentType: '', contentEncoding: '', limit: 0, copy: false });
    }
  }

  sample(
    method: string,
    target: string,
    status: number,
    responseHeaders: IncomingHttpHeaders,
    requestCopied: number,
    carrier?: SampleCarrier,
  ): number {
    try {
      const media = classifyContentType(responseHeaders['content-type']);
      const expectedBytes = this.expectedBytes(media, responseHeaders, requestCopied);
      // Nothing to shape (no JSON body, or one that will be too large): no budget spent.
      if (expectedBytes === 0) return 0;
      const upper = upperCase(method);
      const pathname = pathOf(target);
      // Ignored traffic is dropped when recorded: shaping its bodies would only spend the budget.
      const rules = this.options.rules();
      if (rules.length > 0 && isIgnored(rules, upper, pathname)) return 0;
      const entry = this.ownerOf(this.template(pathname), status);
      const unmatched = this.isNoise(entry, status);
      if (unmatched && !this.mayTurnReal(entry)) return 0;
      return this.admit(media, expectedBytes, upper, entry, unmatched, status, responseHeaders, requestCopied, carrier);
    } catch (err) {
      this.options.log.error({ err: (err as Error).message }, 'sampling failed for one interaction');
      return 0;
    }
  }

  /**
   * `sample` for an exchange the pipeline accepts (`sampleOnRecord`), with the method, template and
   * noise verdict `accept` found for it already (an exchange ignored or dropped as noise is never
   * sampled: `sample` would have said 0).
   */
  private sampleAccepted(exchange: Exchange, upper: string, entry: string | PathEntry, unmatched: boolean): number {
    try {
      const { responseHeaders } = exchange;
      const media = classifyContentType(responseHeaders['content-type']);
      const requestCopied =
        exchange.request?.copied ??
        (exchange.requestBody ? this.wholeCopied(exchange.requestHeaders, exchange.requestBody) : 0);
      const expectedBytes = this.expectedBytes(media, responseHeaders, requestCopied);
      if (expectedBytes === 0) return 0;
      return this.admit(
        media,
        expectedBytes,
        upper,
        entry,
        unmatched,
        exchange.status,
        responseHeaders,
        requestCopied,
        exchange,
      );
    } catch (err) {
      this.options.log.error({ err: (err as Error).message }, 'sampling failed for one interaction');
      return 0;
    }
  }

  /** Body bytes shape work would read: a stream or JSON body's first `kept` bytes; another body's, none past the limit. */
  private expectedBytes(media: MediaClass, responseHeaders: IncomingHttpHeaders, requestCopied: number): number {
    const kept = this.keptBytes(media);
    const length = Number(responseHeaders['content-length'] ?? kept);
    return requestCopied + (media.stream || media.json ? Math.min(length, kept) || 0 : length <= kept ? length : 0);
  }

  /** The sampling decision for `expectedBytes` of shape work on the key of a template found (see `sample`). */
  private admit(
    media: MediaClass,
    expectedBytes: number,
    upper: string,
    entry: string | PathEntry,
    unmatched: boolean,
    status: number,
    responseHeaders: IncomingHttpHeaders,
    requestCopied: number,
    carrier: SampleCarrier | undefined,
  ): number {
    const kept = this.keptBytes(media);
    const length = Number(responseHeaders['content-length'] ?? kept);
    const slot = this.sampler.slot(
      this.captureId(),
      upper,
      // A possible noise is kept away from the cardinality limiter (see `record`).
      typeof entry === 'string' ? entry : unmatched ? entry.resolved : this.reported(entry),
      status,
    );
    if (carrier !== undefined) carrier.sampleSlot = slot;
    const first = this.firstEvidence(entry, upper, status, unmatched);
    // A key's guaranteed sample is a decided template's: a path held undecided (or a possible noise) is a key of its
    // own per value, so hostile random slugs there would each be shaped; its first answer is the learner's (capped).
    const guaranteed = typeof entry === 'string' || (!unmatched && !entry.undecided);
    if (this.sampler.admit(slot, expectedBytes, guaranteed)) {
      if (first) this.evidenceTaken(entry as PathEntry, upper);
      return expectedBytes;
    }
    if (first) {
      // Shaped past the budget (at most `maxForcedPerSecond`), charged to it like any sample: fewer
      // samples after it pay it back. Past the cap it is counted, and a later answer of the path may be shaped.
      if (this.sampler.force(slot, expectedBytes)) {
        this.evidenceTaken(entry as PathEntry, upper);
        this.evidenceShaped.inc();
        return expectedBytes;
      }
      this.evidenceSkipped.inc();
    }
    // Sampled out: a small JSON body is still kept (by reference) to notice a new variant of it.
    // A response that is not kept (no body, as a 204's, or one not shaped) needs no length: the
    // request body alone is watched then. A larger one (up to the kept bytes) only when the scan
    // budget pays for reading it now: taken here, so big bodies are never held beyond what it pays.
    const watch =
      !media.stream &&
      (!media.shaped || (responseHeaders['content-length'] !== undefined && length <= kept)) &&
      requestCopied <= NOVELTY_BYTES &&
      (slot.variants?.size ?? 0) < NOVELTY_VARIANTS &&
      this.sampler.mayWatch(slot) &&
      (!media.shaped || length <= NOVELTY_BYTES || this.scanBudget.take(length));
    if (!watch) return 0;
    this.sampler.watched(slot);
    return -expectedBytes;
  }

  /**
   * Is this interaction's pair of bodies a variant its key (method, template, status) has not had
   * yet? Notes it when so. False when its bodies cannot be fingerprinted cheaply. Judged by the keys
   * of their first bytes (`variantKeys`, taken as they came) and, within the scan budget, by the
   * structure of the whole bodies (`structureKeys`): a field more or less far into a list.
   */
  private novel(observation: Observation, exchange: Exchange): boolean {
    const request = exchange.request?.variantKeys() ?? null;
    const response = exchange.response?.variantKeys() ?? null;
    // A response past NOVELTY_BYTES gives no key fingerprint: it is judged by its whole structure alone.
    const large = response === null && exchange.response?.largeWhole() === true;
    if (request === null && response === null && !large) return false;
    const slot = this.sampler.again(
      exchange.sampleSlot ?? null,
      observation.captureId,
      observation.method,
      observation.template,
      observation.status,
    );
    slot.variants ??= new Set();
    slot.structures ??= new Set();
    let novel = false;
    const variant = (Math.imul(request ?? 0, 31) + (response ?? 0)) >>> 0;
    if (!large && !slot.variants.has(variant) && slot.variants.size < NOVELTY_VARIANTS) {
      slot.variants.add(variant);
      novel = true;
    }
    // A body whose structure is known already (one flat object, read whole for its keys) costs no
    // budget; nor does a sampled-out large response, watched only as `sample` paid its bytes.
    const paid =
      large && exchange.sampledBytes < 0 && -exchange.sampledBytes - (exchange.request?.copied ?? 0) > NOVELTY_BYTES;
    const bytes =
      this.scanBytes(request, exchange.request) +
      (large ? (paid ? 0 : (exchange.response as BodyTap).copied) : this.scanBytes(response, exchange.response));
    if (slot.structures.size < NOVELTY_VARIANTS && (bytes === 0 || this.scanBudget.take(bytes))) {
      const structure =
        (Math.imul(exchange.request?.structureKeys() ?? 0, 31) +
          ((response === null && !large ? null : exchange.response?.structureKeys()) ?? 0)) >>>
        0;
      if (!slot.structures.has(structure)) {
        slot.structures.add(structure);
        novel = true;
      }
    }
    if (novel && exchange.sampledBytes < 0) this.novelShaped.inc();
    return novel;
  }

  /**
   * Is this the first answer (2xx/3xx, not noise) of its method on its path as the detectors templated it
   * (`PathEntry.inferred`: `/v3/canary-grace`; `/users/{id}` for every numeric id)? Then its fields are the
   * learner's evidence and it is shaped whatever the budget (see `admit`): a value whose answer was sampled
   * out can be compared with nothing, and a sibling that answers like it could then be taken for a route
   * word beside `/v3/status` and go out literal. Once per method and path (`evidenceTaken`; 10,000 paths at
   * most), while the learner still takes records.
   */
  private firstEvidence(entry: string | PathEntry, method: string, status: number, unmatched: boolean): boolean {
    if (typeof entry === 'string' || unmatched || status < 200 || status >= 400) return false;
    if (entry.evidenced.includes(method)) return false;
    if (
      this.learner.full ||
      this.evidenced.size >= EVIDENCED_MAX ||
      this.evidenced.has(`${method} ${entry.inferred}`)
    ) {
      // Another raw path of the same template had it (`/posts/17` before `/posts/18`), or no more is taken.
      noteMethod(entry.evidenced, method);
      return false;
    }
    return true;
  }

  /** A path's first answer (see `firstEvidence`) is shaped: no later one of its method is forced. */
  private evidenceTaken(entry: PathEntry, method: string): void {
    noteMethod(entry.evidenced, method);
    this.evidenced.add(`${method} ${entry.inferred}`);
  }

  /** Bytes `structureKeys` reads of a body with these variant keys (null: none). */
  private scanBytes(keys: number | null, tap: BodyTap | null): number {
    const body = tap as BodyTap;
    return keys === null || (body.flat && body.structureKnown) ? 0 : body.copied;
  }

  /** Bytes of a body of this media type kept for shape work: none unshaped, a stream's first ones. */
  private keptBytes(media: MediaClass): number {
    if (!media.shaped) return 0;
    return media.stream ? Math.min(this.options.bodyLimit, STREAM_PREFIX_BYTES) : this.options.bodyLimit;
  }

  /** Observing paused (the proxy stopped handing exchanges over): the shape and scan budgets' clock stops too. */
  pause(): void {
    this.sampler.pause();
  }

  /** Observing resumed after `pause`. */
  resume(): void {
    this.sampler.resume();
  }

  /** Documented templates from the backend, matched before inferring parameters. */
  setKnownTemplates(templates: readonly string[]): void {
    this.documented = [...templates];
    this.setKnown();
  }

  /** Templates users stated (service.yml `paths:`), matched like documented ones. */
  setPathHints(templates: readonly string[]): void {
    this.hints = [...templates];
    this.setKnown();
  }

  private setKnown(): void {
    this.known = [...this.documented, ...this.hints];
    this.knownCanonical = new Set(this.known.map((template) => templatePath(template)));
    this.templates.clear();
  }

  /**
   * Take a finished exchange; it is counted when the event loop next comes round, with every other
   * exchange that finished in the same turn (or at the latest by `drain`). One at a time, right
   * after each response, the observing code ran cold between the proxy's socket and parser work:
   * it cost the proxy about three times what the same calls cost in a loop (bench:observe).
   */
  record(exchange: Exchange): void {
    this.incoming.push(exchange);
    if (this.incomingScheduled) return;
    this.incomingScheduled = true;
    setImmediate(this.acceptLater);
  }

  /** Accept every exchange handed over so far, in the order they came. */
  private acceptIncoming(): void {
    const incoming = this.incoming;
    if (incoming.length === 0) return;
    this.incoming = [];
    for (const exchange of incoming) {
      try {
        this.accept(exchange);
      } catch (err) {
        this.options.log.error({ err: (err as Error).message }, 'observing failed for one interaction');
      }
    }
  }

  /**
   * A request the upstream never answered: counted and timed under its template, apart from the
   * rows (never evidence of the API's responses, never learned from: the upstream said nothing).
   */
  failed(exchange: FailedExchange): void {
    try {
      const pathname = pathOf(exchange.target);
      const method = upperCase(exchange.method);
      const rules = this.options.rules();
      if (rules.length > 0 && isIgnored(rules, method, pathname)) return;
      const entry = this.template(pathname);
      const template = typeof entry === 'string' ? entry : this.reported(entry);
      this.aggregator.addFailure(exchange.captureId, method, template, exchange.status, exchange.elapsed, exchange.at);
    } catch (err) {
      this.options.log.error({ err: (err as Error).message }, 'observing failed for one failed request');
    }
  }

  /**
   * Do every waiting piece of shape work now (`whole`; else one slice of it, the rest in the slices to come), let go
   * of held interactions whose time is up or whose path was decided, then hand over the rows (grouped by capture) with
   * what was learned and the noise counts.
   */
  drain(whole = true): CaptureRows[] {
    this.acceptIncoming();
    this.work(whole ? Infinity : this.options.sliceMs);
    this.release(false);
    const groups = this.aggregator.drain();
    const byCapture = new Map(groups.map((group) => [group.captureId, group]));
    const groupOf = (captureId: string): CaptureRows => {
      let group = byCapture.get(captureId);
      if (group === undefined) {
        byCapture.set(captureId, (group = { captureId, observations: [], shapes: new Map() }));
        groups.push(group);
      }
      return group;
    };
    for (const [captureId, templates] of this.learnedOut)
      groupOf(captureId).learned = Object.fromEntries(
        [...templates].map(([template, paths]) => [template, [...paths]]),
      );
    this.learnedOut = new Map();
    for (const [captureId, noise] of this.unmatched) {
      if (noise.requests > 0)
        groupOf(captureId).unmatched = { requests: noise.requests, paths: noise.paths.size + noise.overflow };
      noise.requests = 0;
      // Only the current capture counts on; an older one's paths are let go.
      if (captureId !== this.captureId()) this.unmatched.delete(captureId);
    }
    return groups;
  }

  /** Let every held interaction go now (the agent is stopping). */
  releaseAll(): void {
    this.acceptIncoming();
    this.finishAdding(Infinity, performance.now());
    this.release(true);
  }

  /** Distinct rows waiting. */
  get rows(): number {
    return this.aggregator.size;
  }

  private accept(exchange: Exchange): void {
    const { metrics } = this.options;
    const question = exchange.target.indexOf('?');
    const pathname = pathOf(exchange.target);
    const method = upperCase(exchange.method);
    const rules = this.options.rules();
    if (rules.length > 0 && isIgnored(rules, method, pathname)) {
      metrics.inc('ignored_total');
      letGo(exchange);
      return;
    }
    // A 404 on a confirmed route's literal (`/erin-payments/components/paint` of `/{name}/components/paint`) is its own.
    const entry = this.ownerOf(this.template(pathname), exchange.status);
    // Noise, unless its path may still be learned into a real endpoint's (then held and decided on release).
    const unmatched = this.isNoise(entry, exchange.status);
    if (unmatched && !this.mayTurnReal(entry) && !(typeof entry !== 'string' && this.mayAwaitRoute(entry.resolved))) {
      this.countNoise(exchange.captureId, pathname);
      letGo(exchange);
      return;
    }
    // Bodies kept whole by reference get their taps now, with the other exchanges of this turn, when
    // they are to be looked at (shaped, or watched for a new variant); else they are only summarised.
    // A stream's first: what its tap keeps depends on the open streams' ledger.
    if ((exchange.requestBody || exchange.responseBody) && isStreamBody(exchange)) this.takeWhole(exchange);
    if (exchange.sampleOnRecord === true) {
      exchange.sampleOnRecord = false;
      exchange.sampledBytes = this.sampleAccepted(exchange, method, entry, unmatched);
    }
    if (exchange.sampledBytes !== 0) this.takeWhole(exchange);
    const learned = typeof entry !== 'string';
    if (learned && !isNotFound(exchange.status) && !this.confirmed.has(entry.resolved)) this.confirm(entry.resolved);
    const observation: Observation = {
      captureId: exchange.captureId,
      method,
      // A possible noise is kept away from the cardinality limiter until it is decided (see `release`).
      template: learned ? (unmatched ? entry.resolved : this.reported(entry)) : entry,
      path: learned ? entry : undefined,
      status: exchange.status,
      query: question < 0 ? NO_NAMES : this.queryNames(exchange.target, question),
      requestHeaders: exchange.requestHeaders,
      responseHeaders: exchange.responseHeaders,
      request: null,
      response: null,
      at: exchange.at,
      firstByte: exchange.firstByte,
      lastByte: exchange.lastByte,
      clientLeft: exchange.clientLeft,
      consumer: this.consumers === null ? null : this.consumers.identify(exchange.requestHeaders, exchange.socket),
    };
    if (unmatched) observation.unmatchedPath = pathname;
    this.observed.inc();
    const bytes = (exchange.request?.copied ?? 0) + (exchange.response?.copied ?? 0);
    const reserved = Math.max(0, exchange.sampledBytes);
    // A sampled-out body kept for novelty is shaped when its variant is new for its key.
    const wanted = (reserved > 0 || (exchange.sampledBytes < 0 && this.novel(observation, exchange))) && bytes > 0;
    if (reserved > 0 && bytes > 0) this.novel(observation, exchange);
    const fits =
      this.queue.length - this.queueHead < this.options.queueMaxItems &&
      this.queueBytes + bytes <= this.options.queueMaxBytes;
    if (wanted && fits) {
      this.queue.push({ observation, request: exchange.request, response: exchange.response, bytes, reserved });
      this.queueBytes += bytes;
      this.schedule();
      return;
    }
    if (wanted) metrics.inc('dropped_total');
    // Admitted but nothing to shape after all (no bytes came, or no room): the reservation goes back.
    if (reserved > 0) this.sampler.spent(reserved, 0, 0);
    // Counted now, without shape work: bodies become media type + flags and their copies are freed.
    observation.request = this.unshapedSummary(exchange.request, exchange.requestHeaders, exchange.requestBody);
    observation.response = this.unshapedSummary(exchange.response, exchange.responseHeaders, exchange.responseBody);
    letGo(exchange);
    if (observation.request?.body.unshaped || observation.response?.body.unshaped) this.unshaped.inc();
    // Added now, its learner work's first step at least (the same for the same traffic), or behind the one whose
    // learner work is under way (see `adding`).
    if (this.adding !== undefined || this.waiting.length > 0) {
      this.waiting.push(observation);
      this.schedule();
      return;
    }
    this.adding = this.add(observation);
    if (!this.finishAdding(0, 0)) this.schedule();
  }

  /**
   * Go on with the interaction being added and those waiting (see `adding`) until done (true) or `sliceMs` has
   * passed since `started` (false: the rest in a later slice).
   */
  private finishAdding(sliceMs: number, started: number): boolean {
    for (;;) {
      if (this.adding === undefined) {
        const next = this.waiting.shift();
        if (next === undefined) return true;
        this.adding = this.add(next);
      }
      if (this.adding !== undefined) {
        let done = false;
        try {
          done = this.adding.next().done === true;
        } catch (err) {
          done = true;
          this.options.log.error({ err: (err as Error).message }, 'observing failed for one interaction');
        }
        if (done) this.adding = undefined;
      }
      if (performance.now() - started >= sliceMs) return this.adding === undefined && this.waiting.length === 0;
    }
  }

  /**
   * What a tap of a body that came whole would keep of it (`BodyTap.copied`), without making the tap:
   * all of it within the body limit; a JSON body past it, its first bytes; another none. Not for a
   * stream's body (see `isStreamBody`): what it keeps depends on the open streams' ledger.
   */
  private wholeCopied(headers: IncomingHttpHeaders, body: Buffer): number {
    const media = mediaOf(headers);
    const limit = this.keptBytes(media);
    return body.length <= limit ? body.length : media.json ? limit : 0;
  }

  /**
   * A body counted without shape work: its media type and flags (`summariseBody` without shaping),
   * from its tap, or from the body kept whole without making one (`summariseUnshaped`).
   */
  private unshapedSummary(
    tap: BodyTap | null,
    headers: IncomingHttpHeaders,
    whole: Buffer | null | undefined,
  ): BodySummary | null {
    if (tap !== null) return summariseBody(tap, false, 0);
    if (!whole) return null;
    const media = mediaOf(headers);
    return summariseUnshaped(media, whole.length, this.keptBytes(media));
  }

  /** Make the taps of the bodies an exchange kept whole (`requestBody`, `responseBody`). */
  private takeWhole(exchange: Exchange): void {
    if (exchange.requestBody) exchange.request = this.wholeTap(exchange.requestHeaders, exchange.requestBody);
    if (exchange.responseBody) exchange.response = this.wholeTap(exchange.responseHeaders, exchange.responseBody);
    exchange.requestBody = exchange.responseBody = null;
  }

  /** The tap of a body that came whole (`Exchange.requestBody`, `responseBody`), as the proxy makes it for one that streams. */
  private wholeTap(headers: IncomingHttpHeaders, body: Buffer): BodyTap {
    const tap = this.tap(headers['content-type'], headers['content-encoding'], true);
    tap.write(body);
    // Accepted now: what a stream's tap kept is the queue's (see forward's `record`), not the open streams'.
    tap.release();
    return tap;
  }

  /**
   * The names of a query (`target` from its `?` at `question`), through a bounded cache keyed by the
   * raw names alone: values change from request to request (`page=3`, `page=4`) while the names
   * rarely do, and `queryNames` (decoding, identifier checks, sorting) costs a few µs a request.
   * The key keeps each pair up to its first `=`, the part `queryNames` reads as the name.
   */
  private queryNames(target: string, question: number): readonly string[] {
    const hash = target.indexOf('#', question);
    const end = hash < 0 ? target.length : hash;
    let key = '';
    for (let at = question + 1; at <= end;) {
      let next = target.indexOf('&', at);
      if (next < 0 || next > end) next = end;
      const equals = target.indexOf('=', at);
      key += `${target.slice(at, equals >= 0 && equals < next ? equals : next)}&`;
      at = next + 1;
    }
    let names = this.queries.get(key);
    if (names === undefined) {
      names = Object.freeze(queryNames(`?${key.slice(0, -1)}`));
      if (this.queries.size >= TEMPLATE_CACHE_SIZE) this.queries.clear();
      this.queries.set(key, names);
    }
    return names;
  }

  private template(pathname: string): string | PathEntry {
    // Not while the learner's work is under way (see `adding`): the templates sent stay as they were until it is done.
    if (this.adding === undefined && this.learner.revision !== this.generation) this.learned();
    const cached = this.templates.get(pathname);
    if (cached !== undefined) return cached;
    const inferred = templatePath(pathname, this.known, this.learner.keepsVersion);
    // Documented and hinted templates stay as they are; anything else is learned from and kept to bounded cardinality.
    if (this.knownCanonical.has(inferred)) return this.remember(pathname, inferred);
    return this.remember(pathname, {
      resolved: this.learner.resolve(inferred),
      template: '',
      inferred,
      undecided: false,
      generation: this.generation,
      observed: [],
      evidenced: [],
      raw: pathname,
      noted: false,
    });
  }

  /** The template an entry is reported under (made on its first report, see `PathEntry.template`). */
  private reported(entry: PathEntry): string {
    if (entry.template !== '') return entry.template;
    const before = this.limiter.trackedPrefixes;
    entry.template = this.limited(entry.resolved);
    entry.undecided = this.learner.undecided(entry.template, entry.inferred, entry.raw);
    // A path the limiter had not seen changes its state and may collapse positions that cached
    // templates still show as literals: start the cache afresh (rare once traffic is steady).
    if (this.limiter.trackedPrefixes !== before) this.templates.clear();
    return entry.template;
  }

  /** A detector-templated path as reported now: learned positions made parameters, cardinality bounded. */
  private resolve(inferred: string): string {
    return this.limited(this.learner.resolve(inferred));
  }

  /**
   * `resolved` (as the learner gives it) with crowded positions made parameters (see `CardinalityLimiter`), named as
   * the learner named the same route if it gave it: one name per route. gamesparks' `/restv2/game/{gameId}/manage/screens`
   * (the limiter's name for an exception of `{game}`) beside the learner's `/restv2/game/{game}/manage/screens` was one
   * endpoint stored as two, and no `learned` message names it for the backend to regroup.
   */
  private limited(resolved: string): string {
    const template = this.limiter.limit(resolved);
    if (!template.includes('{')) return template;
    const route = routeOf(template);
    if (template !== resolved) return this.routeNames.get(route) ?? template;
    if (this.routeNames.size < TEMPLATE_CACHE_SIZE && !this.routeNames.has(route)) this.routeNames.set(route, template);
    return template;
  }

  private remember<T extends string | PathEntry>(pathname: string, entry: T): T {
    if (this.templates.size >= TEMPLATE_CACHE_SIZE) this.templates.clear();
    this.templates.set(pathname, entry);
    return entry;
  }

  /**
   * Noise: a 404 or 405 on a path that matches no documented, hinted or learned template and whose
   * template never got another status. Counted apart, never recorded, never learned from.
   */
  private isNoise(entry: string | PathEntry, status: number): boolean {
    return (
      isNotFound(status) &&
      typeof entry !== 'string' &&
      !this.confirmed.has(entry.resolved) &&
      !this.underConfirmedRoute(entry.resolved)
    );
  }

  /**
   * May a 404/405 that looks like noise now still turn out a real endpoint's own? When its path holds
   * a literal the learner may yet make a parameter (`/users/alice` answered 404 before `/users/bob`
   * answered 200): it is held like any undecided path and decided when it goes out.
   */
  private mayTurnReal(entry: string | PathEntry): boolean {
    return (
      typeof entry !== 'string' &&
      this.options.holdMs > 0 &&
      this.noiseUndecided(entry.resolved, entry.inferred, entry.raw)
    );
  }

  /**
   * May a 404/405 that looks like noise (`resolved`, nothing left to learn in its path) still be its route's own? When
   * an identifier follows a route nothing answered yet (`/api/Invoice/{invoiceId}` answered 404 before `/api/Invoice`
   * answered 200, 0.2 s later): it is held up to `holdMs` (at most `AWAITING_ROUTE_MAX` at once) and kept if the route
   * answered by then (see `underConfirmedRoute`), counted as noise otherwise.
   */
  private mayAwaitRoute(resolved: string): boolean {
    return this.options.holdMs > 0 && this.awaitingRoute < AWAITING_ROUTE_MAX && resolved.indexOf('/{') > 0;
  }

  /**
   * May a possible noise's path (`learned`, as the learner resolves it now) still turn out a real endpoint's?
   * While the learner may make a literal of it a parameter (see `PathLearner.undecided`), and while a first
   * segment may still join a route learned there (`/erin-payments/components/paint` answered 404 before
   * `/{name}/components/paint` was learned from other names; see `PathLearner.changeable`).
   */
  private noiseUndecided(learned: string, inferred: string, raw: string): boolean {
    return this.learner.undecided(learned, inferred, raw) || this.learner.changeable(learned);
  }

  /**
   * The template a 404 or 405 goes out under when its path, as resolved, holds a value of a confirmed
   * route's parameter (`/erin-payments/components/paint` once `/{name}/components/paint` answered other
   * statuses): that route's own 404, as `/users/nobody` is `/users/{user}`'s. The learner never learns
   * from a 404, so such a value joins no learned position (a first segment's values are those shown
   * alike only): without this it would be counted as noise. Otherwise `entry` as it is.
   */
  private ownerOf(entry: string | PathEntry, status: number): string | PathEntry {
    if (!isNotFound(status) || typeof entry === 'string') return entry;
    return this.ownerOfResolved(entry.resolved) ?? entry;
  }

  /** The most specific confirmed template with a parameter that `resolved` (not confirmed itself) matches. */
  private ownerOfResolved(resolved: string): string | undefined {
    if (this.confirmed.has(resolved) || this.underConfirmedRoute(resolved)) return undefined;
    let owner = this.owners.get(resolved);
    if (owner === undefined) {
      const routes = this.confirmedRoutes.get(segmentCount(resolved));
      owner = (routes === undefined ? undefined : bestTemplate(resolved, routes)) ?? '';
      if (this.owners.size >= TEMPLATE_CACHE_SIZE) this.owners.clear();
      this.owners.set(resolved, owner);
    }
    return owner === '' ? undefined : owner;
  }

  /**
   * A held possible noise (see `mayTurnReal`) decided as the learner resolves its path now (`resolved`):
   * null when it is noise after all (counted apart and dropped), the confirmed route it belongs to
   * (see `ownerOf`), or undefined when its own template is real now (it goes out as resolved).
   */
  private decideNoise(observation: Observation, resolved: string): string | null | undefined {
    const pathname = observation.unmatchedPath;
    if (pathname === undefined) return undefined;
    if (this.confirmed.has(resolved) || this.underConfirmedRoute(resolved)) {
      delete observation.unmatchedPath;
      return undefined;
    }
    const owner = this.ownerOfResolved(resolved);
    if (owner !== undefined) {
      delete observation.unmatchedPath;
      return owner;
    }
    this.countNoise(observation.captureId, pathname);
    return null;
  }

  /**
   * Is a possible noise's path (as resolved) still noise but a sibling of a confirmed template: its parent a prefix of a
   * template that answered other statuses (`/v1/company/competitor/url/Grace71` answered 404 where `…/url/umbrella-billing`
   * answered 403)? Then its 404 is likely the route's own, whose position its hold ended too early to learn: it is held
   * on, as a value in waiting is (see `pendingMs`), and counted as noise only if still so then. A scanner's paths
   * (`/wp-admin/setup-config.php`, no sibling answered) are decided when their hold ends, as before.
   */
  private heldOn(resolved: string): boolean {
    const parent = resolved.lastIndexOf('/');
    return (
      parent > 0 &&
      this.confirmedPrefixes.has(resolved.slice(0, parent)) &&
      !this.confirmed.has(resolved) &&
      !this.underConfirmedRoute(resolved) &&
      this.ownerOfResolved(resolved) === undefined
    );
  }

  /**
   * Does a template have a parameter right after a route confirmed by other traffic
   * (`/posts/{postId}` once `/posts` answered 200)? Then its 404 is that route's own: an unknown id.
   */
  private underConfirmedRoute(template: string): boolean {
    for (let at = template.indexOf('/{'); at > 0; at = template.indexOf('/{', at + 1)) {
      if (this.confirmedPrefixes.has(template.slice(0, at))) return true;
    }
    return false;
  }

  /** A template answered with another status than 404/405: its 404s are its own, and so are those of ids under it. */
  private confirm(template: string): void {
    if (this.confirmed.size >= TEMPLATE_CACHE_SIZE) return;
    this.confirmed.add(template);
    this.owners.clear();
    if (template.includes('{')) {
      const count = segmentCount(template);
      const routes = this.confirmedRoutes.get(count);
      if (routes === undefined) this.confirmedRoutes.set(count, [template]);
      else routes.push(template);
    }
    for (let at = template.indexOf('/', 1); at > 0; at = template.indexOf('/', at + 1))
      this.confirmedPrefixes.add(template.slice(0, at));
    this.confirmedPrefixes.add(template);
  }

  private countNoise(captureId: string, pathname: string): void {
    this.options.metrics.inc('unmatched_total');
    let noise = this.unmatched.get(captureId);
    if (noise === undefined) this.unmatched.set(captureId, (noise = { requests: 0, paths: new Set(), overflow: 0 }));
    noise.requests++;
    if (noise.paths.has(pathname)) return;
    if (noise.paths.size < UNMATCHED_PATHS_MAX) noise.paths.add(pathname);
    else noise.overflow++; // past the bound every new-looking path counts: an upper estimate
  }

  /**
   * The learner learned a position: cached templates are stale, confirmed templates move to their
   * new form, and templates already sent with literals the position now covers are reported as
   * learned, so the backend regroups them.
   */
  private learned(): void {
    this.generation = this.learner.revision;
    this.templates.clear();
    const confirmed = [...this.confirmed];
    this.confirmed.clear();
    this.confirmedPrefixes.clear();
    this.confirmedRoutes.clear();
    this.owners.clear();
    for (const template of confirmed) this.confirm(this.learner.resolve(template));
    for (const [template, sent] of [...this.sentUndecided]) {
      const now = this.learner.resolve(sent.inferred);
      // Nothing to regroup into while it resolves without a parameter (`/nh/fossils/groups/oscar-river` once `groups`
      // is taken for a route word): the rows stay under the template sent, which is looked at again later. To a template
      // narrower than the one sent only when every path sent under it goes there: a value of it that turned out a route
      // word (`/{name}/metadata_templates/extra` of `…/{metadataTemplate}`, sent with `basic` too) leaves the others' rows.
      if (now === template || !hasParameter(now) || (!matchTemplate(now, template) && !this.allGoTo(sent, now)))
        continue;
      const captureId = sent.captureId;
      this.sentUndecided.delete(template);
      // Named by digest: the backend regroups these paths only, not a sibling kept literal (`/users/me`).
      let out = this.learnedOut.get(captureId);
      if (out === undefined) this.learnedOut.set(captureId, (out = new Map()));
      let covered = out.get(now);
      if (covered === undefined) out.set(now, (covered = new Set()));
      covered.add(pathDigest(captureId, template));
      if (!this.learner.changeable(now)) continue;
      // Two templates sent that come to one: it holds the rows of both.
      const kept = this.sentUndecided.get(now);
      if (kept === undefined) this.sentUndecided.set(now, sent);
      else {
        noteSent(kept, sent.inferred);
        for (const other of sent.others ?? []) noteSent(kept, other);
        if (sent.others === null) kept.others = null;
      }
    }
  }

  /** Does every path sent under a template (see `SentUndecided`) resolve to `now`? */
  private allGoTo(sent: SentUndecided, now: string): boolean {
    if (sent.others === null) return false;
    for (const other of sent.others ?? []) if (this.learner.resolve(other) !== now) return false;
    return true;
  }

  /**
   * An interaction, counted and shaped, on its way to the rows: its path is evidence for the
   * learner; while its template holds an undecided literal it is held (see `holdMs`).
   */
  private add(observation: Observation): Generator<void> | undefined {
    const path = observation.path;
    if (path === undefined) {
      this.toRows(observation, false);
      return undefined;
    }
    this.retemplate(path);
    for (let stage = 0; stage < LEARNING_STAGES; stage++) {
      const steps = this.learn(observation, path, stage);
      if (steps !== undefined) return this.addInSteps(observation, path, stage, steps);
    }
    this.added(observation, path);
    return undefined;
  }

  /** The rest of `add` once the learner's work in `steps` (of `stage`, see `learn`) is under way. */
  private *addInSteps(
    observation: Observation,
    path: PathEntry,
    stage: number,
    steps: Generator<void>,
  ): Generator<void> {
    yield* steps;
    for (let next = stage + 1; next < LEARNING_STAGES; next++) {
      const more = this.learn(observation, path, next);
      if (more !== undefined) yield* more;
    }
    this.added(observation, path);
  }

  /**
   * An interaction as evidence for the learner, in stages: its query names, its path and fields, its identifier values.
   * Returns the learner's work still to do in steps (see `PathLearner.observeSteps`), if any.
   */
  private learn(observation: Observation, path: PathEntry, stage: number): Generator<void> | undefined {
    const status = observation.status;
    if (isNotFound(status)) return undefined;
    if (stage === 0)
      // The query names each path takes first: values whose routes take other names are no values of one position.
      return this.learner.noteQuerySteps(path.inferred, observation.query);
    if (stage === 1) {
      const keys = status >= 200 && status < 300 ? responseKeys(observation.response?.shape) : null;
      // The fields of a request body the API accepted tell actions apart too (`/vectors/upsert`, `/vectors/delete`).
      const requestKeys = status >= 200 && status < 400 ? responseKeys(observation.request?.shape) : null;
      // Evidence without fields once per path and method; with fields, the learner keeps each distinct set once.
      const fields = keys !== null || requestKeys !== null;
      if (!fields && path.observed.includes(observation.method)) return undefined;
      if (!fields) noteMethod(path.observed, observation.method);
      return this.learner.observeSteps(path.inferred, observation.method, keys, requestKeys);
    }
    // The identifier values of each distinct raw path once: a word after many of them is a route word.
    if (path.noted) return undefined;
    if (stage === 2)
      // And a short number ending a path (`/posts/5`): a resource, so no version (see `PathLearner.keepsVersion`).
      return path.inferred.includes('}/') || SHORT_NUMBER_LAST.test(path.raw)
        ? this.learner.noteIdentifiersSteps(path.inferred, path.raw)
        : undefined;
    path.noted = true;
    // And the identifier values after each literal: a collection is followed by many (see `PathLearner.pending`).
    if (path.inferred.includes('{')) this.learner.noteIdentifiersAfter(path.inferred, path.raw);
    return undefined;
  }

  /** What `add` does once the learner has taken the interaction: held, or on to the rows. */
  private added(observation: Observation, path: PathEntry): void {
    if (this.learner.revision !== this.generation) this.learned();
    // Resolved again only when the learner learned since the path was cached.
    let undecided: boolean;
    let awaits = false;
    if (observation.unmatchedPath !== undefined) {
      // A possible noise: held while its path may still be learned, decided here otherwise.
      const learned = this.learner.resolve(path.inferred);
      undecided = this.noiseUndecided(learned, path.inferred, path.raw);
      awaits =
        !undecided &&
        !this.confirmed.has(learned) &&
        !this.underConfirmedRoute(learned) &&
        this.ownerOfResolved(learned) === undefined &&
        this.mayAwaitRoute(learned);
      undecided ||= awaits;
      const owner = undecided ? undefined : this.decideNoise(observation, learned);
      if (owner === null) return;
      observation.template = undecided ? learned : (owner ?? this.resolve(path.inferred));
      if (owner !== undefined) {
        this.toRows(observation, false);
        return;
      }
    } else {
      const current = path.generation === this.generation;
      if (!current) observation.template = this.resolve(path.inferred);
      undecided = current ? path.undecided : this.learner.undecided(observation.template, path.inferred, path.raw);
    }
    if (undecided && this.options.holdMs > 0) {
      const now = this.options.now();
      const item: Held = {
        observation,
        until: now + this.options.holdMs,
        pendingUntil: now + Math.max(this.options.holdMs, this.options.pendingMs),
      };
      if (awaits) {
        item.awaitsRoute = true;
        this.awaitingRoute++;
      }
      this.held.push(item);
      // Past the bound the oldest goes out now, as it is resolved now.
      if (this.held.length > this.options.holdMax) this.releaseOne(this.held.shift() as Held);
      return;
    }
    this.toRows(observation, undecided);
  }

  /**
   * Let held interactions go: those whose time is up or whose template is decided now (or every
   * one, `all`). Each goes out under its template as resolved now.
   */
  private release(all: boolean): void {
    // Not while the learner's work is under way (see `adding`): held ones go out as resolved once it is done.
    if (this.held.length === 0 || (this.adding !== undefined && !all)) return;
    if (this.learner.revision !== this.generation) this.learned();
    const now = this.options.now();
    // Held interactions repeat a few paths: each resolved once per release.
    const resolved = new Map<string, { template: string; undecided: boolean; pending: string | undefined }>();
    const kept: Held[] = [];
    for (const item of this.held) {
      const path = item.observation.path as PathEntry;
      this.retemplate(path);
      const inferred = path.inferred;
      if (item.observation.unmatchedPath !== undefined) {
        const learned = this.learner.resolve(inferred);
        if (
          !all &&
          ((item.awaitsRoute === true && item.until > now) ||
            ((item.until > now || (item.pendingUntil > now && this.heldOn(learned))) &&
              this.noiseUndecided(learned, inferred, path.raw)))
        ) {
          kept.push(item);
          continue;
        }
        const owner = this.decideNoise(item.observation, learned);
        if (owner === null) continue;
        if (owner !== undefined) {
          item.observation.template = owner;
          this.toRows(item.observation, false);
          continue;
        }
      }
      let current = resolved.get(inferred);
      if (current === undefined) {
        const template = this.resolve(inferred);
        const undecided = this.learner.undecided(template, inferred, path.raw);
        resolved.set(inferred, (current = { template, undecided, pending: undefined }));
      }
      if (!all && item.until > now && current.undecided) {
        kept.push(item);
        continue;
      }
      // Its hold is over: a value in waiting (a sibling alike) is held on until `pendingMs`, then goes out as a parameter.
      if (current.undecided) current.pending ??= this.learner.pending(current.template, inferred);
      if (
        !all &&
        current.undecided &&
        (current.pending !== current.template || this.learner.holdsName(current.template, inferred)) &&
        item.pendingUntil > now
      ) {
        kept.push(item);
        continue;
      }
      item.observation.template = current.undecided ? (current.pending as string) : current.template;
      this.toRows(item.observation, current.undecided);
    }
    this.held = kept;
    this.awaitingRoute = 0;
    for (const item of kept) if (item.awaitsRoute === true) this.awaitingRoute++;
  }

  private releaseOne(item: Held): void {
    if (item.awaitsRoute === true) this.awaitingRoute--;
    const path = item.observation.path as PathEntry;
    this.retemplate(path);
    const inferred = path.inferred;
    const owner = this.decideNoise(item.observation, this.learner.resolve(inferred));
    if (owner === null) return;
    if (owner !== undefined) {
      item.observation.template = owner;
      this.toRows(item.observation, false);
      return;
    }
    const template = this.resolve(inferred);
    const undecided = this.learner.undecided(template, inferred, path.raw);
    item.observation.template = undecided ? this.learner.pending(template, inferred) : template;
    this.toRows(item.observation, undecided);
  }

  /**
   * A path cached, held or shaped before the learner learned since: templated again from its raw
   * path when the learner knows versions (`/oauth2/1/authorize` once `1` is shown one), so it goes
   * out as later requests of it do. Its `generation` stays, so it is resolved again too.
   */
  private retemplate(path: PathEntry): void {
    if (path.generation === this.learner.revision || !this.learner.knowsVersions) return;
    path.inferred = templatePath(path.raw, this.known, this.learner.keepsVersion);
  }

  /**
   * To the rows. `undecided`: the template holds a literal the learner may still make a parameter.
   * Sent with a literal that may ever be learned (`PathLearner.changeable`: also a first segment, or
   * a word that is a route word for now), it is remembered, so the backend is told when it is
   * learned and regroups it then.
   */
  private toRows(observation: Observation, undecided: boolean): void {
    const template = observation.template;
    const path = observation.path;
    const sent = path === undefined ? undefined : this.sentUndecided.get(template);
    if (sent !== undefined && path !== undefined) noteSent(sent, path.inferred);
    // Documented and hinted templates (no `path`) never change. Most templates are decided: that set first.
    else if (
      observation.path !== undefined &&
      this.sentUndecided.size < TEMPLATE_CACHE_SIZE &&
      !this.sentDecided.has(template)
    ) {
      if (undecided || this.learner.changeable(template))
        this.sentUndecided.set(template, { captureId: observation.captureId, inferred: observation.path.inferred });
      else if (this.sentDecided.size < TEMPLATE_CACHE_SIZE) this.sentDecided.add(template);
    }
    this.aggregator.add(observation);
    if (this.aggregator.size >= this.options.backlogRows) this.options.onBacklog?.();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.work(this.options.sliceMs);
    });
  }

  /** Shape waiting samples for at most `sliceMs`, then yield (rescheduling if work is left). */
  private work(sliceMs: number): void {
    const started = performance.now();
    while (this.finishAdding(sliceMs, started) && this.queueHead < this.queue.length) {
      const pending = this.queue[this.queueHead] as Pending;
      this.queue[this.queueHead++] = undefined as unknown as Pending;
      this.queueBytes -= pending.bytes;
      const before = performance.now();
      try {
        const limit = this.options.bodyLimit;
        pending.observation.request = pending.request ? summariseBody(pending.request, true, limit) : null;
        pending.observation.response = pending.response ? summariseBody(pending.response, true, limit) : null;
        this.options.metrics.inc('shaped_total');
      } catch (err) {
        this.options.log.error(
          { err: (err as Error).message, template: pending.observation.template },
          'shape work failed; interaction counted unshaped',
        );
        pending.observation.request = pending.request ? summariseBody(pending.request, false, 0) : null;
        pending.observation.response = pending.response ? summariseBody(pending.response, false, 0) : null;
      }
      pending.request?.drop();
      pending.response?.drop();
      const after = performance.now();
      this.sampler.spent(pending.reserved, pending.bytes, after - before);
      this.waiting.push(pending.observation);
      if (after - started >= sliceMs) {
        // Its learner work as it was before, in this slice, but in steps: what is left waits for the next one.
        this.finishAdding(0, started);
        break;
      }
    }
    if (this.adding !== undefined || this.waiting.length > 0) this.schedule();
    if (this.queueHead === this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
    } else {
      if (this.queueHead > 1024) {
        this.queue.splice(0, this.queueHead);
        this.queueHead = 0;
      }
      this.schedule();
    }
  }
}
