import type { WireHistogram } from '../runtime/histogram';

/** How many days of production's counts the runtime gate compares with by default (`--production-days`). */
export const DEFAULT_PRODUCTION_DAYS = 7;
/** The most days of production the runtime gate may look back over (the day rows' default retention). */
export const MAX_PRODUCTION_DAYS = 400;

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
  /**
   * The pull request's counts start here: the minute its newest commit's first capture started, or
   * the minute after an older commit's runs last saw traffic when they reached into that minute
   * (counts are kept per minute, not per commit).
   */
  since: string;
  /** Production's counts start here (`?productionDays=`, a week back by default). */
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
