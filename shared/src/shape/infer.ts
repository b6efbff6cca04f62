import * as canonical from './canonical-text';
import { detectStringFormat } from './formats';
import { Hash128 } from './hash';
import { compareNames, MAX_SHAPE_DEPTH } from './options';
import type { Field, ObjectShape, Shape, ShapeLimits, StringFormat } from './types';

/** Defaults: depth 32, 256 fields per object, 1,000 array items looked at. */
export const DEFAULT_SHAPE_LIMITS: ShapeLimits = { maxDepth: 32, maxFields: 256, maxItems: 1000 };

export { MAX_SHAPE_DEPTH } from './options';

// Bits of `Accumulator.seen`: the kinds seen at one position, and what was cut short there.
const STRING = 1;
const NUMBER = 2;
const BOOLEAN = 4;
const NULL = 8;
const ARRAY = 16;
/** A value beyond the depth limit: becomes `{kind:'unknown', truncated:true}`. */
const CUT = 32;
const OBJECT_TRUNCATED = 64;
const ARRAY_TRUNCATED = 128;
/** Only in `finish`: objects are counted in `Accumulator.objects`, not flagged. */
const OBJECT = 256;

/**
 * Everything seen at one position of a body (the body itself, a field, the items of an array),
 * summed up as values arrive. Absorbing values one by one into an accumulator gives the same
 * shape as inferring each value and merging the shapes, without building a shape per value:
 * that is what makes a list of a thousand records cost little more than one record.
 */
interface Accumulator {
  /** Values absorbed here; for a field, the number of objects in which it was present. */
  values: number;
  seen: number;
  /** `undefined` until a string is seen; `null` once strings without one common format were seen. */
  format: StringFormat | null | undefined;
  objects: number;
  /**
   * Keys of the last object seen and their accumulators: records of a list repeat their keys, so
   * usually no lookup by name is needed. `fields` (by name) is only built when the keys differ.
   */
  lastKeys: readonly string[] | null;
  lastFields: Accumulator[] | null;
  fields: Map<string, Accumulator> | null;
  items: Accumulator | null;
}

// A plain literal rather than a class: the cheapest object V8 can allocate, and there are many.
function newAccumulator(): Accumulator {
  return {
    values: 0,
    seen: 0,
    format: undefined,
    objects: 0,
    lastKeys: null,
    lastFields: null,
    fields: null,
    items: null,
  };
}

const NO_LIMITS: Partial<ShapeLimits> = {};

/**
 * Values looked at in one inference, at most; those beyond are cut like values beyond the depth
 * limit. Sampling keeps a parsed body of records far below it (a 1 MB page of a thousand posts is
 * about 40,000 values). It bounds the work, and the size of the shape, for bodies of very many
 * small values (a large matrix) and for objects that share parts, which JSON.parse never makes
 * but a caller might pass (`{a: x, b: x}` nested 40 deep has 2^40 paths).
 */
export const MAX_SHAPE_VALUES = 200_000;

/**
 * The shape of a parsed JSON value (what `JSON.parse` returns). Never recursive on the JS stack
 * over the value; bounded by `limits` (defaults {@link DEFAULT_SHAPE_LIMITS}):
 * - a value nested in more than `maxDepth` containers becomes `{kind:'unknown', truncated:true}`
 *   (`maxDepth` is capped at {@link MAX_SHAPE_DEPTH});
 * - an object with more than `maxFields` keys is described by the first `maxFields` names in
 *   code-unit order and marked `truncated` (so the result does not depend on key order); so is
 *   the union of the fields of the objects at one position (the records of a list);
 * - of an array, only the first `maxItems` items are looked at, and a longer array is marked `truncated`.
 * Strings get a format hint (uuid, date-time, date, email, uri) when every string seen at that
 * position has the same format. Values that JSON cannot hold (undefined, functions) read as `unknown`.
 * Values beyond the first {@link MAX_SHAPE_VALUES} (200,000) looked at are cut the same way.
 * A limit left out or `undefined` takes its default; `Infinity` is allowed. Throws a RangeError
 * naming a limit that is not a non-negative integer.
 */
export function inferShape(value: unknown, limits: Partial<ShapeLimits> = NO_LIMITS): Shape {
  const resolved = limits === NO_LIMITS ? DEFAULT_SHAPE_LIMITS : resolveLimits(limits);
  return finish(accumulate(value, resolved), resolved.maxFields);
}

/**
 * `fingerprint(inferShape(value, limits))`, bit for bit, without building the shape: the canonical
 * text is hashed straight from what the walk over the value accumulated. This is what the agent
 * runs per sampled body; it needs the shape itself only for a fingerprint it has not seen before.
 * With `counts`, also the instance counts the fingerprint leaves out (see {@link InstanceCounts}).
 * Same limits and errors as {@link inferShape}.
 */
export function shapeFingerprint(
  value: unknown,
  limits: Partial<ShapeLimits> = NO_LIMITS,
  counts?: InstanceCounts,
): string {
  const resolved = limits === NO_LIMITS ? DEFAULT_SHAPE_LIMITS : resolveLimits(limits);
  const hash = new Hash128();
  const accumulated = accumulate(value, resolved);
  if (counts === undefined) {
    writeAccumulated(accumulated, resolved.maxFields, hash);
    return hash.digest();
  }
  counts.extras = '';
  counting = counts;
  places = 0;
  try {
    writeAccumulated(accumulated, resolved.maxFields, hash);
  } finally {
    counting = null;
  }
  return hash.digest();
}

/**
 * Where {@link shapeFingerprint} puts the instance counts of the value it fingerprints, which the
 * fingerprint leaves out: `instanceExtras(inferShape(value, limits))` (shape/instances.ts), taken in
 * the same walk. A caller-owned object, so a call allocates nothing for a body without lists.
 */
export interface InstanceCounts {
  extras: string;
}

/** The counts `shapeFingerprint` is filling in, and the object places it has written so far. */
let counting: InstanceCounts | null = null;
let places = 0;

/** Notes the next object place of the canonical text (pre-order), with the objects seen there. */
function noteObjects(objects: number): void {
  const place = places++;
  if (objects < 2) return;
  const counts = counting as InstanceCounts;
  counts.extras = counts.extras.padEnd(place, '0') + String(Math.min(objects - 1, canonical.MAX_EXTRA_INSTANCES));
}

/** The one walk over a value: everything seen, position by position. */
function accumulate(value: unknown, limits: ShapeLimits): Accumulator {
  const root = newAccumulator();
  const walk: Walk = {
    maxDepth: limits.maxDepth,
    maxFields: limits.maxFields,
    maxItems: limits.maxItems,
    budget: MAX_SHAPE_VALUES,
    stack: [],
  };
  visit(walk, value, root, 0);
  const { stack } = walk;
  while (stack.length > 0) {
    // Pushed as container, accumulator, depth (see visit).
    const depth = stack.pop() as number;
    const into = stack.pop() as Accumulator;
    const container = stack.pop() as object;
    if (Array.isArray(container)) absorbArray(walk, container, into, depth);
    else absorbObject(walk, container as Record<string, unknown>, into, depth);
  }
  return root;
}

function resolveLimits(limits: Partial<ShapeLimits>): ShapeLimits {
  const resolved = { ...DEFAULT_SHAPE_LIMITS };
  for (const name of ['maxDepth', 'maxFields', 'maxItems'] as const) {
    const limit = limits[name] ?? DEFAULT_SHAPE_LIMITS[name];
    resolved[name] = limit;
    if (!(limit === Infinity || (Number.isInteger(limit) && limit >= 0))) {
      throw new RangeError(`inferShape: limit ${name} must be a non-negative integer, got ${String(limit)}`);
    }
  }
  resolved.maxDepth = Math.min(resolved.maxDepth, MAX_SHAPE_DEPTH);
  return resolved;
}

/** One walk over a value: the limits, and an explicit stack of the containers still to look into. */
interface Walk {
  readonly maxDepth: number;
  readonly maxFields: number;
  readonly maxItems: number;
  /**
   * Containers still to look into, each as three entries: the container, its accumulator, its
   * depth. One array instead of three: one allocation less per call, which shows on small bodies.
   */
  readonly stack: Array<object | Accumulator | number>;
  /** Values still to be looked at before everything further is cut (see MAX_SHAPE_VALUES). */
  budget: number;
}

/** Absorbs a scalar at once; queues a container. */
function visit(walk: Walk, value: unknown, into: Accumulator, depth: number): void {
  into.values++;
  if (depth > walk.maxDepth || --walk.budget < 0) {
    into.seen |= CUT;
    return;
  }
  switch (typeof value) {
    case 'string':
      into.seen |= STRING;
      if (into.format !== null) {
        const format = detectStringFormat(value);
        into.format = into.format === undefined || into.format === format ? format : null;
      }
      return;
    case 'number':
    case 'bigint':
      into.seen |= NUMBER;
      return;
    case 'boolean':
      into.seen |= BOOLEAN;
      return;
    case 'object':
      if (value === null) {
        into.seen |= NULL;
      } else {
        walk.stack.push(value, into, depth);
      }
      return;
    default:
      return;
  }
}

function absorbArray(walk: Walk, array: readonly unknown[], into: Accumulator, depth: number): void {
  into.seen |= ARRAY;
  let count = array.length;
  if (count > walk.maxItems) {
    count = walk.maxItems;
    into.seen |= ARRAY_TRUNCATED;
  }
  if (count === 0) return;
  const items = (into.items ??= newAccumulator());
  for (let i = 0; i < count; i++) visit(walk, array[i], items, depth + 1);
}

function absorbObject(walk: Walk, object: Record<string, unknown>, into: Accumulator, depth: number): void {
  into.objects++;
  let keys = Object.keys(object);
  if (keys.length > walk.maxFields) {
    keys = smallestNames(keys, walk.maxFields);
    into.seen |= OBJECT_TRUNCATED;
  }
  let fields = into.lastFields;
  if (fields === null) {
    fields = [];
    for (let i = 0; i < keys.length; i++) fields.push(newAccumulator());
    into.lastKeys = keys;
    into.lastFields = fields;
  } else if (!sameNames(into.lastKeys!, keys)) {
    fields = fieldsByName(into, keys);
    into.lastKeys = keys;
    into.lastFields = fields;
  }
  for (let i = 0; i < keys.length; i++) visit(walk, object[keys[i]!], fields[i]!, depth + 1);
}

/** The accumulators of `keys`, found or created by name. */
function fieldsByName(into: Accumulator, keys: readonly string[]): Accumulator[] {
  let byName = into.fields;
  if (byName === null) {
    byName = into.fields = new Map();
    const lastKeys = into.lastKeys!;
    for (let i = 0; i < lastKeys.length; i++) byName.set(lastKeys[i]!, into.lastFields![i]!);
  }
  const fields: Accumulator[] = [];
  for (const name of keys) {
    let field = byName.get(name);
    if (field === undefined) {
      field = newAccumulator();
      byName.set(name, field);
    }
    fields.push(field);
  }
  return fields;
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The `count` smallest names in code-unit order, without sorting all of them. */
function smallestNames(names: readonly string[], count: number): string[] {
  const kept: string[] = [];
  if (count === 0) return kept;
  for (const name of names) {
    if (kept.length === count && name >= kept[count - 1]!) continue;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (kept[middle]! < name) low = middle + 1;
      else high = middle;
    }
    kept.splice(low, 0, name);
    if (kept.length > count) kept.pop();
  }
  return kept;
}

/** The shape an accumulator stands for; recursive, but over at most `MAX_SHAPE_DEPTH` levels. */
function finish(accumulator: Accumulator, maxFields: number): Shape {
  const { seen } = accumulator;
  // Most positions hold one kind: no options list for them.
  switch (accumulator.objects > 0 ? seen | OBJECT : seen & ~(OBJECT_TRUNCATED | ARRAY_TRUNCATED)) {
    case STRING:
      return accumulator.format ? { kind: 'string', format: accumulator.format } : { kind: 'string' };
    case NUMBER:
      return { kind: 'number' };
    case OBJECT:
      return finishObject(accumulator, maxFields);
    default:
      break;
  }
  // Options are pushed in canonical kind order (see KIND_ORDER).
  const options: Shape[] = [];
  if (seen & STRING)
    options.push(accumulator.format ? { kind: 'string', format: accumulator.format } : { kind: 'string' });
  if (seen & NUMBER) options.push({ kind: 'number' });
  if (seen & BOOLEAN) options.push({ kind: 'boolean' });
  if (accumulator.objects > 0) options.push(finishObject(accumulator, maxFields));
  if (seen & ARRAY) {
    const items: Shape = accumulator.items === null ? { kind: 'unknown' } : finish(accumulator.items, maxFields);
    options.push(seen & ARRAY_TRUNCATED ? { kind: 'array', items, truncated: true } : { kind: 'array', items });
  }
  if (seen & CUT) options.push({ kind: 'unknown', truncated: true });
  if (seen & NULL) options.push({ kind: 'null' });
  if (options.length === 1) return options[0]!;
  return options.length === 0 ? { kind: 'unknown' } : { kind: 'oneOf', options };
}

function finishObject(accumulator: Accumulator, maxFields: number): Shape {
  const names = fieldNames(accumulator);
  const accumulators = fieldAccumulators(accumulator);
  const order = nameOrder(names);
  const count = Math.min(names.length, maxFields);
  const fields: Field[] = [];
  for (let i = 0; i < count; i++) {
    const index = order === null ? i : order[i]!;
    const field = accumulators[index]!;
    fields.push({
      name: names[index]!,
      required: field.values === accumulator.objects,
      shape: finish(field, maxFields),
    });
  }
  const shape: ObjectShape = objectTruncated(accumulator, names, maxFields)
    ? { kind: 'object', fields, truncated: true }
    : { kind: 'object', fields };
  if (accumulator.objects > 1) shape.instances = Math.min(accumulator.objects, canonical.REQUIRED_INSTANCES);
  return shape;
}

function fieldNames(accumulator: Accumulator): readonly string[] {
  return accumulator.fields === null ? accumulator.lastKeys! : [...accumulator.fields.keys()];
}

/** The accumulators of the fields, in the order of {@link fieldNames}. */
function fieldAccumulators(accumulator: Accumulator): readonly Accumulator[] {
  return accumulator.fields === null ? accumulator.lastFields! : [...accumulator.fields.values()];
}

function objectTruncated(accumulator: Accumulator, names: readonly string[], maxFields: number): boolean {
  // Records of one list may each stay under the limit while their union does not.
  return (accumulator.seen & OBJECT_TRUNCATED) !== 0 || names.length > maxFields;
}

/**
 * Writes the canonical text of `finish(accumulator)` (see canonicalShape) without building the
 * shape: options in kind order, fields in name order, the same pieces as `writeCanonical`.
 */
function writeAccumulated(accumulator: Accumulator, maxFields: number, sink: canonical.CanonicalSink): void {
  const { seen } = accumulator;
  const options = optionCount(accumulator);
  if (options === 0) {
    sink.writeCode(canonical.UNKNOWN_CODE);
    return;
  }
  if (options > 1) sink.writeCode(canonical.OPEN_ONE_OF);
  // `written` counts the options so far, to put a bar between them.
  let written = 0;
  if (seen & STRING) {
    canonical.writeString(accumulator.format ?? undefined, sink);
    written++;
  }
  if (seen & NUMBER) {
    if (written++ > 0) sink.writeCode(canonical.BAR);
    sink.writeCode(canonical.NUMBER_CODE);
  }
  if (seen & BOOLEAN) {
    if (written++ > 0) sink.writeCode(canonical.BAR);
    sink.writeCode(canonical.BOOLEAN_CODE);
  }
  if (accumulator.objects > 0) {
    if (written++ > 0) sink.writeCode(canonical.BAR);
    writeAccumulatedObject(accumulator, maxFields, sink);
  }
  if (seen & ARRAY) {
    if (written++ > 0) sink.writeCode(canonical.BAR);
    sink.writeCode(canonical.OPEN_ARRAY);
    if (accumulator.items === null) sink.writeCode(canonical.UNKNOWN_CODE);
    else writeAccumulated(accumulator.items, maxFields, sink);
    sink.writeCode(canonical.CLOSE_ARRAY);
    if (seen & ARRAY_TRUNCATED) sink.writeCode(canonical.TRUNCATED);
  }
  if (seen & CUT) {
    if (written++ > 0) sink.writeCode(canonical.BAR);
    sink.writeCode(canonical.UNKNOWN_CODE);
    sink.writeCode(canonical.TRUNCATED);
  }
  if (seen & NULL) {
    if (written > 0) sink.writeCode(canonical.BAR);
    sink.writeCode(canonical.NULL_CODE);
  }
  if (options > 1) sink.writeCode(canonical.CLOSE_ONE_OF);
}

/** How many options `finish(accumulator)` has: one per kind seen. */
function optionCount(accumulator: Accumulator): number {
  const { seen } = accumulator;
  return (
    ((seen & STRING) !== 0 ? 1 : 0) +
    ((seen & NUMBER) !== 0 ? 1 : 0) +
    ((seen & BOOLEAN) !== 0 ? 1 : 0) +
    (accumulator.objects > 0 ? 1 : 0) +
    ((seen & ARRAY) !== 0 ? 1 : 0) +
    ((seen & CUT) !== 0 ? 1 : 0) +
    ((seen & NULL) !== 0 ? 1 : 0)
  );
}

function writeAccumulatedObject(accumulator: Accumulator, maxFields: number, sink: canonical.CanonicalSink): void {
  const names = fieldNames(accumulator);
  const accumulators = fieldAccumulators(accumulator);
  const order = nameOrder(names);
  const count = Math.min(names.length, maxFields);
  if (counting !== null) noteObjects(accumulator.objects);
  sink.writeCode(canonical.OPEN_OBJECT);
  for (let i = 0; i < count; i++) {
    const index = order === null ? i : order[i]!;
    const field = accumulators[index]!;
    if (i > 0) sink.writeCode(canonical.COMMA);
    canonical.writeFieldName(names[index]!, sink);
    if (field.values !== accumulator.objects) sink.writeCode(canonical.OPTIONAL);
    sink.writeCode(canonical.COLON);
    writeAccumulated(field, maxFields, sink);
  }
  sink.writeCode(canonical.CLOSE_OBJECT);
  if (objectTruncated(accumulator, names, maxFields)) sink.writeCode(canonical.TRUNCATED);
}

/** An order worked out before (see {@link nameOrder}). */
interface KnownOrder {
  readonly names: readonly string[];
  readonly order: readonly number[] | null;
}

/**
 * Orders of key lists sorted before, by first name. A body's objects come back with the same key
 * lists call after call, and finding the list again (pointer compares of the names, which JSON.parse
 * interns) is cheaper than sorting it again. Bounded: a few lists per first name, short lists only,
 * cleared when full, so an adversarial body costs at most a few compares per object more.
 */
const knownOrders = new Map<string, KnownOrder[]>();
const MAX_KNOWN_ORDERS = 1024;
const MAX_ORDERS_PER_NAME = 8;
const MAX_REMEMBERED_NAMES = 64;

/** Indexes of `names` in code-unit order of the names, or null when they are in order already. */
function nameOrder(names: readonly string[]): readonly number[] | null {
  if (names.length < 2) return null;
  const known = knownOrders.get(names[0]!);
  if (known !== undefined) {
    for (let i = 0; i < known.length; i++) if (sameNames(known[i]!.names, names)) return known[i]!.order;
  }
  const order = sortedOrder(names);
  if (names.length <= MAX_REMEMBERED_NAMES && (known === undefined || known.length < MAX_ORDERS_PER_NAME)) {
    if (knownOrders.size >= MAX_KNOWN_ORDERS) knownOrders.clear();
    const entry = { names, order };
    if (known === undefined || knownOrders.size === 0) knownOrders.set(names[0]!, [entry]);
    else known.push(entry);
  }
  return order;
}

/** Indexes of `names` in code-unit order of the names, or null when they are in order already. */
function sortedOrder(names: readonly string[]): number[] | null {
  let sorted = true;
  for (let i = 1; i < names.length && sorted; i++) sorted = names[i - 1]! < names[i]!;
  if (sorted) return null;
  const order = names.map((_, index) => index);
  if (names.length > 24) return order.sort((a, b) => compareNames(names[a]!, names[b]!));
  // Insertion sort: for the dozen fields of a record it beats the general sort several times over.
  for (let i = 1; i < order.length; i++) {
    const index = order[i]!;
    const name = names[index]!;
    let j = i;
    for (; j > 0 && names[order[j - 1]!]! > name; j--) order[j] = order[j - 1]!;
    order[j] = index;
  }
  return order;
}
