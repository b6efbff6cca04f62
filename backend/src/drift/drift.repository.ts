import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { MATRIX_KINDS, type MatrixKind } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../common/queryable';
import { sqlRank } from '../common/sql';

/** A kind's place in the lifecycle (ci, staging, production), from the shared list. */
const KIND_ORDER_SQL = sqlRank('kind', MATRIX_KINDS);

/** The environment row a drift was seen in. */
export interface DriftRow {
  id: string;
  kind: MatrixKind;
  name: string;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
}

/** A drifting cell as stored, with one of its origins (a row per kind it was seen in first; none: `originKind` null). */
export interface DriftCellRow {
  rowId: string;
  endpointId: string;
  kind: MatrixKind;
  name: string;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
  method: string;
  path: string;
  version: string;
  originKind: MatrixKind | null;
  originName: string | null;
  originPullRequest: string | null;
  originBuild: string | null;
  originCommit: string | null;
  originSeenAt: Date | null;
}

/** A row's kind, name, pull request, build and commit, as consecutive parameters. */
const rowColumns = (row: DriftRow): Array<string | null> => [
  row.kind,
  row.name,
  row.pullRequest,
  row.build,
  row.commit,
];

/** Drifting cells with the first origin of each kind among their signatures, in one order. */
const CELLS_WITH_ORIGINS = `
  SELECT c.row_id AS "rowId", c.endpoint_id AS "endpointId", c.kind, c.name, c.pull_request AS "pullRequest",
         c.build, c.commit, c.method, c.path, c.version,
         o.kind AS "originKind", o.row_name AS "originName", o.pull_request AS "originPullRequest",
         o.build AS "originBuild", o.commit AS "originCommit", o.seen_at AS "originSeenAt"
    FROM drift_cells c
    LEFT JOIN LATERAL (
      SELECT DISTINCT ON (d.kind) d.kind, d.row_name, d.pull_request, d.build, d.commit, d.seen_at
        FROM drift_origins d
       WHERE d.endpoint_id = c.endpoint_id AND d.signature = ANY(c.signatures)
       ORDER BY d.kind, d.seen_at, d.row_name
    ) o ON true`;

/** The SQL of where drift began (`drift_origins`, `drift_cells`), raw SQL in one style. */
@Injectable()
export class DriftRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Records `row` as where each (endpoint, signature) was seen first in its kind, unless an earlier
   * row was: the first writer keeps it, with the commit and build of the batch that brought that
   * exchange to the row. Written in key order, so concurrent batches lock alike.
   */
  async addOrigins(
    db: Queryable,
    projectId: string,
    row: Pick<DriftRow, 'kind' | 'name' | 'pullRequest'>,
    seen: ReadonlyArray<{
      endpointId: string;
      signature: string;
      seenAt: string;
      commit: string | null;
      build: string | null;
    }>,
  ): Promise<void> {
    if (seen.length === 0) return;
    await db.query(
      `INSERT INTO drift_origins (endpoint_id, signature, kind, project_id, row_name, pull_request, build, commit, seen_at)
       SELECT s.endpoint_id, s.signature, $2, $1, $3, $4, s.build, s.commit, s.seen_at
         FROM unnest($5::uuid[], $6::text[], $7::timestamptz[], $8::text[], $9::text[]) AS s(endpoint_id, signature, seen_at, build, commit)
        ORDER BY s.endpoint_id, s.signature
       ON CONFLICT (endpoint_id, signature, kind, project_id) DO NOTHING`,
      [
        projectId,
        row.kind,
        row.name,
        row.pullRequest,
        seen.map((s) => s.endpointId),
        seen.map((s) => s.signature),
        seen.map((s) => s.seenAt),
        seen.map((s) => s.build),
        seen.map((s) => s.commit),
      ],
    );
  }

  /** Keeps the row's drifting cells of these endpoints, with the signatures that make them drift. */
  async putCells(
    db: Queryable,
    projectId: string,
    row: DriftRow,
    cells: ReadonlyArray<{ endpointId: string; method: string; path: string; version: string; signatures: string[] }>,
  ): Promise<void> {
    if (cells.length === 0) return;
    await db.query(
      `INSERT INTO drift_cells AS c (row_id, endpoint_id, project_id, kind, name, pull_request, build, commit, method, path,
                                    version, signatures)
       SELECT $1, s.endpoint_id, $2, $3, $4, $5, $6, $7, s.method, s.path, s.version, ARRAY(SELECT json_array_elements_text(s.signatures::json))
         FROM unnest($8::uuid[], $9::text[], $10::text[], $11::text[], $12::text[])
              AS s(endpoint_id, method, path, version, signatures)
        ORDER BY s.endpoint_id
       ON CONFLICT (row_id, endpoint_id, project_id) DO UPDATE
          SET version = EXCLUDED.version, signatures = EXCLUDED.signatures, commit = EXCLUDED.commit,
              build = EXCLUDED.build, pull_request = EXCLUDED.pull_request`,
      [
        row.id,
        projectId,
        ...rowColumns(row),
        cells.map((c) => c.endpointId),
        cells.map((c) => c.method),
        cells.map((c) => c.path),
        cells.map((c) => c.version),
        cells.map((c) => JSON.stringify(c.signatures)),
      ],
    );
  }

  /** Forgets the row's cells of these endpoints: they no longer drift. */
  async dropCells(db: Queryable, rowId: string, endpointIds: readonly string[]): Promise<void> {
    if (endpointIds.length === 0) return;
    await db.query('DELETE FROM drift_cells WHERE row_id = $1 AND endpoint_id = ANY($2::uuid[])', [rowId, endpointIds]);
  }

  /** One row's drifting cells of these endpoints with their origins (read in the writing transaction). */
  cellsOf(db: Queryable, rowId: string, endpointIds: readonly string[]): Promise<DriftCellRow[]> {
    return db.query(
      `${CELLS_WITH_ORIGINS} WHERE c.row_id = $1 AND c.endpoint_id = ANY($2::uuid[]) ORDER BY c.endpoint_id, o.kind`,
      [rowId, endpointIds],
    );
  }

  /** A project's drifting cells with their origins: kinds in lifecycle order, newest rows first within each. */
  project(projectId: string, limit: number): Promise<DriftCellRow[]> {
    return this.db.query(
      `${CELLS_WITH_ORIGINS}
        WHERE (c.row_id, c.endpoint_id) IN
              (SELECT row_id, endpoint_id FROM drift_cells WHERE project_id = $1
                ORDER BY ${KIND_ORDER_SQL}, name, path, method LIMIT $2)
        ORDER BY ${sqlRank('c.kind', MATRIX_KINDS)}, c.name, c.path, c.method, o.kind`,
      [projectId, limit],
    );
  }
}
