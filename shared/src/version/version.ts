/**
 * Per-endpoint versions, written `<major>.<minor>` (seed-spec §2 and §9: "a two-part number such as
 * `<major>.<minor>`", shown as `1.0`, `1.1`, `1.5`).
 *
 * Only the two-part form is accepted. A patch part would carry no meaning here, because every
 * change we version is a shape change that is either breaking (major) or non-breaking (minor);
 * accepting `1.0.0` would also give one version two spellings (`1.0` and `1.0.0`) that compare
 * equal but differ as text, which breaks lookups by version string. A `v` prefix is rejected for
 * the same reason.
 */
export interface Version {
  major: number;
  minor: number;
}

/** Digits without leading zeros, so that every version has exactly one spelling. */
const VERSION_PATTERN = /^(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

/** The first version of a newly documented endpoint (seed-spec §3, "Per-endpoint version display", 3). */
export const FIRST_VERSION: Version = Object.freeze({ major: 1, minor: 0 });

/**
 * Parse `"1.0"`, `"2.13"`. Throws an Error naming the text when it is not `<major>.<minor>`
 * (e.g. `"1"`, `"v1.0"`, `"1.0.0"`, `"01.0"`, `" 1.0"`).
 */
export function parseVersion(text: string): Version {
  const match = typeof text === 'string' ? VERSION_PATTERN.exec(text) : null;
  const version = match ? { major: Number(match[1]), minor: Number(match[2]) } : null;
  if (!version || !isValidVersion(version)) {
    throw new Error(`invalid version ${JSON.stringify(text)}: expected <major>.<minor> such as "1.0" or "2.3"`);
  }
  return version;
}

/** `{major: 1, minor: 2}` → `"1.2"`. Throws when a part is not a non-negative safe integer. */
export function formatVersion(v: Version): string {
  if (!isValidVersion(v)) {
    throw new Error(`invalid version ${JSON.stringify(v)}: major and minor must be non-negative integers`);
  }
  return `${v.major}.${v.minor}`;
}

/** Negative when `a` is older than `b`, 0 when equal, positive when newer (for `Array.sort`). */
export function compareVersions(a: Version, b: Version): number {
  return a.major !== b.major ? Math.sign(a.major - b.major) : Math.sign(a.minor - b.minor);
}

/**
 * The version an approved proposal gives an endpoint (DESIGN.md, Versions): first documentation
 * (`current` null) → 1.0; any breaking change → next major (`x.0`); otherwise → next minor. A
 * proposal without shape changes (a new description, say) still makes a new version, the next
 * minor, so the result is always strictly greater than `current`.
 */
export function nextVersion(current: Version | null, changes: ReadonlyArray<{ breaking: boolean }>): Version {
  if (current === null) return { ...FIRST_VERSION };
  formatVersion(current); // validates
  return changes.some((change) => change.breaking)
    ? { major: current.major + 1, minor: 0 }
    : { major: current.major, minor: current.minor + 1 };
}

function isValidVersion(v: Version | null | undefined): boolean {
  return (
    typeof v === 'object' &&
    v !== null &&
    Number.isSafeInteger(v.major) &&
    Number.isSafeInteger(v.minor) &&
    v.major >= 0 &&
    v.minor >= 0
  );
}
