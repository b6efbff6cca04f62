import { inferShape, type Shape } from '@spectator/shared';
import { jsonPrefixShape } from './json-prefix';

/** `shape` with `truncated` set on the containers along `path` (keys, `[]` for an array's items), the root first. */
function truncatedAlong(shape: Shape, path: readonly string[]): Shape {
  if (shape.kind === 'array')
    return {
      ...shape,
      truncated: true,
      ...(path[0] === '[]' ? { items: truncatedAlong(shape.items, path.slice(1)) } : {}),
    };
  if (shape.kind === 'object')
    return {
      ...shape,
      truncated: true,
      fields: shape.fields.map((field) =>
        field.name === path[0] ? { ...field, shape: truncatedAlong(field.shape, path.slice(1)) } : field,
      ),
    };
  return shape;
}

const RECORD = { id: 7, name: 'a', tags: ['x'], owner: { login: 'b' } };

describe('jsonPrefixShape', () => {
  it('shapes a list cut inside a record from its whole records, their fields all required', () => {
    const text = JSON.stringify([RECORD, RECORD, RECORD]);
    const cut = text.slice(0, text.lastIndexOf('"owner"') + 5);
    expect(jsonPrefixShape(cut)).toEqual(truncatedAlong(inferShape([RECORD, RECORD]), []));
  });

  it('keeps the fields before a list and marks the containers open at the cut truncated', () => {
    const text = JSON.stringify({ count: 3, data: [RECORD, RECORD, RECORD], next: 'x' });
    const cut = text.slice(0, text.lastIndexOf('"tags"') + 3);
    expect(jsonPrefixShape(cut)).toEqual(truncatedAlong(inferShape({ count: 3, data: [RECORD, RECORD] }), ['data']));
  });

  it('shapes one large object from the values it holds whole', () => {
    expect(jsonPrefixShape('{"a":1,"b":{"c":true,"d":"x\\"y","e":[1,2')).toEqual(
      truncatedAlong(inferShape({ a: 1, b: { c: true, d: 'x', e: [1] } }), ['b', 'e']),
    );
    expect(jsonPrefixShape('{"data":"xxxxxxxx')).toEqual({ kind: 'object', fields: [], truncated: true });
  });

  it('cuts nested lists at the outermost list with a whole item', () => {
    expect(jsonPrefixShape('[[1,2],[3,')).toEqual(truncatedAlong(inferShape([[1, 2]]), []));
  });

  it('gives null for a cut scalar, and never throws nor invents a field on any prefix', () => {
    expect(jsonPrefixShape('12345')).toBeNull();
    expect(jsonPrefixShape('"abc')).toBeNull();
    const text = JSON.stringify({ count: 3, data: [RECORD, { ...RECORD, extra: [[1], { deep: null }] }], n: -1.5e3 });
    const names = (shape: Shape, out = new Set<string>()): Set<string> => {
      if (shape.kind === 'object') for (const f of shape.fields) names(f.shape, out.add(f.name));
      if (shape.kind === 'array') names(shape.items, out);
      if (shape.kind === 'oneOf') for (const o of shape.options) names(o, out);
      return out;
    };
    const all = names(inferShape(JSON.parse(text)));
    for (let end = 0; end < text.length; end++) {
      const shape = jsonPrefixShape(text.slice(0, end));
      if (shape !== null) for (const name of names(shape)) expect(all.has(name)).toBe(true);
    }
  });
});
