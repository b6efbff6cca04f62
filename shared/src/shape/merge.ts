import type { Shape } from './types';

/** Merge two shapes: missing → optional, T and null → oneOf nullable, differing kinds → oneOf. */
export function mergeShapes(_a: Shape, _b: Shape): Shape {
  throw new Error('mergeShapes: not implemented yet');
}

/** Merge of many shapes; `unknown` for none. */
export function mergeAllShapes(_shapes: readonly Shape[]): Shape {
  throw new Error('mergeAllShapes: not implemented yet');
}
