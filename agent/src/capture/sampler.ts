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
}

const DEFAULTS: SamplerOptions = { budgetShare: 0.02, burstMs: 20, keyWindowMs: 10_000 };

/**
 * Decides which interactions get their bodies shaped. Counting is never sampled; only the parse +
 * infer + fingerprint work is. Each endpoint-and-status key is shaped at least once per window,
 * whatever the load; beyond that a time budget (a token bucket in milliseconds refilled at
 * `budgetShare` of wall time) admits samples while it lasts, so under light load everything is
 * shaped and under heavy load shape work stays a small fixed share of the CPU.
 */
export class ShapeSampler {
  private readonly options: SamplerOptions;
  private tokensMs: number;
  private refilledAt: number;
  private readonly lastShaped = new Map<string, number>();
  /** Learned cost of shape work per body byte, ms (exponentially weighted). */
  private msPerByte = 0.00001;

  constructor(options: Partial<SamplerOptions> = {}, private readonly now: () => number = () => performance.now()) {
    this.options = { ...DEFAULTS, ...options };
    this.tokensMs = this.options.burstMs;
    this.refilledAt = now();
  }

  /** Should the bodies (of `bytes` total) of an interaction with this key be shaped? Reserves the expected cost when yes. */
  admit(key: string, bytes: number): boolean {
    const now = this.now();
    this.refill(now);
    const estimate = bytes * this.msPerByte;
    const last = this.lastShaped.get(key);
    if (last === undefined || now - last >= this.options.keyWindowMs) {
      if (this.lastShaped.size >= 50_000) this.lastShaped.clear();
      this.lastShaped.set(key, now);
      this.tokensMs -= estimate;
      return true;
    }
    if (this.tokensMs <= 0) return false;
    this.tokensMs -= estimate;
    return true;
  }

  /** Report what an admitted sample really cost, correcting the reservation and the learned cost. */
  spent(bytes: number, ms: number): void {
    const estimate = bytes * this.msPerByte;
    this.tokensMs -= ms - estimate;
    if (bytes > 256) this.msPerByte = this.msPerByte * 0.9 + (ms / bytes) * 0.1;
  }

  private refill(now: number): void {
    const elapsed = now - this.refilledAt;
    this.refilledAt = now;
    this.tokensMs = Math.min(this.options.burstMs, this.tokensMs + elapsed * this.options.budgetShare);
  }
}
