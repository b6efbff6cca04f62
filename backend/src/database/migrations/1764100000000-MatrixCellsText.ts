import type { MigrationInterface, QueryRunner } from 'typeorm';
import { REBUILD_CELLS_TEXT_SQL } from '../../views/matrix-texts';

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
    for (const project of projects) await q.query(REBUILD_CELLS_TEXT_SQL, [project.id, project.rows]);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE environment_rows DROP COLUMN cells_columns, DROP COLUMN cells_json');
  }
}
