import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runtime evidence (issue 18): per endpoint (method, path), environment row (kind and name: a pull
 * request's CI run, a build), version and time bucket, the exchanges and their outcomes as counts,
 * and time to first and last byte as latency histograms (shared/src/runtime/histogram.ts) kept as
 * jsonb `{"bucket": count}`. Everything adds: two rows of one key merge exactly, so minute rows
 * are moved into hour rows, and hour rows into day rows, as they age (runtime/runtime.repository.ts).
 * `runtime_histogram_add` merges two histograms, `runtime_histogram_sum` is its aggregate.
 */
export class RuntimeEvidence1765400000000 implements MigrationInterface {
  name = 'RuntimeEvidence1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION runtime_histogram_add(a jsonb, b jsonb) RETURNS jsonb
      LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(jsonb_object_agg(k, n), '{}'::jsonb)
          FROM (SELECT k, sum(v::bigint) AS n
                  FROM (SELECT key, value FROM jsonb_each_text(coalesce(a, '{}'::jsonb))
                        UNION ALL
                        SELECT key, value FROM jsonb_each_text(coalesce(b, '{}'::jsonb))) AS e(k, v)
                 GROUP BY k) AS s
      $$`);
    await q.query(`
      CREATE AGGREGATE runtime_histogram_sum(jsonb) (
        SFUNC = runtime_histogram_add, STYPE = jsonb, INITCOND = '{}', PARALLEL = SAFE
      )`);
    await q.query(`
      CREATE TABLE runtime_buckets (
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        method text NOT NULL,
        path text NOT NULL,
        environment_kind text NOT NULL CHECK (environment_kind IN ('ci', 'staging', 'production')),
        -- the matrix row: 'PR #42' for a CI run, the build for staging and production
        environment_name text NOT NULL,
        -- the version the row's evidence conforms to (the nearest one when it drifts), '' when none is known
        version text NOT NULL,
        resolution text NOT NULL CHECK (resolution IN ('minute', 'hour', 'day')),
        -- the start of the minute, hour or day
        bucket timestamptz NOT NULL,
        -- every exchange: answered by the upstream, answered by the agent for it, or left before an answer
        requests bigint NOT NULL,
        -- answered 5xx by the upstream, or 502/503/504 by the agent
        server_errors bigint NOT NULL,
        -- answered by the agent because the upstream failed
        upstream_failures bigint NOT NULL,
        -- left by the client before the response ended (or before any answer)
        client_left bigint NOT NULL,
        ttfb jsonb NOT NULL,
        ttlb jsonb NOT NULL,
        PRIMARY KEY (project_id, method, path, environment_kind, environment_name, version, resolution, bucket)
      )`);
    // The rollup moves rows by age.
    await q.query('CREATE INDEX runtime_buckets_age_idx ON runtime_buckets (resolution, bucket)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE runtime_buckets');
    await q.query('DROP AGGREGATE runtime_histogram_sum(jsonb)');
    await q.query('DROP FUNCTION runtime_histogram_add(jsonb, jsonb)');
  }
}
