import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { LruCache } from '../common/lru-cache';
import { type DocumentedVersion, versionsRepository } from './versions.repository';

/**
 * Reads endpoint versions. A version never changes once written (a change makes a new version),
 * so caching by id is safe on every replica.
 */
@Injectable()
export class VersionStore {
  private readonly cache = new LruCache<string, DocumentedVersion>(20_000);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async load(ids: readonly string[]): Promise<Map<string, DocumentedVersion>> {
    return this.cache.loadMany(ids, async (missing) => {
      const rows = await versionsRepository.byIds(this.db, missing);
      return rows.map((row) => [row.id, row]);
    });
  }
}
