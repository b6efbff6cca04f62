import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { LruCache } from '../common/lru-cache';
import type { Queryable } from '../common/queryable';
import {
  type DocumentedVersion,
  type EndpointWithCurrent,
  type MadeVersion,
  versionsRepository,
} from './versions.repository';

/**
 * Reads endpoint versions for other domains. A version never changes once written (a change makes
 * a new version), so `load` caches by id, which is safe on every replica.
 */
@Injectable()
export class VersionStore {
  private readonly cache = new LruCache<string, DocumentedVersion>(20_000);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Versions by id (those that exist), read through `runner` when given: a transaction sees the
   * versions it made before they are committed.
   */
  async load(ids: readonly string[], runner: Queryable = this.db): Promise<Map<string, DocumentedVersion>> {
    return this.cache.loadMany(ids, async (missing) => {
      const rows = await versionsRepository.byIds(runner, missing);
      return rows.map((row) => [row.id, row]);
    });
  }

  /** The path templates of a project's documented endpoints, sorted, each once (in `runner`'s transaction when given). */
  documentedPaths(projectId: string, runner: Queryable = this.db): Promise<string[]> {
    return versionsRepository.documentedPaths(runner, projectId);
  }

  /** The versions a proposal made, each with the one before it, by path then method. */
  madeBy(proposalId: string): Promise<MadeVersion[]> {
    return versionsRepository.madeBy(this.db, proposalId);
  }

  /** A project's endpoints of these methods and paths (those that exist), each with its current version (uncached). */
  withCurrent(
    projectId: string,
    keys: ReadonlyArray<{ method: string; path: string }>,
  ): Promise<EndpointWithCurrent[]> {
    return versionsRepository.withCurrent(this.db, projectId, keys);
  }
}
