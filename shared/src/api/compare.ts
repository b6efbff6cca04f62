import type { EnvironmentKind } from '../protocol/messages';
import type { BlastRadiusResponse } from './consumers';
import type { DiffOrigins } from './drift';
import type { ChangeResponse, DiffResponse, UndocumentedEndpointResponse } from './types';

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

/** `GET /projects/{p}/ci/{pr}`: a pull request's evidence for a CI gate. */
export interface CiSummaryResponse {
  pullRequest: string;
  /** The commit whose captures were summarised (the newest capture's). */
  commit: string | null;
  captures: string[];
  undocumented: UndocumentedEndpointResponse[];
  /**
   * One per endpoint, the most severe of its captures' diffs, each with where its traffic was
   * first seen across CI, staging and production (`origins`, `since`; absent from backends before it).
   */
  diffs: Array<DiffResponse & Partial<DiffOrigins>>;
  breaking: boolean;
  /**
   * The versions this pull request's CI runs have shown against the versions production runs
   * (`GET /compare?from=production&to=ci&toPullRequest=`), only the endpoints its CI runs show at
   * another version or production never showed (an endpoint CI did not call is no change): what
   * merging it would change for production's clients.
   */
  againstProduction: CompareResponse;
  /**
   * Who the breaking changes above break: production's consumers that called a broken part in the
   * last `days` days (`?days=`, default 30). Absent from backends before it.
   */
  consumers?: BlastRadiusResponse;
}
