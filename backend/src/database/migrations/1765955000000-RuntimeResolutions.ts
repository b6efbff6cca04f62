import type { MigrationInterface, QueryRunner } from 'typeorm';

const KEY = 'project_id, method, path, environment_kind, environment_name, version, resolution, bucket';

const GROUP = 'project_id, method, path, environment_kind, environment_name, version';

/**
 * Adds the rows of resolution `from` into rows of `to` (their hour or day, UTC), to what those hold.
 * Set-based: the counts summed per group, and the histograms' buckets once expanded into rows
 * (`jsonb_each_text`), summed per group and bucket and gathered back (`jsonb_object_agg`), rather
 * than `runtime_histogram_sum` merging one row's histogram into the group's at a time (an SQL
 * function call rebuilding the whole histogram per row: on 4 M rows the migration had not finished
 * in 7 minutes). Only rows already stored at `to` merge with `runtime_histogram_add`. Changed after
 * it first ran (9395b28): the same rows come out (backend/test/runtime.test.ts), sooner.
 */
const rollInto = (from: string, to: string): string => `
  WITH source AS NOT MATERIALIZED (
    SELECT ${GROUP}, date_trunc('${to}', bucket, 'UTC') AS at, requests, server_errors, upstream_failures,
           client_left, ttfb, ttlb
      FROM runtime_buckets
     WHERE resolution = '${from}'
  ), counts AS (
    SELECT ${GROUP}, at, sum(requests) AS requests, sum(server_errors) AS server_errors,
           sum(upstream_failures) AS upstream_failures, sum(client_left) AS client_left
      FROM source
     GROUP BY ${GROUP}, at
  ), buckets AS (
    SELECT ${GROUP}, at, h.histogram, h.key, sum(h.value::bigint) AS n
      FROM source,
           LATERAL (SELECT 'ttfb' AS histogram, key, value FROM jsonb_each_text(ttfb)
                    UNION ALL
                    SELECT 'ttlb', key, value FROM jsonb_each_text(ttlb)) h
     GROUP BY ${GROUP}, at, h.histogram, h.key
  ), histograms AS (
    SELECT ${GROUP}, at,
           jsonb_object_agg(key, n) FILTER (WHERE histogram = 'ttfb') AS ttfb,
           jsonb_object_agg(key, n) FILTER (WHERE histogram = 'ttlb') AS ttlb
      FROM buckets
     GROUP BY ${GROUP}, at
  )
  INSERT INTO runtime_buckets AS b (${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
  SELECT c.project_id, c.method, c.path, c.environment_kind, c.environment_name, c.version, '${to}', c.at,
         c.requests, c.server_errors, c.upstream_failures, c.client_left,
         coalesce(h.ttfb, '{}'::jsonb), coalesce(h.ttlb, '{}'::jsonb)
    FROM counts c
    LEFT JOIN histograms h USING (${GROUP}, at)
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
    // Room to sum the buckets in memory (a hash per group and bucket) rather than sort them on disk.
    await q.query(`SET LOCAL work_mem = '256MB'`);
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
