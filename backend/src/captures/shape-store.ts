import { Injectable } from '@nestjs/common';
import type { Shape } from '@spectator/shared';
import { LruCache } from '../common/lru-cache';
import { CapturesRepository } from './captures.repository';

/**
 * Reads content-addressed shapes. A fingerprint always names the same shape, so caching them in
 * memory is safe on every replica (nothing here is state another replica needs).
 */
@Injectable()
export class ShapeStore {
  private readonly cache = new LruCache<string, Shape>(50_000);

  constructor(private readonly captures: CapturesRepository) {}

  /** The shapes of some fingerprints (unknown fingerprints are absent from the map). */
  async load(fingerprints: readonly string[]): Promise<Map<string, Shape>> {
    return this.cache.loadMany(fingerprints, async (missing) => {
      const rows = await this.captures.shapes(missing);
      return rows.map((row) => [row.fingerprint, row.shape]);
    });
  }
}
