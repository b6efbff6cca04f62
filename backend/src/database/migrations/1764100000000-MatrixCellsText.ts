import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The backfill's statement, frozen as it was when this migration was written (a migration never
 * changes what it does when live code changes; views/matrix-texts.ts has the live one): the cells
 * text of the rows `$2::uuid[]` of project `$1`, built from `evidence_cells` in column order
 * (documented endpoints by path, method), `{"version":"N/A"}` where a row never saw an endpoint.
 */
const BACKFILL_CELLS_TEXT_SQL = `
  UPDATE environment_rows r SET cells_json = built.cells, cells_columns = built.columns
    FROM (
      SELECT target.id, count(*)::int AS columns,
             '[' || string_agg(CASE WHEN c.version IS NULL THEN '{"version":"N/A"}'
                                    WHEN c.drift THEN '{"version":"' || c.version || '","drift":true}'
                                    ELSE '{"version":"' || c.version || '"}' END,
                               ',' ORDER BY e.path, e.method) || ']' AS cells
        FROM unnest($2::uuid[]) AS target(id)
        CROSS JOIN endpoints e
        LEFT JOIN (SELECT row_id, endpoint_id, version, drift FROM evidence_cells WHERE row_id = ANY($2::uuid[])) c
               ON c.row_id = target.id AND c.endpoint_id = e.id
       WHERE e.project_id = $1 AND e.current_version_id IS NOT NULL
       GROUP BY target.id) built
   WHERE r.id = built.id`;

/**
 * Each environment row's matrix cells, pre-serialised as JSON text in column order, so a page of
 * the version matrix is read without building 1,000 cells per row per request (see
 * views/matrix-texts.ts). Backfilled from `evidence_cells`, project by project.
 */
export class MatrixCellsText1764100000000 implements MigrationInterface {
  name = 'MatrixCellsText1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE environment_rows ADD COLUMN cells_json text, ADD COLUMN cells_columns integer');
    const projects = (await q.query(
      'SELECT r.project_id AS id, array_agg(DISTINCT r.id) AS rows FROM environment_rows r JOIN evidence_cells c ON c.row_id = r.id GROUP BY r.project_id',
    )) as Array<{ id: string; rows: string[] }>;
    for (const project of projects) await q.query(BACKFILL_CELLS_TEXT_SQL, [project.id, project.rows]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE environment_rows DROP COLUMN cells_columns, DROP COLUMN cells_json');
  }
}
