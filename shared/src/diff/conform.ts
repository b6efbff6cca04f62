import type { Shape } from '../shape/types';

/** Closed conformance: every observed field documented, every required documented field present, types allowed. */
export function conformsTo(_observed: Shape, _documented: Shape): boolean {
  throw new Error('conformsTo: not implemented yet');
}
