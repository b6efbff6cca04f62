export interface Version {
  major: number;
  minor: number;
}

export function parseVersion(_text: string): Version {
  throw new Error('parseVersion: not implemented yet');
}
export function formatVersion(_v: Version): string {
  throw new Error('formatVersion: not implemented yet');
}
export function compareVersions(_a: Version, _b: Version): number {
  throw new Error('compareVersions: not implemented yet');
}
/** First documentation → 1.0; all non-breaking → next minor; any breaking → next major. */
export function nextVersion(_current: Version | null, _changes: ReadonlyArray<{ breaking: boolean }>): Version {
  throw new Error('nextVersion: not implemented yet');
}
