import { inferShape } from './infer';
import { mergeAllShapes, mergeShapes } from './merge';
import type { Shape } from './types';
import { array, B, CUT, N, object, oneOf, POST_REQUEST, S, U, Z } from '../../test/shape-fixtures';

describe('mergeShapes', () => {
  it.each<[string, Shape, Shape, Shape]>([
    ['equal kinds', N, N, N],
    ['T and null: nullable', S, Z, oneOf(S, Z)],
    ['null and T: the same nullable', Z, S, oneOf(S, Z)],
    ['differing kinds: oneOf in canonical order', B, N, oneOf(N, B)],
    ['a oneOf and a new kind: one flat oneOf', oneOf(S, Z), N, oneOf(S, N, Z)],
    ['two oneOfs: flattened, one option per kind', oneOf(S, Z), oneOf(N, Z), oneOf(S, N, Z)],
    [
      'same string format kept',
      { kind: 'string', format: 'uuid' },
      { kind: 'string', format: 'uuid' },
      { kind: 'string', format: 'uuid' },
    ],
    ['different formats: no format', { kind: 'string', format: 'uuid' }, { kind: 'string', format: 'email' }, S],
    ['a format and none: no format', { kind: 'string', format: 'date' }, S, S],
    ['plain unknown adds nothing (empty array items)', array(U), array(N), array(N)],
    ['truncated unknown is kept as an option', CUT, S, oneOf(S, CUT)],
    [
      'missing field: optional',
      object(['author', true, S], ['title', true, S]),
      object(['title', true, S]),
      object(['author', false, S], ['title', true, S]),
    ],
    ['optional stays optional', object(['a', false, N]), object(['a', true, N]), object(['a', false, N])],
    ['field types merge', object(['a', true, N]), object(['a', true, Z]), object(['a', true, oneOf(N, Z)])],
    [
      'objects inside oneOf merge with objects',
      oneOf(object(['a', true, N]), Z),
      object(['b', true, S]),
      oneOf(object(['a', false, N], ['b', false, S]), Z),
    ],
    ['arrays merge their items', array(N), array(S), array(oneOf(S, N))],
    ['arrays inside oneOf merge with arrays', oneOf(array(N), Z), array(B), oneOf(array(oneOf(N, B)), Z)],
    [
      'truncated object stays truncated',
      { kind: 'object', fields: [], truncated: true },
      object(),
      { kind: 'object', fields: [], truncated: true },
    ],
    [
      'truncated array stays truncated',
      { kind: 'array', items: N, truncated: true },
      array(N),
      { kind: 'array', items: N, truncated: true },
    ],
  ])('merges %s', (_name, a, b, expected) => {
    expect(mergeShapes(a, b)).toEqual(expected);
    expect(mergeShapes(b, a)).toEqual(expected);
  });

  it('documents POST /posts from two observed requests (seed-spec example)', () => {
    const documented = mergeAllShapes([
      inferShape({ title: 'A', author: 'Ann' }),
      inferShape({ author: 'Bob', title: 'B' }),
    ]);
    expect(documented).toEqual(POST_REQUEST);
  });

  it('is unknown for no shapes', () => {
    expect(mergeAllShapes([])).toEqual(U);
  });
});
