import type { MigrationInterface, QueryRunner } from 'typeorm';

const KEY = 'project_id, method, path, environment_kind, environment_name, version, resolution, bucket';

/** What an upsert of summed rows into `runtime_buckets` sets on a stored row of the same key. */
const ADD = `
  ON CONFLICT (${KEY}) DO UPDATE SET
    requests = b.requests + EXCLUDED.requests,
    server_errors = b.server_errors + EXCLUDED.server_errors,
    upstream_failures = b.upstream_failures + EXCLUDED.upstream_failures,
    client_left = b.client_left + EXCLUDED.client_left,
    ttfb = runtime_histogram_add(b.ttfb, EXCLUDED.ttfb),
    ttlb = runtime_histogram_add(b.ttlb, EXCLUDED.ttlb)`;

/** `minutes` (rows with the columns of the new `runtime_minutes_added`) summed into their `resolutions`' rows. */
const addTo = (minutes: string, resolutions: string): string => `
  INSERT INTO runtime_buckets AS b (${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
  SELECT m.project_id, m.method, m.path, m.environment_kind, m.environment_name, m.version, r.resolution,
         date_trunc(r.resolution, m.minute, 'UTC'), sum(m.requests), sum(m.server_errors), sum(m.upstream_failures),
         sum(m.client_left), runtime_histogram_sum(m.ttfb), runtime_histogram_sum(m.ttlb)
    FROM ${minutes} m
   CROSS JOIN (VALUES ${resolutions}) AS r(resolution)
   WHERE EXISTS (SELECT 1 FROM projects p WHERE p.id = m.project_id)
   GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
  ${ADD}`;

/** The fold rows of RuntimeHoursRolledUp1795912716381 (one per fold, its minutes as JSON) as minute rows. */
const FOLD_ROWS = `
  (SELECT a.project_id, m.method, m.path, a.environment_kind, a.environment_name, m.version, m.minute,
          m.requests, m.server_errors, m.upstream_failures, m.client_left, m.ttfb, m.ttlb
     FROM runtime_minutes_added a
    CROSS JOIN LATERAL jsonb_to_recordset(a.minutes) AS m(method text, path text, version text, minute timestamptz,
          requests bigint, server_errors bigint, upstream_failures bigint, client_left bigint, ttfb jsonb, ttlb jsonb))`;

/**
 * Runtime minutes wait for the roll-up one row per endpoint and minute, found by endpoint (issue
 * 18). A fold wrote one row here with all of its minutes as JSON, so every read of hours or days
 * expanded every minute waiting in its environment before it kept its endpoint's (a 720-hour
 * series: p50 18 → 181 ms with 18,000 minutes waiting). Now each minute a fold adds is a row of its
 * own, indexed by project, environment kind, method and path, which reads add to the stored rows.
 * A fold also no longer upserts its minute rows (a locked read, histograms merged in Node, then the
 * upsert): it only inserts here, and the roll-up (`RuntimeRepository.rollUp`, every 10 s by
 * default) adds what waits to the minute rows as well as to the hours and days, every fold since
 * the last roll-up in one write per row. Reads of every resolution add the minutes still here.
 *
 * No foreign key to `projects` (a check per row inserted, and folds insert hundreds): the roll-up
 * drops the rows of a project that is gone. `up` adds the minutes waiting in the old layout (already
 * in their minute rows) to their hours and days first; `down` adds the rows waiting here to their
 * minute, hour and day rows, as the code before this expects.
 */
export class RuntimeMinutesWaitPerEndpoint1795931360487 implements MigrationInterface {
  name = 'RuntimeMinutesWaitPerEndpoint1795931360487';

  async up(q: QueryRunner): Promise<void> {
    await q.query(addTo(FOLD_ROWS, `('hour'), ('day')`));
    await q.query('DROP TABLE runtime_minutes_added');
    await q.query(`
      CREATE TABLE runtime_minutes_added (
        project_id uuid NOT NULL,
        environment_kind text NOT NULL,
        environment_name text NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        version text NOT NULL,
        minute timestamptz NOT NULL,
        requests bigint NOT NULL,
        server_errors bigint NOT NULL,
        upstream_failures bigint NOT NULL,
        client_left bigint NOT NULL,
        ttfb jsonb NOT NULL,
        ttlb jsonb NOT NULL
      )`);
    await q.query(
      `CREATE INDEX runtime_minutes_added_endpoint
         ON runtime_minutes_added (project_id, environment_kind, method, path)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(addTo('runtime_minutes_added', `('minute'), ('hour'), ('day')`));
    await q.query('DROP TABLE runtime_minutes_added');
    await q.query(`
      CREATE TABLE runtime_minutes_added (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        environment_kind text NOT NULL,
        environment_name text NOT NULL,
        minutes jsonb NOT NULL
      )`);
  }
}
