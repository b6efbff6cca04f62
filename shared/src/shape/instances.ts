import { MAX_EXTRA_INSTANCES, REQUIRED_INSTANCES } from './canonical-text';
import { compareNames, kindRank } from './options';
import type { Field, ObjectShape, Shape } from './types';

export { MAX_EXTRA_INSTANCES, REQUIRED_INSTANCES } from './canonical-text';

/*
 * Instance counts travel beside a fingerprint, not in it (docs/shapes.md, "Instance counts"): a list
 * of one record and a list of three have one fingerprint, so one observation row, and the row says
 * how many objects its exchanges showed at each place as `instanceExtras`. Object places are taken
 * in the order the canonical text writes objects (an object before its fields, fields in name
 * order, oneOf options in kind order); each place gets one digit: the objects seen there beyond one
 * per exchange, up to MAX_EXTRA_INSTANCES (5). Trailing zeros are left out, so `''`, the common case
 * (no list of records), says every exchange had one object at every place.
 */

/** The instance extras of `shape` as one exchange: each object's `instances` less one, as digits. */
export function instanceExtras(shape: Shape): string {
  let extras = '';
  let place = 0;
  forEachObject(shape, (instances) => {
    const extra = Math.min(instances - 1, MAX_EXTRA_INSTANCES);
    if (extra > 0) extras = extras.padEnd(place, '0') + String(extra);
    place++;
  });
  return extras;
}

/** The extras of two sets of exchanges of one fingerprint together: digit by digit, up to MAX_EXTRA_INSTANCES. */
export function addInstanceExtras(a: string, b: string): string {
  if (a === '') return b;
  if (b === '') return a;
  let sum = '';
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    sum += String(Math.min(digitAt(a, i) + digitAt(b, i), MAX_EXTRA_INSTANCES));
  return sum;
}

/** Digits 0 to MAX_EXTRA_INSTANCES, the last one not 0 (trailing zeros are left out). */
const EXTRAS = new RegExp(`^(?:[0-${MAX_EXTRA_INSTANCES}]*[1-${MAX_EXTRA_INSTANCES}])?$`);

/** Is `text` instance extras as `instanceExtras` writes them (at most `places` digits)? */
export function isInstanceExtras(text: unknown, places: number): text is string {
  return typeof text === 'string' && text.length <= places && EXTRAS.test(text);
}

/**
 * `shape` with each object counting the objects `exchanges` exchanges of its fingerprint showed at
 * its place: one per exchange plus its digit of `extras`, up to `REQUIRED_INSTANCES`. What the
 * backend documents from (`claimRequired`); counts stored in `shape` itself are ignored. The fields
 * come out in name order (canonical layout).
 */
export function countInstances(shape: Shape, exchanges: number, extras = ''): Shape {
  let place = 0;
  return mapObjects(shape, () => Math.min(exchanges + digitAt(extras, place++), REQUIRED_INSTANCES));
}

function digitAt(extras: string, place: number): number {
  return place < extras.length ? extras.charCodeAt(place) - 0x30 : 0;
}

/**
 * `shape` with `extra` more objects at its top, when its top is an object, and at each object every
 * shaped exchange had under it through fields, not lists (up to `REQUIRED_INSTANCES`): exchanges
 * that were counted without being shaped (sampled out under load) were objects there too, with what
 * every shaped one had as far as anyone can tell. A field every shaped object had is there in them
 * too, and so is its object (`POST /checks` with `person.surname` in each body: nine bodies, five
 * shaped, count nine `person` objects, not five). A list's items are not counted: how many an
 * unshaped exchange held, none perhaps, nobody knows.
 */
export function addTopInstances(shape: Shape, extra: number): Shape {
  if (extra <= 0 || shape.kind !== 'object') return shape;
  return addObjectInstances(shape, extra);
}

/** As deep as the shape goes, which inference bounds (`MAX_SHAPE_DEPTH`), like every shape walk here. */
function addObjectInstances(shape: ObjectShape, extra: number): ObjectShape {
  const fields = shape.fields.map((field) =>
    field.required && field.shape.kind === 'object'
      ? { ...field, shape: addObjectInstances(field.shape, extra) }
      : field,
  );
  return { ...shape, fields, instances: Math.min((shape.instances ?? 1) + extra, REQUIRED_INSTANCES) };
}

/** `shape` without instance counts: what is compared with documentation and stored as documented. */
export function withoutInstances(shape: Shape): Shape {
  return mapObjects(shape, () => 1);
}

/**
 * The shape documentation claims from observed `shape` (docs/shapes.md, "Required fields"): a field
 * present in every object seen is `required`, but once the body was seen to vary (some field of it
 * missing from some object) only where at least `REQUIRED_INSTANCES` objects all had it, and in an
 * error answer (`answer` `'error'`: a 4xx or 5xx status) never from one object alone; a field fewer
 * objects had is documented optional there. Instance counts are left out of the result.
 * @param answer `'error'` for the body of a 4xx or 5xx answer; default `'other'` (any other answer,
 *   a request body)
 */
export function claimRequired(shape: Shape, answer: 'error' | 'other' = 'other'): Shape {
  const least = hasOptionalField(shape) ? REQUIRED_INSTANCES : answer === 'error' ? 2 : 1;
  return mapObjects(shape, () => 1, least);
}

/** Does some object of `shape` have an optional field? */
function hasOptionalField(shape: Shape): boolean {
  switch (shape.kind) {
    case 'object':
      return shape.fields.some((field) => !field.required || hasOptionalField(field.shape));
    case 'array':
      return hasOptionalField(shape.items);
    case 'oneOf':
      return shape.options.some(hasOptionalField);
    default:
      return false;
  }
}

/**
 * A copy of `shape` with each object's instance count replaced by `count(instances)` (left out when
 * 1); an object seen fewer than `least` times (default 1: none) gets every field optional.
 * Recursive over at most `MAX_SHAPE_DEPTH` levels, like every shape walk.
 */
function mapObjects(shape: Shape, count: (instances: number) => number, least = 1): Shape {
  switch (shape.kind) {
    case 'object': {
      const instances = shape.instances ?? 1;
      const few = instances < least;
      // The count first, then the fields in name order: the places in canonical order (see above).
      const next = count(instances);
      const fields = inNameOrder(shape.fields).map((field) => ({
        name: field.name,
        required: field.required && !few,
        shape: mapObjects(field.shape, count, least),
      }));
      return {
        kind: 'object',
        fields,
        ...(shape.truncated ? { truncated: true as const } : {}),
        ...(next > 1 ? { instances: next } : {}),
      };
    }
    case 'array': {
      const items = mapObjects(shape.items, count, least);
      return shape.truncated ? { kind: 'array', items, truncated: true } : { kind: 'array', items };
    }
    case 'oneOf':
      return { kind: 'oneOf', options: inKindOrder(shape.options).map((option) => mapObjects(option, count, least)) };
    default:
      return shape;
  }
}

/** Calls `visit` with each object's `instances` (1 when absent), its places in canonical order. */
function forEachObject(shape: Shape, visit: (instances: number) => void): void {
  switch (shape.kind) {
    case 'object':
      visit(shape.instances ?? 1);
      for (const field of inNameOrder(shape.fields)) forEachObject(field.shape, visit);
      return;
    case 'array':
      forEachObject(shape.items, visit);
      return;
    case 'oneOf':
      for (const option of inKindOrder(shape.options)) forEachObject(option, visit);
      return;
    default:
      return;
  }
}

function inNameOrder(fields: readonly Field[]): readonly Field[] {
  for (let i = 1; i < fields.length; i++)
    if (fields[i - 1]!.name > fields[i]!.name) return [...fields].sort((a, b) => compareNames(a.name, b.name));
  return fields;
}

function inKindOrder(options: readonly Shape[]): readonly Shape[] {
  for (let i = 1; i < options.length; i++)
    if (kindRank(options[i - 1]!.kind) > kindRank(options[i]!.kind))
      return [...options].sort((a, b) => kindRank(a.kind) - kindRank(b.kind));
  return options;
}
