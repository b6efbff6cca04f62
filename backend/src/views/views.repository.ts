import { NOT_SEEN_VERSION } from '@spectator/shared';
import type { Queryable } from '../common/queryable';
import type { EndpointKey } from './view-cache';

/** The `VersionCell` JSON of a row that never saw an endpoint (`NOT_SEEN` in the matrix). */
export const NOT_SEEN_JSON = JSON.stringify({ version: NOT_SEEN_VERSION });

/**
 * The `VersionCell` JSON of the `evidence_cells` row `c` (all NULL: never seen), as
 * `JSON.stringify` writes it. Versions are `major.minor` written by the backend, so they need no
 * JSON escaping.
 */
const CELL_TEXT = `CASE WHEN c.version IS NULL THEN '${NOT_SEEN_JSON}'
                        WHEN c.drift THEN '{"version":"' || c.version || '","drift":true}'
                        ELSE '{"version":"' || c.version || '"}' END`;

/** A project `$1`'s documented endpoints (`columns`: id, 0-based ordinal in path, method order, and their number). */
const COLUMNS_SQL = `
  SELECT id, (row_number() OVER (ORDER BY path, method))::int - 1 AS ordinal, (count(*) OVER ())::int AS total
    FROM endpoints WHERE project_id = $1 AND current_version_id IS NOT NULL`;

/**
 * SELECT of `(id, columns, cells)` for the rows `$2::uuid[]` of project `$1`: the cells text built
 * from `evidence_cells`, the source of truth. Rows are left out when the project has no documented
 * endpoint.
 */
const BUILD_CELLS_TEXT_SQL = `
  SELECT target.id, count(*)::int AS columns,
         '[' || string_agg(${CELL_TEXT}, ',' ORDER BY e.path, e.method) || ']' AS cells
    FROM unnest($2::uuid[]) AS target(id)
    CROSS JOIN endpoints e
    -- Each cell by its whole primary key (row, endpoint, project): a join on fewer of its columns
    -- let the planner misjudge a row's cells as two and filter every endpoint against every cell.
    LEFT JOIN evidence_cells c ON c.row_id = target.id AND c.endpoint_id = e.id AND c.project_id = e.project_id
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

/**
 * What patching row `$2`'s stored text for the cells of endpoints `$3::uuid[]` of project `$1`
 * needs: the stored text and its number of columns, the project's number of columns now, and each
 * of those endpoints that is documented as `[ordinal, cell JSON]`. The sort of the endpoints reads
 * no cell, where building a text probes a cell for every column.
 */
const PATCH_INPUTS_SQL = `
  WITH columns AS (${COLUMNS_SQL})
  SELECT r.cells_json AS "cellsJson", r.cells_columns AS "cellsColumns",
         (SELECT total FROM columns LIMIT 1) AS total,
         (SELECT coalesce(json_agg(json_build_array(col.ordinal, ${CELL_TEXT})), '[]')
            FROM columns col
            LEFT JOIN evidence_cells c ON c.row_id = r.id AND c.endpoint_id = col.id AND c.project_id = $1
           WHERE col.id = ANY($3::uuid[])) AS cells
    FROM environment_rows r WHERE r.id = $2 AND r.project_id = $1`;

/** A row's stored text with what patching it needs (PATCH_INPUTS_SQL). */
export interface PatchInputs extends Omit<StoredText, 'id'> {
  /** The project's documented endpoints now (null: none). */
  total: number | null;
  /** `[ordinal, cell JSON]` of each endpoint asked for that is documented. */
  cells: Array<[number, string]>;
}

/**
 * The inputs of capture `$1`'s views in project `$2`, all in the statement's one snapshot: the
 * capture's rules, the project's documentation revision, the snapshot and PostgreSQL's clock, and
 * for each kept view's snapshot in `$3` the keys the batches since touched (`changes[i]`: parallel
 * `methods` and `paths`, repeats possible; `unknown` when a batch did not record its keys).
 *
 * A batch's changes are seen by a snapshot exactly when its transaction is (`pg_visible_in_snapshot`
 * on the `xid` its `processed_batches` row records, in the same transaction as its summaries): the
 * batches a kept view's snapshot did not see are those committed since, whatever order
 * transactions took their ids and committed in. The index on `(capture_id, xid)` finds them from
 * the snapshot's xmin (no transaction below it was running then). Keys are deduplicated and
 * sorted in Node: in SQL that cost more than the rest of the statement (collation-aware compares).
 */
const VIEW_INPUTS = `
  WITH kept AS (
    SELECT k.i, k.snapshot::pg_snapshot AS snapshot FROM unnest($3::text[]) WITH ORDINALITY AS k(snapshot, i)
  ), batches AS (
    SELECT kept.i, b.touched_methods, b.touched_paths
      FROM kept JOIN processed_batches b
        ON b.capture_id = $1 AND b.xid >= pg_snapshot_xmin(kept.snapshot) AND NOT pg_visible_in_snapshot(b.xid, kept.snapshot)
  ), changes AS (
    SELECT kept.i, bool_or(b.i IS NOT NULL AND b.touched_methods IS NULL) AS unknown,
           -- Two aggregates of one query level read the rows in the same order: the arrays stay paired.
           array_agg(t.method) FILTER (WHERE t.method IS NOT NULL) AS methods, array_agg(t.path) FILTER (WHERE t.method IS NOT NULL) AS paths
      FROM kept LEFT JOIN batches b ON b.i = kept.i
      LEFT JOIN LATERAL unnest(b.touched_methods, b.touched_paths) AS t(method, path) ON true
     GROUP BY kept.i
  )
  SELECT c.rules, p.documentation_revision::text AS documentation, pg_current_snapshot()::text AS snapshot,
         extract(epoch FROM now())::float8 AS "takenAt",
         (SELECT json_agg(json_build_object('unknown', changes.unknown, 'methods', changes.methods, 'paths', changes.paths) ORDER BY changes.i) FROM changes) AS changes
    FROM captures c JOIN projects p ON p.id = c.project_id
   WHERE c.id = $1 AND c.project_id = $2`;

/** The keys the batches since one kept view's snapshot touched (parallel arrays; `unknown`: a batch did not record them). */
export interface TouchedKeys {
  unknown: boolean;
  methods: string[] | null;
  paths: string[] | null;
}

/** A row of VIEW_INPUTS. */
export interface ViewInputsRow {
  rules: string[];
  documentation: string;
  snapshot: string;
  takenAt: number;
  changes: TouchedKeys[] | null;
}

/** A project's documentation revision with one of its documented endpoints (`endpointId` null: it has none). */
export type DocumentedRow = { revision: string } & (
  { endpointId: null } | (EndpointKey & { endpointId: string; versionId: string })
);

/** A row's stored matrix text and the number of columns it was built for (null: no text). */
export interface StoredText {
  id: string;
  cellsJson: string | null;
  cellsColumns: number | null;
}

/**
 * The SQL of views/ (the version matrix's kept row texts, `matrixTexts`; the inputs of capture
 * views, `CaptureViews`), raw SQL through `Queryable` like every domain's repository: writers pass
 * their transaction's manager. Views are read models: these statements read other domains' tables
 * themselves, each in one statement where calls through those domains would take several or see
 * more than one snapshot (docs/backend.md, "Layout", names them and says why).
 */
export const viewsRepository = {
  /** The cells texts of the rows `rowIds` of a project built now from their cells (none without documented endpoints). */
  buildTexts(
    db: Queryable,
    projectId: string,
    rowIds: readonly string[],
  ): Promise<Array<{ id: string; cells: string }>> {
    return db.query(BUILD_CELLS_TEXT_SQL, [projectId, rowIds]);
  },

  /** Rewrites the stored texts of the rows `rowIds` of a project; the caller holds those rows' locks. */
  async rebuildTexts(db: Queryable, projectId: string, rowIds: readonly string[]): Promise<void> {
    await db.query(REBUILD_CELLS_TEXT_SQL, [projectId, rowIds]);
  },

  /**
   * The positions (0-based, in path, method order) of the documented endpoints `endpointIds` among
   * a project's documented endpoints, ascending, each with the number of all of them.
   */
  columnPositions(
    db: Queryable,
    projectId: string,
    endpointIds: readonly string[],
  ): Promise<Array<{ ordinal: number; total: number }>> {
    return db.query(`SELECT ordinal, total FROM (${COLUMNS_SQL}) columns WHERE id = ANY($2::uuid[]) ORDER BY ordinal`, [
      projectId,
      endpointIds,
    ]);
  },

  /** PATCH_INPUTS_SQL for row `rowId` of a project and the endpoints `endpointIds`; undefined when the row does not exist. */
  async patchInputs(
    db: Queryable,
    projectId: string,
    rowId: string,
    endpointIds: readonly string[],
  ): Promise<PatchInputs | undefined> {
    const [row] = (await db.query(PATCH_INPUTS_SQL, [projectId, rowId, endpointIds])) as PatchInputs[];
    return row;
  },

  /** The stored texts of the rows `rowIds` (those that exist). */
  storedTexts(db: Queryable, rowIds: readonly string[]): Promise<StoredText[]> {
    return db.query(
      'SELECT id, cells_json AS "cellsJson", cells_columns AS "cellsColumns" FROM environment_rows WHERE id = ANY($1::uuid[])',
      [rowIds],
    );
  },

  /** Stores rows' texts, each built for `columns` columns; the caller holds those rows' locks. */
  async writeTexts(db: Queryable, texts: ReadonlyArray<{ id: string; cells: string }>, columns: number): Promise<void> {
    // As one jsonb parameter: measured about 5x faster than a text[] of the same texts (array escaping).
    await db.query(
      `UPDATE environment_rows r SET cells_json = x.cells, cells_columns = $2 FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, cells text) WHERE r.id = x.id`,
      [JSON.stringify(texts), columns],
    );
  },

  /**
   * VIEW_INPUTS for capture `captureId` of project `projectId` and the kept views' snapshots
   * (null: none kept); undefined unless the capture is the project's.
   */
  async viewInputs(
    db: Queryable,
    captureId: string,
    projectId: string,
    snapshots: ReadonlyArray<string | null>,
  ): Promise<ViewInputsRow | undefined> {
    const [row] = (await db.query(VIEW_INPUTS, [captureId, projectId, snapshots])) as ViewInputsRow[];
    return row;
  },

  /** A project's documentation revision and its documented endpoints, in one statement (one snapshot). */
  documentedEndpoints(db: Queryable, projectId: string): Promise<DocumentedRow[]> {
    return db.query(
      `SELECT p.documentation_revision::text AS revision, e.method, e.path, e.id AS "endpointId", e.current_version_id AS "versionId"
         FROM projects p LEFT JOIN endpoints e ON e.project_id = p.id AND e.current_version_id IS NOT NULL
        WHERE p.id = $1`,
      [projectId],
    );
  },
};
