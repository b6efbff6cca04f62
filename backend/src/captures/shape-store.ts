import { Injectable } from '@nestjs/common';
import type { Shape } from '@spectator/shared';
import { LruCache } from '../common/lru-cache';
import type { Queryable } from '../common/queryable';
import { CapturesRepository } from './captures.repository';

/**
 * Reads content-addressed shapes. A fingerprint always names the same shape, so caching them in
 * memory is safe on every replica (nothing here is state another replica needs).
 */
@Injectable()
export class ShapeStore {
  private readonly cache = new LruCache<string, Shape>(50_000);

  constructor(private readonly captures: CapturesRepository) {}

  /**
   * The shapes of some fingerprints (unknown fingerprints are absent from the map), read through
   * `runner` when given: a transaction sees the shapes it wrote before they are committed.
   */
  async load(fingerprints: readonly string[], runner?: Queryable): Promise<Map<string, Shape>> {
    return this.cache.loadMany(fingerprints, async (missing) => {
      const rows = await this.captures.shapes(missing, runner);
      return rows.map((row) => [row.fingerprint, row.shape]);
    });
  }
}
