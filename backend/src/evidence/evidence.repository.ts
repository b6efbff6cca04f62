import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { MatrixKind, VersionMatrixRow } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../common/queryable';

/** An environment row of a matrix page, with its stored cells text (views/matrix-texts.ts). */
export type StoredMatrixRow = Omit<VersionMatrixRow, 'lastSeen'> & {
  id: string;
  lastSeen: Date;
  cellsJson: string | null;
  cellsColumns: number | null;
};

/** The version of one documented endpoint an environment runs now, from its newest evidence there. */
export interface CurrentVersion {
  endpointId: string;
  method: string;
  path: string;
  /** Null when never seen there (or the version was deleted). */
  versionId: string | null;
  version: string | null;
  drift: boolean | null;
  row: string | null;
  pullRequest: string | null;
  build: string | null;
  commit: string | null;
  lastSeen: Date | null;
}

/**
 * The SQL of runtime evidence, raw SQL in one style: environment rows (the matrix's rows) and
 * "what runs there now" (`evidence_current`). The rows' matrix texts are views/matrix-texts.ts's.
 */
@Injectable()
export class EvidenceRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Runs `work` in one REPEATABLE READ transaction: everything it reads comes from one snapshot. */
  snapshot<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    return this.db.transaction('REPEATABLE READ', work);
  }

  /** The kind of a project's row `id`, or null when the project has no such row. */
  async rowKind(db: Queryable, projectId: string, id: string): Promise<{ kind: MatrixKind; id: string } | null> {
    const [row] = (await db.query('SELECT kind, id FROM environment_rows WHERE id = $1 AND project_id = $2', [
      id,
      projectId,
    ])) as Array<{ kind: MatrixKind; id: string }>;
    return row ?? null;
  }

  /**
   * Up to `limit` rows of a kind, newest first (by first evidence, then id), after row `after`
   * when given (a row of that kind), with their stored matrix texts.
   */
  matrixRows(
    db: Queryable,
    projectId: string,
    kind: MatrixKind,
    limit: number,
    after: string | null,
  ): Promise<StoredMatrixRow[]> {
    return db.query(
      `SELECT r.id, r.kind, r.name, r.build, r.pull_request AS "pullRequest", r.commit, r.last_seen AS "lastSeen",
              r.cells_json AS "cellsJson", r.cells_columns AS "cellsColumns"
         FROM environment_rows r
        WHERE r.project_id = $1 AND r.kind = $2
          ${after !== null ? 'AND (r.first_seen, r.id) < (SELECT first_seen, id FROM environment_rows WHERE id = $4)' : ''}
        ORDER BY r.first_seen DESC, r.id DESC
        LIMIT $3`,
      after !== null ? [projectId, kind, limit, after] : [projectId, kind, limit],
    );
  }

  /**
   * What runs now, per documented endpoint of a project (by path, then method), in one scope of a
   * kind, or with `scope` null in the newest row (by first evidence) of any scope of it.
   */
  currentVersions(projectId: string, kind: MatrixKind, scope: string | null): Promise<CurrentVersion[]> {
    return this.db.query(
      `SELECT e.id AS "endpointId", e.method, e.path, cur.version_id AS "versionId", cur.version, cur.drift, r.name AS row,
              r.pull_request AS "pullRequest", r.build, r.commit, cur.last_seen AS "lastSeen"
         FROM endpoints e
         ${
           scope !== null
             ? 'LEFT JOIN evidence_current cur ON cur.project_id = e.project_id AND cur.kind = $2 AND cur.scope = $3 AND cur.endpoint_id = e.id'
             : `LEFT JOIN LATERAL (
                  SELECT c.* FROM evidence_current c
                   WHERE c.project_id = e.project_id AND c.kind = $2 AND c.endpoint_id = e.id
                   ORDER BY c.row_first_seen DESC LIMIT 1) cur ON true`
         }
         LEFT JOIN environment_rows r ON r.id = cur.row_id
        WHERE e.project_id = $1 AND e.current_version_id IS NOT NULL
        ORDER BY e.path, e.method`,
      scope !== null ? [projectId, kind, scope] : [projectId, kind],
    );
  }
}
