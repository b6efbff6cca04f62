import Ajv2020 from 'ajv/dist/2020';
import type { JsonSchema } from '../api/types';
import { inferShape } from './infer';
import { fromJsonSchema, InvalidSchemaError, toJsonSchema } from './json-schema';
import type { Shape } from './types';
import { N, object, POST_RESPONSE, S, Z } from '../../test/shape-fixtures';

describe('toJsonSchema', () => {
  it.each<[string, Shape, JsonSchema]>([
    ['string with format', { kind: 'string', format: 'email' }, { type: 'string', format: 'email' }],
    ['number', N, { type: 'number' }],
    ['boolean', { kind: 'boolean' }, { type: 'boolean' }],
    ['null', Z, { type: 'null' }],
    ['unknown as the empty schema', { kind: 'unknown' }, {}],
    ['truncated unknown', { kind: 'unknown', truncated: true }, { 'x-spectator-truncated': true }],
    [
      'POST /posts 201 response as a closed object',
      POST_RESPONSE,
      {
        type: 'object',
        properties: { author: { type: 'string' }, id: { type: 'number' }, title: { type: 'string' } },
        required: ['author', 'id', 'title'],
        additionalProperties: false,
      },
    ],
    [
      'optional fields left out of required',
      object(['a', false, N]),
      { type: 'object', properties: { a: { type: 'number' } }, additionalProperties: false },
    ],
    [
      'truncated object left open and marked',
      { kind: 'object', fields: [], truncated: true },
      { type: 'object', properties: {}, 'x-spectator-truncated': true },
    ],
    ['array', { kind: 'array', items: N }, { type: 'array', items: { type: 'number' } }],
    [
      'truncated array',
      { kind: 'array', items: N, truncated: true },
      { type: 'array', items: { type: 'number' }, 'x-spectator-truncated': true },
    ],
    ['nullable as oneOf', { kind: 'oneOf', options: [S, Z] }, { oneOf: [{ type: 'string' }, { type: 'null' }] }],
  ])('writes %s', (_name, shape, schema) => {
    expect(toJsonSchema(shape)).toEqual(schema);
  });

  it('keeps a field named __proto__ as a property', () => {
    const schema = toJsonSchema(object(['__proto__', true, N]));
    expect(Object.keys(schema.properties!)).toEqual(['__proto__']);
    expect(fromJsonSchema(JSON.parse(JSON.stringify(schema)))).toEqual(object(['__proto__', true, N]));
  });

  it('writes schemas that a JSON Schema 2020-12 validator accepts, and the observed bodies validate', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const bodies: unknown[] = [
      { id: 1, title: 'Hello', author: 'Ann' },
      [{ a: 1, b: null }, { a: 'x' }],
      { nested: { list: [[1, 2], []], at: '2026-11-22' } },
      null,
      'text',
    ];
    for (const body of bodies) {
      const validate = ajv.compile(toJsonSchema(inferShape(body)));
      expect(validate(body)).toBe(true);
    }
    const closed = ajv.compile(toJsonSchema(POST_RESPONSE));
    expect(closed({ id: 1, title: 'x', author: 'y', extra: true })).toBe(false);
  });
});

describe('fromJsonSchema', () => {
  it.each<[string, unknown, Shape]>([
    [
      'POST /posts request as a user writes it',
      {
        type: 'object',
        properties: { title: { type: 'string' }, author: { type: 'string' } },
        required: ['title', 'author'],
      },
      object(['author', true, S], ['title', true, S]),
    ],
    ['type lists as oneOf', { type: ['string', 'null'] }, { kind: 'oneOf', options: [S, Z] }],
    ['integer as number', { type: 'integer', minimum: 0 }, N],
    [
      'anyOf like oneOf, options merged',
      {
        anyOf: [
          { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] },
          { type: 'object', properties: { b: { type: 'string' } } },
        ],
      },
      object(['a', false, N], ['b', false, S]),
    ],
    ['enum by the types of its values', { enum: ['draft', 'published', null] }, { kind: 'oneOf', options: [S, Z] }],
    ['const by its type', { const: 3 }, N],
    ['OpenAPI 3.0 nullable', { type: 'string', nullable: true }, { kind: 'oneOf', options: [S, Z] }],
    ['known format kept', { type: 'string', format: 'uuid' }, { kind: 'string', format: 'uuid' }],
    ['other format dropped', { type: 'string', format: 'password' }, S],
    ['properties without type as object', { properties: { a: { type: 'number' } } }, object(['a', false, N])],
    ['items without type as array', { items: { type: 'number' } }, { kind: 'array', items: N }],
    ['array without items', { type: 'array' }, { kind: 'array', items: { kind: 'unknown' } }],
    ['boolean schema true', true, { kind: 'unknown' }],
    [
      'additionalProperties true as an open (truncated) object',
      { type: 'object', properties: {}, additionalProperties: true },
      { kind: 'object', fields: [], truncated: true },
    ],
    [
      'annotations ignored',
      { type: 'number', description: 'the id', examples: [1], title: 'Id', 'x-internal': true },
      N,
    ],
  ])('reads %s', (_name, schema, shape) => {
    expect(fromJsonSchema(schema)).toEqual(shape);
  });

  it.each<[string, unknown, string, string]>([
    ['$ref', { type: 'object', properties: { author: { $ref: '#/$defs/Author' } } }, '$ref', '#/properties/author'],
    ['allOf', { allOf: [{ type: 'string' }] }, 'allOf', '#'],
    ['an unknown type', { type: 'text' }, 'type', '#/type'],
    ['a schema that is not an object', { type: 'array', items: 'string' }, 'type', '#/items'],
    ['tuple items', { type: 'array', items: [{ type: 'string' }] }, 'items', '#/items'],
    [
      'required naming an absent property',
      { type: 'object', properties: {}, required: ['title'] },
      'required',
      '#/required',
    ],
    ['required that is not a list', { type: 'object', required: 'title' }, 'required', '#/required'],
    ['properties that are not an object', { type: 'object', properties: [] }, 'properties', '#/properties'],
    [
      'a schema for additional properties',
      { type: 'object', additionalProperties: { type: 'string' } },
      'additionalProperties',
      '#/additionalProperties',
    ],
    ['an empty oneOf', { oneOf: [] }, 'oneOf', '#'],
    ['oneOf beside type', { type: 'string', oneOf: [{ type: 'string' }] }, 'oneOf', '#'],
    [
      'a bad nested keyword, with an escaped pointer',
      { properties: { 'a/b': { items: { not: {} } } } },
      'not',
      '#/properties/a~1b/items',
    ],
    ['a format that is not a string', { type: 'string', format: 7 }, 'format', '#/format'],
    ['null', null, 'type', '#'],
  ])('rejects %s, naming the keyword and where', (_name, schema, keyword, at) => {
    let error: unknown;
    try {
      fromJsonSchema(schema);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidSchemaError);
    expect(error).toMatchObject({ keyword, at });
    expect((error as Error).message).toContain(`"${keyword}"`);
    expect((error as Error).message).toContain(at);
  });

  it('rejects schemas nested deeper than the shape depth ceiling instead of overflowing the stack', () => {
    let schema: unknown = { type: 'number' };
    for (let i = 0; i < 100_000; i++) schema = { type: 'array', items: schema };
    expect(() => fromJsonSchema(schema)).toThrow(/nested deeper than 256/);
  });
});
