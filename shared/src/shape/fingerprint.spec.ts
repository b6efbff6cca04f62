import fc from 'fast-check';
import { canonicalShape } from './canonical';
import { fingerprint } from './fingerprint';
import { Hash128 } from './hash';
import { inferShape, shapeFingerprint } from './infer';
import { countInstances, instanceExtras, withoutInstances } from './instances';
import type { Shape, ShapeLimits } from './types';
import { N, S } from '../../test/shape-fixtures';

/** The canonical text of `shape`, hashed in one piece: what `fingerprint` must equal. */
function hashOfText(shape: Shape): string {
  const hash = new Hash128();
  hash.write(canonicalShape(shape));
  return hash.digest();
}

describe('canonicalShape', () => {
  it.each<[string, Shape, string]>([
    ['string', S, 'S'],
    ['string with a format', { kind: 'string', format: 'date-time' }, 'S(date-time)'],
    ['number', N, 'N'],
    ['boolean', { kind: 'boolean' }, 'B'],
    ['null', { kind: 'null' }, 'Z'],
    ['unknown', { kind: 'unknown' }, 'U'],
    ['truncated unknown', { kind: 'unknown', truncated: true }, 'U!'],
    ['array', { kind: 'array', items: N }, '[N]'],
    ['truncated array', { kind: 'array', items: N, truncated: true }, '[N]!'],
    ['empty object', { kind: 'object', fields: [] }, '{}'],
    [
      'POST /posts request, optional field marked with ?',
      {
        kind: 'object',
        fields: [
          { name: 'author', required: true, shape: S },
          { name: 'title', required: false, shape: S },
        ],
      },
      '{"author":S,"title"?:S}',
    ],
    [
      'truncated object',
      { kind: 'object', fields: [{ name: 'a', required: true, shape: N }], truncated: true },
      '{"a":N}!',
    ],
    [
      'names that need JSON escapes',
      { kind: 'object', fields: [{ name: 'a"b\\c\n', required: true, shape: N }] },
      '{"a\\"b\\\\c\\n":N}',
    ],
    ['oneOf in kind order', { kind: 'oneOf', options: [S, { kind: 'null' }] }, '(S|Z)'],
    [
      'oneOf given out of order',
      { kind: 'oneOf', options: [{ kind: 'null' }, { kind: 'array', items: N }, S] },
      '(S|[N]|Z)',
    ],
    [
      'fields given out of order',
      {
        kind: 'object',
        fields: [
          { name: 'title', required: true, shape: S },
          { name: 'author', required: true, shape: S },
        ],
      },
      '{"author":S,"title":S}',
    ],
  ])('writes %s', (_name, shape, text) => {
    expect(canonicalShape(shape)).toBe(text);
  });
});

describe('fingerprint', () => {
  it('is the 128-bit hash of the canonical text, as 32 hex digits', () => {
    const shape = inferShape({ id: 1, title: 'Hello', author: 'Ann', tags: ['a'], at: null });
    expect(fingerprint(shape)).toMatch(/^[0-9a-f]{32}$/);
    expect(fingerprint(shape)).toBe(hashOfText(shape));
  });

  // Fixed values: a change of the canonical form or of the hash breaks stored fingerprints, and
  // every process and machine must compute these same digits.
  it.each<[string, unknown, string]>([
    ['POST /posts request', { title: 'Hello', author: 'Ann' }, '4c6a172fb1483adc1b37e0327e515173'],
    ['POST /posts 201 response', { id: 1, title: 'Hello', author: 'Ann' }, 'dc4275488d5b12f4c893375f820698f1'],
    ['an empty array', [], 'ab98ac6291abe84139b153b4e13b159a'],
  ])('is stable for %s', (_name, body, expected) => {
    expect(fingerprint(inferShape(body))).toBe(expected);
  });

  it('does not depend on the order of keys in the body', () => {
    expect(fingerprint(inferShape({ title: 'x', author: 'y', id: 1 }))).toBe(
      fingerprint(inferShape({ id: 2, author: 'b', title: 'a' })),
    );
  });

  it('does not depend on the order of items in an array', () => {
    expect(fingerprint(inferShape([1, 'a', null, { a: 1 }]))).toBe(fingerprint(inferShape([{ a: 2 }, null, 'b', 3])));
  });

  it.each<[string, Shape, Shape]>([
    [
      'required vs optional',
      { kind: 'object', fields: [{ name: 'a', required: true, shape: N }] },
      { kind: 'object', fields: [{ name: 'a', required: false, shape: N }] },
    ],
    ['format vs none', { kind: 'string', format: 'uuid' }, S],
    ['truncated vs not', { kind: 'array', items: N, truncated: true }, { kind: 'array', items: N }],
    [
      'field name',
      { kind: 'object', fields: [{ name: 'a', required: true, shape: N }] },
      { kind: 'object', fields: [{ name: 'b', required: true, shape: N }] },
    ],
    ['nesting', { kind: 'array', items: { kind: 'array', items: N } }, { kind: 'array', items: N }],
    ['string vs number', S, N],
  ])('tells apart %s', (_name, a, b) => {
    expect(fingerprint(a)).not.toBe(fingerprint(b));
  });

  it('gives no collision among 20,000 distinct small shapes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      seen.add(
        fingerprint({ kind: 'object', fields: [{ name: `f${i}`, required: i % 2 === 0, shape: i % 3 === 0 ? S : N }] }),
      );
    }
    expect(seen.size).toBe(20_000);
  });

  it('refuses a shape nested deeper than inference ever makes one, instead of overflowing the stack', () => {
    let deep: Shape = N;
    for (let i = 0; i < 100_000; i++) deep = { kind: 'array', items: deep };
    expect(() => fingerprint(deep)).toThrow(/nested deeper than 257 levels/);
    const deepest = inferShape(JSON.parse('['.repeat(300) + ']'.repeat(300)), { maxDepth: 1000 });
    expect(fingerprint(deepest)).toMatch(/^[0-9a-f]{32}$/);
  });
});

describe('shapeFingerprint', () => {
  // Names drawn from a few, so records of a list share some keys and miss others (optional fields,
  // key lists that change from record to record), with names that need JSON escapes or sort oddly.
  const NAMES = ['id', 'title', 'author', 'a', 'B', '_', 'é', 'a"b', 'line\nbreak', '\ud800', '__proto__', ''];
  const { json } = fc.letrec<{ json: unknown }>((tie) => ({
    json: fc.oneof(
      { maxDepth: 4, depthIdentifier: 'json', withCrossShrink: true },
      fc.oneof(
        fc.string({ maxLength: 6 }),
        fc.uuid(),
        fc.emailAddress(),
        fc.webUrl(),
        fc.constantFrom('2026-11-22', '2026-11-22T03:08:00Z'),
      ),
      fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null)),
      fc.array(tie('json'), { maxLength: 5 }),
      fc.dictionary(fc.constantFrom(...NAMES), tie('json'), { maxKeys: 6 }),
    ),
  }));
  const limits: fc.Arbitrary<Partial<ShapeLimits>> = fc.oneof(
    fc.constant({}),
    fc.record(
      {
        maxDepth: fc.integer({ min: 0, max: 4 }),
        maxFields: fc.integer({ min: 0, max: 4 }),
        maxItems: fc.integer({ min: 0, max: 4 }),
      },
      { requiredKeys: [] },
    ),
  );

  it('equals fingerprint(inferShape(x)) for arbitrary JSON values and limits', () => {
    fc.assert(
      fc.property(json, limits, (value, limit) => {
        expect(shapeFingerprint(value, limit)).toBe(fingerprint(inferShape(value, limit)));
      }),
      { numRuns: 2000 },
    );
  });

  it('gives the instance extras of inferShape(x) beside the fingerprint, for arbitrary JSON values and limits', () => {
    const counts = { extras: '' };
    fc.assert(
      fc.property(json, limits, (value, limit) => {
        const shape = inferShape(value, limit);
        expect(shapeFingerprint(value, limit, counts)).toBe(fingerprint(shape));
        expect(counts.extras).toBe(instanceExtras(shape));
        // The counts come back from the shape without them, one exchange and its extras.
        expect(countInstances(withoutInstances(shape), 1, counts.extras)).toEqual(
          countInstances(shape, 1, instanceExtras(shape)),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('equals fingerprint(inferShape(x)) for lists of records whose key lists repeat, change and come back', () => {
    const record = fc.dictionary(
      fc.constantFrom(...NAMES),
      fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.constant(null)),
      { maxKeys: 6 },
    );
    fc.assert(
      fc.property(fc.array(record, { maxLength: 3 }), fc.array(fc.nat(2), { maxLength: 12 }), (records, picks) => {
        const list = picks.map((pick) => records[pick % Math.max(records.length, 1)] ?? {});
        expect(shapeFingerprint(list)).toBe(fingerprint(inferShape(list)));
        expect(shapeFingerprint({ data: list, first: list[0] ?? null })).toBe(
          fingerprint(inferShape({ data: list, first: list[0] ?? null })),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it.each<[string, unknown, string]>([
    ['POST /posts request', { title: 'Hello', author: 'Ann' }, '4c6a172fb1483adc1b37e0327e515173'],
    ['POST /posts 201 response', { id: 1, title: 'Hello', author: 'Ann' }, 'dc4275488d5b12f4c893375f820698f1'],
    ['an empty array', [], 'ab98ac6291abe84139b153b4e13b159a'],
  ])('gives the fixed digest of %s', (_name, body, expected) => {
    expect(shapeFingerprint(body)).toBe(expected);
  });

  it('names a bad limit like inferShape does', () => {
    expect(() => shapeFingerprint({}, { maxFields: -1 })).toThrow(
      /limit maxFields must be a non-negative integer, got -1/,
    );
  });
});

describe('Hash128', () => {
  it('gives the same digest however the text is split', () => {
    const whole = new Hash128();
    whole.write('{"author":S,"title":S}');
    const pieces = new Hash128();
    for (const piece of ['{', '"author"', ':S,"ti', 'tle":S}']) pieces.write(piece);
    expect(pieces.digest()).toBe(whole.digest());
  });

  it('tells apart texts that differ by a trailing empty code unit', () => {
    const a = new Hash128();
    a.write('a');
    const b = new Hash128();
    b.write('a\u0000');
    expect(a.digest()).not.toBe(b.digest());
  });
});
