import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The aggregate key of an observation row: NULL (no body, no shape) folded to ' ' as before. */
const AGGREGATE_KEY = `capture_id, method, path, status,
  (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
  (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' ')), project_id`;

/** The columns both layouts share, in the order rows are moved. */
const SHARED_COLUMNS = `project_id, capture_id, method, path, status, request_content_type, request_shape, request_note,
  response_content_type, response_shape, response_note, query, request_headers, response_headers, count, first_seen, last_seen, names_grew`;

/**
 * Observations partitioned by their capture's creation week (issue 20, "Growing old gracefully"),
 * so that capture retention drops a week of them as one table instead of deleting their rows.
 * Every row carries `capture_created_at` (its capture's `created_at`, the server's time, never
 * changed), so all of a capture's rows live in one partition; the aggregate key ends with it. The
 * id column (read by nothing) is gone, which pays for most of the wider key.
 *
 * `observations_partition(at)` creates the partition of `at`'s week (Monday 00:00 UTC, 7 days;
 * named `observations_YYYYMMDD`) when it is missing, under an advisory lock so that replicas doing
 * it at once do not race; the backend calls it for the coming weeks at start and every hour
 * (RetentionService). Here it makes one for each week that has captures and for this week and the
 * next two, then the rows are moved (docs/operations.md, "Partitions of observations").
 */
export class ObservationsPartitioned1795883461504 implements MigrationInterface {
  name = 'ObservationsPartitioned1795883461504';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE observations RENAME TO observations_unpartitioned');
    await q.query('ALTER INDEX observations_aggregate_key RENAME TO observations_unpartitioned_aggregate_key');
    // Fixed-width columns first: no padding between them.
    await q.query(`
      CREATE TABLE observations (
        capture_created_at timestamptz NOT NULL,
        first_seen timestamptz NOT NULL,
        last_seen timestamptz NOT NULL,
        count bigint NOT NULL CONSTRAINT observations_count_positive CHECK (count > 0),
        project_id uuid NOT NULL,
        capture_id uuid NOT NULL,
        status smallint NOT NULL CONSTRAINT observations_status_range CHECK (status BETWEEN 100 AND 599),
        names_grew boolean NOT NULL DEFAULT false,
        method text NOT NULL,
        path text NOT NULL,
        request_content_type text,
        request_shape text CONSTRAINT observations_request_shape_fkey REFERENCES shapes (fingerprint),
        request_note text,
        response_content_type text,
        response_shape text CONSTRAINT observations_response_shape_fkey REFERENCES shapes (fingerprint),
        response_note text,
        query text[] NOT NULL DEFAULT '{}',
        request_headers text[] NOT NULL DEFAULT '{}',
        response_headers text[] NOT NULL DEFAULT '{}',
        CONSTRAINT observations_capture_fk FOREIGN KEY (project_id, capture_id) REFERENCES captures (project_id, id) ON DELETE CASCADE
      ) PARTITION BY RANGE (capture_created_at)`);
    await q.query(`
      CREATE FUNCTION observations_partition(at timestamptz) RETURNS text LANGUAGE plpgsql AS $$
      DECLARE
        week timestamptz := date_trunc('week', at, 'UTC');
        partition text := 'observations_' || to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD');
      BEGIN
        -- One creator at a time over all replicas; the check below then sees the others' work.
        PERFORM pg_advisory_xact_lock(1590159105);
        IF to_regclass(quote_ident(partition)) IS NULL THEN
          EXECUTE format('CREATE TABLE %I PARTITION OF observations FOR VALUES FROM (%L) TO (%L)',
                         partition, week, week + interval '168 hours');
        END IF;
        RETURN partition;
      END $$`);
    await q.query(`
      SELECT observations_partition(week) FROM (
        SELECT DISTINCT date_trunc('week', created_at, 'UTC') AS week FROM captures
        UNION SELECT date_trunc('week', now() + make_interval(days => 7 * k), 'UTC') FROM generate_series(0, 2) k
      ) w ORDER BY week`);
    await q.query(`
      INSERT INTO observations (capture_created_at, ${SHARED_COLUMNS})
      SELECT c.created_at, ${SHARED_COLUMNS.replace(/(\w+)/g, 'o.$1')}
        FROM observations_unpartitioned o JOIN captures c ON c.id = o.capture_id AND c.project_id = o.project_id`);
    await q.query('DROP TABLE observations_unpartitioned');
    await q.query(
      `CREATE UNIQUE INDEX observations_aggregate_key ON observations (${AGGREGATE_KEY}, capture_created_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE observations_unpartitioned (
        id bigserial,
        capture_id uuid NOT NULL,
        method text NOT NULL,
        path text NOT NULL,
        status smallint NOT NULL CONSTRAINT observations_status_range CHECK (status BETWEEN 100 AND 599),
        request_content_type text,
        request_shape text CONSTRAINT observations_request_shape_fkey REFERENCES shapes (fingerprint),
        request_note text,
        response_content_type text,
        response_shape text CONSTRAINT observations_response_shape_fkey REFERENCES shapes (fingerprint),
        response_note text,
        query text[] NOT NULL DEFAULT '{}',
        request_headers text[] NOT NULL DEFAULT '{}',
        response_headers text[] NOT NULL DEFAULT '{}',
        count bigint NOT NULL CONSTRAINT observations_count_positive CHECK (count > 0),
        first_seen timestamptz NOT NULL,
        last_seen timestamptz NOT NULL,
        names_grew boolean NOT NULL DEFAULT false,
        project_id uuid NOT NULL,
        CONSTRAINT observations_pkey PRIMARY KEY (id, project_id),
        CONSTRAINT observations_capture_fk FOREIGN KEY (project_id, capture_id) REFERENCES captures (project_id, id) ON DELETE CASCADE
      )`);
    await q.query(`
      INSERT INTO observations_unpartitioned (${SHARED_COLUMNS})
      SELECT ${SHARED_COLUMNS} FROM observations ORDER BY capture_created_at, capture_id, method, path, status`);
    await q.query('DROP TABLE observations');
    await q.query('DROP FUNCTION observations_partition(timestamptz)');
    await q.query('ALTER TABLE observations_unpartitioned RENAME TO observations');
    await q.query('ALTER SEQUENCE observations_unpartitioned_id_seq RENAME TO observations_id_seq');
    await q.query(`CREATE UNIQUE INDEX observations_aggregate_key ON observations (${AGGREGATE_KEY})`);
  }
}
