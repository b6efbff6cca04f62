import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hour and day rows of runtime evidence rolled up apart from the fold (issue 20): a fold wrote every
 * minute it added to into its minute, hour and day rows (three upserts of one key each, the top
 * statement of a paced fold by time and WAL). Now it writes the minute rows and one row here: its
 * minutes as added (`[{method, path, version, minute, requests, server_errors, upstream_failures,
 * client_left, ttfb, ttlb}]`), under the versions it wrote them under. One replica at a time takes
 * these rows, deletes them and adds their minutes to their hours and days in the same transaction
 * (`RuntimeRepository.rollUp`, every 10 s), so each minute reaches its hour and day once; reads of hour
 * and day rows add the rows still here. No key: rows are only ever taken whole (by `ctid`).
 * `down` adds what is still here to the hours and days first, as the code before this expects.
 */
export class RuntimeHoursRolledUp1795912716381 implements MigrationInterface {
  name = 'RuntimeHoursRolledUp1795912716381';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE runtime_minutes_added (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        environment_kind text NOT NULL,
        environment_name text NOT NULL,
        minutes jsonb NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      INSERT INTO runtime_buckets AS b (project_id, method, path, environment_kind, environment_name, version,
                                        resolution, bucket, requests, server_errors, upstream_failures, client_left,
                                        ttfb, ttlb)
      SELECT a.project_id, m.method, m.path, a.environment_kind, a.environment_name, m.version, r.resolution,
             r.bucket, sum(m.requests), sum(m.server_errors), sum(m.upstream_failures), sum(m.client_left),
             runtime_histogram_sum(m.ttfb), runtime_histogram_sum(m.ttlb)
        FROM runtime_minutes_added a
       CROSS JOIN LATERAL jsonb_to_recordset(a.minutes) AS m(method text, path text, version text, minute timestamptz,
             requests bigint, server_errors bigint, upstream_failures bigint, client_left bigint, ttfb jsonb, ttlb jsonb)
       CROSS JOIN LATERAL (VALUES ('hour', date_trunc('hour', m.minute, 'UTC')),
                                  ('day', date_trunc('day', m.minute, 'UTC'))) AS r(resolution, bucket)
       GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
      ON CONFLICT (project_id, method, path, environment_kind, environment_name, version, resolution, bucket)
      DO UPDATE SET
        requests = b.requests + EXCLUDED.requests,
        server_errors = b.server_errors + EXCLUDED.server_errors,
        upstream_failures = b.upstream_failures + EXCLUDED.upstream_failures,
        client_left = b.client_left + EXCLUDED.client_left,
        ttfb = runtime_histogram_add(b.ttfb, EXCLUDED.ttfb),
        ttlb = runtime_histogram_add(b.ttlb, EXCLUDED.ttlb)`);
    await q.query('DROP TABLE runtime_minutes_added');
  }
}
