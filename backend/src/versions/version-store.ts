import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { LruCache } from '../common/lru-cache';
import type { Queryable } from '../common/queryable';
import {
  type DocumentedCurrent,
  type DocumentedVersion,
  type EndpointRef,
  type EndpointWithCurrent,
  type MadeVersion,
  type ProposalVersion,
  type VersionNumber,
  versionsRepository,
} from './versions.repository';

/**
 * Reads documented endpoints and their versions for other domains (evidence, proposals, paths, runtime, consumers, usage):
 * they call this, never the `endpoints` and `endpoint_versions` tables. A version never changes
 * once written (a change makes a new version), so `load` caches by id, which is safe on every
 * replica; the other reads are not cached. Each read runs through `runner` when given, so it sees
 * the caller's transaction (versions it made and has not committed yet).
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

  /** The documented endpoints of a project, by path then method (the matrix's columns). */
  documented(projectId: string, runner: Queryable = this.db): Promise<EndpointRef[]> {
    return versionsRepository.documented(runner, projectId);
  }

  /** A project's documented endpoints at their current version (of `keys` only, when given), by path then method. */
  documentedCurrent(
    projectId: string,
    keys?: ReadonlyArray<{ method: string; path: string }>,
    runner: Queryable = this.db,
  ): Promise<DocumentedCurrent[]> {
    return versionsRepository.documentedCurrent(runner, projectId, keys);
  }

  /** The documented endpoints of a project among some methods and paths, in id order. */
  documentedAmong(
    projectId: string,
    keys: ReadonlyArray<{ method: string; path: string }>,
    runner: Queryable = this.db,
  ): Promise<EndpointRef[]> {
    return versionsRepository.documentedAmong(runner, projectId, keys);
  }

  /** The documented endpoints of a project at one path, in id order. */
  documentedAt(projectId: string, path: string, runner: Queryable = this.db): Promise<EndpointRef[]> {
    return versionsRepository.documentedAt(runner, projectId, path);
  }

  /** A project's endpoints by id (those that exist), in id order. */
  endpointsByIds(projectId: string, ids: readonly string[], runner: Queryable = this.db): Promise<EndpointRef[]> {
    return versionsRepository.endpointsByIds(runner, projectId, ids);
  }

  /** The id of a project's endpoint `method path` (documented or not), or null when it has none. */
  endpointIdOf(projectId: string, method: string, path: string, runner: Queryable = this.db): Promise<string | null> {
    return versionsRepository.endpointIdOf(runner, projectId, method, path);
  }

  /** Those of the endpoints `ids` whose only version is their current one (documented for the first time). */
  firstDocumented(ids: readonly string[], runner: Queryable = this.db): Promise<string[]> {
    return versionsRepository.firstDocumented(runner, ids);
  }

  /** Every version of some endpoints, id and number. */
  versionsOf(endpointIds: readonly string[], runner: Queryable = this.db): Promise<VersionNumber[]> {
    return versionsRepository.versionsOf(runner, endpointIds);
  }

  /** The proposals that made a version of one of the endpoints `endpointIds`, each once. */
  proposalsVersioning(endpointIds: readonly string[], runner: Queryable = this.db): Promise<string[]> {
    return versionsRepository.proposalsVersioning(runner, endpointIds);
  }

  /** Every version the proposals `proposalIds` made. */
  madeByProposals(proposalIds: readonly string[], runner: Queryable = this.db): Promise<ProposalVersion[]> {
    return versionsRepository.madeByProposals(runner, proposalIds);
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
