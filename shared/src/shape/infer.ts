import type { Shape, ShapeLimits } from './types';

/** Defaults: depth 32, 256 fields per object, 1,000 array items looked at. */
export const DEFAULT_SHAPE_LIMITS: ShapeLimits = { maxDepth: 32, maxFields: 256, maxItems: 1000 };

/** The shape of a parsed JSON value. Never recursive on the JS stack; bounded by `limits`. */
export function inferShape(_value: unknown, _limits: Partial<ShapeLimits> = {}): Shape {
  throw new Error('inferShape: not implemented yet');
}
