import {
  compareVersions,
  formatVersion,
  nextVersion,
  MATRIX_KINDS,
  type MatrixKind,
  parseVersion,
  type Version,
} from '@spectator/shared';

/** The environments evidence comes from: the matrix's kinds of rows (local runs are not evidence). */
export type RowKind = MatrixKind;
export const KIND_LABELS: Record<RowKind, string> = { ci: 'CI runs', staging: 'Staging', production: 'Production' };
/** The spec's rows (§9.5): CI runs by pull request, staging builds, production builds. */
export const KIND_ORDER: readonly RowKind[] = MATRIX_KINDS;

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
    .sort((a, b) =>
      a.parsed && b.parsed ? compareVersions(b.parsed, a.parsed) : a.parsed ? -1 : b.parsed ? 1 : a.index - b.index,
    )
    .map(({ item }) => item);
}
