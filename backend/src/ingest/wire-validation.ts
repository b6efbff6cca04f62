import {
  AGENT_FAILURE_STATUSES,
  type AgentMessage,
  CONSUMER_ID_PATTERN,
  MAX_CONSUMERS_PER_ROW,
  type WireConsumer,
  type BatchMessage,
  ENVIRONMENT_KINDS,
  type HelloMessage,
  isInstanceExtras,
  type LearnedMessage,
  MAX_EXTRA_INSTANCES,
  type Shape,
  REQUIRED_INSTANCES,
  STRING_FORMATS as SHARED_STRING_FORMATS,
  type WireBody,
  type WireCapture,
  type WireFailure,
  type WireHistogram,
  type WireObservation,
  type WireRuntime,
  type WireUnmatched,
  bestTemplate,
  hasParameter,
  histogramTotal,
  templatePath,
} from '@spectator/shared';

/**
 * Validation of agent messages. Hand-written rather than class-validator: batches carry thousands
 * of observations and this is the ingest hot path; every problem names its JSON path
 * (e.g. `observations[3].status must be an integer 100-599`).
 */
export class WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireError';
  }
}

export interface WireLimits {
  maxObservations: number;
  maxShapes: number;
  /** Nodes of one shape (fields, items, options counted). */
  maxShapeNodes: number;
}

export const DEFAULT_WIRE_LIMITS: WireLimits = { maxObservations: 10_000, maxShapes: 10_000, maxShapeNodes: 20_000 };

/** Object places a body's instance extras name at most: a shape has no more nodes than this (DEFAULT_WIRE_LIMITS). */
const MAX_INSTANCE_PLACES = DEFAULT_WIRE_LIMITS.maxShapeNodes;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const METHOD = /^[A-Z][A-Z-]{0,19}$/;
const FINGERPRINT = /^[A-Za-z0-9_+/=:.-]{1,128}$/;
const CAPTURE_REASONS = ['agent-start', 'command-restart', 'upstream-restart'];
const SHAPE_KINDS = new Set(['string', 'number', 'boolean', 'null', 'object', 'array', 'oneOf', 'unknown']);
const STRING_FORMATS: ReadonlySet<string> = new Set(SHARED_STRING_FORMATS);

/**
 * Refuses the value at `path` followed by `field` (`observations[3]` and `.status`): the two are
 * joined only here, so validating a valid batch builds no path strings (a 40-row batch built
 * about 1,000, 42 KiB of garbage, when every check was given its whole path).
 */
function fail(path: string, problem: string, field = ''): never {
  throw new WireError(`${path}${field} ${problem}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function record(value: unknown, path: string, field = ''): Record<string, unknown> {
  if (!isRecord(value)) fail(path, 'must be an object', field);
  return value;
}

/** Why `value` is not a string of at most `max` characters (matching `pattern`), or null. */
function textProblem(value: unknown, max: number, pattern?: RegExp): string | null {
  if (typeof value !== 'string' || value.length > max) return `must be a string of at most ${max} characters`;
  // PostgreSQL text cannot hold NUL: refused here, with its path, rather than failing the batch's statement.
  if (value.includes('\u0000')) return 'must not contain NUL characters';
  if (pattern && !pattern.test(value)) return 'has an invalid format';
  return null;
}

function text(value: unknown, path: string, max: number, pattern?: RegExp, field = ''): string {
  const problem = textProblem(value, max, pattern);
  if (problem !== null) fail(path, problem, field);
  return value as string;
}

function optionalText(value: unknown, path: string, max: number): string | undefined {
  return value === undefined || value === null ? undefined : text(value, path, max);
}

/** Why `value` is not an integer from `min` to `max`, or null. */
function integerProblem(value: unknown, min: number, max: number): string | null {
  return typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max
    ? `must be an integer ${min}-${max}`
    : null;
}

function integer(value: unknown, path: string, min: number, max: number, field = ''): number {
  const problem = integerProblem(value, min, max);
  if (problem !== null) fail(path, problem, field);
  return value as number;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The two-digit number at `at` in `text` (NaN when not digits). */
function twoDigits(text: string, at: number): number {
  const tens = text.charCodeAt(at) - 48;
  const ones = text.charCodeAt(at + 1) - 48;
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : Number.NaN;
}

/** Whether a `YYYY-MM-DD…` text names a day its month does not have (false for other forms). */
function pastMonthEnd(text: string): boolean {
  if (text[4] !== '-' || text[7] !== '-') return false;
  const year = twoDigits(text, 0) * 100 + twoDigits(text, 2);
  const month = twoDigits(text, 5);
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return twoDigits(text, 8) > (DAYS_IN_MONTH[month - 1] ?? 31) + (leap ? 1 : 0);
}

/** Whether `value` is an ISO 8601 time PostgreSQL takes. */
function isIsoTime(value: unknown): value is string {
  // Date.parse rolls 30 February over to March where PostgreSQL refuses it: refused here, or the
  // batch would fail in the database (and be resent forever) instead.
  return typeof value === 'string' && value.length <= 40 && !Number.isNaN(Date.parse(value)) && !pastMonthEnd(value);
}

function isoTime(value: unknown, path: string, field = ''): string {
  if (!isIsoTime(value)) fail(path, 'must be an ISO 8601 time', field);
  return value;
}

function uuid(value: unknown, path: string): string {
  return text(value, path, 36, UUID);
}

function oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    fail(path, `must be one of ${allowed.join(', ')}`);
  return value as T;
}

function names(value: unknown, path: string, field: string): string[] {
  if (!Array.isArray(value) || value.length > 500) fail(path, 'must be an array of at most 500 names', field);
  // Kept sorted and unique (as the protocol says), so stored lists compare by containment. Agents
  // send them so: then the validated array itself is the result (no copies on the hot path).
  let ordered = true;
  for (let i = 0; i < value.length; i++) {
    const problem = textProblem(value[i], 256);
    if (problem !== null) fail(path, problem, `${field}[${i}]`);
    if (i > 0 && !((value[i - 1] as string) < (value[i] as string))) ordered = false;
  }
  return ordered ? (value as string[]) : [...new Set(value as string[])].sort();
}

function textList(value: unknown, path: string, maxItems: number, maxLength: number): string[] {
  if (!Array.isArray(value) || value.length > maxItems) fail(path, `must be an array of at most ${maxItems} strings`);
  return value.map((item, i) => text(item, `${path}[${i}]`, maxLength));
}

/** The fields of a request or response body, named once (not per row). */
const BODY_FIELDS = {
  request: { at: '.request', contentType: '.request.contentType', shape: '.request.shape' },
  response: { at: '.response', contentType: '.response.contentType', shape: '.response.shape' },
};

function body(value: unknown, path: string, field: (typeof BODY_FIELDS)[keyof typeof BODY_FIELDS]): WireBody | null {
  if (value === null) return null;
  if (value === undefined) fail(path, 'is required (null for no body)', field.at);
  const o = record(value, path, field.at);
  const result: WireBody = { contentType: text(o.contentType, path, 200, undefined, field.contentType) };
  if (o.shape !== undefined) result.shape = text(o.shape, path, 128, FINGERPRINT, field.shape);
  if (o.instances !== undefined) {
    if (result.shape === undefined) fail(path, 'is only allowed with a shape', `${field.at}.instances`);
    if (!isInstanceExtras(o.instances, MAX_INSTANCE_PLACES))
      fail(
        path,
        `must be digits 0-${MAX_EXTRA_INSTANCES} ending in 1-${MAX_EXTRA_INSTANCES} (objects beyond one per exchange at each object place), at most ${MAX_INSTANCE_PLACES}`,
        `${field.at}.instances`,
      );
    result.instances = o.instances;
  }
  for (const flag of ['tooLarge', 'unparsable', 'unshaped'] as const) {
    if (o[flag] === undefined) continue;
    if (o[flag] !== true) fail(path, 'must be true when present', `${field.at}.${flag}`);
    result[flag] = true;
  }
  return result;
}

function observation(value: unknown, path: string): WireObservation {
  const o = record(value, path);
  const request = body(o.request, path, BODY_FIELDS.request);
  const response = body(o.response, path, BODY_FIELDS.response);
  const count = integer(o.count, path, 1, MAX_COUNT, '.count');
  const timings = o.runtime === undefined || o.runtime === null ? undefined : runtime(o.runtime, path, count);
  const named = o.consumers === undefined || o.consumers === null ? undefined : consumers(o, path, count);
  const row: WireObservation = {
    method: text(o.method, path, 20, METHOD, '.method'),
    path: pathTemplate(o.path, path, '.path'),
    status: integer(o.status, path, 100, 599, '.status'),
    query: names(o.query ?? [], path, '.query'),
    requestHeaders: names(o.requestHeaders ?? [], path, '.requestHeaders'),
    responseHeaders: names(o.responseHeaders ?? [], path, '.responseHeaders'),
    request,
    response,
    count,
    firstSeen: isoTime(o.firstSeen, path, '.firstSeen'),
    lastSeen: isoTime(o.lastSeen, path, '.lastSeen'),
  };
  // Optional fields set only when present (no object spread: a row is built once, in place).
  if (timings) row.runtime = timings;
  if (named) {
    row.consumers = named.consumers;
    if (named.overflow > 0) row.consumersOverflow = named.overflow;
  }
  // A count within the row's, nothing else: the Sunset date itself never leaves the agent.
  if (o.sunsetPast !== undefined && o.sunsetPast !== null)
    row.sunsetPast = integer(o.sunsetPast, path, 1, count, '.sunsetPast');
  return row;
}

/**
 * An observation's consumers: pseudonyms only (the pattern admits nothing else), each with its
 * calls and last call, no other field (so no value can ride along), at most `MAX_CONSUMERS_PER_ROW`,
 * their calls and the overflow within the row's count.
 */
function consumers(
  o: Record<string, unknown>,
  path: string,
  count: number,
): { consumers: WireConsumer[]; overflow: number } {
  if (!Array.isArray(o.consumers) || o.consumers.length > MAX_CONSUMERS_PER_ROW)
    fail(path, `must be an array of at most ${MAX_CONSUMERS_PER_ROW} consumers`, '.consumers');
  const items = o.consumers as unknown[];
  let calls = 0;
  // Each item's path (`.consumers[1].count`) is written only for the problem found. Checked in
  // place, not copied: an item holds these three fields and no other (issue 20: the copies were
  // a fiftieth of what a batch's ingest allocated).
  items.forEach((item: unknown, i: number) => {
    if (!isRecord(item)) fail(path, 'must be an object', `.consumers[${i}]`);
    const c = item;
    for (const key in c)
      if (key !== 'id' && key !== 'count' && key !== 'lastSeen')
        fail(path, 'is not allowed (a consumer is a pseudonym, a count and a time)', `.consumers[${i}].${key}`);
    if (typeof c.id !== 'string' || !CONSUMER_ID_PATTERN.test(c.id))
      fail(path, 'must be a pseudonym of 16 hexadecimal digits', `.consumers[${i}].id`);
    // A row names 1–3 mostly: the ones before compared, no set.
    for (let j = 0; j < i; j++)
      if ((items[j] as { id: unknown }).id === c.id) fail(path, 'is named twice in the row', `.consumers[${i}].id`);
    const problem = integerProblem(c.count, 1, count);
    if (problem !== null) fail(path, problem, `.consumers[${i}].count`);
    calls += c.count as number;
    if (!isIsoTime(c.lastSeen)) fail(path, 'must be an ISO 8601 time', `.consumers[${i}].lastSeen`);
  });
  const overflow =
    o.consumersOverflow === undefined || o.consumersOverflow === null
      ? 0
      : integer(o.consumersOverflow, path, 0, count, '.consumersOverflow');
  if (calls + overflow > count)
    fail(path, `count ${calls + overflow} calls, more than the row's ${count}`, '.consumers');
  return { consumers: items as WireConsumer[], overflow };
}

/** Exchanges one row (or failure row) may count at most. */
const MAX_COUNT = 1_000_000_000;

function pathTemplate(value: unknown, path: string, field = ''): string {
  const result = text(value, path, 2048, undefined, field);
  if (!result.startsWith('/')) fail(path, 'must start with /', field);
  return result;
}

/** A histogram in wire form counting at most `maxTotal` exchanges (the row's count), at `path` + `field`. */
function histogram(value: unknown, path: string, maxTotal: number, field: string): WireHistogram {
  const total = histogramTotal(value, maxTotal);
  // A problem with one bucket names it after the path (`ttfb["200"] must be …`).
  if (typeof total === 'string')
    throw new WireError(total.startsWith('[') ? `${path}${field}${total}` : `${path}${field} ${total}`);
  if (total > maxTotal) fail(path, `counts ${total} exchanges, more than the row's ${maxTotal}`, field);
  return value as WireHistogram;
}

/** Timings and counts only: any other field is refused, so no value can ride along. */
function runtime(value: unknown, path: string, count: number): WireRuntime {
  const o = record(value, path, '.runtime');
  for (const key in o)
    if (key !== 'ttfb' && key !== 'ttlb' && key !== 'clientLeft')
      fail(`${path}.runtime.${key}`, 'is not allowed (runtime carries timings and counts only)');
  histogram(o.ttfb, path, count, '.runtime.ttfb');
  histogram(o.ttlb, path, count, '.runtime.ttlb');
  if (o.clientLeft !== undefined) integer(o.clientLeft, path, 0, count, '.runtime.clientLeft');
  // These fields and no other, checked: the object itself, not a copy.
  return o as unknown as WireRuntime;
}

const FAILURE_STATUSES: readonly number[] = [0, ...AGENT_FAILURE_STATUSES];

function failure(value: unknown, path: string): WireFailure {
  const o = record(value, path);
  if (typeof o.status !== 'number' || !FAILURE_STATUSES.includes(o.status))
    fail(`${path}.status`, `must be one of ${FAILURE_STATUSES.join(', ')}`);
  const count = integer(o.count, `${path}.count`, 1, MAX_COUNT);
  return {
    method: text(o.method, `${path}.method`, 20, METHOD),
    path: pathTemplate(o.path, `${path}.path`),
    status: o.status as WireFailure['status'],
    count,
    firstSeen: isoTime(o.firstSeen, `${path}.firstSeen`),
    lastSeen: isoTime(o.lastSeen, `${path}.lastSeen`),
    elapsed: histogram(o.elapsed, path, count, '.elapsed'),
  };
}

/** Checks a shape's structure without recursion on the JS stack, bounded by `maxNodes`. */
export function validateShape(value: unknown, path: string, maxNodes: number): Shape {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path }];
  let nodes = 0;
  while (stack.length > 0) {
    const next = stack.pop() as { value: unknown; path: string };
    if (++nodes > maxNodes) fail(path, `has more than ${maxNodes} nodes`);
    const shape = record(next.value, next.path);
    if (typeof shape.kind !== 'string' || !SHAPE_KINDS.has(shape.kind))
      fail(`${next.path}.kind`, `must be one of ${[...SHAPE_KINDS].join(', ')}`);
    if (shape.truncated !== undefined && shape.truncated !== true)
      fail(`${next.path}.truncated`, 'must be true when present');
    switch (shape.kind) {
      case 'string':
        if (shape.format !== undefined && !(typeof shape.format === 'string' && STRING_FORMATS.has(shape.format)))
          fail(`${next.path}.format`, `must be one of ${[...STRING_FORMATS].join(', ')}`);
        break;
      case 'object': {
        if (!Array.isArray(shape.fields)) fail(`${next.path}.fields`, 'must be an array');
        const instances: unknown = shape.instances;
        if (
          instances !== undefined &&
          !(
            typeof instances === 'number' &&
            Number.isInteger(instances) &&
            instances >= 2 &&
            instances <= REQUIRED_INSTANCES
          )
        )
          fail(`${next.path}.instances`, `must be an integer from 2 to ${REQUIRED_INSTANCES} when present`);
        const seen = new Set<string>();
        shape.fields.forEach((item: unknown, i: number) => {
          const field = record(item, `${next.path}.fields[${i}]`);
          const name = text(field.name, `${next.path}.fields[${i}].name`, 1024);
          if (seen.has(name)) fail(`${next.path}.fields[${i}].name`, 'repeats a field name');
          seen.add(name);
          if (typeof field.required !== 'boolean') fail(`${next.path}.fields[${i}].required`, 'must be a boolean');
          stack.push({ value: field.shape, path: `${next.path}.fields[${i}].shape` });
        });
        break;
      }
      case 'array':
        stack.push({ value: shape.items, path: `${next.path}.items` });
        break;
      case 'oneOf':
        if (!Array.isArray(shape.options) || shape.options.length < 2)
          fail(`${next.path}.options`, 'must be an array of at least 2 shapes');
        shape.options.forEach((option: unknown, i: number) =>
          stack.push({ value: option, path: `${next.path}.options[${i}]` }),
        );
        break;
      default:
        break;
    }
  }
  return value as Shape;
}

function capture(value: unknown, path: string): WireCapture {
  const o = record(value, path);
  return {
    id: uuid(o.id, `${path}.id`),
    startedAt: isoTime(o.startedAt, `${path}.startedAt`),
    reason: oneOf(o.reason, `${path}.reason`, CAPTURE_REASONS) as WireCapture['reason'],
  };
}

function hello(o: Record<string, unknown>): HelloMessage {
  const environment = record(o.environment, 'environment');
  const kind = oneOf(environment.kind, 'environment.kind', ENVIRONMENT_KINDS);
  const optional = (name: 'pullRequest' | 'commit' | 'build'): Record<string, string> => {
    const value = optionalText(environment[name], `environment.${name}`, 200);
    return value === undefined ? {} : { [name]: value };
  };
  return {
    type: 'hello',
    protocol: integer(o.protocol, 'protocol', 0, 1_000_000),
    agentId: text(o.agentId, 'agentId', 200),
    agentVersion: text(o.agentVersion, 'agentVersion', 100),
    environment: { kind, ...optional('pullRequest'), ...optional('commit'), ...optional('build') },
    capture: capture(o.capture, 'capture'),
    rules: textList(o.rules ?? [], 'rules', 1000, 1000),
  };
}

function batch(o: Record<string, unknown>, limits: WireLimits): BatchMessage {
  const batchId = uuid(o.batchId, 'batchId');
  const captureId = uuid(o.captureId, 'captureId');
  const shapesIn = record(o.shapes ?? {}, 'shapes');
  const keys = Object.keys(shapesIn);
  if (keys.length > limits.maxShapes) fail('shapes', `must hold at most ${limits.maxShapes} shapes`);
  const shapes: Record<string, Shape> = {};
  for (const key of keys) {
    if (!FINGERPRINT.test(key)) fail(`shapes[${JSON.stringify(key.slice(0, 64))}]`, 'has an invalid fingerprint');
    shapes[key] = validateShape(shapesIn[key], `shapes[${JSON.stringify(key)}]`, limits.maxShapeNodes);
  }
  if (!Array.isArray(o.observations)) fail('observations', 'must be an array');
  if (o.observations.length > limits.maxObservations)
    fail('observations', `must hold at most ${limits.maxObservations} observations`);
  const observations = o.observations.map((item: unknown, i: number) => observation(item, `observations[${i}]`));
  const noise = o.unmatched === undefined || o.unmatched === null ? undefined : unmatched(o.unmatched, 'unmatched');
  let failures: WireFailure[] | undefined;
  if (o.failures !== undefined && o.failures !== null) {
    if (!Array.isArray(o.failures) || o.failures.length > limits.maxObservations)
      fail('failures', `must be an array of at most ${limits.maxObservations} rows`);
    failures = o.failures.map((item: unknown, i: number) => failure(item, `failures[${i}]`));
  }
  return {
    type: 'batch',
    batchId,
    captureId,
    shapes,
    observations,
    ...(noise ? { unmatched: noise } : {}),
    ...(failures && failures.length > 0 ? { failures } : {}),
  };
}

/** Counts only: any other field (a path, say) is refused, so nothing else can ride along. */
function unmatched(value: unknown, path: string): WireUnmatched {
  const o = record(value, path);
  for (const key of Object.keys(o))
    if (key !== 'requests' && key !== 'paths') fail(`${path}.${key}`, 'is not allowed (unmatched carries counts only)');
  return {
    requests: integer(o.requests, `${path}.requests`, 0, 1_000_000_000),
    paths: integer(o.paths, `${path}.paths`, 0, 1_000_000_000),
  };
}

/** Weak identifiers (`1`, a version the agent kept) may stay literal in a template; strong ones may not. */
const keepsWeakLiterals = (): boolean => true;

/** Templates a `learned` message may carry at most. */
export const MAX_LEARNED_TEMPLATES = 1000;

/**
 * A path template as the agent writes it: canonical (what `templatePath` gives back unchanged, a
 * short number the agent kept as a version allowed: `/oauth2/1/file/{file}`, docs/paths.md) and
 * with at least one parameter, as only a template with a parameter can regroup literal rows.
 */
function template(value: unknown, path: string): string {
  const t = text(value, path, 2048);
  if (!t.startsWith('/') || templatePath(t, [], keepsWeakLiterals) !== t)
    fail(path, 'must be a canonical path template (e.g. /users/{user})');
  if (!hasParameter(t)) fail(path, 'must hold at least one {parameter}');
  return t;
}

/** Digests of covered paths a `learned` message may carry at most, over all its templates. */
export const MAX_LEARNED_COVERS = 10_000;
const DIGEST = /^[0-9a-f]{32}$/;

/** `covers`: per template of the message, the digests of the literal paths it covers (`pathDigest`). */
function covers(value: unknown, templates: readonly string[]): Record<string, string[]> {
  const o = record(value, 'covers');
  const out: Record<string, string[]> = {};
  let total = 0;
  for (const [key, list] of Object.entries(o)) {
    if (!templates.includes(key)) fail(`covers[${JSON.stringify(key.slice(0, 100))}]`, 'must be one of templates');
    if (!Array.isArray(list)) fail(`covers[${JSON.stringify(key)}]`, 'must be an array of path digests');
    total += list.length;
    if (total > MAX_LEARNED_COVERS) fail('covers', `must hold at most ${MAX_LEARNED_COVERS} path digests in all`);
    out[key] = [
      ...new Set(
        list.map((item: unknown, i: number) => text(item, `covers[${JSON.stringify(key)}][${i}]`, 32, DIGEST)),
      ),
    ];
  }
  return out;
}

/** `literals`: paths users stated without a parameter (`/users/me`), unique. */
function literalPaths(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_LEARNED_TEMPLATES)
    fail('literals', `must be an array of at most ${MAX_LEARNED_TEMPLATES} paths`);
  return [
    ...new Set(
      value.map((item: unknown, i: number) => {
        const path = text(item, `literals[${i}]`, 2048);
        if (!path.startsWith('/') || hasParameter(path)) fail(`literals[${i}]`, 'must be a path without {parameter}');
        // In the canonical form stored paths have (a path is its own best match, in canonical form).
        return bestTemplate(path, [path]) ?? path;
      }),
    ),
  ];
}

function learned(o: Record<string, unknown>): LearnedMessage {
  const captureId = uuid(o.captureId, 'captureId');
  if (!Array.isArray(o.templates) || o.templates.length === 0 || o.templates.length > MAX_LEARNED_TEMPLATES)
    fail('templates', `must be an array of 1-${MAX_LEARNED_TEMPLATES} templates`);
  const templates = [...new Set(o.templates.map((item: unknown, i: number) => template(item, `templates[${i}]`)))];
  if (o.hint !== undefined && o.hint !== true) fail('hint', 'must be true when present');
  if (o.literals !== undefined && o.hint !== true) fail('literals', 'are allowed with hint only');
  return {
    type: 'learned',
    captureId,
    templates,
    ...(o.covers === undefined ? {} : { covers: covers(o.covers, templates) }),
    ...(o.hint === true ? { hint: true as const } : {}),
    ...(o.literals === undefined ? {} : { literals: literalPaths(o.literals) }),
  };
}

/**
 * Parses and validates one agent message (the text of a frame).
 * @throws WireError naming what is wrong.
 */
export function parseAgentMessage(data: string, limits: WireLimits = DEFAULT_WIRE_LIMITS): AgentMessage {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new WireError('message is not valid JSON');
  }
  const o = record(parsed, 'message');
  switch (o.type) {
    case 'hello':
      return hello(o);
    case 'batch':
      return batch(o, limits);
    case 'capture': {
      const previous = o.previous === undefined || o.previous === null ? undefined : record(o.previous, 'previous');
      return {
        type: 'capture',
        capture: capture(o.capture, 'capture'),
        ...(previous
          ? {
              previous: {
                id: uuid(previous.id, 'previous.id'),
                endedAt: isoTime(previous.endedAt, 'previous.endedAt'),
              },
            }
          : {}),
      };
    }
    case 'capture-end':
      return { type: 'capture-end', captureId: uuid(o.captureId, 'captureId'), endedAt: isoTime(o.endedAt, 'endedAt') };
    case 'rules':
      return {
        type: 'rules',
        captureId: uuid(o.captureId, 'captureId'),
        rules: textList(o.rules, 'rules', 1000, 1000),
      };
    case 'learned':
      return learned(o);
    default:
      return fail('type', 'must be one of hello, batch, capture, capture-end, rules, learned');
  }
}
