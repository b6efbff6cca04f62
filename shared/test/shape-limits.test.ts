import {
  canonicalShape,
  fingerprint,
  inferShape,
  MAX_SHAPE_DEPTH,
  MAX_SHAPE_VALUES,
  mergeShapes,
  REQUIRED_INSTANCES,
  type Shape,
} from '@spectator/shared';

// Hostile bodies: inference must end quickly with a truncation marker, never overflow the stack.
jest.setTimeout(120_000);

/**
 * Work is counted, not timed (a time bound fails on a loaded CI machine): `counted` wraps a
 * container so that each item or field inference reads is counted in `reads.count`.
 */
const reads = { count: 0 };
function counted<T extends object>(container: T): T {
  return new Proxy(container, {
    get(target, key, receiver) {
      if (typeof key === 'string' && key !== 'length') reads.count++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

/** Follows `items` of nested arrays and counts the levels. */
function arrayDepth(shape: Shape): { levels: number; innermost: Shape } {
  let levels = 0;
  let current = shape;
  while (current.kind === 'array') {
    levels++;
    current = current.items;
  }
  return { levels, innermost: current };
}

describe('inferShape on hostile bodies', () => {
  it('survives a 100,000-deep nested array, cut at the depth limit', () => {
    let value: unknown = [];
    for (let i = 0; i < 100_000; i++) value = [value];
    const shape = inferShape(value);
    expect(arrayDepth(shape)).toEqual({ levels: 33, innermost: { kind: 'unknown', truncated: true } });
    expect(fingerprint(shape)).toMatch(/^[0-9a-f]{32}$/);
  });

  it('survives a 100,000-deep nested object even with a huge maxDepth (capped)', () => {
    let value: unknown = 1;
    for (let i = 0; i < 100_000; i++) value = { next: value };
    const shape = inferShape(value, { maxDepth: 1_000_000 });
    let levels = 0;
    let current = shape;
    while (current.kind === 'object') {
      levels++;
      current = current.fields[0]!.shape;
    }
    expect(levels).toBe(MAX_SHAPE_DEPTH + 1);
    expect(current).toEqual({ kind: 'unknown', truncated: true });
    // Deep shapes stay usable by the recursive shape operations.
    expect(fingerprint(mergeShapes(shape, shape))).toBe(fingerprint(shape));
  });

  it('survives a 1,000,000-item array, looking at the first maxItems items', () => {
    const value = counted(Array.from({ length: 1_000_000 }, (_, index) => (index < 1000 ? { id: index } : 'late')));
    reads.count = 0;
    const shape = inferShape(value);
    expect(reads.count).toBe(1000);
    expect(shape).toEqual({
      kind: 'array',
      items: {
        kind: 'object',
        fields: [{ name: 'id', required: true, shape: { kind: 'number' } }],
        instances: REQUIRED_INSTANCES,
      },
      truncated: true,
    });
  });

  it('survives an object with 1,000,000 keys, keeping maxFields of them', () => {
    const value: Record<string, number> = {};
    for (let i = 0; i < 1_000_000; i++) value[`k${i}`] = i;
    const shape = inferShape(value);
    expect(shape.kind === 'object' && shape.truncated).toBe(true);
    expect(shape.kind === 'object' && shape.fields.length).toBe(256);
  });

  it('ends on a value whose parts are shared (2^40 paths), cutting what is beyond MAX_SHAPE_VALUES', () => {
    let value: unknown = 1;
    for (let i = 0; i < 40; i++) value = counted({ a: value, b: value });
    reads.count = 0;
    const shape = inferShape(value, { maxDepth: 256 });
    // A whole walk reads 2^41 values; this one stops about the budget.
    expect(reads.count).toBeLessThanOrEqual(MAX_SHAPE_VALUES + 1000);
    expect(canonicalShape(shape)).toContain('U!');
  });

  it('bounds the work on a 1,000,000-item array of 1,000-item arrays (shared rows) by sampling and the value budget', () => {
    const row = counted(Array.from({ length: 1000 }, () => counted([1, 'a'])));
    const value = counted(Array.from({ length: 1_000_000 }, () => row));
    reads.count = 0;
    const shape = inferShape(value);
    // A whole walk reads 3 × 10^9 values; sampling (1,000 rows of 1,000) and the budget cut it to ~10^6.
    expect(reads.count).toBeLessThanOrEqual(10 * MAX_SHAPE_VALUES);
    expect(shape).toMatchObject({ kind: 'array', truncated: true });
    expect(canonicalShape(shape)).toContain('U!');
  });
});
