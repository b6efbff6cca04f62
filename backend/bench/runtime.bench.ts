/**
 * Runtime evidence benchmark (issue 18): the runtime query on 1,000 endpoints, and storage per row.
 * One embedded PostgreSQL, one backend; `runtime_buckets` seeded with generate_series for one
 * production build:
 *
 * - kept: every one of 1,000 endpoints as the default retention keeps 30 days of traffic with a
 *   request every minute: minute rows for the last 2 days (2,880 each) and hour rows for the 28
 *   days before (672 each): 3.55 million rows;
 * - raw: 10 further endpoints with 30 days of minute rows each (43,200), as
 *   SPECTATOR_RUNTIME_MINUTE_DAYS=30 would keep them, in the same table.
 *
 * Then, alternating in rounds, `GET /endpoints/{id}/runtime?environment=production&since=<30 days
 * ago>` (720 hour points) on random endpoints of each kind, and the last 24 hours at minutes (1,440
 * points), over HTTP with auth: p50 and p95 of all calls. Storage: the table's and its index's bytes
 * per row, after VACUUM.
 */
import { performance } from 'node:perf_hooks';
import { runBench, withBenchBackend, percentile, median } from './harness';

const ENDPOINTS = 1_000;
const RAW_ENDPOINTS = 10;
const DAYS = 30;
const ROUNDS = 3;
const CALLS = 40;
/** A histogram of 60 requests of about 10–60 ms, as the agents send them. */
const HISTOGRAM = JSON.stringify({ '14': 6, '15': 10, '16': 14, '17': 12, '18': 9, '19': 5, '20': 3, '21': 1 });

async function main(): Promise<void> {
  await withBenchBackend(4, async ({ pool, api }) => {
    await api('POST', '/projects', { slug: 'bench', name: 'Bench' });
    const [{ id: projectId }] = (await pool.query<{ id: string }>(`SELECT id FROM projects WHERE slug = 'bench'`))
      .rows as [{ id: string }];
    await pool.query(
      `INSERT INTO endpoints (project_id, method, path)
       SELECT $1::uuid, 'GET', '/resource' || i || '/{id}' FROM generate_series(1, $2::int) i
       UNION ALL SELECT $1::uuid, 'GET', '/raw' || i || '/{id}' FROM generate_series(1, $3::int) i`,
      [projectId, ENDPOINTS, RAW_ENDPOINTS],
    );
    const started = performance.now();
    const insert = (paths: string, resolution: string, step: string, from: number, to: number) =>
      pool.query(
        `INSERT INTO runtime_buckets (project_id, method, path, environment_kind, environment_name, version, resolution,
                                      bucket, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
         SELECT $1::uuid, 'GET', p.path, 'production', 'p-1', '1.0', $2,
                date_trunc($2, now() - interval '5 minutes') - s * $3::interval, 60, 1, 0, 0, $4::jsonb, $4::jsonb
           FROM (${paths}) p(path), generate_series($5::int, $6::int) s`,
        [projectId, resolution, step, HISTOGRAM, from, to],
      );
    const kept = `SELECT '/resource' || i || '/{id}' FROM generate_series(1, ${ENDPOINTS}) i`;
    const raw = `SELECT '/raw' || i || '/{id}' FROM generate_series(1, ${RAW_ENDPOINTS}) i`;
    await insert(kept, 'minute', '1 minute', 0, 2 * 1440 - 1);
    await insert(kept, 'hour', '1 hour', 48, DAYS * 24 - 1);
    await insert(raw, 'minute', '1 minute', 0, DAYS * 1440 - 1);
    await pool.query('VACUUM ANALYZE runtime_buckets');
    const [size] = (
      await pool.query<{ rows: string; heap: string; total: string }>(
        `SELECT count(*)::text AS rows, pg_table_size('runtime_buckets')::text AS heap,
                pg_total_relation_size('runtime_buckets')::text AS total FROM runtime_buckets`,
      )
    ).rows as [{ rows: string; heap: string; total: string }];
    console.log(
      `seeded ${Number(size.rows).toLocaleString('en')} rows in ${((performance.now() - started) / 1000).toFixed(0)} s: ` +
        `${(Number(size.heap) / Number(size.rows)).toFixed(0)} B/row of table, ` +
        `${(Number(size.total) / Number(size.rows)).toFixed(0)} B/row with the primary key and age index`,
    );

    const ids = async (prefix: string) =>
      (await pool.query<{ id: string }>(`SELECT id FROM endpoints WHERE path LIKE $1`, [`${prefix}%`])).rows.map(
        (r) => r.id,
      );
    const keptIds = await ids('/resource');
    const rawIds = await ids('/raw');
    const since30 = () => new Date(Date.now() - DAYS * 24 * 3600_000).toISOString();
    const since1 = () => new Date(Date.now() - 24 * 3600_000 + 60_000).toISOString();
    const cases: Array<{ name: string; ids: string[]; query: () => string; points: number }> = [
      {
        name: '30 days, kept (2 d minutes + hours), step hour',
        ids: keptIds,
        query: () => `since=${since30()}`,
        points: 0,
      },
      { name: '30 days of minute rows, step hour', ids: rawIds, query: () => `since=${since30()}`, points: 0 },
      { name: '24 hours, step minute', ids: keptIds, query: () => `since=${since1()}`, points: 0 },
    ];
    const timings = new Map(cases.map((c) => [c.name, [] as number[]]));
    for (let round = 0; round < ROUNDS; round++)
      for (let call = 0; call < CALLS; call++)
        for (const c of cases) {
          const id = c.ids[Math.floor(Math.random() * c.ids.length)] as string;
          const t0 = performance.now();
          const answer = await api<{ versions: Array<{ points: unknown[] }> }>(
            'GET',
            `/projects/bench/endpoints/${id}/runtime?environment=production&${c.query()}`,
          );
          timings.get(c.name)!.push(performance.now() - t0);
          c.points = answer.versions[0]?.points.length ?? 0;
        }
    for (const c of cases) {
      const t = timings.get(c.name)!;
      console.log(
        `${c.name}: ${c.points} points, p50 ${median(t).toFixed(1)} ms, p95 ${percentile(t, 95).toFixed(1)} ms (${t.length} calls)`,
      );
    }
  });
}

runBench(main);
