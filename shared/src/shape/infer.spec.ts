import { DEFAULT_SHAPE_LIMITS, inferShape } from './infer';
import type { Shape } from './types';
import { B, N, S, U, Z } from '../../test/shape-fixtures';

describe('inferShape', () => {
  it.each<[string, unknown, Shape]>([
    ['a string', 'hello', S],
    ['a number', 42.5, N],
    ['an integer', 17, N],
    ['a boolean', false, B],
    ['null', null, Z],
    ['an empty object', {}, { kind: 'object', fields: [] }],
    ['an empty array (items unknown)', [], { kind: 'array', items: U }],
    ['an array of numbers', [1, 2, 3], { kind: 'array', items: N }],
    [
      'an array of mixed scalars (options in canonical order)',
      [null, true, 1, 'a'],
      { kind: 'array', items: { kind: 'oneOf', options: [S, N, B, Z] } },
    ],
    [
      'seed-spec POST /posts request {title, author}',
      { title: 'Hello', author: 'Ann' },
      {
        kind: 'object',
        fields: [
          { name: 'author', required: true, shape: S },
          { name: 'title', required: true, shape: S },
        ],
      },
    ],
    [
      'seed-spec POST /posts 201 response {id, title, author}',
      { id: 1, title: 'Hello', author: 'Ann' },
      {
        kind: 'object',
        fields: [
          { name: 'author', required: true, shape: S },
          { name: 'id', required: true, shape: N },
          { name: 'title', required: true, shape: S },
        ],
      },
    ],
    [
      'records of a list: a missing field becomes optional, null makes it nullable',
      [{ id: 1, tag: 'a' }, { id: 2, tag: null }, { id: 3 }],
      {
        kind: 'array',
        items: {
          kind: 'object',
          fields: [
            { name: 'id', required: true, shape: N },
            { name: 'tag', required: false, shape: { kind: 'oneOf', options: [S, Z] } },
          ],
          instances: 3,
        },
      },
    ],
    [
      'objects and arrays among items merge into one option each',
      [{ a: [1] }, { a: [] }, { a: ['x'] }, 'text'],
      {
        kind: 'array',
        items: {
          kind: 'oneOf',
          options: [
            S,
            {
              kind: 'object',
              fields: [
                { name: 'a', required: true, shape: { kind: 'array', items: { kind: 'oneOf', options: [S, N] } } },
              ],
              instances: 3,
            },
          ],
        },
      },
    ],
    [
      'field names are sorted in code-unit order',
      { b: 1, a: 1, B: 1, é: 1, _: 1 },
      { kind: 'object', fields: ['B', '_', 'a', 'b', 'é'].map((name) => ({ name, required: true, shape: N })) },
    ],
    [
      'a field named __proto__ is a field like any other',
      JSON.parse('{"__proto__": 1}'),
      { kind: 'object', fields: [{ name: '__proto__', required: true, shape: N }] },
    ],
    [
      'values JSON cannot hold read as unknown',
      { f: undefined },
      { kind: 'object', fields: [{ name: 'f', required: true, shape: U }] },
    ],
  ])('describes %s', (_name, value, expected) => {
    expect(inferShape(value)).toEqual(expected);
  });

  it.each<[string, string, Shape]>([
    ['uuid', '3f2504e0-4f89-41d3-9a0c-0305e82c3301', { kind: 'string', format: 'uuid' }],
    ['upper-case uuid', '3F2504E0-4F89-41D3-9A0C-0305E82C3301', { kind: 'string', format: 'uuid' }],
    ['date-time', '2026-11-22T00:25:00Z', { kind: 'string', format: 'date-time' }],
    ['date-time with fraction and offset', '2026-11-22T00:25:00.123+01:00', { kind: 'string', format: 'date-time' }],
    ['date', '2026-11-22', { kind: 'string', format: 'date' }],
    ['email', 'ann@example.com', { kind: 'string', format: 'email' }],
    ['uri', 'https://example.com/posts?id=1', { kind: 'string', format: 'uri' }],
    ['not a uuid (bad hex)', '3f2504e0-4f89-41d3-9a0c-0305e82c330g', S],
    ['not a date (month 13)', '2026-13-22', S],
    ['not a date-time (no zone)', '2026-11-22T00:25:00', S],
    ['not an email (space)', 'ann smith@example.com', S],
    ['not an email (no domain dot)', 'ann@localhost', S],
    ['not a uri (no scheme)', '://example.com', S],
    ['plain text', 'Hello world', S],
    ['empty string', '', S],
  ])('gives the format hint of %s, never the value', (_name, text, expected) => {
    const shape = inferShape({ value: text });
    expect(shape).toEqual({ kind: 'object', fields: [{ name: 'value', required: true, shape: expected }] });
    if (text.length > 0) expect(JSON.stringify(shape)).not.toContain(text);
  });

  it.each<[string, unknown[], Shape]>([
    ['the same format everywhere is kept', ['2026-01-01', '2026-01-02'], { kind: 'string', format: 'date' }],
    ['differing formats give none', ['2026-01-01', 'ann@example.com'], S],
    ['a plain string among formatted ones gives none', ['2026-01-01', 'soon', '2026-01-03'], S],
  ])('merges string formats of items: %s', (_name, items, expected) => {
    expect(inferShape(items)).toEqual({ kind: 'array', items: expected });
  });

  describe('limits', () => {
    it('cuts values inside more than maxDepth containers to unknown, truncated', () => {
      const cut: Shape = { kind: 'unknown', truncated: true };
      expect(inferShape({ a: { b: { c: 1 } } }, { maxDepth: 2 })).toEqual({
        kind: 'object',
        fields: [
          {
            name: 'a',
            required: true,
            shape: {
              kind: 'object',
              fields: [
                {
                  name: 'b',
                  required: true,
                  shape: { kind: 'object', fields: [{ name: 'c', required: true, shape: cut }] },
                },
              ],
            },
          },
        ],
      });
      expect(inferShape([[1]], { maxDepth: 0 })).toEqual({ kind: 'array', items: cut });
    });

    it('keeps the first maxFields names in code-unit order whatever the key order, and marks the object', () => {
      const expected: Shape = {
        kind: 'object',
        fields: ['a', 'b'].map((name) => ({ name, required: true, shape: N })),
        truncated: true,
      };
      expect(inferShape({ d: 1, c: 1, b: 1, a: 1 }, { maxFields: 2 })).toEqual(expected);
      expect(inferShape({ a: 1, b: 1, c: 1, d: 1 }, { maxFields: 2 })).toEqual(expected);
    });

    it('caps the union of the fields of a list of records at maxFields', () => {
      expect(inferShape([{ c: 1 }, { b: 1 }, { a: 1 }], { maxFields: 2 })).toEqual({
        kind: 'array',
        items: {
          kind: 'object',
          fields: ['a', 'b'].map((name) => ({ name, required: false, shape: N })),
          truncated: true,
          instances: 3,
        },
      });
    });

    it('looks at the first maxItems items only and marks the array', () => {
      expect(inferShape([1, 2, 'three'], { maxItems: 2 })).toEqual({ kind: 'array', items: N, truncated: true });
      expect(inferShape([1, 2], { maxItems: 2 })).toEqual({ kind: 'array', items: N });
    });

    it('uses depth 32, 256 fields and 1,000 items by default', () => {
      expect(DEFAULT_SHAPE_LIMITS).toEqual({ maxDepth: 32, maxFields: 256, maxItems: 1000 });
    });

    it('takes the default for a limit given as undefined', () => {
      expect(inferShape([1, 2], { maxItems: undefined })).toEqual({ kind: 'array', items: N });
    });

    it.each([
      [{ maxDepth: -1 }, /maxDepth/],
      [{ maxFields: 1.5 }, /maxFields/],
      [{ maxItems: Number.NaN }, /maxItems/],
    ])('rejects the bad limit %p naming it', (limits, message) => {
      expect(() => inferShape([], limits)).toThrow(message);
    });
  });
});
