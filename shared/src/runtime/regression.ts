/**
 * The CI gate's runtime tests (issue 18, docs/ci.md "Runtime against production"): is a pull
 * request's p95 latency, or its error rate, worse than production's for the same endpoint and
 * version, beyond a threshold, by more than chance explains? Both tests read only the counts that
 * Spectator keeps (histogram buckets, requests, server errors) and are one-sided and conservative:
 *
 * - **Latency**: production's p95 is bounded from above by an order statistic of its histogram
 *   (distribution-free: the true p95 lies below the `N − m`-th smallest of `N` samples unless at
 *   most `m` fell above it, a Binomial(N, 0.05) event), rounded up to its bucket's upper edge. The
 *   threshold, that bound raised by the allowed increase (and floor) and rounded up to the next
 *   bucket edge `T`, is what the pull request's p95 may reach. If its p95 is at most `T`, at most
 *   5 % of its requests take longer than `T`; the count above `T` is then at most Binomial(n, 0.05),
 *   and the p-value is that binomial's upper tail at the count seen. Rounding to bucket edges
 *   makes the histogram's bucket error (at most 8.6 %) count for production and never against it.
 * - **Error rate**: production's rate is bounded from above (one-sided Clopper–Pearson), the
 *   allowed increase added, and the pull request's server errors tested against that rate with an
 *   exact binomial test (upper tail). Exact rather than a two-proportion z-test: CI samples are
 *   small and production's errors are often zero, where the normal approximation fails.
 *
 * The gate's significance is shared out (Bonferroni) among the tests it makes, and each test's
 * share again between its two halves (production's bound and the pull request's tail): a pull
 * request that changed nothing fails with probability at most the significance, however many
 * endpoints it calls.
 */
import {
  HISTOGRAM_BUCKETS,
  HISTOGRAM_BUCKETS_PER_DOUBLING,
  HISTOGRAM_MAX_INDEX,
  HISTOGRAM_MIN_INDEX,
  type LatencyHistogram,
} from './histogram';

/** What the gate allows and how sure it must be (`spectator-agent check` options). */
export interface RegressionThresholds {
  /** Allowed relative increase of p95 latency: 0.35 = +35 %. */
  latencyIncrease: number;
  /** Allowed absolute increase of p95 latency, ms: the larger of the two allowances applies. */
  latencyFloorMs: number;
  /** Allowed absolute increase of the error rate: 0.01 = one percentage point. */
  errorRateIncrease: number;
  /** Requests each side needs (pull request and production) to be judged. */
  minRequests: number;
  /** Probability at most that the gate fails a pull request that changed nothing. */
  significance: number;
}

export const DEFAULT_REGRESSION_THRESHOLDS: RegressionThresholds = {
  latencyIncrease: 0.35,
  latencyFloorMs: 5,
  errorRateIncrease: 0.01,
  minRequests: 30,
  significance: 0.01,
};

/** `P(X ≥ k)` for X ~ Binomial(n, p), accurate in either tail. */
export function binomialAtLeast(k: number, n: number, p: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  return k > n * p ? sumUp(k, n, p) : Math.max(0, 1 - sumDown(k - 1, n, p));
}

/** `P(X ≤ x)` for X ~ Binomial(n, p), accurate in either tail. */
export function binomialAtMost(x: number, n: number, p: number): number {
  if (x < 0) return 0;
  if (x >= n) return 1;
  if (p <= 0) return 1;
  if (p >= 1) return 0;
  return x < n * p ? sumDown(x, n, p) : Math.max(0, 1 - sumUp(x + 1, n, p));
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 significant digits). */
function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const z = x - 1;
  let sum = c[0] as number;
  for (let i = 1; i < 9; i++) sum += (c[i] as number) / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** ln P(X = k). */
function logPmf(k: number, n: number, p: number): number {
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1) + k * Math.log(p) + (n - k) * Math.log1p(-p);
}

/** Σ P(X = j) for j ≥ k, k above the mean: terms fall from the first, summed until they no longer count. */
function sumUp(k: number, n: number, p: number): number {
  let term = Math.exp(logPmf(k, n, p));
  let sum = 0;
  const ratio = p / (1 - p);
  for (let j = k; j <= n && term > 0; j++) {
    sum += term;
    if (term < sum * 1e-17) break;
    term *= ((n - j) / (j + 1)) * ratio;
  }
  return Math.min(1, sum);
}

/** Σ P(X = j) for j ≤ x, x below the mean: terms fall from the first, summed until they no longer count. */
function sumDown(x: number, n: number, p: number): number {
  let term = Math.exp(logPmf(x, n, p));
  let sum = 0;
  const ratio = (1 - p) / p;
  for (let j = x; j >= 0 && term > 0; j--) {
    sum += term;
    if (term < sum * 1e-17) break;
    term *= (j / (n - j + 1)) * ratio;
  }
  return Math.min(1, sum);
}

/**
 * The one-sided Clopper–Pearson upper bound of a rate seen as `x` of `n`: the `p` at which seeing
 * at most `x` has probability `alpha` (1 when x = n).
 */
export function rateUpperBound(x: number, n: number, alpha: number): number {
  if (x >= n) return 1;
  let low = x / n;
  let high = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (binomialAtMost(x, n, mid) > alpha) low = mid;
    else high = mid;
  }
  return high;
}

/**
 * How many of `n` samples may lie above a distribution's `q` quantile while the `(n − m)`-th
 * smallest still bounds it from above with confidence 1 − alpha: the largest `m` with
 * P(Binomial(n, 1 − q) ≤ m) ≤ alpha, or null when even m = 0 is too likely (too few samples).
 */
export function quantileBoundMargin(n: number, q: number, alpha: number): number | null {
  if (binomialAtMost(0, n, 1 - q) > alpha) return null;
  let low = 0; // holds
  let high = n; // does not (P(X ≤ n) = 1)
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (binomialAtMost(mid, n, 1 - q) <= alpha) low = mid;
    else high = mid;
  }
  return low;
}

/** The upper edge of a bucket, ms (`Infinity` for the highest, which holds every longer duration). */
export function histogramBucketUpper(index: number): number {
  return index >= HISTOGRAM_MAX_INDEX ? Infinity : 2 ** (index / HISTOGRAM_BUCKETS_PER_DOUBLING);
}

/** The bucket holding the sample of 1-based rank `rank` in ascending order. */
function bucketOfRank(histogram: LatencyHistogram, rank: number): number {
  let seen = 0;
  for (let i = 0; i < HISTOGRAM_BUCKETS; i++) {
    seen += histogram.counts[i] as number;
    if (seen >= rank) return i + HISTOGRAM_MIN_INDEX;
  }
  return HISTOGRAM_MAX_INDEX;
}

/** Samples in buckets above `index`: every duration longer than that bucket's upper edge. */
function countAbove(histogram: LatencyHistogram, index: number): number {
  let above = 0;
  for (let i = index + 1 - HISTOGRAM_MIN_INDEX; i < HISTOGRAM_BUCKETS; i++) above += histogram.counts[i] as number;
  return above;
}

/** Requests and server errors of one side. */
export interface ErrorCounts {
  requests: number;
  serverErrors: number;
}

/** Why one side was not judged, or null when it was. */
export type NotJudged = string | null;

export interface LatencyTest {
  /** Both p95 estimates (ms, within the histogram's error), null without samples. */
  pullRequestP95: number | null;
  productionP95: number | null;
  /** Why no test was made (too few samples), else null and the figures below. */
  notJudged: NotJudged;
  /** Production's p95 bound (ms): a bucket edge above its p95 with the test's confidence. */
  productionBound: number;
  /** The test's boundary `T` (ms): the allowed p95, rounded up to a bucket edge. */
  boundary: number;
  /** Pull request samples above `T`, of `requests`. */
  above: number;
  requests: number;
  pValue: number;
  /** The significance this test was given (the gate's share). */
  alpha: number;
  regressed: boolean;
}

export interface ErrorRateTest {
  pullRequestRate: number;
  productionRate: number;
  notJudged: NotJudged;
  /** Production's rate bound plus the allowed increase: the rate the pull request may have. */
  allowedRate: number;
  pValue: number;
  alpha: number;
  regressed: boolean;
}

const P95 = 0.95;

/** The sample count a side needs to be judged for latency: `minRequests`, and enough to bound production's p95. */
function latencyEligible(
  pullRequest: LatencyHistogram,
  production: LatencyHistogram,
  thresholds: RegressionThresholds,
  alpha: number,
): NotJudged {
  if (pullRequest.total < thresholds.minRequests)
    return `${pullRequest.total} timed request(s) in this pull request, at least ${thresholds.minRequests} needed`;
  if (production.total < thresholds.minRequests)
    return `${production.total} timed request(s) in production, at least ${thresholds.minRequests} needed`;
  if (quantileBoundMargin(production.total, P95, alpha / 2) === null)
    return `${production.total} timed request(s) in production are too few to bound its p95`;
  return null;
}

function errorEligible(pullRequest: ErrorCounts, production: ErrorCounts, thresholds: RegressionThresholds): NotJudged {
  if (pullRequest.requests < thresholds.minRequests)
    return `${pullRequest.requests} request(s) in this pull request, at least ${thresholds.minRequests} needed`;
  if (production.requests < thresholds.minRequests)
    return `${production.requests} request(s) in production, at least ${thresholds.minRequests} needed`;
  return null;
}

/** The latency test of one endpoint at significance `alpha` (see the file comment). */
export function latencyTest(
  pullRequest: LatencyHistogram,
  production: LatencyHistogram,
  thresholds: RegressionThresholds,
  alpha: number,
): LatencyTest {
  const base = {
    pullRequestP95: pullRequest.quantile(P95),
    productionP95: production.quantile(P95),
    requests: pullRequest.total,
    alpha,
  };
  const notJudged = latencyEligible(pullRequest, production, thresholds, alpha);
  const margin = quantileBoundMargin(production.total, P95, alpha / 2);
  if (notJudged !== null || margin === null)
    return { ...base, notJudged, productionBound: NaN, boundary: NaN, above: 0, pValue: 1, regressed: false };
  const boundBucket = bucketOfRank(production, production.total - margin);
  const productionBound = histogramBucketUpper(boundBucket);
  const allowed = Math.max(
    productionBound * (1 + thresholds.latencyIncrease),
    productionBound + thresholds.latencyFloorMs,
  );
  // The first bucket edge at or above the allowed p95 (a hair of tolerance for 2^(i/4) rounding).
  const edge = Math.min(
    HISTOGRAM_MAX_INDEX,
    Math.max(boundBucket, Math.ceil(Math.log2(allowed) * HISTOGRAM_BUCKETS_PER_DOUBLING - 1e-9)),
  );
  const boundary = histogramBucketUpper(edge);
  const above = countAbove(pullRequest, edge);
  const pValue = binomialAtLeast(above, pullRequest.total, 1 - P95);
  return { ...base, notJudged: null, productionBound, boundary, above, pValue, regressed: pValue <= alpha / 2 };
}

/** The error rate test of one endpoint at significance `alpha` (see the file comment). */
export function errorRateTest(
  pullRequest: ErrorCounts,
  production: ErrorCounts,
  thresholds: RegressionThresholds,
  alpha: number,
): ErrorRateTest {
  const rate = (side: ErrorCounts): number => (side.requests === 0 ? 0 : side.serverErrors / side.requests);
  const base = { pullRequestRate: rate(pullRequest), productionRate: rate(production), alpha };
  const notJudged = errorEligible(pullRequest, production, thresholds);
  if (notJudged !== null) return { ...base, notJudged, allowedRate: NaN, pValue: 1, regressed: false };
  const allowedRate = Math.min(
    1,
    rateUpperBound(production.serverErrors, production.requests, alpha / 2) + thresholds.errorRateIncrease,
  );
  const pValue = binomialAtLeast(pullRequest.serverErrors, pullRequest.requests, allowedRate);
  return { ...base, notJudged: null, allowedRate, pValue, regressed: pValue <= alpha / 2 };
}

/** One endpoint's two sides, as the gate compares them. */
export interface RuntimeSides {
  pullRequest: ErrorCounts & { latency: LatencyHistogram };
  production: (ErrorCounts & { latency: LatencyHistogram }) | null;
}

/**
 * Both tests for every endpoint, the significance shared out among the tests that can be made
 * (each side with enough samples; known before any outcome, so the share holds).
 */
export function regressionTests(
  endpoints: readonly RuntimeSides[],
  thresholds: RegressionThresholds,
): Array<{ latency: LatencyTest | null; errorRate: ErrorRateTest | null }> {
  // First pass at the full significance only to count the tests that can be made.
  let tests = 0;
  for (const { pullRequest, production } of endpoints) {
    if (production === null) continue;
    if (errorEligible(pullRequest, production, thresholds) === null) tests++;
    if (latencyEligible(pullRequest.latency, production.latency, thresholds, thresholds.significance) === null) tests++;
  }
  const alpha = thresholds.significance / Math.max(1, tests);
  return endpoints.map(({ pullRequest, production }) =>
    production === null
      ? { latency: null, errorRate: null }
      : {
          latency: latencyTest(pullRequest.latency, production.latency, thresholds, alpha),
          errorRate: errorRateTest(pullRequest, production, thresholds, alpha),
        },
  );
}
