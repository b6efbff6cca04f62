import type { WireHistogram } from '../runtime/histogram';

/** What one side of the runtime gate counted for an endpoint at one version. */
export interface RuntimeCounts {
  requests: number;
  /** Answered 5xx by the upstream, or 502/503/504 by the agent for it. */
  serverErrors: number;
  /** Time to first byte and to last byte, milliseconds, as histogram counts. */
  ttfb: WireHistogram;
  ttlb: WireHistogram;
}

/**
 * `GET /projects/{p}/ci/{pr}/runtime`: for each documented endpoint the pull request's CI runs
 * called at its newest commit, the runtime counts there and production's at the same version
 * (null when production has none), for `spectator-agent check --fail-on latency-regression,error-rate`.
 */
export interface CiRuntimeResponse {
  pullRequest: string;
  /** The commit whose runs were counted (the newest capture's). */
  commit: string | null;
  /** The pull request's counts start here (the minute its newest commit's first capture started). */
  since: string;
  /** Production's counts start here (a week back). */
  productionSince: string;
  endpoints: Array<{
    endpointId: string;
    method: string;
    path: string;
    version: string;
    pullRequest: RuntimeCounts;
    production: RuntimeCounts | null;
  }>;
}
