import { REQUIRED_INSTANCES } from './canonical-text';
import type { Shape } from './types';

export { REQUIRED_INSTANCES } from './canonical-text';

/**
 * `shape` as if each body it describes had been seen `times` times: every object's `instances`
 * multiplied by `times`, up to `REQUIRED_INSTANCES`. How the backend weighs a stored shape by the
 * exchanges of an observation row, which share its fingerprint (so its counts) exactly.
 */
export function weighInstances(shape: Shape, times: number): Shape {
  if (times <= 1) return shape;
  return mapObjects(shape, (instances) => Math.min(instances * times, REQUIRED_INSTANCES));
}

/**
 * `shape` with `extra` more objects at its top, when its top is an object (up to
 * `REQUIRED_INSTANCES`): exchanges of the body that were counted without being shaped (sampled out
 * under load) were objects there too, with what every shaped one had as far as anyone can tell.
 */
export function addTopInstances(shape: Shape, extra: number): Shape {
  if (extra <= 0 || shape.kind !== 'object') return shape;
  return { ...shape, instances: Math.min((shape.instances ?? 1) + extra, REQUIRED_INSTANCES) };
}

/** `shape` without instance counts: what is compared with documentation and stored as documented. */
export function withoutInstances(shape: Shape): Shape {
  return mapObjects(shape, () => 1);
}

/**
 * The shape documentation claims from observed `shape` (docs/shapes.md, "Required fields"): a field
 * present in every object seen is `required`, but once the body was seen to vary (some field of it
 * missing from some object) only where at least `REQUIRED_INSTANCES` objects all had it; a field
 * fewer objects had is documented optional there. Instance counts are left out of the result.
 */
export function claimRequired(shape: Shape): Shape {
  return mapObjects(shape, () => 1, hasOptionalField(shape));
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
 * 1); with `claim`, an object seen fewer than `REQUIRED_INSTANCES` times gets every field optional.
 * Recursive over at most `MAX_SHAPE_DEPTH` levels, like every shape walk.
 */
function mapObjects(shape: Shape, count: (instances: number) => number, claim = false): Shape {
  switch (shape.kind) {
    case 'object': {
      const instances = shape.instances ?? 1;
      const few = claim && instances < REQUIRED_INSTANCES;
      const fields = shape.fields.map((field) => ({
        name: field.name,
        required: field.required && !few,
        shape: mapObjects(field.shape, count, claim),
      }));
      const next = count(instances);
      return {
        kind: 'object',
        fields,
        ...(shape.truncated ? { truncated: true as const } : {}),
        ...(next > 1 ? { instances: next } : {}),
      };
    }
    case 'array': {
      const items = mapObjects(shape.items, count, claim);
      return shape.truncated ? { kind: 'array', items, truncated: true } : { kind: 'array', items };
    }
    case 'oneOf':
      return { kind: 'oneOf', options: shape.options.map((option) => mapObjects(option, count, claim)) };
    default:
      return shape;
  }
}
