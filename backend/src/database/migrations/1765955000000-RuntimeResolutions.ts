import type { MigrationInterface, QueryRunner } from 'typeorm';

const KEY = 'project_id, method, path, environment_kind, environment_name, version, resolution, bucket';

/** Adds the rows of resolution `from` into rows of `to` (their hour or day, UTC), to what those hold. */
const rollInto = (from: string, to: string): string => `
  INSERT INTO runtime_buckets AS b (${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
  SELECT project_id, method, path, environment_kind, environment_name, version, '${to}',
         date_trunc('${to}', bucket, 'UTC'),
         sum(requests), sum(server_errors), sum(upstream_failures), sum(client_left),
         runtime_histogram_sum(ttfb), runtime_histogram_sum(ttlb)
    FROM runtime_buckets
   WHERE resolution = '${from}'
   GROUP BY project_id, method, path, environment_kind, environment_name, version, date_trunc('${to}', bucket, 'UTC')
  ON CONFLICT (${KEY}) DO UPDATE SET
    requests = b.requests + EXCLUDED.requests,
    server_errors = b.server_errors + EXCLUDED.server_errors,
    upstream_failures = b.upstream_failures + EXCLUDED.upstream_failures,
    client_left = b.client_left + EXCLUDED.client_left,
    ttfb = runtime_histogram_add(b.ttfb, EXCLUDED.ttfb),
    ttlb = runtime_histogram_add(b.ttlb, EXCLUDED.ttlb)`;

/**
 * Runtime evidence at every resolution from ingest (issue 18): each resolution (minute, hour,
 * day) now holds all of the traffic within its retention, so a series reads the rows of its step
 * only, one per point, and never merges 60 minute rows into an hour while it is asked (30 days at
 * hour steps read 720 rows, not 2,880 minute rows and 672 hour rows merged).
 *
 * Until now each exchange was in one row: minute rows were moved into hour rows as they aged, hour
 * rows into day rows. Here the minute rows kept are added into their hours, then every hour row
 * into its day, so the hour rows hold every exchange since the hour horizon and the day rows
 * every exchange kept. From now on ingest adds a batch's minutes to their minute, hour and day
 * rows, and the rollup deletes each resolution's rows past its retention instead of moving them
 * (runtime/runtime.service.ts).
 *
 * `down` keeps per hour the minute rows where there are any, and per day the hour rows where
 * there are any, as before: exact except for the hour and the day the finer rows' retention cut.
 */
export class RuntimeResolutions1765955000000 implements MigrationInterface {
  name = 'RuntimeResolutions1765955000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(rollInto('minute', 'hour'));
    await q.query(rollInto('hour', 'day'));
  }

  async down(q: QueryRunner): Promise<void> {
    const finer = (coarse: string, fine: string, length: string): string => `
      DELETE FROM runtime_buckets c
       WHERE c.resolution = '${coarse}'
         AND EXISTS (SELECT 1 FROM runtime_buckets f
                      WHERE (f.project_id, f.method, f.path, f.environment_kind, f.environment_name, f.version)
                            = (c.project_id, c.method, c.path, c.environment_kind, c.environment_name, c.version)
                        AND f.resolution = '${fine}'
                        AND f.bucket >= c.bucket AND f.bucket < c.bucket + interval '${length}')`;
    await q.query(finer('day', 'hour', '24 hours'));
    await q.query(finer('hour', 'minute', '1 hour'));
  }
}
