import type { Shape } from '../src/shape/types';

// Short names for shapes, so that test tables read like the shapes they describe.
export const S: Shape = { kind: 'string' };
export const N: Shape = { kind: 'number' };
export const B: Shape = { kind: 'boolean' };
export const Z: Shape = { kind: 'null' };
export const U: Shape = { kind: 'unknown' };
export const CUT: Shape = { kind: 'unknown', truncated: true };

/** An object from `[name, required, shape]` triples, in the order given. */
export const object = (...fields: Array<[string, boolean, Shape]>): Shape => ({
  kind: 'object',
  fields: fields.map(([name, required, shape]) => ({ name, required, shape })),
});
export const array = (items: Shape): Shape => ({ kind: 'array', items });
export const oneOf = (...options: Shape[]): Shape => ({ kind: 'oneOf', options });

/** seed-spec §4: the POST /posts request body, `{title: String, author: String}`. */
export const POST_REQUEST = object(['author', true, S], ['title', true, S]);
/** seed-spec §4: the POST /posts 201 response body, `{id: Number, title: String, author: String}`. */
export const POST_RESPONSE = object(['author', true, S], ['id', true, N], ['title', true, S]);
