import {
  addInstanceExtras,
  LatencyHistogram,
  REQUIRED_INSTANCES,
  MAX_CONSUMERS_PER_ROW,
  type Shape,
  type WireConsumer,
  type WireFailure,
  type WireObservation,
  type WireUnmatched,
} from '@spectator/shared';
import type { Counter } from '../metrics';
import { isHopByHop } from '../proxy/headers';
import { SunsetClock } from './sunset';
import type { BodySummary } from './summarise';

/**
 * A message's header object as received: only its keys (the names) leave the agent, never its
 * values (a `Sunset` date is read here only to count answers past it, see SunsetClock).
 */
export type HeaderNames = Readonly<Record<string, unknown>>;

/** What a raw path gives when no documented or hinted template matches it (cached per path by the pipeline). */
export interface PathEntry {
  /** The template as the learner resolves it in `generation`: what noise is told apart by. */
  resolved: string;
  /**
   * The template reported (`resolved` kept to bounded cardinality), made when first reported: noise
   * never reaches the cardinality limiter. Empty until then.
   */
  template: string;
  /** The path as the detectors templated it: what the learner takes and resolves. */
  inferred: string;
  /** `template` holds a literal the learner may still make a parameter (set with `template`). */
  undecided: boolean;
  /** The learner's generation `resolved` was resolved in. */
  generation: number;
  /** Methods whose bodiless evidence the learner already has, so repeats skip it. */
  observed: string[];
  /** Methods whose first answer's fields were asked for already (see the pipeline's `firstEvidence`). */
  evidenced: string[];
  /**
   * The raw path (kept in the agent's memory only, never sent): its identifier values are counted
   * by the learner once (`PathLearner.noteIdentifiers`), when an answer other than 404/405 came.
   */
  raw: string;
  /** `raw` was counted. */
  noted: boolean;
}

/** One interaction, reduced to what may leave the process. */
export interface Observation {
  captureId: string;
  method: string;
  template: string;
  /** What the path gave, when no documented or hinted template matched it: evidence for the path learner. */
  path: PathEntry | undefined;
  status: number;
  query: readonly string[];
  /**
   * The header objects themselves rather than arrays of their names: every interaction is counted,
   * and two name arrays per interaction were garbage the proxy's own work had to collect too.
   */
  requestHeaders: HeaderNames;
  responseHeaders: HeaderNames;
  request: BodySummary | null;
  response: BodySummary | null;
  at: number;
  /** Milliseconds from the request's arrival until the response started. */
  firstByte: number;
  /** Milliseconds from the request's arrival until the response ended; -1 when it did not end. */
  lastByte: number;
  /** The client left before the response ended. */
  clientLeft: boolean;
  /** The consumer's pseudonym (observe/consumers.ts); null or absent when none was named. */
  consumer?: string | null;
  /**
   * The raw path of a 404/405 that matched no template yet while its path still held an undecided
   * literal: noise unless what is learned before it goes out shows a real endpoint (then it is that
   * endpoint's own). Kept in the process only, to count the noise by path; never sent.
   */
  unmatchedPath?: string;
}

/** The rows of one capture since the last drain, with every shape they reference. */
export interface CaptureRows {
  captureId: string;
  observations: WireObservation[];
  shapes: Map<string, Shape>;
  /**
   * Templates learned that cover literal paths already sent for this capture (a `learned` message),
   * each with the digests (`pathDigest`) of the paths it covers.
   */
  learned?: Record<string, string[]>;
  /** Noise counted apart since the last drain (counts only). */
  unmatched?: WireUnmatched;
  /** Requests the upstream never answered since the last drain (counts and timings only). */
  failures?: WireFailure[];
}

interface Row {
  observation: WireObservation;
  /** The bodies' row keys (`BodySummary.key`, `-` for none): with method and status, what tells a template's rows apart. */
  requestKey: string;
  responseKey: string;
  firstSeen: number;
  lastSeen: number;
  query: Set<string>;
  requestHeaders: HeaderNameUnion;
  responseHeaders: HeaderNameUnion;
  ttfb: LatencyHistogram;
  ttlb: LatencyHistogram;
  clientLeft: number;
  /** Calls per consumer pseudonym (null when the agent identifies no consumers). */
  consumers: Map<string, { count: number; lastSeen: number }> | null;
  /** Calls of consumers past the row's or the batch's bound. */
  consumersOverflow: number;
  /** Exchanges answered with a Sunset date already past (`sunsetHasPassed`). */
  sunsetPast: number;
  /** The bodies' instance extras added up (`WireBody.instances`), while the row counts fewer than `REQUIRED_INSTANCES` (6) exchanges. */
  requestExtras: string;
  responseExtras: string;
}

/** Exchanges from which a row's bodies need no instance counts beside their fingerprints (read once: a re-export is a getter). */
const COUNTED_EXCHANGES = REQUIRED_INSTANCES;

/** Consumers named in one drain at most, over every row (each row names `MAX_CONSUMERS_PER_ROW` at most). */
export const MAX_CONSUMERS_PER_DRAIN = 10_000;

interface FailureRow {
  failure: WireFailure;
  firstSeen: number;
  lastSeen: number;
  elapsed: LatencyHistogram;
}

/** Rows of one template (methods, statuses, body variants) a template may have before they are indexed by key. */
const ROWS_SCANNED = 8;

/** The rows of one template in one capture. */
interface TemplateRows {
  /** In arrival order: compared one by one with an interaction's method, status and body keys while at most ROWS_SCANNED. */
  rows: Row[];
  /** Past ROWS_SCANNED rows: every row by `rowKey`, made then. */
  byKey: Map<string, Row> | null;
}

/** A row's key within its template, unambiguous (a method has no space; the request key is length-prefixed). */
function rowKey(method: string, status: number, requestKey: string, responseKey: string): string {
  return `${method} ${status} ${requestKey.length}:${requestKey}${responseKey}`;
}

/** Rows of one capture: the list in arrival order, and an index by key for counting. */
interface CaptureTable {
  rows: Row[];
  /**
   * template → its rows: one look-up a request, then a few comparisons of strings the pipeline holds
   * (mostly the same objects), rather than a look-up per part of the key.
   */
  index: Map<string, TemplateRows>;
  /** Requests the upstream never answered, by `status method template` (they are rare: a key string is fine). */
  failures: Map<string, FailureRow>;
}

/**
 * The header names of a row's messages: their union, and the names of the last message in order.
 * A client sends the same headers in the same order request after request, and an app answers
 * likewise: a message whose names repeat the last one's is compared name by name (the same string
 * objects, mostly) and adds nothing, rather than looking each name up in the set (about 10 a request).
 * Hop-by-hop names (they describe the connection, not the API) are dropped when the row is drained,
 * once, rather than checked on every interaction.
 */
class HeaderNameUnion {
  readonly names = new Set<string>();
  /** The last message's names in order, position by position; every one is in `names`. */
  private readonly last: string[] = [];

  add(headers: HeaderNames): void {
    const last = this.last;
    let at = 0;
    // `for…in` walks the keys without the array `Object.keys` would make; header objects have no enumerable inherited keys.
    for (const name in headers) {
      if (last[at] !== name) {
        this.names.add(name);
        last[at] = name;
      }
      at++;
    }
    if (last.length !== at) last.length = at;
  }
}

/** The names of a row, sorted, without hop-by-hop ones. */
function headerNameList(names: Set<string>): string[] {
  return [...names].filter((name) => !isHopByHop(name)).sort();
}

/**
 * Counts interactions per (capture, method, template, status, request body, response body), where
 * a body is its media type, shape fingerprint and flags; query and header names are unioned into
 * the row, with first and last seen. A row is found with one look-up (its template, a string the
 * pipeline already holds, its hash computed once) and then by comparing method, status and body
 * keys with the template's few rows, rather than by a look-up per part of the key or by building and
 * hashing a key string per interaction (that only for a template past ROWS_SCANNED rows).
 */
export class Aggregator {
  private captures = new Map<string, CaptureTable>();
  /** The capture counted into last and its table (see `table`); null after a drain. */
  private lastCapture = '';
  private lastTable: CaptureTable | null = null;
  private shapes = new Map<string, Shape>();
  private rowCount = 0;
  /** Consumers named in rows since the last drain. */
  private consumerEntries = 0;
  private readonly sunset = new SunsetClock();

  /**
   * `identifying`: the agent names consumers, so every row says who called it
   * (`WireObservation.consumers`); `overflow` counts the calls of consumers past the bounds.
   */
  constructor(
    private readonly identifying = false,
    private readonly overflow: Counter | null = null,
  ) {}

  /** Distinct rows waiting to be drained. */
  get size(): number {
    return this.rowCount;
  }

  add(o: Observation): void {
    const table = this.table(o.captureId);
    let rows = table.index.get(o.template);
    if (rows === undefined) table.index.set(o.template, (rows = { rows: [], byKey: null }));
    const requestKey = o.request?.key ?? '-';
    const responseKey = o.response?.key ?? '-';
    let row = rows.byKey === null ? undefined : rows.byKey.get(rowKey(o.method, o.status, requestKey, responseKey));
    if (rows.byKey === null)
      for (const candidate of rows.rows) {
        if (
          candidate.observation.status === o.status &&
          candidate.observation.method === o.method &&
          candidate.responseKey === responseKey &&
          candidate.requestKey === requestKey
        ) {
          row = candidate;
          break;
        }
      }
    if (!row) {
      row = {
        requestKey,
        responseKey,
        observation: {
          method: o.method,
          path: o.template,
          status: o.status,
          query: [],
          requestHeaders: [],
          responseHeaders: [],
          request: o.request?.body ?? null,
          response: o.response?.body ?? null,
          count: 0,
          firstSeen: '',
          lastSeen: '',
        },
        firstSeen: o.at,
        lastSeen: o.at,
        query: new Set(),
        requestHeaders: new HeaderNameUnion(),
        responseHeaders: new HeaderNameUnion(),
        ttfb: new LatencyHistogram(),
        ttlb: new LatencyHistogram(),
        clientLeft: 0,
        consumers: this.identifying ? new Map() : null,
        consumersOverflow: 0,
        sunsetPast: 0,
        requestExtras: '',
        responseExtras: '',
      };
      rows.rows.push(row);
      if (rows.byKey !== null) rows.byKey.set(rowKey(o.method, o.status, requestKey, responseKey), row);
      else if (rows.rows.length > ROWS_SCANNED)
        rows.byKey = new Map(
          rows.rows.map((r) => [rowKey(r.observation.method, r.observation.status, r.requestKey, r.responseKey), r]),
        );
      table.rows.push(row);
      this.rowCount++;
    }
    row.observation.count++;
    // Counts beside the fingerprint: from four exchanges on, every place has four objects anyway.
    if (row.observation.count < COUNTED_EXCHANGES) {
      if (o.request?.instances !== undefined)
        row.requestExtras = addInstanceExtras(row.requestExtras, o.request.instances);
      if (o.response?.instances !== undefined)
        row.responseExtras = addInstanceExtras(row.responseExtras, o.response.instances);
    }
    row.ttfb.record(o.firstByte);
    if (o.lastByte >= 0) row.ttlb.record(o.lastByte);
    if (o.clientLeft) row.clientLeft++;
    if (row.consumers !== null && o.consumer) this.countConsumer(row, o.consumer, o.at);
    // Shaped interactions reach the row after later unshaped ones (they wait for shape work).
    if (o.at < row.firstSeen) row.firstSeen = o.at;
    if (o.at > row.lastSeen) row.lastSeen = o.at;
    for (const name of o.query) row.query.add(name);
    row.requestHeaders.add(o.requestHeaders);
    row.responseHeaders.add(o.responseHeaders);
    const sunset = o.responseHeaders.sunset;
    if (sunset !== undefined && this.sunset.hasPassed(sunset, o.at)) row.sunsetPast++;
    // Only shaped bodies carry a shape (a few per second under load): the rest skip this.
    if (o.request?.shape && o.request.body.shape) this.shapes.set(o.request.body.shape, o.request.shape);
    if (o.response?.shape && o.response.body.shape) this.shapes.set(o.response.body.shape, o.response.shape);
  }

  /** One call of a consumer in a row: named while the row's and the drain's bounds allow, else counted as overflow. */
  private countConsumer(row: Row, consumer: string, at: number): void {
    const consumers = row.consumers as Map<string, { count: number; lastSeen: number }>;
    let calls = consumers.get(consumer);
    if (calls === undefined) {
      if (consumers.size >= MAX_CONSUMERS_PER_ROW || this.consumerEntries >= MAX_CONSUMERS_PER_DRAIN) {
        row.consumersOverflow++;
        this.overflow?.inc();
        return;
      }
      consumers.set(consumer, (calls = { count: 0, lastSeen: at }));
      this.consumerEntries++;
    }
    calls.count++;
    if (at > calls.lastSeen) calls.lastSeen = at;
  }

  /** Count a request the upstream never answered (see `WireFailure`). */
  addFailure(
    captureId: string,
    method: string,
    template: string,
    status: WireFailure['status'],
    elapsed: number,
    at: number,
  ): void {
    const table = this.table(captureId);
    const key = `${status} ${method} ${template}`;
    let row = table.failures.get(key);
    if (row === undefined) {
      row = {
        failure: { method, path: template, status, count: 0, firstSeen: '', lastSeen: '', elapsed: {} },
        firstSeen: at,
        lastSeen: at,
        elapsed: new LatencyHistogram(),
      };
      table.failures.set(key, row);
      this.rowCount++;
    }
    row.failure.count++;
    row.elapsed.record(elapsed);
    if (at < row.firstSeen) row.firstSeen = at;
    if (at > row.lastSeen) row.lastSeen = at;
  }

  private table(captureId: string): CaptureTable {
    // An agent counts into one capture at a time: its table is kept at hand.
    if (captureId === this.lastCapture && this.lastTable !== null) return this.lastTable;
    let table = this.captures.get(captureId);
    if (!table) this.captures.set(captureId, (table = { rows: [], index: new Map(), failures: new Map() }));
    this.lastCapture = captureId;
    this.lastTable = table;
    return table;
  }

  /** Take every row, grouped by capture, each group with the shapes its rows reference. */
  drain(): CaptureRows[] {
    const out: CaptureRows[] = [];
    for (const [captureId, { rows, failures }] of this.captures) {
      const shapes = new Map<string, Shape>();
      const observations: WireObservation[] = [];
      for (const row of rows) {
        row.observation.firstSeen = new Date(row.firstSeen).toISOString();
        row.observation.lastSeen = new Date(row.lastSeen).toISOString();
        row.observation.query = [...row.query].sort();
        row.observation.requestHeaders = headerNameList(row.requestHeaders.names);
        row.observation.responseHeaders = headerNameList(row.responseHeaders.names);
        row.observation.runtime = {
          ttfb: row.ttfb.toWire(),
          ttlb: row.ttlb.toWire(),
          ...(row.clientLeft > 0 ? { clientLeft: row.clientLeft } : {}),
        };
        if (row.consumers !== null) {
          const consumers: WireConsumer[] = [];
          for (const [id, calls] of row.consumers)
            consumers.push({ id, count: calls.count, lastSeen: new Date(calls.lastSeen).toISOString() });
          row.observation.consumers = consumers;
          if (row.consumersOverflow > 0) row.observation.consumersOverflow = row.consumersOverflow;
        }
        if (row.sunsetPast > 0) row.observation.sunsetPast = row.sunsetPast;
        if (row.observation.count < COUNTED_EXCHANGES) {
          if (row.requestExtras !== '' && row.observation.request !== null)
            row.observation.request = { ...row.observation.request, instances: row.requestExtras };
          if (row.responseExtras !== '' && row.observation.response !== null)
            row.observation.response = { ...row.observation.response, instances: row.responseExtras };
        }
        observations.push(row.observation);
        for (const body of [row.observation.request, row.observation.response]) {
          const shape = body?.shape ? this.shapes.get(body.shape) : undefined;
          if (body?.shape && shape) shapes.set(body.shape, shape);
        }
      }
      const group: CaptureRows = { captureId, observations, shapes };
      if (failures.size > 0) {
        group.failures = [];
        for (const row of failures.values()) {
          row.failure.firstSeen = new Date(row.firstSeen).toISOString();
          row.failure.lastSeen = new Date(row.lastSeen).toISOString();
          row.failure.elapsed = row.elapsed.toWire();
          group.failures.push(row.failure);
        }
      }
      out.push(group);
    }
    this.captures = new Map();
    this.lastTable = null;
    this.shapes = new Map();
    this.rowCount = 0;
    this.consumerEntries = 0;
    return out;
  }
}
