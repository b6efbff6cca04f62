import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The runtime of each matrix cell (issue 18): per environment row (kind and name) and endpoint
 * (method, path), every exchange the row's agents measured since it began, added up as batches come,
 * so the version matrix shows p95 and error rate beside each version with one indexed read per page
 * (runtime/runtime.repository.ts). `ttlb_p95` is the bucket (shared/src/runtime/histogram.ts) of the
 * 95th percentile of time to last byte, kept by PostgreSQL as the histogram changes:
 * `runtime_histogram_quantile(h, q)` is the bucket holding the sample of rank ⌊q·(n−1)⌋, as
 * `LatencyHistogram.quantile` reads it. Filled from the runtime rows already kept.
 */
export class RuntimeCells1765610000000 implements MigrationInterface {
  name = 'RuntimeCells1765610000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION runtime_histogram_quantile(h jsonb, q float8) RETURNS int
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT k FROM (SELECT key::int AS k, sum(value::bigint) OVER (ORDER BY key::int) AS seen,
                              sum(value::bigint) OVER () AS total
                         FROM jsonb_each_text(h)) s
         WHERE seen > floor(q * (total - 1))
         ORDER BY k LIMIT 1
      $$`);
    await q.query(`
      CREATE TABLE runtime_cells (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        environment_kind text NOT NULL CHECK (environment_kind IN ('ci', 'staging', 'production')),
        environment_name text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        requests bigint NOT NULL,
        server_errors bigint NOT NULL,
        ttlb jsonb NOT NULL,
        ttlb_p95 int GENERATED ALWAYS AS (runtime_histogram_quantile(ttlb, 0.95)) STORED,
        PRIMARY KEY (project_id, environment_kind, environment_name, method, path)
      )`);
    await q.query(`
      INSERT INTO runtime_cells (project_id, environment_kind, environment_name, method, path, requests, server_errors, ttlb)
      SELECT project_id, environment_kind, environment_name, method, path, sum(requests), sum(server_errors),
             runtime_histogram_sum(ttlb)
        FROM runtime_buckets
       GROUP BY project_id, environment_kind, environment_name, method, path`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE runtime_cells');
    await q.query('DROP FUNCTION runtime_histogram_quantile(jsonb, float8)');
  }
}
