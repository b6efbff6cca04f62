import { fieldPaths } from './fields';
import { inferShape } from './infer';

describe('fieldPaths', () => {
  it.each([
    [{ id: 1, name: 'a' }, ['$.id', '$.name']],
    [[{ id: 1, tags: [{ label: 'x' }] }], ['$[].id', '$[].tags', '$[].tags[].label']],
    [{ 'first name': 'a', nested: { deep: true } }, ['$["first name"]', '$.nested', '$.nested.deep']],
    ['text', []],
    [[], []],
  ])('names every field of %j as diffs do', (value, expected) => {
    expect(fieldPaths(inferShape(value))).toEqual(expected);
  });

  it('names a field once when a oneOf has it in two options', () => {
    const shape = { kind: 'oneOf' as const, options: [inferShape({ a: 1 }), inferShape([{ a: 1 }])] };
    expect(fieldPaths(shape)).toEqual(['$.a', '$[].a']);
  });
});
