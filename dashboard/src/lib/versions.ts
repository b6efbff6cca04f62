import { formatVersion, nextVersion, parseVersion } from '@spectator/shared';

/**
 * The version accepting `changes` would make from `current` (shared rules: any breaking change →
 * next major, else next minor); null when `current` is not a version this dashboard can read.
 */
export function acceptedVersion(current: string, changes: ReadonlyArray<{ breaking: boolean }>): string | null {
  try {
    return formatVersion(nextVersion(parseVersion(current), changes));
  } catch {
    return null;
  }
}
