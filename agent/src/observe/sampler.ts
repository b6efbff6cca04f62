import { refilled } from './token-bucket';
/** Tuning of shape sampling under load. */
export interface SamplerOptions {
  /** Share of wall time shape work may use once past the per-key guarantee. Default 0.02 (2%). */
  budgetShare: number;
  /**
   * Most budget that can be saved up while idle, ms. Default 20: small, so a burst of traffic
   * after a quiet spell is not shaped in full at the cost of its latency.
   */
  burstMs: number;
  /** Every key (capture, method, template, status) gets at least one shaped sample per window, ms. Default 10 s. */
  keyWindowMs: number;
  /**
   * What one sample costs beyond the shape work the pipeline times, ms, charged per admitted
   * sample. Default 0.015 (15 µs): the copies on the hot path, the queue and its event-loop turn
   * (about 3 µs in-process) and the extra garbage collection of the parsed value (about 8 µs per
   * sampled POST in a CPU profile of the agent at 1 connection), which the timed work never sees;
   * for small bodies they are more than the parsing itself.
   */
  sampleOverheadMs: number;
  /**
   * What a sample costs the agent for each ms of its timed shape work, default 4. Parsing a body
   * builds a heap of objects the size of the body: collecting it, and the caches it evicts for the
   * requests after it, cost more than the parse. A CPU profile of the agent at 1 connection,
   * observing switched on and off, put a sampled 100 KB body at about 6 ms of CPU against 0.9–1.6 ms
   * timed; with the timed work alone charged, the 2 % budget let shape work take 10 % of throughput.
   */
  costFactor: number;
  /**
   * Shaped samples one key may have per second at most, default 100 (a token bucket per key, so they
   * are spread over the second; the guaranteed sample per window comes on top). A hot endpoint under load
   * would otherwise take the whole budget for bodies it repeats thousands of times a second (at
   * 11,000 requests a second on one endpoint, 500 samples a second cost 2.5 % of the agent's CPU);
   * light traffic such as a CI run stays far below it, so every interaction there is still shaped.
   */
  maxPerKeyPerSecond: number;
  /**
   * Sampled-out interactions of one key watched for a new variant (their small bodies kept and
   * fingerprinted, novelty.ts) per second at most, default 1,000, saved up for one second at most: a
   * token bucket per key. Below it (any CI run, any endpoint under 1,000 requests a second) every one
   * is watched; a flooded endpoint no longer pays for fingerprinting bodies it repeats thousands of
   * times a second (at 16,000 requests a second of a 2.2 KB list: the key fingerprint of each, and
   * 3,800 whole-body reads a second, the whole scan budget, 1.3 % of the agent's CPU), and leaves the
   * scan budget to the other endpoints. A rare variant of a flooded endpoint shows later: one in
   * 100,000 of its answers within about 100 s of flood, not 6 s (26 s past the first 256 bytes).
   */
  maxWatchedPerKeyPerSecond: number;
  /**
   * Samples `force` admits past the budget per second at most, default 20, saved up to 100 (five
   * seconds' worth): the first answers of new paths shaped for the path learner (see the pipeline's
   * `firstEvidence`). A CI run or an API of a few hundred paths stays far below it; a flood of new
   * names (hostile random slugs answered 200) costs at most 20 shapes a second, the rest counted.
   */
  maxForcedPerSecond: number;
}

/**
 * Sampler options for a shape budget in percent of one core (`--shape-budget`). 100 lifts the time
 * budget and the per-key cap: every interaction is shaped (the queue's bounds still hold). 0 leaves
 * no budget at all, not even a saved-up burst: only each key's guaranteed sample per window.
 */
export function samplerOptionsForBudget(percent: number): Partial<SamplerOptions> {
  if (percent >= 100) return { budgetShare: 1, burstMs: Infinity, maxPerKeyPerSecond: Infinity };
  return percent <= 0 ? { budgetShare: 0, burstMs: 0 } : { budgetShare: percent / 100 };
}

/** When one key (capture, method, template, status) was last shaped; looked up once per interaction. */
export interface SampleSlot {
  lastShaped: number;
  /**
   * The key's own token bucket, in samples: refilled at `maxPerKeyPerSecond`, holding at most a
   * tenth of a second's worth, so a hot key's samples are spread over the second, not bunched at its start.
   */
  keyTokens: number;
  keyRefilledAt: number;
  /** The key's watched interactions left (`maxWatchedPerKeyPerSecond`), refilled at `watchRefilledAt` on the sampler's clock. */
  watchTokens: number;
  watchRefilledAt: number;
  /** Key fingerprints of the body variants seen (see novelty.ts), made on the first; at most NOVELTY_VARIANTS. */
  variants: Set<number> | null;
  /** Structure fingerprints of the whole bodies read (novelty.ts `structureFingerprint`); at most NOVELTY_VARIANTS. */
  structures: Set<number> | null;
  /** The template of its key, and the sampler's `generation` it was made in: see `ShapeSampler.again`. */
  readonly template: string;
  readonly generation: number;
}

/** Keys tracked at most; past it the slots start afresh (each key is then shaped once more). */
const MAX_SLOTS = 50_000;

const DEFAULTS: SamplerOptions = {
  budgetShare: 0.02,
  burstMs: 20,
  keyWindowMs: 10_000,
  sampleOverheadMs: 0.015,
  costFactor: 4,
  maxPerKeyPerSecond: 100,
  maxWatchedPerKeyPerSecond: 1_000,
  maxForcedPerSecond: 20,
};

/** Seconds of `maxForcedPerSecond` saved up at most. */
const FORCED_BURST_SECONDS = 5;

/**
 * Decides which interactions get their bodies shaped. Counting is never sampled; only the parse +
 * infer + fingerprint work is. Each endpoint-and-status key is shaped at least once per window,
 * whatever the load; beyond that a time budget (a token bucket in milliseconds refilled at
 * `budgetShare` of wall time) admits samples while it lasts, at most `maxPerKeyPerSecond` a key, so
 * under light load everything is shaped and under heavy load shape work stays a small share of the
 * CPU, spread over the endpoints rather than spent on the hottest one.
 */
export class ShapeSampler {
  private readonly options: SamplerOptions;
  private tokensMs: number;
  private refilledAt: number;
  /** template → method → status → slot, for the current capture: no key string built per interaction. */
  private slots = new Map<string, Map<string, Map<number, SampleSlot>>>();
  private slotCount = 0;
  private slotsCapture = '';
  /** Counts the times `slots` started afresh: a slot of an older generation is no longer its key's. */
  private generation = 0;
  /** Learned cost of shape work per body byte, ms (exponentially weighted). */
  private msPerByte = 0.00001;
  /** When `pause` stopped the clock, or null while it runs. */
  private pausedAt: number | null = null;
  /** The clock as the last `admit` read it (`mayWatch` asks about the same interaction). */
  private admittedAt = 0;
  /** Samples `force` may still admit (`maxForcedPerSecond`), refilled at `forcedRefilledAt` on the sampler's clock. */
  private forcedTokens: number;
  private forcedRefilledAt: number;
  /** Time spent paused so far, ms: taken off the clock. */
  private pausedTotal = 0;

  /**
   * @param now clock in ms, read once per interaction; `Date.now` by default because it is several
   * times cheaper than `performance.now()` (which builds an hrtime pair) and whole milliseconds are
   * fine for refilling a budget over many requests.
   */
  constructor(
    options: Partial<SamplerOptions> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.tokensMs = this.options.burstMs;
    this.refilledAt = now();
    this.forcedTokens = this.options.maxForcedPerSecond * FORCED_BURST_SECONDS;
    this.forcedRefilledAt = this.refilledAt;
  }

  /** The slot of a key. A new capture starts every key afresh, so its first interactions are shaped. */
  slot(captureId: string, method: string, template: string, status: number): SampleSlot {
    if (captureId !== this.slotsCapture || this.slotCount >= MAX_SLOTS) {
      this.slots = new Map();
      this.slotCount = 0;
      this.slotsCapture = captureId;
      this.generation++;
    }
    let byMethod = this.slots.get(template);
    if (byMethod === undefined) this.slots.set(template, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let slot = byStatus.get(status);
    if (slot === undefined) {
      const now = this.time();
      byStatus.set(
        status,
        (slot = {
          lastShaped: -Infinity,
          keyTokens: this.keyBurst(),
          keyRefilledAt: now,
          watchTokens: this.options.maxWatchedPerKeyPerSecond,
          watchRefilledAt: now,
          variants: null,
          structures: null,
          template,
          generation: this.generation,
        }),
      );
      this.slotCount++;
    }
    return slot;
  }

  /**
   * The slot of a key again, given the one `slot` gave for the same interaction earlier (when its
   * response started): that one when it is still the key's, so its three Map look-ups are not
   * repeated; else (the capture or the template changed since, or the slots started afresh) `slot`'s.
   */
  again(earlier: SampleSlot | null, captureId: string, method: string, template: string, status: number): SampleSlot {
    return earlier !== null &&
      earlier.generation === this.generation &&
      earlier.template === template &&
      captureId === this.slotsCapture &&
      this.slotCount < MAX_SLOTS
      ? earlier
      : this.slot(captureId, method, template, status);
  }

  /**
   * Should the bodies (of `bytes` total) of an interaction with this key be shaped? Reserves the expected cost when
   * yes. `guaranteed` false: no guaranteed sample of the key's window (a key per held value, see the pipeline).
   */
  admit(slot: SampleSlot, bytes: number, guaranteed = true): boolean {
    const now = this.time();
    this.admittedAt = now;
    this.refill(now);
    // The fixed overhead is charged here for good: `spent` corrects only the timed part.
    const estimate = this.estimate(bytes);
    // A wall clock set back (NTP) must not starve a key of its guaranteed sample.
    if (guaranteed && (now - slot.lastShaped >= this.options.keyWindowMs || now < slot.lastShaped)) {
      slot.lastShaped = now;
      return this.take(slot, estimate);
    }
    if (this.tokensMs <= 0) return false;
    const perSecond = this.options.maxPerKeyPerSecond;
    if (Number.isFinite(perSecond)) {
      slot.keyTokens = refilled(slot.keyTokens, slot.keyRefilledAt, now, perSecond, this.keyBurst());
      slot.keyRefilledAt = now;
      if (slot.keyTokens < 1) return false;
    }
    return this.take(slot, estimate);
  }

  /**
   * May one more sampled-out interaction of this key be watched for a new variant, as far as the
   * key's own bucket goes (`maxWatchedPerKeyPerSecond`)? On the clock `admit` read for it (called
   * just before, for the same interaction). Takes nothing: `watched` takes it once it is watched.
   */
  mayWatch(slot: SampleSlot): boolean {
    const now = this.admittedAt;
    const perSecond = this.options.maxWatchedPerKeyPerSecond;
    slot.watchTokens = refilled(slot.watchTokens, slot.watchRefilledAt, now, perSecond, perSecond);
    slot.watchRefilledAt = now;
    return slot.watchTokens >= 1;
  }

  /** One interaction of this key is watched (after `mayWatch`). */
  watched(slot: SampleSlot): void {
    slot.watchTokens--;
  }

  /**
   * Admit a sample of `bytes` whatever the budget and the key's tokens (the learner's evidence: the
   * pipeline's `firstEvidence`, once per path and method), at most `maxForcedPerSecond`; false past it.
   * On the clock `admit` read for it (called just before, for the same interaction). Reserved and
   * charged like any sample, so the budget goes below zero and fewer samples after it pay it back.
   */
  force(slot: SampleSlot, bytes: number): boolean {
    const now = this.admittedAt;
    const perSecond = this.options.maxForcedPerSecond;
    this.forcedTokens = refilled(
      this.forcedTokens,
      this.forcedRefilledAt,
      now,
      perSecond,
      perSecond * FORCED_BURST_SECONDS,
    );
    this.forcedRefilledAt = now;
    if (this.forcedTokens < 1) return false;
    this.forcedTokens--;
    return this.take(slot, this.estimate(bytes));
  }

  /** The cost reserved for a sample of `bytes`, ms. */
  private estimate(bytes: number): number {
    return this.options.sampleOverheadMs + bytes * this.msPerByte * this.options.costFactor;
  }

  /** Admit one sample of `slot`: reserve its estimated cost and take one of the key's tokens. */
  private take(slot: SampleSlot, estimate: number): true {
    this.tokensMs -= estimate;
    slot.keyTokens = Math.max(0, slot.keyTokens - 1);
    return true;
  }

  /** Samples a key may save up: a tenth of a second's worth, at least one (unbounded without a cap). */
  private keyBurst(): number {
    const perSecond = this.options.maxPerKeyPerSecond;
    return Number.isFinite(perSecond) ? Math.max(1, perSecond / 10) : Infinity;
  }

  /**
   * Stop the sampler's clock while observing is paused: paused time earns no budget and does not age
   * a key's window, so observing resumed behaves as if it had never stopped (not with a budget saved
   * up while nothing was observed).
   */
  pause(): void {
    this.pausedAt ??= this.now();
  }

  /** Start the clock again after `pause`. */
  resume(): void {
    if (this.pausedAt === null) return;
    this.pausedTotal += Math.max(0, this.now() - this.pausedAt);
    this.pausedAt = null;
  }

  /**
   * The sampler's clock, ms: paused time taken off, standing still while paused. Budgets refilled on
   * it (the sampler's own, the pipeline's scan budget) earn nothing while observing is off.
   */
  time(): number {
    return (this.pausedAt ?? this.now()) - this.pausedTotal;
  }

  /**
   * Report what an admitted sample really cost: `reservedBytes` as admitted, `bytes` shaped (fewer
   * when the body was shorter than expected, as a stream or a body without a length usually is; 0
   * when it was not shaped after all) in `ms`. The reservation is replaced by the real cost, and
   * the cost per byte learned from it.
   */
  spent(reservedBytes: number, bytes: number, ms: number): void {
    const reserved = reservedBytes * this.msPerByte;
    this.tokensMs -= (ms - reserved) * this.options.costFactor;
    if (bytes > 256) this.msPerByte = this.msPerByte * 0.9 + (ms / bytes) * 0.1;
  }

  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.refilledAt);
    this.refilledAt = now;
    this.tokensMs = Math.min(this.options.burstMs, this.tokensMs + elapsed * this.options.budgetShare);
  }
}
