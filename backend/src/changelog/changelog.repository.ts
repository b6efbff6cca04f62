import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { MATRIX_KINDS, type MatrixKind, type ShapeChange } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import { sqlRank } from '../common/sql';

/** Production first, then staging, then ci: the shared lifecycle order reversed. */
const PRODUCTION_FIRST_SQL = sqlRank('c.kind', [...MATRIX_KINDS].reverse());

/** A version of an endpoint with the one before it and the proposal behind it. */
export interface ChangelogRow {
  versionId: string;
  endpointId: string;
  method: string;
  path: string;
  major: number;
  minor: number;
  previousMajor: number | null;
  previousMinor: number | null;
  changes: ShapeChange[];
  createdAt: Date;
  proposalId: string | null;
  title: string | null;
  createdBy: string | null;
  approvedBy: string | null;
  approvedAt: Date | null;
}

/** Where a version runs now: an environment ("what runs there now") whose newest evidence conforms to it. */
export interface RunsInRow {
  versionId: string;
  kind: MatrixKind;
  name: string;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
  lastSeen: Date;
}

/** One production (or staging) build and the versions its evidence showed, in order of first evidence. */
export interface BuildRow {
  id: string;
  name: string;
  build: string | null;
  commit: string | null;
  firstSeen: Date;
  lastSeen: Date;
}

/** A cell of a build: the version one endpoint showed there. */
export interface BuildCellRow {
  rowId: string;
  endpointId: string;
  method: string;
  path: string;
  versionId: string | null;
  version: string;
  drift: boolean;
}

/**
 * The changelog's reads: versions with their proposals (newest first), where each runs now, and
 * the builds of an environment with their cells. A read model over versions, proposals and
 * evidence, as `views/` is over captures: it writes nothing.
 */
@Injectable()
export class ChangelogRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The newest `limit` versions of a project's endpoints, newest first, each with the one before it. */
  versions(projectId: string, limit: number): Promise<ChangelogRow[]> {
    return this.db.query(
      `SELECT v.id AS "versionId", v.endpoint_id AS "endpointId", v.method, v.path, v.major, v.minor,
              v.previous_major AS "previousMajor", v.previous_minor AS "previousMinor", v.changes,
              v.created_at AS "createdAt", p.id AS "proposalId", p.title, p.created_by AS "createdBy",
              p.approved_by AS "approvedBy", p.approved_at AS "approvedAt"
         FROM (SELECT v.*, e.method, e.path,
                      lag(v.major) OVER (PARTITION BY v.endpoint_id ORDER BY v.major, v.minor) AS previous_major,
                      lag(v.minor) OVER (PARTITION BY v.endpoint_id ORDER BY v.major, v.minor) AS previous_minor
                 FROM endpoint_versions v JOIN endpoints e ON e.id = v.endpoint_id
                WHERE e.project_id = $1) v
         LEFT JOIN proposals p ON p.id = v.proposal_id
        ORDER BY v.created_at DESC, v.path, v.method
        LIMIT $2`,
      [projectId, limit],
    );
  }

  /** Where the versions `versionIds` run now (without drift), production first. */
  runsIn(projectId: string, versionIds: readonly string[]): Promise<RunsInRow[]> {
    return this.db.query(
      `SELECT c.version_id AS "versionId", c.kind, r.name, r.pull_request AS "pullRequest", r.build, r.commit,
              c.last_seen AS "lastSeen"
         FROM evidence_current c JOIN environment_rows r ON r.id = c.row_id
        WHERE c.project_id = $1 AND c.version_id = ANY($2::uuid[]) AND NOT c.drift
        ORDER BY ${PRODUCTION_FIRST_SQL}, c.last_seen DESC`,
      [projectId, versionIds],
    );
  }

  /** The newest `limit` builds of an environment kind, newest first (by first evidence). */
  builds(projectId: string, kind: MatrixKind, limit: number): Promise<BuildRow[]> {
    return this.db.query(
      `SELECT id, name, build, commit, first_seen AS "firstSeen", last_seen AS "lastSeen"
         FROM environment_rows WHERE project_id = $1 AND kind = $2
        ORDER BY first_seen DESC, id DESC LIMIT $3`,
      [projectId, kind, limit],
    );
  }

  /** The cells of some environment rows, with their endpoints. */
  cells(rowIds: readonly string[]): Promise<BuildCellRow[]> {
    return this.db.query(
      `SELECT c.row_id AS "rowId", c.endpoint_id AS "endpointId", e.method, e.path, c.version_id AS "versionId",
              c.version, c.drift
         FROM evidence_cells c JOIN endpoints e ON e.id = c.endpoint_id
        WHERE c.row_id = ANY($1::uuid[]) ORDER BY e.path, e.method`,
      [rowIds],
    );
  }
}
