import type { MigrationInterface, QueryRunner } from 'typeorm';

const KEY = 'project_id, method, path, environment_kind, environment_name, version, resolution, bucket';
const COLUMNS = `${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb`;

/** The columns of `runtime_buckets` (RuntimeEvidence1765400000000), its CHECKs named as PostgreSQL named them there. */
const definition = (table: string): string => `
  CREATE TABLE ${table} (
    project_id uuid NOT NULL,
    method text NOT NULL,
    path text NOT NULL,
    environment_kind text NOT NULL
      CONSTRAINT runtime_buckets_environment_kind_check CHECK (environment_kind IN ('ci', 'staging', 'production')),
    environment_name text NOT NULL,
    version text NOT NULL,
    resolution text NOT NULL CONSTRAINT runtime_buckets_resolution_check CHECK (resolution IN ('minute', 'hour', 'day')),
    bucket timestamptz NOT NULL,
    requests bigint NOT NULL,
    server_errors bigint NOT NULL,
    upstream_failures bigint NOT NULL,
    client_left bigint NOT NULL,
    ttfb jsonb NOT NULL,
    ttlb jsonb NOT NULL
  )`;

/** The primary key and the foreign key of `runtime_buckets`, built on rows already copied. */
async function addKeys(q: QueryRunner): Promise<void> {
  await q.query(`ALTER TABLE runtime_buckets ADD CONSTRAINT runtime_buckets_pkey PRIMARY KEY (${KEY})`);
  await q.query(
    `ALTER TABLE runtime_buckets ADD CONSTRAINT runtime_buckets_project_id_fkey
       FOREIGN KEY (project_id) REFERENCES projects(id) ON DELETE CASCADE`,
  );
}

/** What one partition of each resolution's rows holds (`date_trunc` units, UTC). */
const PERIODS = { minute: 'day', hour: 'week', day: 'month' } as const;

/**
 * Runtime rows partitioned (issue 20): `runtime_buckets` is listed by resolution, and each
 * resolution's rows are ranged by bucket, one partition per day (UTC) of minute rows, per week
 * (from Monday) of hour rows and per month of day rows, named by their first day
 * (`runtime_buckets_minute_20261128`), with a default partition per resolution for rows of a time
 * without one. Retention then drops whole partitions (runtime/partitions.ts, which makes the
 * partitions ahead of time from now on, with the same names and bounds).
 *
 * The rows are copied once, set-based: partitions for every period that has rows, one INSERT …
 * SELECT, then the primary key, the foreign key and the age index built on the filled partitions
 * (cheaper than keeping them up while inserting). The age index is a BRIN index on `bucket`
 * (within a resolution's partition the resolution is one value): a few pages, as rows come in time
 * order, enough for retention's deletes in the one partition the horizon cuts, and never chosen over
 * the primary key to find one row, as the btree on (resolution, bucket) was while a table's
 * statistics were new. `down` copies the rows back into one table.
 */
export class RuntimePartitions1795881639261 implements MigrationInterface {
  name = 'RuntimePartitions1795881639261';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE runtime_buckets RENAME TO runtime_buckets_unpartitioned');
    await q.query('ALTER INDEX runtime_buckets_pkey RENAME TO runtime_buckets_unpartitioned_pkey');
    await q.query('ALTER INDEX runtime_buckets_age_idx RENAME TO runtime_buckets_unpartitioned_age_idx');
    await q.query(`${definition('runtime_buckets')} PARTITION BY LIST (resolution)`);
    for (const [resolution, period] of Object.entries(PERIODS)) {
      const parent = `runtime_buckets_${resolution}`;
      await q.query(
        `CREATE TABLE ${parent} PARTITION OF runtime_buckets FOR VALUES IN ('${resolution}') PARTITION BY RANGE (bucket)`,
      );
      await q.query(`CREATE TABLE ${parent}_default PARTITION OF ${parent} DEFAULT`);
      const periods = (await q.query(
        `SELECT to_char(start, 'YYYYMMDD') AS day, to_char(start, 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "from",
                to_char(start + interval '1 ${period}', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "to"
           FROM (SELECT DISTINCT date_trunc('${period}', bucket AT TIME ZONE 'UTC') AS start
                   FROM runtime_buckets_unpartitioned WHERE resolution = $1) p
          ORDER BY start`,
        [resolution],
      )) as Array<{ day: string; from: string; to: string }>;
      for (const p of periods)
        await q.query(
          `CREATE TABLE ${parent}_${p.day} PARTITION OF ${parent} FOR VALUES FROM ('${p.from}') TO ('${p.to}')`,
        );
    }
    await q.query(`INSERT INTO runtime_buckets (${COLUMNS}) SELECT ${COLUMNS} FROM runtime_buckets_unpartitioned`);
    await q.query('DROP TABLE runtime_buckets_unpartitioned');
    await addKeys(q);
    await q.query('CREATE INDEX runtime_buckets_age_idx ON runtime_buckets USING brin (bucket)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(definition('runtime_buckets_unpartitioned'));
    await q.query(`INSERT INTO runtime_buckets_unpartitioned (${COLUMNS}) SELECT ${COLUMNS} FROM runtime_buckets`);
    await q.query('DROP TABLE runtime_buckets');
    await q.query('ALTER TABLE runtime_buckets_unpartitioned RENAME TO runtime_buckets');
    await addKeys(q);
    await q.query('CREATE INDEX runtime_buckets_age_idx ON runtime_buckets (resolution, bucket)');
  }
}
