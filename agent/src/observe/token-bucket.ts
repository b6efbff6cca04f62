/**
 * A token bucket's tokens at `now`: `tokens` at `at`, refilled at `perSecond` since, at most `cap`.
 * A clock set back (NTP) refills nothing; the caller then counts from `now`.
 */
export function refilled(tokens: number, at: number, now: number, perSecond: number, cap: number): number {
  return now > at ? Math.min(cap, tokens + ((now - at) * perSecond) / 1_000) : tokens;
}
