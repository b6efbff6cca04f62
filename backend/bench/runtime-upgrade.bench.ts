/**
 * Upgrading a big runtime table (issue 18): the migrations from `RuntimeResolutions` on, timed one
 * by one, on `runtime_buckets` as the layout before it kept runtime.bench's traffic (each exchange
 * in one row: minute rows within the 2-day minute horizon, hour rows before it, for 30 days of a
 * request a minute on ENDPOINTS endpoints, 1,000 by default, and 30 days of minute rows on a
 * hundredth as many more). One embedded PostgreSQL, no backend. Beside it, each in a transaction
 * rolled back before the migrations run: the statements `RuntimeResolutions` ran first
 * (`runtime_histogram_sum` per row, 9395b28), unless BENCH_UPGRADE_BEFORE=0, and then (94daebe:
 * every histogram's buckets expanded into rows and hashed), unless BENCH_UPGRADE_SET_BASED=0; the
 * migration itself now sums in Node, reading the rows in key order.
 *
 * `npx tsc -b ../shared && npx tsc -p bench && node dist/bench-build/bench/runtime-upgrade.bench.js`
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createDataSource, MIGRATIONS } from '../src/database/data-source';
import { startEmbeddedPostgres } from '../src/database/embedded';
import { loadAverage, runBench } from './harness';

const ENDPOINTS = Number(process.env.ENDPOINTS ?? 1_000);
const RAW_ENDPOINTS = Math.max(1, Math.round(ENDPOINTS / 100));
const DAYS = 30;
const MINUTE_DAYS = 2;
const HISTOGRAM = JSON.stringify({ '14': 6, '15': 10, '16': 14, '17': 12, '18': 9, '19': 5, '20': 3, '21': 1 });
const FIRST = 'RuntimeResolutions1765955000000';

/** What both old statements set when a row of the key is there: the counts and histograms add. */
const ADD = `
    requests = b.requests + EXCLUDED.requests,
    server_errors = b.server_errors + EXCLUDED.server_errors,
    upstream_failures = b.upstream_failures + EXCLUDED.upstream_failures,
    client_left = b.client_left + EXCLUDED.client_left,
    ttfb = runtime_histogram_add(b.ttfb, EXCLUDED.ttfb),
    ttlb = runtime_histogram_add(b.ttlb, EXCLUDED.ttlb)`;

/** `RuntimeResolutions`' statements as they were first written (at 9395b28): one aggregate call per row. */
const before = (from: string, to: string): string => `
  INSERT INTO runtime_buckets AS b (project_id, method, path, environment_kind, environment_name, version, resolution,
                                    bucket, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
  SELECT project_id, method, path, environment_kind, environment_name, version, '${to}',
         date_trunc('${to}', bucket, 'UTC'),
         sum(requests), sum(server_errors), sum(upstream_failures), sum(client_left),
         runtime_histogram_sum(ttfb), runtime_histogram_sum(ttlb)
    FROM runtime_buckets
   WHERE resolution = '${from}'
   GROUP BY project_id, method, path, environment_kind, environment_name, version, date_trunc('${to}', bucket, 'UTC')
  ON CONFLICT (project_id, method, path, environment_kind, environment_name, version, resolution, bucket)
  DO UPDATE SET ${ADD}`;

const GROUP = 'project_id, method, path, environment_kind, environment_name, version';
const KEY = `${GROUP}, resolution, bucket`;

/** `RuntimeResolutions`' statements as they were at 94daebe: histograms expanded into rows and summed per group and bucket. */
const setBased = (from: string, to: string): string => `
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
  ON CONFLICT (${KEY}) DO UPDATE SET ${ADD}`;

/** The hour and day rows, summed up in one text: equal texts, equal rows. */
const FINGERPRINT = `
  SELECT resolution || ' ' || count(*) || ' ' || sum(requests) || ' ' ||
         md5(string_agg(concat_ws(' ', ${GROUP}, bucket, requests, server_errors, upstream_failures, client_left, ttfb, ttlb),
                        ',' ORDER BY ${KEY})) AS rows
    FROM runtime_buckets WHERE resolution IN ('hour', 'day') GROUP BY resolution ORDER BY resolution`;

const seconds = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-bench-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own user
  const database = await startEmbeddedPostgres({ dir: path.join(dir, 'pg'), persistent: false });
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  /** Applies the first `count` migrations. @returns the names applied. */
  const migrateTo = async (count: number): Promise<string[]> => {
    const ds = createDataSource(database.url, { poolSize: 1 }).setOptions({ migrations: MIGRATIONS.slice(0, count) });
    await ds.initialize();
    try {
      return (await ds.runMigrations({ transaction: 'each' })).map((m) => m.name);
    } finally {
      await ds.destroy();
    }
  };
  try {
    const first = MIGRATIONS.findIndex((m) => m.name === FIRST);
    await migrateTo(first);
    const [{ id: projectId }] = (
      await pool.query<{ id: string }>(`INSERT INTO projects (slug, name) VALUES ('bench', 'Bench') RETURNING id`)
    ).rows as [{ id: string }];
    let started = performance.now();
    const insert = (prefix: string, endpoints: number, resolution: string, step: string, from: number, to: number) =>
      pool.query(
        `INSERT INTO runtime_buckets (project_id, method, path, environment_kind, environment_name, version, resolution,
                                      bucket, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
         SELECT $1::uuid, 'GET', $7 || i || '/{id}', 'production', 'p-1', '1.0', $2,
                date_trunc($2, now() - interval '5 minutes') - s * $3::interval, 60, 1, 0, 0, $4::jsonb, $4::jsonb
           FROM generate_series($5::int, $6::int) s, generate_series(1, $8::int) i
          ORDER BY s DESC, i`,
        [projectId, resolution, step, HISTOGRAM, from, to, prefix, endpoints],
      );
    // Minutes within the horizon, the hours before it (the rollup had moved their minutes there).
    await insert('/resource', ENDPOINTS, 'minute', '1 minute', 0, MINUTE_DAYS * 1440 - 1);
    await insert('/resource', ENDPOINTS, 'hour', '1 hour', MINUTE_DAYS * 24 + 1, DAYS * 24 - 1);
    await insert('/raw', RAW_ENDPOINTS, 'minute', '1 minute', 0, DAYS * 1440 - 1);
    await pool.query('VACUUM ANALYZE runtime_buckets');
    const [{ rows }] = (await pool.query<{ rows: number }>('SELECT count(*)::int AS rows FROM runtime_buckets'))
      .rows as [{ rows: number }];
    console.log(
      `seeded ${rows.toLocaleString('en')} rows (${ENDPOINTS} + ${RAW_ENDPOINTS} endpoints) in ${seconds(started)}`,
    );

    if (process.env.BENCH_UPGRADE_BEFORE !== '0') {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        started = performance.now();
        await client.query(before('minute', 'hour'));
        await client.query(before('hour', 'day'));
        console.log(`before (9395b28's RuntimeResolutions, rolled back): ${seconds(started)}`);
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    }
    let setBasedRows: string | null = null;
    if (process.env.BENCH_UPGRADE_SET_BASED !== '0') {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        started = performance.now();
        await client.query(`SET LOCAL work_mem = '256MB'`);
        await client.query(setBased('minute', 'hour'));
        await client.query(setBased('hour', 'day'));
        console.log(`set-based (94daebe's RuntimeResolutions, rolled back): ${seconds(started)}`);
        setBasedRows = (await client.query<{ rows: string }>(FINGERPRINT)).rows.map((r) => r.rows).join('; ');
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    }
    for (let count = first + 1; count <= MIGRATIONS.length; count++) {
      started = performance.now();
      const applied = await migrateTo(count);
      console.log(`${applied.join(', ')}: ${seconds(started)}`);
      if (count === first + 1 && setBasedRows !== null) {
        const rows = (await pool.query<{ rows: string }>(FINGERPRINT)).rows.map((r) => r.rows).join('; ');
        console.log(
          `hour and day rows ${rows === setBasedRows ? 'equal' : 'DIFFER from'} the set-based statements' (${rows})`,
        );
      }
    }
    const [after] = (
      await pool.query<{ rows: string }>(
        `SELECT string_agg(resolution || ' ' || n, ', ' ORDER BY resolution) AS rows
           FROM (SELECT resolution, count(*) AS n FROM runtime_buckets GROUP BY resolution) r`,
      )
    ).rows;
    console.log(`after: ${after?.rows} rows; load average ${loadAverage()}`);
  } finally {
    await pool.end();
    await database.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

runBench(main);
