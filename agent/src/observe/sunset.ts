/**
 * Whether a `Sunset` response header (RFC 8594: an HTTP-date) names a time already past when the
 * answer was seen: the one bit of the header's value that leaves the agent (as a count per row,
 * `WireObservation.sunsetPast`), never the date itself. An API sends one Sunset date for a long
 * while, so the last text is parsed once and its time kept.
 */
export class SunsetClock {
  private text: string | undefined;
  private time = Number.NaN;

  /**
   * @param value the header as Node gives it (a string; an array for a repeated header, whose first counts)
   * @param at when the answer was seen, in milliseconds since the epoch
   * @returns false for a value that is not a date
   */
  hasPassed(value: unknown, at: number): boolean {
    const text = Array.isArray(value) ? (value[0] as unknown) : value;
    if (typeof text !== 'string') return false;
    if (text !== this.text) {
      this.text = text;
      this.time = Date.parse(text);
    }
    return this.time <= at;
  }
}
