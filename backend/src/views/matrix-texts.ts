/**
 * The version matrix's kept texts. Each environment row keeps its matrix cells pre-serialised
 * (`environment_rows.cells_json`): the JSON array of its `VersionCell`s in column order (documented
 * endpoints by path, method), so a matrix page is the rows' metadata plus the concatenation of stored
 * texts, with no per-cell work per request. `cells_columns` is the number of columns the text was
 * built for: documented endpoints are never removed, so an equal count means the same columns.
 *
 * Writers (evidence/evidence.service.ts) rebuild a row's text in the transaction that changed its
 * cells, holding the row's lock, and every row's text when the column set grows. A row without
 * text has no cells (every cell `N/A`). This file is the only one that knows the text's form and
 * the columns' order: a field of a matrix cell is added here (and in `VersionCell`).
 */

import { NOT_SEEN_VERSION } from '@spectator/shared';
import type { Queryable } from '../common/queryable';

/** The `VersionCell` JSON of a row that never saw an endpoint (`NOT_SEEN` in the matrix). */
export const NOT_SEEN_JSON = JSON.stringify({ version: NOT_SEEN_VERSION });

/**
 * SELECT of `(id, columns, cells)` for the rows `$2::uuid[]` of project `$1`: the cells text built
 * from `evidence_cells`, the source of truth. Versions are `major.minor` written by the backend, so
 * they need no JSON escaping. Rows are left out when the project has no documented endpoint.
 */
const BUILD_CELLS_TEXT_SQL = `
  SELECT target.id, count(*)::int AS columns,
         '[' || string_agg(CASE WHEN c.version IS NULL THEN '${NOT_SEEN_JSON}'
                                WHEN c.drift THEN '{"version":"' || c.version || '","drift":true}'
                                ELSE '{"version":"' || c.version || '"}' END,
                           ',' ORDER BY e.path, e.method) || ']' AS cells
    FROM unnest($2::uuid[]) AS target(id)
    CROSS JOIN endpoints e
    -- The rows' cells by primary key, not a join on all cells (the planner would scan them).
    LEFT JOIN (SELECT row_id, endpoint_id, version, drift FROM evidence_cells WHERE row_id = ANY($2::uuid[])) c
           ON c.row_id = target.id AND c.endpoint_id = e.id
   WHERE e.project_id = $1 AND e.current_version_id IS NOT NULL
   GROUP BY target.id`;

/**
 * Rewrites the stored cells text of the rows `$2::uuid[]` of project `$1`. The caller holds those
 * rows' locks. Exported for the versions benchmark; code calls `matrixTexts.rebuild` (the
 * migration that backfilled the texts keeps a frozen copy of its own).
 */
export const REBUILD_CELLS_TEXT_SQL = `
  UPDATE environment_rows r SET cells_json = built.cells, cells_columns = built.columns
    FROM (${BUILD_CELLS_TEXT_SQL}) built
   WHERE r.id = built.id`;

/** How many rows' texts are held in memory at once while columns are inserted. */
const INSERT_CHUNK_ROWS = 100;

/** One column of the matrix: a documented endpoint at its current version. */
export interface MatrixColumn {
  id: string;
  method: string;
  path: string;
  major: number;
  minor: number;
}

/** The matrix texts' interface: the columns, and building, rebuilding and widening rows' texts. */
export const matrixTexts = {
  /** A project's matrix columns, in the order the texts hold their cells (path, then method). */
  columns(db: Queryable, projectId: string): Promise<MatrixColumn[]> {
    return db.query(
      `SELECT e.id, e.method, e.path, v.major, v.minor FROM endpoints e JOIN endpoint_versions v ON v.id = e.current_version_id
        WHERE e.project_id = $1 ORDER BY e.path, e.method`,
      [projectId],
    );
  },

  /** The text of a row without cells: `N/A` in each of `columns` columns. */
  notSeen(columns: number): string {
    return columns === 0 ? '[]' : `[${NOT_SEEN_JSON}${`,${NOT_SEEN_JSON}`.repeat(columns - 1)}]`;
  },

  /**
   * The texts of the rows `rowIds` of a project built now from their cells, by row id (none when
   * the project has no documented endpoint). Nothing is written.
   */
  async build(db: Queryable, projectId: string, rowIds: readonly string[]): Promise<Map<string, string>> {
    const built: Array<{ id: string; cells: string }> = await db.query(BUILD_CELLS_TEXT_SQL, [projectId, rowIds]);
    return new Map(built.map(({ id, cells }) => [id, cells]));
  },

  /** Rewrites the stored texts of the rows `rowIds` of a project; the caller holds those rows' locks. */
  async rebuild(db: Queryable, projectId: string, rowIds: readonly string[]): Promise<void> {
    await db.query(REBUILD_CELLS_TEXT_SQL, [projectId, rowIds]);
  },

  /**
   * Inserts an `N/A` column for each endpoint just documented (`newEndpointIds`, documented in this
   * transaction) into the stored texts of `rowIds` (locked by the caller, none of them with a cell
   * of those endpoints): a splice of the stored arrays, with no join of rows × endpoints. Returns
   * the rows whose text was not built for the columns before these, to be rebuilt instead; rows
   * without text stay without (all `N/A`).
   */
  async insertNotSeenColumns(
    db: Queryable,
    projectId: string,
    rowIds: readonly string[],
    newEndpointIds: readonly string[],
  ): Promise<string[]> {
    const positions: Array<{ ordinal: number; total: number }> = await db.query(
      `SELECT ordinal, total FROM (
         SELECT id, (row_number() OVER (ORDER BY path, method))::int - 1 AS ordinal, (count(*) OVER ())::int AS total
           FROM endpoints WHERE project_id = $1 AND current_version_id IS NOT NULL) columns
        WHERE id = ANY($2::uuid[]) ORDER BY ordinal`,
      [projectId, newEndpointIds],
    );
    const total = positions[0]?.total;
    if (total === undefined) return [];
    const before = total - positions.length;
    const notSeen = JSON.parse(NOT_SEEN_JSON) as unknown;
    const stale: string[] = [];
    for (let start = 0; start < rowIds.length; start += INSERT_CHUNK_ROWS) {
      const chunk = rowIds.slice(start, start + INSERT_CHUNK_ROWS);
      const stored: Array<{ id: string; cellsJson: string | null; cellsColumns: number | null }> = await db.query(
        'SELECT id, cells_json AS "cellsJson", cells_columns AS "cellsColumns" FROM environment_rows WHERE id = ANY($1::uuid[])',
        [chunk],
      );
      const spliced: Array<{ id: string; cells: string }> = [];
      for (const row of stored) {
        if (row.cellsJson === null) continue;
        if (row.cellsColumns !== before) {
          stale.push(row.id);
          continue;
        }
        const cells = JSON.parse(row.cellsJson) as unknown[];
        // Ascending final positions: each insertion lands where it ends up.
        for (const { ordinal } of positions) cells.splice(ordinal, 0, notSeen);
        spliced.push({ id: row.id, cells: JSON.stringify(cells) });
      }
      if (spliced.length === 0) continue;
      // As one jsonb parameter: measured about 5x faster than a text[] of the same texts (array escaping).
      await db.query(
        `UPDATE environment_rows r SET cells_json = x.cells, cells_columns = $2 FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, cells text) WHERE r.id = x.id`,
        [JSON.stringify(spliced), total],
      );
    }
    return stale;
  },
};
