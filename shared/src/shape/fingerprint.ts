import { writeCanonical } from './canonical';
import { Hash128 } from './hash';
import type { Shape } from './types';

/**
 * A stable hash of the canonical shape: 32 hex digits (128 bits), the {@link Hash128} digest of
 * `canonicalShape(shape)`, fed piece by piece without building the text. Equal across processes
 * and machines; independent of the order of fields and of oneOf options in the data.
 */
export function fingerprint(shape: Shape): string {
  const hash = new Hash128();
  writeCanonical(shape, hash);
  return hash.digest();
}
