import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `runtime_cells.ttlb_p95` becomes an ordinary column the fold writes (issue 20): the fold merges
 * each cell's histogram in Node already, so it reads the 95th percentile's bucket there
 * (`LatencyHistogram.quantileBucket`, the rank `runtime_histogram_quantile` uses) instead of
 * PostgreSQL computing it per written row with window sums over the histogram's buckets (the
 * cells' write took 69 ms a fold for about 100 cells in the scale bench, the slowest per row of
 * the fold's writes). Regrouping, which merges histograms in SQL, still calls the function. The
 * values stay as they are (`DROP EXPRESSION` keeps them). The table also gets room on its pages
 * for heap-only updates, as the fold's other tables (FoldedRowsRoomToUpdate).
 */
export class RuntimeCellsP95Written1795891905972 implements MigrationInterface {
  name = 'RuntimeCellsP95Written1795891905972';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE runtime_cells ALTER COLUMN ttlb_p95 DROP EXPRESSION');
    await q.query('ALTER TABLE runtime_cells SET (fillfactor = 70)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE runtime_cells RESET (fillfactor)');
    await q.query(`
      ALTER TABLE runtime_cells DROP COLUMN ttlb_p95,
        ADD COLUMN ttlb_p95 int GENERATED ALWAYS AS (runtime_histogram_quantile(ttlb, 0.95)) STORED`);
  }
}
