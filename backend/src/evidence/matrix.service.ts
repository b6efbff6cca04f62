import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type EvidenceResponse, formatVersion, type VersionCell, type VersionMatrixResponse, type VersionMatrixRow } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import { badInput } from '../common/errors';
import type { ProjectEntity } from '../projects/project.entity';
import { MATRIX_KINDS, type MatrixKind } from './environment-row';

const NOT_SEEN: VersionCell = Object.freeze({ version: 'N/A' });
/** Length of a UUID's text form, the fixed-width head of each cell entry the matrix query returns. */
const UUID_LENGTH = 36;

/** One documented endpoint as a matrix column. */
interface Column {
  id: string;
  method: string;
  path: string;
  major: number;
  minor: number;
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
   * builds, production builds; newest first within each kind), `limit` rows per page.
   */
  async matrix(project: ProjectEntity, options: { kind?: MatrixKind; limit: number; cursor?: string }): Promise<VersionMatrixResponse> {
    const kinds = options.kind === undefined ? [...MATRIX_KINDS] : [options.kind];
    let after: { kind: MatrixKind; id: string } | null = null;
    if (options.cursor !== undefined) {
      const [row] = (await this.db.query('SELECT kind, id FROM environment_rows WHERE id = $1 AND project_id = $2', [options.cursor, project.id])) as Array<{ kind: MatrixKind; id: string }>;
      if (!row || !kinds.includes(row.kind)) throw badInput(`cursor ${options.cursor} is not a row of this matrix`);
      after = row;
    }
    type Row = VersionMatrixRow & { id: string };
    const rows: Row[] = [];
    // One indexed query per kind, in order, until the page is full (one more row tells if there is a next page).
    for (const kind of kinds.slice(after === null ? 0 : kinds.indexOf(after.kind))) {
      const wanted = options.limit + 1 - rows.length;
      if (wanted <= 0) break;
      const continuing = after !== null && after.kind === kind;
      const found: Row[] = await this.db.query(
        `SELECT r.id, r.kind, r.name, r.build, r.pull_request AS "pullRequest", r.commit, r.last_seen AS "lastSeen"
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

    const columns = await this.columns(project);
    const index = new Map(columns.map((c, i) => [c.id, i]));
    const cells: VersionCell[][] = page.map(() => columns.map(() => NOT_SEEN));
    const rowIndex = new Map(page.map((r, i) => [r.id, i]));
    if (page.length > 0) {
      // One text per row, `<endpoint id><~ if drift, else space><version>` joined by commas: measured
      // (backend/bench/versions.bench.ts) about half the SQL time of json_agg(json_build_array(…))
      // for 20 rows × 1,000 endpoints, and split faster than JSON.parse. Ids are 36-character UUID
      // texts and versions are `major.minor`, so neither contains the separators.
      const found: Array<{ rowId: string; cells: string }> = await this.db.query(
        `SELECT row_id AS "rowId", string_agg(endpoint_id::text || CASE WHEN drift THEN '~' ELSE ' ' END || version, ',') AS cells
           FROM evidence_cells WHERE row_id = ANY($1::uuid[]) GROUP BY row_id`,
        [page.map((r) => r.id)],
      );
      // Cells are shared objects per value: a page has a handful of distinct ones.
      const shared = new Map<string, VersionCell>();
      for (const { rowId, cells: text } of found) {
        const line = cells[rowIndex.get(rowId) ?? -1];
        if (line === undefined) continue;
        for (const entry of text.split(',')) {
          const c = index.get(entry.slice(0, UUID_LENGTH));
          if (c === undefined) continue;
          const key = entry.slice(UUID_LENGTH);
          let cell = shared.get(key);
          if (cell === undefined) {
            const version = key.slice(1);
            cell = key.startsWith('~') ? { version, drift: true } : { version };
            shared.set(key, cell);
          }
          line[c] = cell;
        }
      }
    }
    return {
      endpoints: columns.map((c) => ({ id: c.id, method: c.method, path: c.path, version: formatVersion(c) })),
      rows: page.map((r) => ({
        kind: r.kind,
        name: r.name,
        build: r.build,
        pullRequest: r.pullRequest,
        commit: r.commit,
        lastSeen: new Date(r.lastSeen).toISOString(),
      })),
      cells,
      nextCursor,
    };
  }

  /**
   * Which version of each documented endpoint runs in an environment now: the newest row (by first
   * evidence) of that environment that saw it; for `ci`, of one pull request or, without one, of any.
   */
  async evidence(project: ProjectEntity, environment: MatrixKind, pullRequest?: string): Promise<EvidenceResponse> {
    if (pullRequest !== undefined && environment !== 'ci') throw badInput('pullRequest is only for environment=ci');
    const scoped = environment !== 'ci' || pullRequest !== undefined;
    const rows: Array<{ endpointId: string; method: string; path: string; version: string | null; drift: boolean | null; row: string | null; pullRequest: string | null; build: string | null; commit: string | null; lastSeen: Date | null }> =
      await this.db.query(
        `SELECT e.id AS "endpointId", e.method, e.path, cur.version, cur.drift, r.name AS row, r.pull_request AS "pullRequest", r.build, r.commit, cur.last_seen AS "lastSeen"
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
    return {
      environment,
      pullRequest: pullRequest ?? null,
      endpoints: rows.map((r) => ({
        endpointId: r.endpointId,
        method: r.method,
        path: r.path,
        version: r.version ?? 'N/A',
        drift: r.drift ?? false,
        row: r.row,
        pullRequest: r.pullRequest,
        build: r.build,
        commit: r.commit,
        lastSeen: r.lastSeen === null ? null : new Date(r.lastSeen).toISOString(),
      })),
    };
  }

  private columns(project: ProjectEntity): Promise<Column[]> {
    return this.db.query(
      `SELECT e.id, e.method, e.path, v.major, v.minor FROM endpoints e JOIN endpoint_versions v ON v.id = e.current_version_id
        WHERE e.project_id = $1 ORDER BY e.path, e.method`,
      [project.id],
    );
  }
}
