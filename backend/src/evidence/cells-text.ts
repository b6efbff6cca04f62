/**
 * Each environment row keeps its matrix cells pre-serialised (`environment_rows.cells_json`): the
 * JSON array of its `VersionCell`s in column order (documented endpoints by path, method), so a
 * matrix page is the rows' metadata plus the concatenation of stored texts, with no per-cell work
 * per request. `cells_columns` is the number of columns the text was built for: documented
 * endpoints are never removed, so an equal count means the same columns.
 *
 * Writers rebuild a row's text in the transaction that changed its cells, holding the row's lock
 * (see EvidenceService), and every row's text when the column set grows. A row without text has no
 * cells (every cell `N/A`).
 */

/** The `VersionCell` JSON of a row that never saw an endpoint (`NOT_SEEN` in the matrix). */
export const NOT_SEEN_JSON = '{"version":"N/A"}';

/**
 * SELECT of `(id, columns, cells)` for the rows `$2::uuid[]` of project `$1`: the cells text built
 * from `evidence_cells`, the source of truth. Versions are `major.minor` written by the backend, so
 * they need no JSON escaping. Rows are left out when the project has no documented endpoint.
 */
export const BUILD_CELLS_TEXT_SQL = `
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
 * rows' locks (or owns the whole database, as a migration does).
 */
export const REBUILD_CELLS_TEXT_SQL = `
  UPDATE environment_rows r SET cells_json = built.cells, cells_columns = built.columns
    FROM (${BUILD_CELLS_TEXT_SQL}) built
   WHERE r.id = built.id`;

/** The cells text of a row without cells: `N/A` in each of `columns` columns. */
export function notSeenCellsText(columns: number): string {
  return columns === 0 ? '[]' : `[${NOT_SEEN_JSON}${`,${NOT_SEEN_JSON}`.repeat(columns - 1)}]`;
}
