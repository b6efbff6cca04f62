import type { Shape, ShapeKind } from './types';

/**
 * Ceiling on `maxDepth`. Shapes are walked recursively by merge, diff and fingerprint; keeping
 * every shape at most this deep keeps those walks a few hundred frames deep, far below any
 * JavaScript engine's stack limit.
 */
export const MAX_SHAPE_DEPTH = 256;

/**
 * The canonical order of kinds inside a `oneOf`: scalars first, containers next, `null` last so
 * that a nullable type reads `T | null`. `oneOf` itself never appears inside a `oneOf`.
 */
export const KIND_ORDER: readonly Exclude<ShapeKind, 'oneOf'>[] = [
  'string',
  'number',
  'boolean',
  'object',
  'array',
  'unknown',
  'null',
];

const KIND_RANK = Object.fromEntries([...KIND_ORDER, 'oneOf'].map((kind, rank) => [kind, rank])) as Readonly<
  Record<ShapeKind, number>
>;

/** Position of a kind in {@link KIND_ORDER} (`oneOf` sorts last). */
export function kindRank(kind: ShapeKind): number {
  return KIND_RANK[kind];
}

/**
 * The alternatives a shape allows: the options of a `oneOf`, nothing for a plain `unknown`
 * (no information, e.g. the items of an empty array), otherwise the shape itself.
 */
export function optionsOf(shape: Shape): readonly Shape[] {
  if (shape.kind === 'oneOf') return shape.options;
  if (shape.kind === 'unknown' && !shape.truncated) return [];
  return [shape];
}

/** Code-unit order of names, the order of object fields everywhere. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * One shape from alternatives already reduced to at most one per kind: `unknown` for none, the
 * option itself for one, otherwise a `oneOf` in canonical kind order.
 */
export function shapeFromOptions(options: Shape[]): Shape {
  if (options.length === 0) return { kind: 'unknown' };
  if (options.length === 1) return options[0]!;
  options.sort((a, b) => kindRank(a.kind) - kindRank(b.kind));
  return { kind: 'oneOf', options };
}
