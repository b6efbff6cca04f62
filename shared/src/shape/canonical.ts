import type { Shape } from './types';

/** The canonical text of a shape: equal shapes give equal text (documented in docs/shapes.md). */
export function canonicalShape(_shape: Shape): string {
  throw new Error('canonicalShape: not implemented yet');
}
