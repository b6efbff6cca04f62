import type { EnvironmentKind } from '../protocol/messages';
import type { ChangeResponse } from './types';

/** One side of a comparison: an environment, and for `ci` optionally one pull request (else the newest evidence of any). */
export interface CompareSide {
  environment: Exclude<EnvironmentKind, 'local'>;
  pullRequest: string | null;
}

/** The version of an endpoint on one side of a comparison, from the newest evidence there. */
export interface CompareVersion {
  /** `"1.1"`, or `"N/A"` when never seen there. */
  version: string;
  /** True when the traffic there conforms to no version and `version` is the nearest one. */
  drift: boolean;
  build: string | null;
  pullRequest: string | null;
  commit: string | null;
}

/**
 * How an endpoint differs between the two sides: `same` version; `changed` (another version, with
 * the changes from the `from` version to the `to` version); `only in to` (not seen on the `from`
 * side); `only in from` (not seen on the `to` side: absent from its traffic, which is not proof that
 * it was removed).
 */
export type CompareStatus = 'same' | 'changed' | 'only in to' | 'only in from';

export interface CompareEndpoint {
  endpointId: string;
  method: string;
  path: string;
  from: CompareVersion;
  to: CompareVersion;
  status: CompareStatus;
  /** Whether a client of the `from` side could break on the `to` side (some change is breaking). */
  breaking: boolean;
  changes: ChangeResponse[];
}

/**
 * `GET /projects/{p}/compare?from=production&to=staging`: what clients would see change if the
 * `to` side replaced the `from` side, per documented endpoint seen on either side.
 */
export interface CompareResponse {
  from: CompareSide;
  to: CompareSide;
  /** Some endpoint changes in a breaking way. */
  breaking: boolean;
  endpoints: CompareEndpoint[];
}
