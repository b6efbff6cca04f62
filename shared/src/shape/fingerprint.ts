import type { Shape } from './types';

/** A stable hash (hex) of the canonical shape; equal across processes and machines. */
export function fingerprint(_shape: Shape): string {
  throw new Error('fingerprint: not implemented yet');
}
