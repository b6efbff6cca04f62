import { formatVersion } from '@spectator/shared';

/** A version of an endpoint, as the cell computation needs it. */
export interface CandidateVersion {
  id: string;
  major: number;
  minor: number;
}

/** The value of one matrix cell (an environment row × an endpoint). */
export interface CellValue {
  /** The version all the row's traffic conforms to; `null` for drift. */
  versionId: string | null;
  /** That version, or for drift the nearest one, e.g. `"1.1"`. */
  version: string;
  drift: boolean;
}

/**
 * The version a row shows for an endpoint (DESIGN.md, Versions, evidence, proposals): the lowest
 * version that every observed exchange conforms to. When none does, the row drifts; the nearest
 * version is then the one the most observed traffic (by count) conforms to, the newest on a tie
 * (and the newest when nothing conforms at all).
 * @param versions the endpoint's versions, in any order; at least one.
 * @param exchanges the distinct exchanges the row observed for the endpoint, each with its count.
 * @param conforms whether one exchange conforms to one version.
 */
export function evaluateCell<E extends { count: number }>(
  versions: readonly CandidateVersion[],
  exchanges: readonly E[],
  conforms: (versionId: string, exchange: E) => boolean,
): CellValue {
  if (versions.length === 0) throw new Error('evaluateCell needs at least one version');
  const ascending = [...versions].sort((a, b) => a.major - b.major || a.minor - b.minor);
  let nearest = ascending[ascending.length - 1] as CandidateVersion;
  let nearestCount = 0;
  for (const version of ascending) {
    let conformingCount = 0;
    let all = true;
    for (const exchange of exchanges) {
      if (conforms(version.id, exchange)) conformingCount += exchange.count;
      else all = false;
    }
    if (all) return { versionId: version.id, version: formatVersion(version), drift: false };
    if (conformingCount >= nearestCount) {
      nearest = version;
      nearestCount = conformingCount;
    }
  }
  return { versionId: null, version: formatVersion(nearest), drift: true };
}
