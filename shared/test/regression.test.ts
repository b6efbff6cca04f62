/**
 * The CI gate's runtime tests (shared/src/runtime/regression.ts): the binomial tails against exact
 * sums and known values, the bounds against their definitions, and the two tests' verdicts and
 * false-failure rate on simulated traffic.
 */
import fc from 'fast-check';
import {
  binomialAtLeast,
  binomialAtMost,
  DEFAULT_REGRESSION_THRESHOLDS,
  errorRateTest,
  histogramBucketUpper,
  LatencyHistogram,
  latencyTest,
  quantileBoundMargin,
  rateUpperBound,
  regressionTests,
} from '../src';

/** P(X = k) by direct products, for small n. */
function exactPmf(k: number, n: number, p: number): number {
  let c = 1;
  for (let i = 0; i < k; i++) c = (c * (n - i)) / (i + 1);
  return c * p ** k * (1 - p) ** (n - k);
}

/** A seeded generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A histogram of `n` log-normal durations around `medianMs` (spread `sigma`), plus `addMs` to each. */
function latencies(rand: () => number, n: number, medianMs: number, sigma = 0.3, addMs = 0): LatencyHistogram {
  const histogram = new LatencyHistogram();
  for (let i = 0; i < n; i++) {
    const normal = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
    histogram.record(medianMs * Math.exp(sigma * normal) + addMs);
  }
  return histogram;
}

describe('binomial tails', () => {
  it('match exact sums for small n, in both tails', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0.001, max: 0.999, noNaN: true }), (n, p) => {
        for (let k = 0; k <= n; k++) {
          let upper = 0;
          for (let j = k; j <= n; j++) upper += exactPmf(j, n, p);
          let lower = 0;
          for (let j = 0; j <= k; j++) lower += exactPmf(j, n, p);
          expect(Math.abs(binomialAtLeast(k, n, p) - upper)).toBeLessThan(1e-9 + upper * 1e-9);
          expect(Math.abs(binomialAtMost(k, n, p) - lower)).toBeLessThan(1e-9 + lower * 1e-9);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('give the textbook values, and small tails of large n without cancelling to zero', () => {
    // R: 1 - pbinom(3, 20, 0.05) = 0.01590153; pbinom(0, 100, 0.05) = 0.005920529.
    expect(binomialAtLeast(4, 20, 0.05)).toBeCloseTo(0.01590153, 7);
    expect(binomialAtMost(0, 100, 0.05)).toBeCloseTo(0.005920529, 8);
    // All 100 of 100 above a 5 % boundary: 0.05^100 = 7.9e-131.
    expect(binomialAtLeast(100, 100, 0.05) / 0.05 ** 100).toBeCloseTo(1, 9);
    // Far tail of a million, 9.2 standard deviations out (the normal tail there is 2e-20; the
    // binomial's is a little heavier): tiny but not zero, and its complement near one.
    const tail = binomialAtLeast(52_000, 1_000_000, 0.05);
    expect(tail).toBeGreaterThan(1e-21);
    expect(tail).toBeLessThan(1e-18);
    expect(binomialAtMost(51_999, 1_000_000, 0.05)).toBeCloseTo(1, 12);
  });
});

describe('bounds', () => {
  it('rateUpperBound is the Clopper–Pearson bound: 1 − α^(1/n) for zero of n', () => {
    expect(rateUpperBound(0, 300, 0.01)).toBeCloseTo(1 - 0.01 ** (1 / 300), 9);
    const bound = rateUpperBound(7, 200, 0.005);
    expect(binomialAtMost(7, 200, bound)).toBeCloseTo(0.005, 9);
    expect(rateUpperBound(5, 5, 0.01)).toBe(1);
  });

  it('quantileBoundMargin is the largest m with P(Binomial(n, 1 − q) ≤ m) ≤ α, null for too few samples', () => {
    expect(quantileBoundMargin(50, 0.95, 0.005)).toBeNull(); // 0.95^50 = 0.077
    for (const n of [104, 400, 10_000]) {
      const m = quantileBoundMargin(n, 0.95, 0.005) as number;
      expect(binomialAtMost(m, n, 0.05)).toBeLessThanOrEqual(0.005);
      expect(binomialAtMost(m + 1, n, 0.05)).toBeGreaterThan(0.005);
    }
  });
});

describe('latencyTest', () => {
  const thresholds = DEFAULT_REGRESSION_THRESHOLDS;

  it('fails 50 ms more on a 20 ms endpoint, and passes the same latency', () => {
    const rand = random(18);
    const production = latencies(rand, 2_000, 20);
    const slower = latencyTest(latencies(rand, 60, 20, 0.3, 50), production, thresholds, 0.01);
    expect(slower).toMatchObject({ notJudged: null, regressed: true, above: 60, requests: 60 });
    expect(slower.pValue).toBeLessThan(1e-50);
    expect(slower.boundary).toBeGreaterThan(slower.productionBound * 1.35);
    const same = latencyTest(latencies(rand, 60, 20), production, thresholds, 0.01);
    expect(same).toMatchObject({ notJudged: null, regressed: false });
  });

  it('rounds to bucket edges: the boundary is a bucket edge at least +35 % and 5 ms above production’s bound', () => {
    const rand = random(7);
    const result = latencyTest(latencies(rand, 100, 30), latencies(rand, 1_000, 30), thresholds, 0.01);
    const edge = Math.log2(result.boundary) * 4;
    expect(Math.abs(edge - Math.round(edge))).toBeLessThan(1e-9);
    expect(result.boundary).toBe(histogramBucketUpper(Math.round(edge)));
    expect(result.boundary).toBeGreaterThanOrEqual(result.productionBound * 1.35);
    // The production bound lies above production's own p95 estimate.
    expect(result.productionBound).toBeGreaterThanOrEqual(result.productionP95 as number);
  });

  it('does not judge too few requests on either side', () => {
    const rand = random(3);
    expect(latencyTest(latencies(rand, 29, 20), latencies(rand, 1_000, 20), thresholds, 0.01).notJudged).toBe(
      '29 timed request(s) in this pull request, at least 30 needed',
    );
    expect(latencyTest(latencies(rand, 100, 20), latencies(rand, 80, 20), thresholds, 0.01)).toMatchObject({
      notJudged: '80 timed request(s) in production are too few to bound its p95',
      regressed: false,
    });
  });

  it('fails a pull request that changed nothing in at most α of trials', () => {
    // 400 trials at α = 0.05: a sound test fails about 0–20 of them (expected ≤ 20, and the bound
    // rounding makes it far fewer); an unsound one, such as comparing point estimates, about half.
    const rand = random(20261128);
    let failed = 0;
    for (let trial = 0; trial < 400; trial++) {
      const production = latencies(rand, 300, 20, 0.5);
      const pullRequest = latencies(rand, 40, 20, 0.5);
      if (
        latencyTest(pullRequest, production, { ...thresholds, latencyIncrease: 0, latencyFloorMs: 0 }, 0.05).regressed
      )
        failed++;
    }
    expect(failed).toBeLessThanOrEqual(20);
  });
});

describe('errorRateTest', () => {
  const thresholds = DEFAULT_REGRESSION_THRESHOLDS;

  it('fails 20 % errors against production’s none, and passes 1 of 100', () => {
    const production = { requests: 300, serverErrors: 0 };
    const worse = errorRateTest({ requests: 100, serverErrors: 20 }, production, thresholds, 0.01);
    expect(worse).toMatchObject({ notJudged: null, regressed: true, pullRequestRate: 0.2, productionRate: 0 });
    expect(worse.allowedRate).toBeCloseTo(1 - 0.005 ** (1 / 300) + 0.01, 6);
    expect(errorRateTest({ requests: 100, serverErrors: 1 }, production, thresholds, 0.01).regressed).toBe(false);
    expect(errorRateTest({ requests: 10, serverErrors: 10 }, production, thresholds, 0.01).notJudged).toBe(
      '10 request(s) in this pull request, at least 30 needed',
    );
  });

  it('fails a pull request with production’s own error rate in at most α of trials', () => {
    const rand = random(42);
    const draw = (n: number, p: number) => {
      let errors = 0;
      for (let i = 0; i < n; i++) if (rand() < p) errors++;
      return { requests: n, serverErrors: errors };
    };
    let failed = 0;
    for (let trial = 0; trial < 400; trial++)
      if (errorRateTest(draw(50, 0.05), draw(500, 0.05), { ...thresholds, errorRateIncrease: 0 }, 0.05).regressed)
        failed++;
    expect(failed).toBeLessThanOrEqual(20);
  });
});

describe('regressionTests', () => {
  it('shares the significance among the tests it can make', () => {
    const rand = random(5);
    const side = (n: number) => ({ requests: n, serverErrors: 0, latency: latencies(rand, n, 10) });
    const results = regressionTests(
      [
        { pullRequest: side(50), production: side(500) },
        { pullRequest: side(50), production: side(500) },
        { pullRequest: side(5), production: side(500) }, // too few: no test
        { pullRequest: side(50), production: null }, // version not in production
      ],
      DEFAULT_REGRESSION_THRESHOLDS,
    );
    // Four tests made (two endpoints × latency and error rate): 0.01 / 4 each.
    expect(results[0]?.latency?.alpha).toBeCloseTo(0.0025, 12);
    expect(results[1]?.errorRate?.alpha).toBeCloseTo(0.0025, 12);
    expect(results[2]?.latency?.notJudged).toContain('at least 30 needed');
    expect(results[3]).toEqual({ latency: null, errorRate: null });
  });
});
