import Ajv2020 from 'ajv/dist/2020';
import fc from 'fast-check';
import {
  conformsTo,
  diffShapes,
  diffVersions,
  fingerprint,
  fromJsonSchema,
  inferShape,
  mergeAllShapes,
  mergeCountedShapes,
  mergeShapes,
  toJsonSchema,
  type Direction,
  type Shape,
} from '@spectator/shared';

// The laws of docs/shapes.md, checked on generated bodies and shapes.

const FORMATTED_STRINGS: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.uuid(),
  fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((date) => date.toISOString()),
  fc
    .date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true })
    .map((date) => date.toISOString().slice(0, 10)),
  fc.emailAddress(),
  fc.webUrl(),
);

/** JSON bodies, with strings that often carry a format. */
const { json: jsonBody } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { maxDepth: 4, depthIdentifier: 'json', withCrossShrink: true },
    fc.oneof(FORMATTED_STRINGS, fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 4 }), tie('json'), { maxKeys: 5 }),
  ),
}));

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const truncatedFlag = (truncated: boolean): { truncated?: true } => (truncated ? { truncated: true } : {});

const LEAVES: Shape[] = [
  { kind: 'string' },
  { kind: 'string', format: 'uuid' },
  { kind: 'string', format: 'date-time' },
  { kind: 'string', format: 'email' },
  { kind: 'number' },
  { kind: 'boolean' },
  { kind: 'null' },
  { kind: 'unknown', truncated: true },
];

/** Shapes in canonical layout (sorted fields, one option per kind in order), optional and truncated parts included. */
const shapes = fc.letrec<{ shape: Shape; single: Shape; object: Shape; array: Shape; oneOf: Shape }>((tie) => ({
  shape: fc.oneof({ maxDepth: 3, depthIdentifier: 'shape', withCrossShrink: true }, tie('single'), tie('oneOf')),
  single: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'shape', withCrossShrink: true },
    fc.constantFrom(...LEAVES),
    tie('object'),
    tie('array'),
  ),
  object: fc
    .record({
      fields: fc.uniqueArray(
        fc.record({ name: fc.string({ maxLength: 3 }), required: fc.boolean(), shape: tie('shape') }),
        { selector: (field) => field.name, maxLength: 4 },
      ),
      truncated: fc.boolean(),
    })
    .map(({ fields, truncated }): Shape => ({
      kind: 'object',
      fields: [...fields].sort(byName),
      ...truncatedFlag(truncated),
    })),
  array: fc
    .record({ items: fc.oneof(tie('shape'), fc.constant<Shape>({ kind: 'unknown' })), truncated: fc.boolean() })
    .map(({ items, truncated }): Shape => ({ kind: 'array', items, ...truncatedFlag(truncated) })),
  oneOf: fc.array(tie('single'), { minLength: 2, maxLength: 3 }).map(mergeAllShapes),
})).shape;

const direction: fc.Arbitrary<Direction> = fc.constantFrom('request', 'response');

/** The same body with the keys of every object in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([key, item]) => [key, reverseKeys(item)]),
    );
  return value;
}

/** The same body with the items of every array in reverse order. */
function reverseItems(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseItems).reverse();
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, reverseItems(item)]));
  return value;
}

/** The same shape with fields and options in reverse order. */
function reverseLayout(shape: Shape): Shape {
  switch (shape.kind) {
    case 'object':
      return {
        ...shape,
        fields: shape.fields.map((field) => ({ ...field, shape: reverseLayout(field.shape) })).reverse(),
      };
    case 'array':
      return { ...shape, items: reverseLayout(shape.items) };
    case 'oneOf':
      return { kind: 'oneOf', options: shape.options.map(reverseLayout).reverse() };
    default:
      return shape;
  }
}

describe('shape laws', () => {
  it('fingerprint ignores the key order of the body', () => {
    fc.assert(
      fc.property(jsonBody, (body) => fingerprint(inferShape(reverseKeys(body))) === fingerprint(inferShape(body))),
      { numRuns: 300 },
    );
  });

  it('fingerprint ignores the item order of the body', () => {
    fc.assert(
      fc.property(jsonBody, (body) => fingerprint(inferShape(reverseItems(body))) === fingerprint(inferShape(body))),
      { numRuns: 300 },
    );
  });

  it('fingerprint ignores the order of fields and options in the shape data', () => {
    fc.assert(
      fc.property(shapes, (shape) => fingerprint(reverseLayout(shape)) === fingerprint(shape)),
      { numRuns: 300 },
    );
  });

  it('inferring a list equals merging the shapes of its items', () => {
    fc.assert(
      fc.property(fc.array(jsonBody, { maxLength: 6 }), (bodies) => {
        const list = inferShape(bodies);
        // Counted: the items' objects add up (`instances`), as inference counts them.
        const items = bodies.map((body) => inferShape(body)).reduce<Shape>(mergeCountedShapes, { kind: 'unknown' });
        expect(list).toEqual({ kind: 'array', items });
      }),
    );
  });

  it('merge is commutative', () => {
    fc.assert(
      fc.property(shapes, shapes, (a, b) => {
        expect(mergeShapes(a, b)).toEqual(mergeShapes(b, a));
      }),
      { numRuns: 300 },
    );
  });

  it('merge is associative', () => {
    fc.assert(
      fc.property(shapes, shapes, shapes, (a, b, c) => {
        expect(mergeShapes(mergeShapes(a, b), c)).toEqual(mergeShapes(a, mergeShapes(b, c)));
      }),
      { numRuns: 300 },
    );
  });

  it('merge is idempotent', () => {
    fc.assert(
      fc.property(shapes, (a) => {
        expect(mergeShapes(a, a)).toEqual(a);
      }),
      { numRuns: 300 },
    );
  });

  it('every shape conforms to its merge with others', () => {
    fc.assert(
      fc.property(shapes, shapes, (a, b) => conformsTo(a, mergeShapes(a, b))),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(jsonBody, jsonBody, (a, b) => conformsTo(inferShape(a), mergeShapes(inferShape(a), inferShape(b)))),
      { numRuns: 300 },
    );
  });

  it('diff of a shape with itself is empty, and a shape conforms to itself', () => {
    fc.assert(
      fc.property(shapes, direction, (shape, side) => {
        expect(diffShapes(shape, shape, side)).toEqual([]);
        expect(conformsTo(shape, shape)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('conforms exactly when the diff is empty', () => {
    fc.assert(
      fc.property(
        shapes,
        shapes,
        direction,
        (documented, observed, side) =>
          conformsTo(observed, documented) === (diffShapes(documented, observed, side).length === 0),
      ),
      { numRuns: 500 },
    );
  });

  it('two versions differ exactly when one does not conform to the other', () => {
    fc.assert(
      fc.property(
        shapes,
        shapes,
        direction,
        (before, after, side) =>
          (diffVersions(before, after, side).length === 0) === (conformsTo(after, before) && conformsTo(before, after)),
      ),
      { numRuns: 500 },
    );
    fc.assert(fc.property(shapes, direction, (shape, side) => diffVersions(shape, shape, side).length === 0));
  });

  it('toJsonSchema and fromJsonSchema round-trip', () => {
    fc.assert(
      fc.property(shapes, (shape) => {
        expect(fromJsonSchema(JSON.parse(JSON.stringify(toJsonSchema(shape))))).toEqual(shape);
      }),
      { numRuns: 300 },
    );
  });

  it('a body is valid against the JSON Schema of its own shape', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    fc.assert(
      fc.property(jsonBody, (body) => ajv.validate(toJsonSchema(inferShape(body)), body)),
      { numRuns: 200 },
    );
  });
});
