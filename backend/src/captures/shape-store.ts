import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Shape } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import { LruCache } from '../common/lru-cache';

/**
 * Reads content-addressed shapes. A fingerprint always names the same shape, so caching them in
 * memory is safe on every replica (nothing here is state another replica needs).
 */
@Injectable()
export class ShapeStore {
  private readonly cache = new LruCache<string, Shape>(50_000);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The shapes of some fingerprints (unknown fingerprints are absent from the map). */
  async load(fingerprints: readonly string[]): Promise<Map<string, Shape>> {
    return this.cache.loadMany(fingerprints, async (missing) => {
      const rows: Array<{ fingerprint: string; shape: Shape }> = await this.db.query(
        'SELECT fingerprint, shape FROM shapes WHERE fingerprint = ANY($1::text[])',
        [missing],
      );
      return rows.map((row) => [row.fingerprint, row.shape]);
    });
  }
}
