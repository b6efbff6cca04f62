import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { EndpointShapes } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import { LruCache } from '../common/lru-cache';

/** The documented behaviour of one endpoint version. */
export interface DocumentedVersion extends EndpointShapes {
  id: string;
  endpointId: string;
  major: number;
  minor: number;
}

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
      const rows: DocumentedVersion[] = await this.db.query(
        `SELECT id, endpoint_id AS "endpointId", major, minor, request, responses, parameters FROM endpoint_versions WHERE id = ANY($1::uuid[])`,
        [missing],
      );
      return rows.map((row) => [row.id, row]);
    });
  }
}
