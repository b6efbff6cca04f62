import { ScanBudget } from './novelty';
import { ShapeSampler } from './sampler';

describe('ShapeSampler', () => {
  it('admits everything while the budget lasts, then only the first sample of each key per window', () => {
    let now = 0;
    const sampler = new ShapeSampler({ budgetShare: 0.1, burstMs: 10, keyWindowMs: 1_000 }, () => now);
    // Each sample really costs 5 ms: two fit in the 10 ms burst.
    const admitted = Array.from({ length: 6 }, () => {
      const yes = sampler.admit(sampler.slot('c1', 'GET', '/a', 200), 1_000);
      if (yes) sampler.spent(1_000, 1_000, 5);
      return yes;
    });
    expect(admitted.filter(Boolean).length).toBeLessThanOrEqual(3);
    expect(admitted[0]).toBe(true);
    expect(sampler.admit(sampler.slot('c1', 'GET', '/b', 200), 1_000)).toBe(true); // a new key is always shaped
    expect(sampler.admit(sampler.slot('c1', 'GET', '/a', 200), 1_000)).toBe(false);
    now += 1_000; // a new window, and 100 ms of budget refilled (capped at the burst)
    expect(sampler.admit(sampler.slot('c1', 'GET', '/a', 200), 1_000)).toBe(true);
  });

  it('admits a forced sample with the budget spent, and charges it: the next ones wait longer for the budget', () => {
    let now = 0;
    const sampler = new ShapeSampler({ budgetShare: 0.1, burstMs: 10, keyWindowMs: 1_000 }, () => now);
    const slot = sampler.slot('c1', 'GET', '/a', 200);
    expect(sampler.admit(slot, 1_000)).toBe(true);
    sampler.spent(1_000, 1_000, 5); // 20 ms charged: the burst is spent
    expect(sampler.admit(slot, 1_000)).toBe(false);
    expect(sampler.force(slot, 1_000)).toBe(true);
    sampler.spent(1_000, 1_000, 5);
    // 150 ms of wall time refill 15 ms: enough after the first sample alone (20 ms charged, 10 saved up), not
    // after the forced one too (another 20 ms).
    now += 150;
    expect(sampler.admit(slot, 1_000)).toBe(false);
    now += 200;
    expect(sampler.admit(slot, 1_000)).toBe(true);
  });

  it('shapes every interaction under light load (a CI run: a rare body variant must not be missed), with the default budget', () => {
    let now = 0;
    const sampler = new ShapeSampler({}, () => now);
    let admitted = 0;
    for (let i = 0; i < 2_000; i++) {
      now += 20; // 50 requests a second, far from busy
      const slot = sampler.slot('c1', 'POST', '/posts', 201);
      if (sampler.admit(slot, 2_000)) {
        sampler.spent(2_000, 2_000, 0.05); // a small JSON body: 50 µs of shape work
        admitted += 1;
      }
    }
    expect(admitted).toBe(2_000);
  });

  it('keeps shape work near its share of wall time under sustained load, each ms of it charged costFactor times', () => {
    const timedShare = (costFactor: number) => {
      let now = 0;
      const sampler = new ShapeSampler(
        { budgetShare: 0.05, burstMs: 50, keyWindowMs: 10_000, maxPerKeyPerSecond: Infinity, costFactor },
        () => now,
      );
      let spent = 0;
      for (let i = 0; i < 10_000; i++) {
        now += 1; // one request per ms
        if (sampler.admit(sampler.slot('c1', 'POST', '/posts', 201), 100_000)) {
          sampler.spent(100_000, 100_000, 2); // 2 ms per sample
          spent += 2;
        }
      }
      return spent / now;
    };
    expect(timedShare(1)).toBeLessThan(0.07);
    expect(timedShare(1)).toBeGreaterThan(0.03);
    // With its hidden cost counted, the timed work gets a quarter of the budget.
    expect(timedShare(4)).toBeLessThan(0.07 / 4);
    expect(timedShare(4)).toBeGreaterThan(0.03 / 4);
  });

  it('keys by capture, method, template and status: each new key, and each key in a new capture, is shaped at once', () => {
    let now = 0;
    const sampler = new ShapeSampler({ budgetShare: 0, burstMs: 0, keyWindowMs: 1_000 }, () => now);
    expect(sampler.admit(sampler.slot('c1', 'GET', '/a', 200), 100)).toBe(true);
    // No budget at all: only the per-key guarantee admits.
    expect(sampler.admit(sampler.slot('c1', 'GET', '/a', 200), 100)).toBe(false);
    expect(sampler.admit(sampler.slot('c1', 'GET', '/a', 404), 100)).toBe(true);
    expect(sampler.admit(sampler.slot('c1', 'POST', '/a', 200), 100)).toBe(true);
    expect(sampler.admit(sampler.slot('c1', 'GET', '/b', 200), 100)).toBe(true);
    expect(sampler.admit(sampler.slot('c2', 'GET', '/a', 200), 100)).toBe(true);
    expect(sampler.admit(sampler.slot('c2', 'GET', '/a', 200), 100)).toBe(false);
    now += 1_000;
    expect(sampler.admit(sampler.slot('c2', 'GET', '/a', 200), 100)).toBe(true);
  });

  it('still shapes a key once per window after the wall clock is set back', () => {
    let now = 1_000_000;
    const sampler = new ShapeSampler({ budgetShare: 0, burstMs: 0, keyWindowMs: 1_000 }, () => now);
    expect(sampler.admit(sampler.slot('c1', 'GET', '/a', 200), 100)).toBe(true);
    now -= 3_600_000; // NTP steps the clock back an hour
    expect(sampler.admit(sampler.slot('c1', 'GET', '/a', 200), 100)).toBe(true);
    expect(sampler.admit(sampler.slot('c1', 'GET', '/a', 200), 100)).toBe(false);
  });

  it('charges a fixed overhead per sample, so samples whose timed work is next to nothing still use up the budget', () => {
    let now = 0;
    const admittedWith = (sampleOverheadMs: number) => {
      const sampler = new ShapeSampler(
        { budgetShare: 0.01, burstMs: 1, keyWindowMs: 60_000, sampleOverheadMs, maxPerKeyPerSecond: Infinity },
        () => now,
      );
      let admitted = 0;
      for (let i = 0; i < 1_000; i++) {
        now += 1; // one small request per ms for a second: 10 ms of budget
        if (sampler.admit(sampler.slot('c1', 'POST', '/posts', 201), 100)) {
          sampler.spent(100, 100, 0.001); // the timed shape work of a tiny body
          admitted++;
        }
      }
      return admitted;
    };
    expect(admittedWith(0)).toBeGreaterThan(900);
    const withOverhead = admittedWith(0.1);
    expect(withOverhead).toBeGreaterThan(80);
    expect(withOverhead).toBeLessThan(130);
  });

  it('admits at most maxPerKeyPerSecond samples of one key a second, however much budget is left; other keys are not held back', () => {
    let now = 0;
    const sampler = new ShapeSampler(
      { budgetShare: 1, burstMs: 1_000, keyWindowMs: 60_000, maxPerKeyPerSecond: 100 },
      () => now,
    );
    const admittedIn = (template: string, requests: number, stepMs: number) => {
      let admitted = 0;
      for (let i = 0; i < requests; i++) {
        now += stepMs;
        if (sampler.admit(sampler.slot('c1', 'GET', template, 200), 100)) {
          sampler.spent(100, 100, 0.001);
          admitted++;
        }
      }
      return admitted;
    };
    // 10,000 requests a second on one endpoint for 3 s: 100 a second shaped, not 10,000...
    expect(admittedIn('/hot', 30_000, 0.1)).toBeGreaterThanOrEqual(300);
    expect(admittedIn('/hot', 30_000, 0.1)).toBeLessThanOrEqual(312);
    // ...spread over the second: about 10 in any tenth of it, not all 100 at its start.
    expect(admittedIn('/hot', 1_000, 0.1)).toBeLessThanOrEqual(12);
    // Another endpoint at the same moment has its own allowance.
    expect(admittedIn('/cold', 50, 0)).toBe(10);
  });

  it('earns no budget and ages no key window while paused: resumed, it admits what it would have without the pause', () => {
    let now = 0;
    const sampler = new ShapeSampler(
      { budgetShare: 0.1, burstMs: 10, keyWindowMs: 1_000, maxPerKeyPerSecond: Infinity },
      () => now,
    );
    const slot = sampler.slot('c1', 'GET', '/a', 200);
    expect(sampler.admit(slot, 100)).toBe(true); // the key's guaranteed sample
    sampler.spent(100, 100, 10); // ...which used up the whole burst
    expect(sampler.admit(slot, 100)).toBe(false);
    sampler.pause();
    now += 60_000; // a minute paused: would refill the burst and open a new key window
    sampler.resume();
    expect(sampler.admit(slot, 100)).toBe(false);
    now += 1_000; // a second of capture: 100 ms of budget (capped at the burst), and a new key window
    expect(sampler.admit(slot, 100)).toBe(true);
  });

  it('keeps a clock that stands still while paused: a scan budget on it earns nothing while observing is off', () => {
    let now = 0;
    const sampler = new ShapeSampler({}, () => now);
    const budget = new ScanBudget(() => sampler.time(), 1_000, 1_000);
    expect(budget.take(1_000)).toBe(true); // a second's bytes, saved up at the start
    sampler.pause();
    now += 750; // observing off for 750 ms, as in the paired bench's three off windows
    expect(sampler.time()).toBe(0);
    expect(budget.take(1)).toBe(false); // an exchange that began before the pause, recorded during it
    sampler.resume();
    expect(budget.take(1)).toBe(false);
    now += 250;
    expect(budget.take(250)).toBe(true);
    expect(budget.take(1)).toBe(false);
  });

  it('gives back a reservation made for more bytes than came: a stream, a body without a length, one dropped unshaped', () => {
    /** Shaped of 200 requests at 50 a second; `toldReserved`: the reservation `spent` is told of. */
    const shapedOf = (reservedBytes: number, realBytes: number, toldReserved = reservedBytes) => {
      let now = 0;
      const sampler = new ShapeSampler(
        { budgetShare: 0.02, burstMs: 20, keyWindowMs: 60_000, maxPerKeyPerSecond: Infinity, sampleOverheadMs: 0 },
        () => now,
      );
      let shaped = 0;
      for (let i = 0; i < 200; i++) {
        now += 20; // 0.4 ms of budget between two requests
        if (!sampler.admit(sampler.slot('c1', 'GET', '/events', 200), reservedBytes)) continue;
        sampler.spent(toldReserved, realBytes, realBytes * 0.00002); // 20 ns a byte
        shaped++;
      }
      return shaped;
    };
    // 5 KB of events shaped each time: reserved as 5 KB or as a 1 MiB worst case, all are shaped...
    expect(shapedOf(5_000, 5_000)).toBe(200);
    expect(shapedOf(1024 * 1024, 5_000)).toBe(200);
    // ...where keeping the 1 MiB reservation (the real cost charged on top of it) starved the key.
    expect(shapedOf(1024 * 1024, 5_000, 5_000)).toBeLessThan(100);
  });

  it("gives a slot carried from the start of an interaction back only while it is still its key's", () => {
    const sampler = new ShapeSampler();
    const slot = sampler.slot('c1', 'GET', '/a', 200);
    expect(sampler.again(slot, 'c1', 'GET', '/a', 200)).toBe(slot);
    expect(sampler.again(null, 'c1', 'GET', '/a', 200)).toBe(slot);
    // The template changed in between (a path learned): the new template's own slot.
    const other = sampler.again(slot, 'c1', 'GET', '/b', 200);
    expect(other).not.toBe(slot);
    expect(sampler.slot('c1', 'GET', '/b', 200)).toBe(other);
    // A new capture started the slots afresh: neither the carried slot nor the old one.
    const fresh = sampler.again(slot, 'c2', 'GET', '/a', 200);
    expect(fresh).not.toBe(slot);
    expect(sampler.slot('c2', 'GET', '/a', 200)).toBe(fresh);
    // Back to the first capture: started afresh again, so the slot carried from before is not its key's now.
    const back = sampler.slot('c1', 'GET', '/a', 200);
    expect(back).not.toBe(slot);
    expect(sampler.again(slot, 'c1', 'GET', '/a', 200)).toBe(back);
  });
});
