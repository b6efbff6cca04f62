import type { JsonSchema } from '@spectator/shared';
import { schemaRows, schemaTypeLabel } from './schema-rows';

const post: JsonSchema = {
  type: 'object',
  properties: { title: { type: 'string' }, id: { type: 'number' }, author: { type: 'string' } },
  required: ['author', 'id', 'title'],
};

describe('schemaRows', () => {
  it('lists the fields of an object body sorted by name, with spec type names', () => {
    expect(schemaRows(post).map((row) => [row.path, row.name, row.type, row.optional, row.nullable])).toEqual([
      ['$.author', 'author', 'String', false, false],
      ['$.id', 'id', 'Number', false, false],
      ['$.title', 'title', 'String', false, false],
    ]);
  });

  it('marks fields missing from `required` optional and `T | null` nullable', () => {
    const rows = schemaRows({
      type: 'object',
      properties: { nickname: { oneOf: [{ type: 'string' }, { type: 'null' }] }, age: { type: 'integer' } },
      required: ['nickname'],
    });
    expect(rows).toEqual([
      { path: '$.age', depth: 0, name: 'age', type: 'Integer', optional: true, nullable: false, truncated: false },
      {
        path: '$.nickname',
        depth: 0,
        name: 'nickname',
        type: 'String',
        optional: false,
        nullable: true,
        truncated: false,
      },
    ]);
  });

  it('nests object fields below arrays and objects with their paths', () => {
    const rows = schemaRows({
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', properties: { id: { type: 'string', format: 'uuid' } }, required: ['id'] },
        },
        meta: { type: 'object', properties: { page: { type: 'number' } }, required: [] },
      },
      required: ['items', 'meta'],
    });
    expect(rows.map((row) => [row.path, row.depth, row.type, row.format])).toEqual([
      ['$.items', 0, 'Array of Object', undefined],
      ['$.items[].id', 1, 'String', 'uuid'],
      ['$.meta', 0, 'Object', undefined],
      ['$.meta.page', 1, 'Number', undefined],
    ]);
  });

  it('gives a non-object body one (body) row with its item fields below', () => {
    const rows = schemaRows({ type: 'array', items: post });
    expect(rows[0]).toMatchObject({ path: '$', name: '(body)', type: 'Array of Object', depth: 0 });
    expect(rows.slice(1).map((row) => row.path)).toEqual(['$[].author', '$[].id', '$[].title']);
  });

  it('reads a nullable object body as (body) with its fields, and flags truncation', () => {
    const rows = schemaRows({
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          properties: { a: { type: 'array', items: { 'x-spectator-truncated': true } } },
          required: ['a'],
        },
      ],
    });
    expect(rows[0]).toMatchObject({ name: '(body)', type: 'Object', nullable: true });
    expect(rows[1]).toMatchObject({ path: '$.a', type: 'Array of Unknown', truncated: true });
  });

  it('quotes field names that are not identifiers in paths', () => {
    expect(schemaRows({ type: 'object', properties: { 'content-type': { type: 'string' } } })[0]!.path).toBe(
      '$["content-type"]',
    );
  });

  it('has no rows without a schema', () => {
    expect(schemaRows(null)).toEqual([]);
  });
});

describe('schemaTypeLabel', () => {
  it.each<[JsonSchema, string]>([
    [{ type: 'boolean' }, 'Boolean'],
    [{ oneOf: [{ type: 'string' }, { type: 'number' }] }, 'String | Number'],
    [{ oneOf: [{ type: 'null' }] }, 'Null'],
    [{}, 'Unknown'],
    [{ type: 'array', items: { type: 'array', items: { type: 'number' } } }, 'Array of Array of Number'],
  ])('%j reads %s', (schema, label) => {
    expect(schemaTypeLabel(schema)).toBe(label);
  });
});
