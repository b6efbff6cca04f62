import { CardinalityLimiter, isIgnored, queryNames, templatePath, type IgnoreRule } from '@spectator/shared';
import type { Logger } from '../log';
import type { Counter, Metrics } from '../metrics';
import type { IncomingHttpHeaders } from 'node:http';
import { Aggregator, type CaptureRows, type Observation } from './aggregator';
import { BodyTap, type Exchange, type ExchangeObserver, type StreamLedger } from './exchange';
import { ShapeSampler, type SamplerOptions } from './sampler';
import { classifyContentType, summariseBody, type MediaClass } from './summarise';
import { STREAM_PREFIX_BYTES } from './stream';
import { boundaryOf, MULTIPART_FORM } from './form';

export interface PipelineOptions {
  /** Bytes of each shaped body copied. 0 counts interactions without looking at bodies. */
  captureLimit: number;
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
  sampler?: Partial<SamplerOptions>;
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
const NO_NAMES: readonly string[] = Object.freeze([]);

function pathOf(target: string): string {
  const question = target.indexOf('?');
  return question < 0 ? target : target.slice(0, question);
}

/**
 * The capture side of the proxy. `record` runs right after a response ended: it applies the ignore
 * rules, templates the path, counts the interaction, and either queues the bodies for shape work
 * or releases them (sampled out, or queue full). Shape work runs later in short slices.
 * Nothing here can throw into the proxy.
 */
export class CapturePipeline implements ExchangeObserver {
  readonly captureId: () => string;
  private readonly aggregator = new Aggregator();
  private readonly sampler: ShapeSampler;
  private readonly queue: Pending[] = [];
  private queueHead = 0;
  private queueBytes = 0;
  private scheduled = false;
  private known: string[] = [];
  private knownCanonical = new Set<string>();
  /** Raw path → template reported (after the cardinality limiter). */
  private readonly templates = new Map<string, string>();
  private readonly limiter = new CardinalityLimiter();
  /** Raw query names (values cut off) → the names reported. */
  private readonly queries = new Map<string, readonly string[]>();
  private readonly options: Required<Omit<PipelineOptions, 'sampler' | 'onBacklog'>> & Pick<PipelineOptions, 'onBacklog'>;
  /** What the open streams' taps keep, against `streamBytesMax`. */
  private readonly streams: StreamLedger;
  /** Counters touched on every interaction, held rather than looked up by name. */
  private readonly captured: Counter;
  private readonly unshaped: Counter;

  constructor(options: PipelineOptions) {
    this.options = { backlogRows: 500, queueMaxItems: 1_000, queueMaxBytes: 32 * 1024 * 1024, sliceMs: 8, streamBytesMax: 16 * 1024 * 1024, ...options };
    this.streams = { held: 0, limit: this.options.streamBytesMax };
    this.captureId = options.captureId;
    this.sampler = new ShapeSampler(options.sampler);
    this.captured = options.metrics.counter('captured_total');
    this.unshaped = options.metrics.counter('unshaped_total');
    options.metrics.gauge('queue_depth', () => this.queue.length - this.queueHead);
    options.metrics.gauge('queue_bytes', () => this.queueBytes);
    options.metrics.gauge('stream_bytes', () => this.streams.held);
  }

  tap(contentType: string | string[] | undefined, contentEncoding: string | string[] | undefined, copy: boolean): BodyTap {
    // Called on the hot path, where a throw would end the request handler: whatever goes wrong, the
    // body is still forwarded and counted, only not looked at.
    try {
      const media = classifyContentType(contentType);
      const encoding = Array.isArray(contentEncoding) ? contentEncoding.join(',') : (contentEncoding ?? '');
      return new BodyTap(media.type, encoding, this.keptBytes(media), copy && media.shaped, media.type === MULTIPART_FORM ? boundaryOf(contentType) : '', media.stream, media.stream ? this.streams : null);
    } catch (err) {
      this.options.log.error({ err: (err as Error).message }, 'capture failed for one body: counted, not looked at');
      return new BodyTap('', '', 0, false);
    }
  }

  sample(method: string, target: string, status: number, responseHeaders: IncomingHttpHeaders, requestCopied: number): number {
    try {
      const media = classifyContentType(responseHeaders['content-type']);
      const kept = this.keptBytes(media);
      const length = Number(responseHeaders['content-length'] ?? kept);
      // A stream is shaped from its first `kept` bytes; another body not at all past the limit.
      const expectedBytes = requestCopied + (media.stream ? Math.min(length, kept) || 0 : length <= kept ? length : 0);
      // Nothing to shape (no JSON body, or one that will be too large): no budget spent.
      if (expectedBytes === 0) return 0;
      const upper = method.toUpperCase();
      const pathname = pathOf(target);
      // Ignored traffic is dropped when recorded: shaping its bodies would only spend the budget.
      const rules = this.options.rules();
      if (rules.length > 0 && isIgnored(rules, upper, pathname)) return 0;
      const slot = this.sampler.slot(this.captureId(), upper, this.template(pathname), status);
      return this.sampler.admit(slot, expectedBytes) ? expectedBytes : 0;
    } catch (err) {
      this.options.log.error({ err: (err as Error).message }, 'sampling failed for one interaction');
      return 0;
    }
  }

  /** Bytes of a body of this media type kept for shape work: none unshaped, a stream's first ones. */
  private keptBytes(media: MediaClass): number {
    if (!media.shaped) return 0;
    return media.stream ? Math.min(this.options.captureLimit, STREAM_PREFIX_BYTES) : this.options.captureLimit;
  }

  /** Capture paused (the proxy stopped handing exchanges over): the shape budget's clock stops too. */
  pause(): void {
    this.sampler.pause();
  }

  /** Capture resumed after `pause`. */
  resume(): void {
    this.sampler.resume();
  }

  /** Documented templates from the backend, matched before inferring parameters. */
  setKnownTemplates(templates: readonly string[]): void {
    this.known = [...templates];
    this.knownCanonical = new Set(this.known.map((template) => templatePath(template)));
    this.templates.clear();
  }

  record(exchange: Exchange): void {
    try {
      this.accept(exchange);
    } catch (err) {
      this.options.log.error({ err: (err as Error).message }, 'capture failed for one interaction');
    }
  }

  /** Do every waiting piece of shape work now, then hand over the rows (grouped by capture). */
  drain(): CaptureRows[] {
    this.work(Infinity);
    return this.aggregator.drain();
  }

  /** Distinct rows waiting. */
  get rows(): number {
    return this.aggregator.size;
  }

  private accept(exchange: Exchange): void {
    const { metrics } = this.options;
    const question = exchange.target.indexOf('?');
    const pathname = pathOf(exchange.target);
    const method = exchange.method.toUpperCase();
    const rules = this.options.rules();
    if (rules.length > 0 && isIgnored(rules, method, pathname)) {
      metrics.inc('ignored_total');
      return;
    }
    const template = this.template(pathname);
    const observation: Observation = {
      captureId: exchange.captureId,
      method,
      template,
      status: exchange.status,
      query: question < 0 ? NO_NAMES : this.queryNames(exchange.target, question),
      requestHeaders: exchange.requestHeaders,
      responseHeaders: exchange.responseHeaders,
      request: null,
      response: null,
      at: exchange.at,
    };
    this.captured.inc();
    const bytes = (exchange.request?.copied ?? 0) + (exchange.response?.copied ?? 0);
    const reserved = exchange.sampledBytes;
    const wanted = reserved > 0 && bytes > 0;
    const fits = this.queue.length - this.queueHead < this.options.queueMaxItems && this.queueBytes + bytes <= this.options.queueMaxBytes;
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
    observation.request = exchange.request ? summariseBody(exchange.request, false, 0) : null;
    observation.response = exchange.response ? summariseBody(exchange.response, false, 0) : null;
    exchange.request?.drop();
    exchange.response?.drop();
    if (observation.request?.body.unshaped || observation.response?.body.unshaped) this.unshaped.inc();
    this.add(observation);
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
    for (let at = question + 1; at <= end; ) {
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

  private template(pathname: string): string {
    const cached = this.templates.get(pathname);
    if (cached !== undefined) return cached;
    const inferred = templatePath(pathname, this.known);
    // Documented templates stay as they are; anything else is kept to bounded cardinality.
    if (this.knownCanonical.has(inferred)) return this.remember(pathname, inferred);
    const before = this.limiter.trackedPrefixes;
    const limited = this.limiter.limit(inferred);
    // A path the limiter had not seen changes its state and may collapse positions that cached
    // templates still show as literals: start the cache afresh (rare once traffic is steady).
    if (this.limiter.trackedPrefixes !== before) this.templates.clear();
    return this.remember(pathname, limited);
  }

  private remember(pathname: string, template: string): string {
    if (this.templates.size >= TEMPLATE_CACHE_SIZE) this.templates.clear();
    this.templates.set(pathname, template);
    return template;
  }

  private add(observation: Observation): void {
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
    while (this.queueHead < this.queue.length) {
      const pending = this.queue[this.queueHead] as Pending;
      this.queue[this.queueHead++] = undefined as unknown as Pending;
      this.queueBytes -= pending.bytes;
      const before = performance.now();
      try {
        const limit = this.options.captureLimit;
        pending.observation.request = pending.request ? summariseBody(pending.request, true, limit) : null;
        pending.observation.response = pending.response ? summariseBody(pending.response, true, limit) : null;
        this.options.metrics.inc('shaped_total');
      } catch (err) {
        this.options.log.error({ err: (err as Error).message, template: pending.observation.template }, 'shape work failed; interaction counted unshaped');
        pending.observation.request = pending.request ? summariseBody(pending.request, false, 0) : null;
        pending.observation.response = pending.response ? summariseBody(pending.response, false, 0) : null;
      }
      pending.request?.drop();
      pending.response?.drop();
      const after = performance.now();
      this.sampler.spent(pending.reserved, pending.bytes, after - before);
      this.add(pending.observation);
      if (after - started >= sliceMs) break;
    }
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
