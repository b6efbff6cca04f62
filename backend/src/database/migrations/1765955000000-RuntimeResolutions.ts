import type { MigrationInterface, QueryRunner } from 'typeorm';

const KEY = 'project_id, method, path, environment_kind, environment_name, version, resolution, bucket';

const GROUP = 'project_id, method, path, environment_kind, environment_name, version';

/** Rows read per `FETCH`, and rows summed before they are written. */
const CHUNK = 20_000;

/** A histogram in its stored form: bucket index → count. */
type Histogram = Record<string, number>;

/** One row of `to` being summed: a group (endpoint, environment row, version) and its hour or day. */
interface Summed {
  projectId: string;
  method: string;
  path: string;
  kind: string;
  name: string;
  version: string;
  /** The hour's or day's start, seconds since 1970. */
  at: string;
  requests: number;
  serverErrors: number;
  upstreamFailures: number;
  clientLeft: number;
  ttfb: Histogram;
  ttlb: Histogram;
}

/** A row of `from` as read: counts as text (bigint), histograms parsed. */
interface Source {
  project_id: string;
  method: string;
  path: string;
  environment_kind: string;
  environment_name: string;
  version: string;
  at: string;
  requests: string;
  server_errors: string;
  upstream_failures: string;
  client_left: string;
  ttfb: Histogram;
  ttlb: Histogram;
}

function addInto(into: Histogram, from: Histogram): void {
  for (const key in from) into[key] = (into[key] ?? 0) + (from[key] as number);
}

/**
 * Adds the rows of resolution `from` into rows of `to` (their hour or day, UTC), to what those hold.
 * The rows are read in key order (the primary key's), so the rows of one hour or day come one after
 * another: each is summed here, histograms added bucket by bucket, and written once when the next
 * begins, a chunk at a time; only rows already stored at `to` merge with `runtime_histogram_add`.
 * Changed after it first ran (9395b28, then 94daebe): the same rows come out
 * (backend/test/runtime.test.ts), sooner. First `runtime_histogram_sum` rebuilt the group's
 * histogram in SQL for every row (on 4 M rows it had not finished in 7 minutes); then every
 * row's buckets were expanded into rows and hashed per group and bucket (81 s on 398,300 rows at
 * load 27–31); now nothing is expanded, and memory holds one chunk.
 */
async function rollInto(q: QueryRunner, from: string, to: string): Promise<void> {
  await q.query(`
    DECLARE rolled NO SCROLL CURSOR FOR
    SELECT ${GROUP}, extract(epoch FROM date_trunc('${to}', bucket, 'UTC'))::bigint AS at, requests, server_errors,
           upstream_failures, client_left, ttfb, ttlb
      FROM runtime_buckets
     WHERE resolution = '${from}'
     ORDER BY ${GROUP}, bucket`);
  const done: Summed[] = [];
  let current: Summed | null = null;
  for (;;) {
    const rows = (await q.query(`FETCH ${CHUNK} FROM rolled`)) as Source[];
    for (const row of rows) {
      if (
        current !== null &&
        current.at === row.at &&
        current.path === row.path &&
        current.name === row.environment_name &&
        current.method === row.method &&
        current.version === row.version &&
        current.kind === row.environment_kind &&
        current.projectId === row.project_id
      ) {
        current.requests += Number(row.requests);
        current.serverErrors += Number(row.server_errors);
        current.upstreamFailures += Number(row.upstream_failures);
        current.clientLeft += Number(row.client_left);
        addInto(current.ttfb, row.ttfb);
        addInto(current.ttlb, row.ttlb);
        continue;
      }
      if (current !== null) done.push(current);
      current = {
        projectId: row.project_id,
        method: row.method,
        path: row.path,
        kind: row.environment_kind,
        name: row.environment_name,
        version: row.version,
        at: row.at,
        requests: Number(row.requests),
        serverErrors: Number(row.server_errors),
        upstreamFailures: Number(row.upstream_failures),
        clientLeft: Number(row.client_left),
        ttfb: { ...row.ttfb },
        ttlb: { ...row.ttlb },
      };
    }
    if (done.length >= CHUNK) await write(q, to, done.splice(0));
    if (rows.length < CHUNK) break;
  }
  if (current !== null) done.push(current);
  await write(q, to, done);
  await q.query('CLOSE rolled');
}

/** Writes summed rows at resolution `to`, added to rows stored there already. */
async function write(q: QueryRunner, to: string, rows: readonly Summed[]): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `INSERT INTO runtime_buckets AS b (${KEY}, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
     SELECT r.project_id, r.method, r.path, r.kind, r.name, r.version, '${to}', to_timestamp(r.at),
            r.requests, r.server_errors, r.upstream_failures, r.client_left, r.ttfb, r.ttlb
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::bigint[],
                   $9::bigint[], $10::bigint[], $11::bigint[], $12::jsonb[], $13::jsonb[])
            AS r(project_id, method, path, kind, name, version, at, requests, server_errors, upstream_failures,
                 client_left, ttfb, ttlb)
    ON CONFLICT (${KEY}) DO UPDATE SET
      requests = b.requests + EXCLUDED.requests,
      server_errors = b.server_errors + EXCLUDED.server_errors,
      upstream_failures = b.upstream_failures + EXCLUDED.upstream_failures,
      client_left = b.client_left + EXCLUDED.client_left,
      ttfb = runtime_histogram_add(b.ttfb, EXCLUDED.ttfb),
      ttlb = runtime_histogram_add(b.ttlb, EXCLUDED.ttlb)`,
    [
      rows.map((r) => r.projectId),
      rows.map((r) => r.method),
      rows.map((r) => r.path),
      rows.map((r) => r.kind),
      rows.map((r) => r.name),
      rows.map((r) => r.version),
      rows.map((r) => r.at),
      rows.map((r) => r.requests),
      rows.map((r) => r.serverErrors),
      rows.map((r) => r.upstreamFailures),
      rows.map((r) => r.clientLeft),
      rows.map((r) => JSON.stringify(r.ttfb)),
      rows.map((r) => JSON.stringify(r.ttlb)),
    ],
  );
}

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
    await rollInto(q, 'minute', 'hour');
    await rollInto(q, 'hour', 'day');
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
