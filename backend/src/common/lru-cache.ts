/** A bounded map that forgets the least recently used entry first. */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Map keeps insertion order: re-insert to mark as most recent.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Values of some keys: cached ones from memory, the others from `fetchMissing` (then cached).
   * Keys `fetchMissing` does not return are absent from the result.
   */
  async loadMany(keys: Iterable<K>, fetchMissing: (missing: K[]) => Promise<Array<[K, V]>>): Promise<Map<K, V>> {
    const found = new Map<K, V>();
    const missing: K[] = [];
    for (const key of new Set(keys)) {
      const cached = this.get(key);
      if (cached === undefined) missing.push(key);
      else found.set(key, cached);
    }
    if (missing.length > 0) {
      for (const [key, value] of await fetchMissing(missing)) {
        this.set(key, value);
        found.set(key, value);
      }
    }
    return found;
  }
}
