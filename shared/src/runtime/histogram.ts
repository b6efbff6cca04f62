/**
 * Latency histograms with fixed log-scale buckets, the same in the agent, the backend and the
 * dashboard: two histograms merge by adding their counts (exactly, in any order, at any level of a
 * rollup), and a quantile read from one is within `HISTOGRAM_RELATIVE_ERROR` of the true value.
 *
 * Bucket `i` holds the durations in (γ^(i-1), γ^i] milliseconds, γ = 2^(1/4): four buckets per
 * doubling, the layout of DDSketch's logarithmic mapping (Masson et al., VLDB 2019) with a γ whose
 * powers are easy to read. A bucket's value is `2γ^i / (γ + 1)`, at most (γ-1)/(γ+1) ≈ 8.6 % from any
 * duration in it. Durations at or below 2^-10 ms (≈ 1 µs) share the lowest bucket and durations past
 * 2^27 ms (≈ 37 hours) the highest: 149 buckets in all.
 *
 * Written here rather than taken from a library: DDSketch's JS package needs protobufjs at run time
 * without declaring it and keeps dense stores that grow per sketch; HdrHistogram-js brings pako,
 * base64-js and a WebAssembly loader, and encodes to compressed base64 that the backend could not
 * validate bucket by bucket nor merge in SQL. What is needed is a bucket index, an array of counts
 * and a sparse encoding.
 */

/** Buckets per doubling of the duration. */
export const HISTOGRAM_BUCKETS_PER_DOUBLING = 4;
/** The lowest bucket: it holds every duration at or below 2^-10 ms. */
export const HISTOGRAM_MIN_INDEX = -40;
/** The highest bucket: it holds every duration above 2^26.75 ms. */
export const HISTOGRAM_MAX_INDEX = 108;
/** Buckets in all. */
export const HISTOGRAM_BUCKETS = HISTOGRAM_MAX_INDEX - HISTOGRAM_MIN_INDEX + 1;
const GAMMA = 2 ** (1 / HISTOGRAM_BUCKETS_PER_DOUBLING);
/** The largest relative error of a quantile read from a histogram (for durations between the end buckets). */
export const HISTOGRAM_RELATIVE_ERROR = (GAMMA - 1) / (GAMMA + 1);
const LOWEST = 2 ** (HISTOGRAM_MIN_INDEX / HISTOGRAM_BUCKETS_PER_DOUBLING);
const HIGHEST = 2 ** ((HISTOGRAM_MAX_INDEX - 1) / HISTOGRAM_BUCKETS_PER_DOUBLING);

/**
 * A histogram on the wire and in storage: bucket index (decimal text) → count, only buckets with a
 * count, e.g. `{"13": 40, "14": 2}` (40 durations in (8, 9.5] ms, 2 in (9.5, 11.3] ms).
 */
export type WireHistogram = Record<string, number>;

/** The bucket of a duration in milliseconds (NaN and negative durations fall in the lowest). */
export function histogramBucket(ms: number): number {
  if (!(ms > LOWEST)) return HISTOGRAM_MIN_INDEX;
  if (ms > HIGHEST) return HISTOGRAM_MAX_INDEX;
  return Math.ceil(Math.log2(ms) * HISTOGRAM_BUCKETS_PER_DOUBLING);
}

const valueOf = (index: number): number => (2 * GAMMA ** index) / (GAMMA + 1);
/** Each bucket's value, by index offset by `HISTOGRAM_MIN_INDEX` (read for every quantile of every series point). */
const BUCKET_VALUES = Float64Array.from({ length: HISTOGRAM_BUCKETS }, (_, i) => valueOf(i + HISTOGRAM_MIN_INDEX));

/** The value a bucket stands for in milliseconds: within `HISTOGRAM_RELATIVE_ERROR` of any duration in it. */
export function histogramBucketValue(index: number): number {
  return BUCKET_VALUES[index - HISTOGRAM_MIN_INDEX] ?? valueOf(index);
}

/** The rank ⌊q·(n−1)⌋ of the sample at quantile `q` (clamped to 0–1) of `n`. */
const rankOf = (q: number, n: number): number => Math.floor(Math.min(1, Math.max(0, q)) * (n - 1));

/** The buckets `readWireText` read last: their offsets (index − `HISTOGRAM_MIN_INDEX`) and counts. */
const TEXT_INDICES = new Int32Array(HISTOGRAM_BUCKETS);
const TEXT_COUNTS = new Float64Array(HISTOGRAM_BUCKETS);
/** Digits a count may have to be read here exactly (below 2^53); longer ones go through `JSON.parse`. */
const MAX_COUNT_DIGITS = 15;

/**
 * Reads a histogram in jsonb's text form (`{"14": 6, "-3": 10}`: keys quoted, `": "` and `", "`
 * between, no other space) into TEXT_INDICES and TEXT_COUNTS. @returns how many buckets, or −1
 * when the text is not in that form or names a bucket out of range (nothing is counted then).
 */
function readWireText(text: string): number {
  if (text.charCodeAt(0) !== 123) return -1; // '{'
  let i = 1;
  if (text.charCodeAt(i) === 125) return text.length === 2 ? 0 : -1; // '{}'
  let buckets = 0;
  for (;;) {
    if (text.charCodeAt(i++) !== 34 || buckets === HISTOGRAM_BUCKETS) return -1; // '"'
    const negative = text.charCodeAt(i) === 45; // '-'
    if (negative) i++;
    let index = 0;
    let digits = 0;
    for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i), digits++)
      index = index * 10 + c - 48;
    if (digits === 0 || digits > 3) return -1;
    if (negative) index = -index;
    if (index < HISTOGRAM_MIN_INDEX || index > HISTOGRAM_MAX_INDEX) return -1;
    // '": '
    if (text.charCodeAt(i) !== 34 || text.charCodeAt(i + 1) !== 58 || text.charCodeAt(i + 2) !== 32) return -1;
    i += 3;
    let count = 0;
    digits = 0;
    for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i), digits++)
      count = count * 10 + c - 48;
    if (digits === 0 || digits > MAX_COUNT_DIGITS) return -1;
    TEXT_INDICES[buckets] = index - HISTOGRAM_MIN_INDEX;
    TEXT_COUNTS[buckets++] = count;
    const next = text.charCodeAt(i);
    if (next === 125) return i + 1 === text.length ? buckets : -1; // '}'
    if (next !== 44 || text.charCodeAt(i + 1) !== 32) return -1; // ', '
    i += 2;
  }
}

/** Counts per bucket. */
export class LatencyHistogram {
  /** Counts by bucket, offset by `HISTOGRAM_MIN_INDEX`. Float64: exact integers up to 2^53. */
  readonly counts = new Float64Array(HISTOGRAM_BUCKETS);
  total = 0;

  /** Count one duration (milliseconds). */
  record(ms: number): void {
    const at = histogramBucket(ms) - HISTOGRAM_MIN_INDEX;
    this.counts[at] = (this.counts[at] as number) + 1;
    this.total++;
  }

  /** Add another histogram's counts to this one. */
  add(other: LatencyHistogram): this {
    for (let i = 0; i < HISTOGRAM_BUCKETS; i++)
      this.counts[i] = (this.counts[i] as number) + (other.counts[i] as number);
    this.total += other.total;
    return this;
  }

  /** Add counts in wire form (already validated: integer indices in range, non-negative integer counts). */
  addWire(wire: WireHistogram): this {
    for (const key in wire) {
      const count = wire[key] as number;
      const at = Number(key) - HISTOGRAM_MIN_INDEX;
      this.counts[at] = (this.counts[at] as number) + count;
      this.total += count;
    }
    return this;
  }

  /**
   * Add counts in wire form as PostgreSQL writes a stored (jsonb) histogram as text, e.g.
   * `{"14": 6, "-3": 10}`, read from the characters: a series of 1,440 points must not build an
   * object and a key string per bucket (`JSON.parse`, then `addWire`). Text in any other form, or
   * out of range, is read with `JSON.parse` and `addWire`, as is. Added to `also` too when given
   * (a series point and its version's total), read once.
   */
  addWireText(text: string, also?: LatencyHistogram): this {
    const buckets = readWireText(text);
    if (buckets < 0) {
      const wire = JSON.parse(text) as WireHistogram;
      also?.addWire(wire);
      return this.addWire(wire);
    }
    for (let b = 0; b < buckets; b++) {
      const at = TEXT_INDICES[b] as number;
      const count = TEXT_COUNTS[b] as number;
      this.counts[at] = (this.counts[at] as number) + count;
      this.total += count;
      if (also !== undefined) {
        also.counts[at] = (also.counts[at] as number) + count;
        also.total += count;
      }
    }
    return this;
  }

  /**
   * The duration at quantile `q` (0–1) in milliseconds, `null` when empty: the value of the bucket
   * holding the sample of rank ⌊q·(n−1)⌋ in ascending order (the rank DDSketch uses).
   */
  quantile(q: number): number | null {
    return this.quantiles([q])?.[0] ?? null;
  }

  /**
   * The durations at quantiles `qs` (0–1, ascending) in milliseconds, as `quantile` reads each, in
   * one pass over the buckets; `null` when empty.
   */
  quantiles(qs: readonly number[]): number[] | null {
    const buckets = this.quantileBuckets(qs);
    if (buckets === null) return null;
    for (let i = 0; i < buckets.length; i++) buckets[i] = histogramBucketValue(buckets[i] as number);
    return buckets;
  }

  /** The bucket (its index, as in the wire form) holding the sample `quantile(q)` reads; `null` when empty. */
  quantileBucket(q: number): number | null {
    return this.quantileBuckets([q])?.[0] ?? null;
  }

  /** The buckets `quantileBucket` finds for each of `qs` (0–1, ascending), in one pass; `null` when empty. */
  private quantileBuckets(qs: readonly number[]): number[] | null {
    if (this.total === 0) return null;
    const found: number[] = [];
    // The rank of the next quantile to find, worked out once (not per bucket).
    let rank = rankOf(qs[0] as number, this.total);
    let seen = 0;
    for (let i = 0; i < HISTOGRAM_BUCKETS && found.length < qs.length; i++) {
      seen += this.counts[i] as number;
      while (found.length < qs.length && seen > rank) {
        found.push(i + HISTOGRAM_MIN_INDEX);
        if (found.length < qs.length) rank = rankOf(qs[found.length] as number, this.total);
      }
    }
    while (found.length < qs.length) found.push(HISTOGRAM_MAX_INDEX);
    return found;
  }

  /** Empties it, to be filled again (one histogram reused instead of one made per use). */
  clear(): this {
    this.counts.fill(0);
    this.total = 0;
    return this;
  }

  /** The sparse wire form: only buckets with a count, in ascending order. */
  toWire(): WireHistogram {
    const wire: WireHistogram = {};
    for (let i = 0; i < HISTOGRAM_BUCKETS; i++) {
      const count = this.counts[i] as number;
      if (count > 0) wire[i + HISTOGRAM_MIN_INDEX] = count;
    }
    return wire;
  }

  static fromWire(wire: WireHistogram): LatencyHistogram {
    return new LatencyHistogram().addWire(wire);
  }
}

/**
 * The bucket index a wire key names, or null unless it is one canonically (as `String(index)`
 * writes it: no sign on 0, no leading zero) and in range. Read from the characters: validating a
 * batch's 80 histograms must not allocate a string per bucket.
 */
function bucketIndexOf(key: string): number | null {
  const negative = key.charCodeAt(0) === 45; // '-'
  const first = negative ? 1 : 0;
  const digits = key.length - first;
  if (digits < 1 || digits > 3) return null;
  if (key.charCodeAt(first) === 48 && (digits > 1 || negative)) return null; // '0…' or '-0'
  let index = 0;
  for (let i = first; i < key.length; i++) {
    const digit = key.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return null;
    index = index * 10 + digit;
  }
  if (negative) index = -index;
  return index < HISTOGRAM_MIN_INDEX || index > HISTOGRAM_MAX_INDEX ? null : index;
}

/**
 * The exchanges a histogram in wire form counts, or why it is not valid (a bucket key that is not
 * an integer in range, a count that is not a non-negative integer up to `maxCount`): a string
 * naming the bucket, to follow the field's own path. One pass over the buckets.
 */
export function histogramTotal(value: unknown, maxCount: number): number | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object of bucket → count';
  let buckets = 0;
  let total = 0;
  for (const key in value) {
    if (++buckets > HISTOGRAM_BUCKETS) return `must hold at most ${HISTOGRAM_BUCKETS} buckets`;
    if (bucketIndexOf(key) === null)
      return `[${JSON.stringify(key.slice(0, 16))}] must be a bucket index ${HISTOGRAM_MIN_INDEX}–${HISTOGRAM_MAX_INDEX}`;
    const count = (value as Record<string, unknown>)[key];
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0 || count > maxCount)
      return `[${JSON.stringify(key)}] must be an integer count 0-${maxCount}`;
    total += count;
  }
  return total;
}
