import type { Shape } from '../shape/types';
import { compareShapes } from './compare';

/**
 * Closed conformance: every observed field documented, every required documented field present,
 * every observed type allowed (an observed `unknown` is allowed anywhere). True exactly when
 * `diffShapes(documented, observed, direction)` is empty, for either direction.
 */
export function conformsTo(observed: Shape, documented: Shape): boolean {
  return compareShapes(documented, observed, 'response', () => true);
}
