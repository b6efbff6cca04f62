import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  type EvidenceResponse,
  formatVersion,
  MATRIX_KINDS,
  type MatrixKind,
  NOT_SEEN_VERSION,
  type VersionMatrixResponse,
  type VersionMatrixRow,
} from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import { badInput } from '../common/errors';
import type { ProjectEntity } from '../projects/project.entity';
import { BUILD_CELLS_TEXT_SQL, notSeenCellsText } from './cells-text';

/** An environment row of a matrix page, with its stored cells text. */
type StoredRow = Omit<VersionMatrixRow, 'lastSeen'> & {
  id: string;
  lastSeen: Date;
  cellsJson: string | null;
  cellsColumns: number | null;
};

/** One documented endpoint as a matrix column. */
interface Column {
  id: string;
  method: string;
  path: string;
  major: number;
  minor: number;
}

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
 * Reads the precomputed evidence (no conformance work per request): the version matrix and
 * "which version runs there now". Both are a few indexed queries whatever the traffic volume.
 */
@Injectable()
export class MatrixService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * The matrix: documented endpoints (path, method order) × environment rows (CI runs, staging
   * builds, production builds; newest first within each kind), `limit` rows per page, as the JSON
   * text of a `VersionMatrixResponse`. Each row's cells are stored pre-serialised (cells-text.ts) and
   * spliced in as they are: a 100-row page is 100,000 cells.
   */
  matrixJson(project: ProjectEntity, options: { kind?: MatrixKind; limit: number; cursor?: string }): Promise<string> {
    // One snapshot: the columns and the rows' texts were written together.
    return this.db.transaction('REPEATABLE READ', async (manager) => {
      const kinds = options.kind === undefined ? [...MATRIX_KINDS] : [options.kind];
      let after: { kind: MatrixKind; id: string } | null = null;
      if (options.cursor !== undefined) {
        const [row] = (await manager.query('SELECT kind, id FROM environment_rows WHERE id = $1 AND project_id = $2', [
          options.cursor,
          project.id,
        ])) as Array<{ kind: MatrixKind; id: string }>;
        if (!row || !kinds.includes(row.kind)) throw badInput(`cursor ${options.cursor} is not a row of this matrix`);
        after = row;
      }
      const rows: StoredRow[] = [];
      // One indexed query per kind, in order, until the page is full (one more row tells if there is a next page).
      for (const kind of kinds.slice(after === null ? 0 : kinds.indexOf(after.kind))) {
        const wanted = options.limit + 1 - rows.length;
        if (wanted <= 0) break;
        const continuing = after !== null && after.kind === kind;
        const found: StoredRow[] = await manager.query(
          `SELECT r.id, r.kind, r.name, r.build, r.pull_request AS "pullRequest", r.commit, r.last_seen AS "lastSeen",
                  r.cells_json AS "cellsJson", r.cells_columns AS "cellsColumns"
             FROM environment_rows r
            WHERE r.project_id = $1 AND r.kind = $2
              ${continuing ? 'AND (r.first_seen, r.id) < (SELECT first_seen, id FROM environment_rows WHERE id = $4)' : ''}
            ORDER BY r.first_seen DESC, r.id DESC
            LIMIT $3`,
          continuing ? [project.id, kind, wanted, after?.id] : [project.id, kind, wanted],
        );
        rows.push(...found);
      }
      const page = rows.slice(0, options.limit);
      const nextCursor = rows.length > options.limit ? (page[page.length - 1]?.id ?? null) : null;
      const columns = await this.columns(manager, project);

      // A text built for fewer columns comes from a row created while an endpoint was being
      // documented (the column rewrite could not see it yet): built here until its next change.
      const stale = page.filter((r) => r.cellsJson !== null && r.cellsColumns !== columns.length).map((r) => r.id);
      const rebuilt = new Map<string, string>();
      if (stale.length > 0) {
        const found: Array<{ id: string; cells: string }> = await manager.query(BUILD_CELLS_TEXT_SQL, [
          project.id,
          stale,
        ]);
        for (const { id, cells } of found) rebuilt.set(id, cells);
      }
      const notSeen = notSeenCellsText(columns.length);
      const head = JSON.stringify({
        endpoints: columns.map((c) => ({ id: c.id, method: c.method, path: c.path, version: formatVersion(c) })),
        rows: page.map((r): VersionMatrixRow => ({
          kind: r.kind,
          name: r.name,
          build: r.build,
          pullRequest: r.pullRequest,
          commit: r.commit,
          lastSeen: new Date(r.lastSeen).toISOString(),
        })),
      } satisfies Omit<VersionMatrixResponse, 'cells' | 'nextCursor'>);
      const cells = page.map((r) => rebuilt.get(r.id) ?? r.cellsJson ?? notSeen).join(',');
      return `${head.slice(0, -1)},"cells":[${cells}],"nextCursor":${JSON.stringify(nextCursor)}}`;
    });
  }

  /**
   * Which version of each documented endpoint runs in an environment now: the newest row (by first
   * evidence) of that environment that saw it; for `ci`, of one pull request or, without one, of
   * any. Endpoints never seen there have a null version.
   * @throws DomainError BadInput for a pull request with another environment than `ci`.
   */
  async currentVersions(
    project: ProjectEntity,
    environment: MatrixKind,
    pullRequest?: string,
  ): Promise<CurrentVersion[]> {
    if (pullRequest !== undefined && environment !== 'ci') throw badInput('pullRequest is only for environment=ci');
    const scoped = environment !== 'ci' || pullRequest !== undefined;
    return this.db.query(
      `SELECT e.id AS "endpointId", e.method, e.path, cur.version_id AS "versionId", cur.version, cur.drift, r.name AS row,
              r.pull_request AS "pullRequest", r.build, r.commit, cur.last_seen AS "lastSeen"
         FROM endpoints e
         ${
           scoped
             ? 'LEFT JOIN evidence_current cur ON cur.project_id = e.project_id AND cur.kind = $2 AND cur.scope = $3 AND cur.endpoint_id = e.id'
             : `LEFT JOIN LATERAL (
                  SELECT c.* FROM evidence_current c
                   WHERE c.project_id = e.project_id AND c.kind = $2 AND c.endpoint_id = e.id
                   ORDER BY c.row_first_seen DESC LIMIT 1) cur ON true`
         }
         LEFT JOIN environment_rows r ON r.id = cur.row_id
        WHERE e.project_id = $1 AND e.current_version_id IS NOT NULL
        ORDER BY e.path, e.method`,
      scoped ? [project.id, environment, pullRequest ?? ''] : [project.id, environment],
    );
  }

  /** `GET /evidence`: the version of each documented endpoint an environment runs now, `N/A` where never seen. */
  async evidence(project: ProjectEntity, environment: MatrixKind, pullRequest?: string): Promise<EvidenceResponse> {
    const rows = await this.currentVersions(project, environment, pullRequest);
    return {
      environment,
      pullRequest: pullRequest ?? null,
      endpoints: rows.map((r) => ({
        endpointId: r.endpointId,
        method: r.method,
        path: r.path,
        version: r.version ?? NOT_SEEN_VERSION,
        drift: r.drift ?? false,
        row: r.row,
        pullRequest: r.pullRequest,
        build: r.build,
        commit: r.commit,
        lastSeen: r.lastSeen === null ? null : new Date(r.lastSeen).toISOString(),
      })),
    };
  }

  private columns(manager: EntityManager, project: ProjectEntity): Promise<Column[]> {
    return manager.query(
      `SELECT e.id, e.method, e.path, v.major, v.minor FROM endpoints e JOIN endpoint_versions v ON v.id = e.current_version_id
        WHERE e.project_id = $1 ORDER BY e.path, e.method`,
      [project.id],
    );
  }
}
