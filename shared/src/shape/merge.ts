import { REQUIRED_INSTANCES } from './canonical-text';
import { compareNames, kindRank, optionsOf, shapeFromOptions } from './options';
import type { ArrayShape, Field, ObjectShape, Shape } from './types';

/**
 * Merge two shapes into one that describes the bodies of both (the documented shape is the merge
 * of the observed ones):
 * - a field missing on one side becomes optional; present on both, it is required if both say so;
 * - `T` and `null` become `oneOf [T, null]`; other differing kinds become a flat `oneOf` with one
 *   option per kind in canonical order (objects merge with objects, arrays merge their items);
 * - strings keep a format only when both have the same one;
 * - a plain `unknown` (no information, the items of an empty array) adds nothing;
 * - `truncated` markers are kept;
 * - of two objects' `instances` (how many objects each describes) the larger is kept, so merging
 *   a shape with itself changes nothing; {@link mergeCountedShapes} adds them up instead.
 * Commutative, associative and idempotent on shapes in canonical layout (sorted fields, ordered
 * options), which is what inference and merge produce.
 */
export function mergeShapes(a: Shape, b: Shape): Shape {
  return merge(a, b, false);
}

/**
 * {@link mergeShapes} that adds up the objects' `instances` (up to `REQUIRED_INSTANCES`): the
 * merge describes the objects of both sides. Commutative and associative; merging the items of a
 * list one by one gives what inference gives for the list.
 */
export function mergeCountedShapes(a: Shape, b: Shape): Shape {
  return merge(a, b, true);
}

/** Merge of many shapes; `unknown` for none. */
export function mergeAllShapes(shapes: readonly Shape[]): Shape {
  let merged: Shape = { kind: 'unknown' };
  for (const shape of shapes) merged = mergeShapes(merged, shape);
  return merged;
}

function merge(a: Shape, b: Shape, counted: boolean): Shape {
  const byKind: (Shape | undefined)[] = [];
  for (const option of [...optionsOf(a), ...optionsOf(b)]) {
    const rank = kindRank(option.kind);
    const seen = byKind[rank];
    byKind[rank] = seen === undefined ? option : mergeSameKind(seen, option, counted);
  }
  return shapeFromOptions(byKind.filter((option): option is Shape => option !== undefined));
}

/** Two options of the same kind, neither a `oneOf`. */
function mergeSameKind(a: Shape, b: Shape, counted: boolean): Shape {
  switch (a.kind) {
    case 'string':
      return b.kind === 'string' && a.format !== undefined && a.format === b.format
        ? { kind: 'string', format: a.format }
        : { kind: 'string' };
    case 'object':
      return mergeObjects(a, b as ObjectShape, counted);
    case 'array':
      return mergeArrays(a, b as ArrayShape, counted);
    default:
      return { ...a };
  }
}

function mergeArrays(a: ArrayShape, b: ArrayShape, counted: boolean): ArrayShape {
  const items = merge(a.items, b.items, counted);
  return a.truncated || b.truncated ? { kind: 'array', items, truncated: true } : { kind: 'array', items };
}

function mergeObjects(a: ObjectShape, b: ObjectShape, counted: boolean): ObjectShape {
  const onlyInA = new Map(a.fields.map((field) => [field.name, field]));
  const fields: Field[] = [];
  for (const field of b.fields) {
    const other = onlyInA.get(field.name);
    if (other === undefined) {
      fields.push({ name: field.name, required: false, shape: field.shape });
    } else {
      onlyInA.delete(field.name);
      fields.push({
        name: field.name,
        required: field.required && other.required,
        shape: merge(other.shape, field.shape, counted),
      });
    }
  }
  for (const field of onlyInA.values()) fields.push({ name: field.name, required: false, shape: field.shape });
  fields.sort((x, y) => compareNames(x.name, y.name));
  const merged: ObjectShape =
    a.truncated || b.truncated ? { kind: 'object', fields, truncated: true } : { kind: 'object', fields };
  const instances = counted
    ? Math.min((a.instances ?? 1) + (b.instances ?? 1), REQUIRED_INSTANCES)
    : Math.max(a.instances ?? 1, b.instances ?? 1);
  if (instances > 1) merged.instances = instances;
  return merged;
}
