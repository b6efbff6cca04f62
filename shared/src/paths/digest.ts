import { Hash128 } from '../shape/hash';

/**
 * The digest of a literal path an agent sent for a capture (32 hex digits), as a `learned`
 * message names the literal paths a template covers (docs/paths.md, A single value): the backend
 * compares it with the digests of the paths it stored, so the message names no value, and the
 * capture id salts it, so equal paths of two captures give different digests.
 */
export function pathDigest(captureId: string, path: string): string {
  const hash = new Hash128();
  hash.write(captureId);
  hash.write('\u0000');
  hash.write(path);
  return hash.digest();
}
