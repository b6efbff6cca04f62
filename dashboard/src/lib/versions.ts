import { compareVersions, formatVersion, nextVersion, parseVersion, type Version } from '@spectator/shared';

/**
 * The version accepting `changes` would make from `current` (shared rules: any breaking change →
 * next major, else next minor); null when `current` is not a version this dashboard can read.
 */
export function acceptedVersion(current: string, changes: ReadonlyArray<{ breaking: boolean }>): string | null {
  const version = readVersion(current);
  return version && formatVersion(nextVersion(version, changes));
}

function readVersion(text: string): Version | null {
  try {
    return parseVersion(text);
  } catch {
    return null;
  }
}

/** Versions sorted newest first by number (2.0 before 1.10 before 1.9); unreadable ones last, in their order. */
export function newestFirst<T extends { version: string }>(versions: readonly T[]): T[] {
  return versions
    .map((item, index) => ({ item, index, parsed: readVersion(item.version) }))
    .sort((a, b) => (a.parsed && b.parsed ? compareVersions(b.parsed, a.parsed) : a.parsed ? -1 : b.parsed ? 1 : a.index - b.index))
    .map(({ item }) => item);
}
