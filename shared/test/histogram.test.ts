import fc from 'fast-check';
import {
  HISTOGRAM_BUCKETS,
  HISTOGRAM_MAX_INDEX,
  HISTOGRAM_MIN_INDEX,
  HISTOGRAM_RELATIVE_ERROR,
  LatencyHistogram,
  histogramBucket,
  histogramBucketValue,
  histogramTotal,
} from '@spectator/shared';

/** Durations in ms between the end buckets (1 µs to a day), spread over every order of magnitude. */
const duration = fc
  .double({ min: -2.9, max: 7.9, noNaN: true })
  .map((exponent) => 10 ** exponent)
  .filter((ms) => ms > 2 ** -10 && ms <= 2 ** 26);
const durations = fc.array(duration, { minLength: 1, maxLength: 400 });

function histogramOf(samples: readonly number[]): LatencyHistogram {
  const histogram = new LatencyHistogram();
  for (const ms of samples) histogram.record(ms);
  return histogram;
}

describe('latency histogram', () => {
  it('has about 10 % relative error', () => {
    expect(HISTOGRAM_RELATIVE_ERROR).toBeGreaterThan(0.08);
    expect(HISTOGRAM_RELATIVE_ERROR).toBeLessThan(0.1);
    expect(HISTOGRAM_BUCKETS).toBe(HISTOGRAM_MAX_INDEX - HISTOGRAM_MIN_INDEX + 1);
  });

  it('puts a duration in the bucket whose value is within the relative error of it', () => {
    fc.assert(
      fc.property(duration, (ms) => {
        const value = histogramBucketValue(histogramBucket(ms));
        expect(Math.abs(value - ms) / ms).toBeLessThanOrEqual(HISTOGRAM_RELATIVE_ERROR + 1e-9);
      }),
    );
  });

  it('clamps durations outside its range, NaN and negatives into the end buckets', () => {
    expect(histogramBucket(0)).toBe(HISTOGRAM_MIN_INDEX);
    expect(histogramBucket(-5)).toBe(HISTOGRAM_MIN_INDEX);
    expect(histogramBucket(Number.NaN)).toBe(HISTOGRAM_MIN_INDEX);
    expect(histogramBucket(1e-9)).toBe(HISTOGRAM_MIN_INDEX);
    expect(histogramBucket(1e12)).toBe(HISTOGRAM_MAX_INDEX);
    expect(histogramBucket(Number.POSITIVE_INFINITY)).toBe(HISTOGRAM_MAX_INDEX);
    // Four buckets per doubling: (8, 9.51] ms is bucket 13, (4, 4.76] ms bucket 9.
    expect(histogramBucket(9)).toBe(13);
    expect(histogramBucket(4.5)).toBe(9);
  });

  it('merges by adding counts: two merged histograms are the histogram of all their samples', () => {
    fc.assert(
      fc.property(durations, durations, (a, b) => {
        const merged = histogramOf(a).add(histogramOf(b));
        const whole = histogramOf([...a, ...b]);
        expect([...merged.counts]).toEqual([...whole.counts]);
        expect(merged.total).toBe(a.length + b.length);
        // The wire form merges the same way.
        const viaWire = new LatencyHistogram().addWire(histogramOf(a).toWire()).addWire(histogramOf(b).toWire());
        expect(viaWire.toWire()).toEqual(whole.toWire());
      }),
    );
  });

  it('reads p50, p95 and p99 within the relative error of the samples at those ranks', () => {
    fc.assert(
      fc.property(durations, (samples) => {
        const histogram = histogramOf(samples);
        const sorted = [...samples].sort((x, y) => x - y);
        for (const q of [0, 0.5, 0.95, 0.99, 1]) {
          const exact = sorted[Math.floor(q * (sorted.length - 1))] as number;
          const estimate = histogram.quantile(q) as number;
          expect(Math.abs(estimate - exact) / exact).toBeLessThanOrEqual(0.1);
        }
      }),
    );
  });

  it('has no quantile when empty', () => {
    expect(new LatencyHistogram().quantile(0.5)).toBeNull();
    expect(new LatencyHistogram().quantiles([0.5, 0.95])).toBeNull();
    expect(new LatencyHistogram().quantileBucket(0.95)).toBeNull();
  });

  it('names the bucket of the sample a quantile reads', () => {
    fc.assert(
      fc.property(durations, fc.double({ min: 0, max: 1, noNaN: true }), (samples, q) => {
        const histogram = histogramOf(samples);
        const sorted = [...samples].sort((x, y) => x - y);
        // + 0: a duration under 1 ms is in bucket -0, the index 0.
        const bucket = histogramBucket(sorted[Math.floor(q * (sorted.length - 1))] as number) + 0;
        expect(histogram.quantileBucket(q)).toBe(bucket);
        expect(histogram.quantile(q)).toBe(histogramBucketValue(bucket));
      }),
    );
  });

  it('reads several quantiles in one pass as it reads each, and reads the same once cleared and filled again', () => {
    fc.assert(
      fc.property(durations, durations, (first, second) => {
        const histogram = histogramOf(first);
        const qs = [0, 0.5, 0.95, 0.99, 1];
        // The value of the bucket of the sample at each rank.
        const sorted = [...first].sort((x, y) => x - y);
        expect(histogram.quantiles(qs)).toEqual(
          qs.map((q) => histogramBucketValue(histogramBucket(sorted[Math.floor(q * (sorted.length - 1))] as number))),
        );
        histogram.clear();
        expect(histogram.total).toBe(0);
        for (const ms of second) histogram.record(ms);
        expect(histogram.quantiles(qs)).toEqual(histogramOf(second).quantiles(qs));
      }),
    );
  });

  it('round-trips its sparse wire form, which holds only the buckets with a count', () => {
    fc.assert(
      fc.property(durations, (samples) => {
        const histogram = histogramOf(samples);
        const wire = histogram.toWire();
        expect(Object.keys(wire).length).toBeLessThanOrEqual(Math.min(samples.length, HISTOGRAM_BUCKETS));
        expect(Object.values(wire).every((count) => count > 0)).toBe(true);
        expect(histogramTotal(JSON.parse(JSON.stringify(wire)), 1e9)).toBe(samples.length);
        expect([...LatencyHistogram.fromWire(wire).counts]).toEqual([...histogram.counts]);
      }),
    );
  });

  it('takes as bucket keys exactly the canonical integers in range', () => {
    // The rule as first written (a pattern, then the number written back), against the character reader.
    const canonical = (key: string): boolean =>
      /^-?\d{1,3}$/.test(key) &&
      String(Number(key)) === key &&
      Number(key) >= HISTOGRAM_MIN_INDEX &&
      Number(key) <= HISTOGRAM_MAX_INDEX;
    const keys = fc.oneof(
      fc.integer({ min: -1200, max: 1200 }).map(String),
      fc.string({ maxLength: 5 }),
      fc.stringMatching(/^-?0*\d{0,4}$/),
    );
    fc.assert(
      fc.property(keys, (key) => {
        expect(typeof histogramTotal({ [key]: 1 }, 1) === 'number').toBe(canonical(key));
      }),
      { numRuns: 2000 },
    );
  });

  it('names what is wrong with a histogram in wire form', () => {
    expect(histogramTotal([1, 2], 10)).toBe('must be an object of bucket → count');
    expect(histogramTotal(null, 10)).toBe('must be an object of bucket → count');
    expect(histogramTotal({ '200': 1 }, 10)).toBe('["200"] must be a bucket index -40–108');
    expect(histogramTotal({ '-41': 1 }, 10)).toBe('["-41"] must be a bucket index -40–108');
    expect(histogramTotal({ '1.5': 1 }, 10)).toBe('["1.5"] must be a bucket index -40–108');
    expect(histogramTotal({ '07': 1 }, 10)).toBe('["07"] must be a bucket index -40–108');
    expect(histogramTotal({ '-0': 1 }, 10)).toBe('["-0"] must be a bucket index -40–108');
    expect(histogramTotal(JSON.parse('{"__proto__": 1}'), 10)).toBe('["__proto__"] must be a bucket index -40–108');
    expect(histogramTotal({ '3': -1 }, 10)).toBe('["3"] must be an integer count 0-10');
    expect(histogramTotal({ '3': 1.5 }, 10)).toBe('["3"] must be an integer count 0-10');
    expect(histogramTotal({ '3': '2' }, 10)).toBe('["3"] must be an integer count 0-10');
    expect(histogramTotal({ '3': 11 }, 10)).toBe('["3"] must be an integer count 0-10');
    expect(histogramTotal({ '-40': 0, '108': 10 }, 10)).toBe(10);
    expect(histogramTotal({ '0': 1, '-1': 2, '99': 3, '-40': 4 }, 10)).toBe(10);
    expect(histogramTotal({ '-': 1 }, 10)).toBe('["-"] must be a bucket index -40–108');
    expect(histogramTotal({ '1000': 1 }, 10)).toBe('["1000"] must be a bucket index -40–108');
    expect(histogramTotal({ '': 1 }, 10)).toBe('[""] must be a bucket index -40–108');
    expect(histogramTotal({ '+1': 1 }, 10)).toBe('["+1"] must be a bucket index -40–108');
    expect(histogramTotal({ ' 1': 1 }, 10)).toBe('[" 1"] must be a bucket index -40–108');
  });
});
