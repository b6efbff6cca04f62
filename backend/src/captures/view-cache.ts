import { LruCache } from '../common/lru-cache';

/**
 * Results of one view per capture, each kept with the stamp of the inputs it was computed from.
 * A stamp must be read from the database before the view's own queries and change whenever an
 * input does (see `CapturesService.stampOf`), so an entry whose stamp still matches holds what a
 * fresh computation would give, on whichever replica the inputs were changed.
 */
export class StampedViewCache<T> {
  private readonly entries: LruCache<string, { stamp: string; value: T }>;

  constructor(capacity: number) {
    this.entries = new LruCache(capacity);
  }

  /** The value for `key` at `stamp`: from memory when computed at the same stamp, else computed and kept. */
  async get(key: string, stamp: string, compute: () => Promise<T>): Promise<T> {
    const kept = this.entries.get(key);
    if (kept !== undefined && kept.stamp === stamp) return kept.value;
    const value = await compute();
    this.entries.set(key, { stamp, value });
    return value;
  }
}

/** A view's list and, once asked for, its JSON text, made once however often the view is sent. */
export class ViewList<T> {
  private text: string | undefined;

  constructor(readonly items: readonly T[]) {}

  /** The list as the API sends it. */
  json(): string {
    this.text ??= JSON.stringify(this.items);
    return this.text;
  }
}
