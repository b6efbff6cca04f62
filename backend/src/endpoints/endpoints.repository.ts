import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { EndpointShapes, ParametersDoc, ShapeChange, Version } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import { versionsRepository } from '../versions/versions.repository';

/** A documented endpoint with its current version's number and shapes. */
export interface CurrentEndpoint extends EndpointShapes, Version {
  id: string;
  method: string;
  path: string;
  description: string;
  updatedAt: Date;
}

/** An endpoint at one of its versions, as the OpenAPI export reads it (the version's description). */
export interface EndpointAtVersion extends EndpointShapes, Version {
  method: string;
  path: string;
  description: string;
}

/** The columns of `EndpointAtVersion`, from endpoints `e` and versions `v`. */
const AT_VERSION_COLUMNS = 'e.method, e.path, v.description, v.major, v.minor, v.request, v.responses, v.parameters';

/** One version of an endpoint's behaviour; every version comes from an approved proposal. */
export interface VersionRow {
  id: string;
  endpointId: string;
  major: number;
  minor: number;
  description: string;
  request: EndpointShapes['request'];
  responses: EndpointShapes['responses'];
  /** Documented query parameters and request headers; null when this version does not document them. */
  parameters: ParametersDoc | null;
  /** The changes from the previous version (empty for 1.0). */
  changes: ShapeChange[];
  proposalId: string | null;
  createdAt: Date;
  /** Made by a removal proposal: the endpoint is gone from this version on. */
  removed: boolean;
}

/**
 * The SQL of documented endpoints as the API reads them, raw SQL in one style. Versions are
 * written by `versions/version-writer.ts` through `versions.repository.ts`. A version marked
 * `removed` documents that its endpoint is gone: the list and the OpenAPI export leave it out.
 */
@Injectable()
export class EndpointsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** A project's documented endpoints with their current version, by path then method (removed ones left out). */
  current(projectId: string): Promise<CurrentEndpoint[]> {
    return this.db.query(
      `SELECT e.id, e.method, e.path, e.description, e.updated_at AS "updatedAt", v.major, v.minor, v.request, v.responses, v.parameters
           FROM endpoints e JOIN endpoint_versions v ON v.id = e.current_version_id
          WHERE e.project_id = $1 AND NOT v.removed
          ORDER BY e.path, e.method`,
      [projectId],
    );
  }

  /** The path templates of a project's documented endpoints, sorted, each once (the versions' read). */
  documentedPaths(projectId: string): Promise<string[]> {
    return versionsRepository.documentedPaths(this.db, projectId);
  }

  /** Whether the project has an endpoint with this id (documented or not). */
  async exists(projectId: string, id: string): Promise<boolean> {
    const [row] = (await this.db.query(
      'SELECT EXISTS (SELECT 1 FROM endpoints WHERE id = $1 AND project_id = $2) AS "exists"',
      [id, projectId],
    )) as Array<{ exists: boolean }>;
    return row?.exists === true;
  }

  /** An endpoint's versions, newest first (the proposals behind them are read through `ProposalsService`). */
  versions(endpointId: string): Promise<VersionRow[]> {
    return this.db.query(
      `SELECT v.id, v.endpoint_id AS "endpointId", v.major, v.minor, v.description, v.request, v.responses, v.parameters, v.changes, v.created_at AS "createdAt", v.proposal_id AS "proposalId", v.removed
           FROM endpoint_versions v
          WHERE v.endpoint_id = $1
          ORDER BY v.major DESC, v.minor DESC`,
      [endpointId],
    );
  }

  /** A project's endpoints that have version `version` (not a removal), at it, by path then method. */
  atVersion(projectId: string, version: Version): Promise<EndpointAtVersion[]> {
    return this.db.query(
      `SELECT ${AT_VERSION_COLUMNS} FROM endpoints e JOIN endpoint_versions v ON v.endpoint_id = e.id AND v.major = $2 AND v.minor = $3
        WHERE e.project_id = $1 AND NOT v.removed ORDER BY e.path, e.method`,
      [projectId, version.major, version.minor],
    );
  }

  /** The endpoints of the versions `versionIds` (those that exist and are no removal), each at it, by path then method. */
  atVersionIds(versionIds: readonly string[]): Promise<EndpointAtVersion[]> {
    return this.db.query(
      `SELECT ${AT_VERSION_COLUMNS} FROM endpoint_versions v JOIN endpoints e ON e.id = v.endpoint_id
        WHERE v.id = ANY($1::uuid[]) AND NOT v.removed ORDER BY e.path, e.method`,
      [versionIds],
    );
  }

  /** A project's documented endpoints at their current version, by path then method (removed ones left out). */
  atCurrentVersion(projectId: string): Promise<EndpointAtVersion[]> {
    return this.db.query(
      `SELECT ${AT_VERSION_COLUMNS} FROM endpoints e JOIN endpoint_versions v ON v.id = e.current_version_id
        WHERE e.project_id = $1 AND NOT v.removed ORDER BY e.path, e.method`,
      [projectId],
    );
  }
}
