/**
 * Runtime evidence benchmark (issue 18): the runtime query on 1,000 endpoints, and storage per row.
 * One embedded PostgreSQL, one backend; `runtime_buckets` seeded with generate_series for one
 * production build, rows of one minute (hour, day) of every endpoint together, as ingest writes
 * them, and every resolution holding all of the traffic, as ingest keeps it:
 *
 * - kept: every one of 1,000 endpoints as the default retention keeps 30 days of traffic with a
 *   request every minute: minute rows for the last 2 days (2,880 each), hour rows for the 30 days
 *   (720 each) and day rows (31 each);
 * - raw: 10 further endpoints with 30 days of minute rows each (43,200), as
 *   SPECTATOR_RUNTIME_MINUTE_DAYS=30 would keep them, their hours and days too, in the same table.
 *
 * Then, alternating in rounds, `GET /endpoints/{id}/runtime?environment=production&since=<30 days
 * ago>` (720 hour points) on random endpoints of each kind, and the last 24 hours at minutes (1,440
 * points), over HTTP with auth: p50 and p95 of all calls. Beside each call, on the same endpoint:
 * the query the route ran before every resolution held all of the traffic (3318d2f: the minute and
 * hour rows of the window merged per step with `runtime_histogram_sum`, over the rows that layout
 * kept: minutes within the minute horizon, hours before it), in SQL only, so without the HTTP and
 * Node work the route adds. Storage: the table's and its
 * indexes' bytes per row, after VACUUM.
 *
 * Then the same cases again with minutes waiting for the roll-up, as a busy environment always has
 * some (folds add them, a replica rolls them up every 10 s by default): BENCH_RUNTIME_WAITING
 * (default 18,000) minutes added by folds of 300 endpoints of the build (`RuntimeRepository.addMinutes`,
 * minutes of the last 10), the roll-up held off (SPECTATOR_RUNTIME_ROLLUP_SECONDS=3600), so every read
 * adds them. The bench seeds no evidence cells, so those minutes go under no version: an answer's
 * points are counted over every version. BENCH_RUNTIME_WAITING=0 leaves that part out.
 */
import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import type { WireHistogram } from '@spectator/shared';
import pino from 'pino';
import type { Runtime } from '../src/config/runtime';
import { createDataSource } from '../src/database/data-source';
import { RUNTIME_ROWS } from '../src/partitions/partitions';
import { PartitionsRepository } from '../src/partitions/partitions.repository';
import { PartitionsService } from '../src/partitions/partitions.service';
import { RuntimeRepository, type RuntimeResolution } from '../src/runtime/runtime.repository';
import { loadAverage, median, percentile, runBench, withBenchBackend } from './harness';

/**
 * The route's query at 3318d2f, before every resolution came from ingest: the rows of the
 * window merged per version and step in SQL, over the layout it read, where each exchange was in
 * one row (minute rows within the minute horizon `$8`, hour rows before it).
 */
const BEFORE = `
  SELECT version, date_bin(make_interval(secs => $7), bucket, 'epoch'::timestamptz) AS at,
         sum(requests)::text AS requests, sum(server_errors)::text AS "serverErrors",
         sum(upstream_failures)::text AS "upstreamFailures", sum(client_left)::text AS "clientLeft",
         runtime_histogram_sum(ttfb) AS ttfb, runtime_histogram_sum(ttlb) AS ttlb
    FROM runtime_buckets
   WHERE project_id = $1 AND method = $2 AND path = $3 AND environment_kind = $4
     AND ($5::text IS NULL OR environment_name = $5) AND bucket >= $6
     AND (resolution = 'minute' OR (resolution = 'hour' AND bucket < $8))
   GROUP BY version, at
   ORDER BY version, at`;

const ENDPOINTS = 1_000;
const RAW_ENDPOINTS = 10;
const DAYS = 30;
/** The default minute horizon (SPECTATOR_RUNTIME_MINUTE_DAYS). */
const MINUTE_DAYS = 2;
const ROUNDS = 3;
const CALLS = 40;
/** BENCH_RUNTIME_BEFORE=0 leaves out the query of 3318d2f (most of the run's time: 2 s a call on raw minutes). */
const WITH_BEFORE = process.env.BENCH_RUNTIME_BEFORE !== '0';
/** Minutes waiting for the roll-up in the second part (BENCH_RUNTIME_WAITING), added 300 a fold. */
const WAITING = Number(process.env.BENCH_RUNTIME_WAITING ?? 18_000);
const FOLD_MINUTES = 300;
/** A histogram of 60 requests of about 10–60 ms, as the agents send them. */
const HISTOGRAM = JSON.stringify({ '14': 6, '15': 10, '16': 14, '17': 12, '18': 9, '19': 5, '20': 3, '21': 1 });

async function main(): Promise<void> {
  // The minutes waiting of the second part stay waiting: the backend's first roll-up runs at start.
  process.env.SPECTATOR_RUNTIME_ROLLUP_SECONDS = '3600';
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
    // The partitions of the seeded window (the rollup makes them ahead of time as days come).
    const ds = createDataSource((pool.options as { connectionString: string }).connectionString, { poolSize: 2 });
    await ds.initialize();
    await new PartitionsService(new PartitionsRepository(ds), { log: pino({ level: 'silent' }) } as Runtime).cover(
      Object.values(RUNTIME_ROWS),
      new Date(Date.now() - (DAYS + 1) * 24 * 3600_000),
      new Date(Date.now() + 3600_000),
    );
    await ds.destroy();
    const insert = (paths: string, resolution: string, step: string, from: number, to: number) =>
      pool.query(
        `INSERT INTO runtime_buckets (project_id, method, path, environment_kind, environment_name, version, resolution,
                                      bucket, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
         SELECT $1::uuid, 'GET', p.path, 'production', 'p-1', '1.0', $2,
                date_trunc($2, now() - interval '5 minutes') - s * $3::interval, 60, 1, 0, 0, $4::jsonb, $4::jsonb
           FROM generate_series($5::int, $6::int) s, (${paths}) p(path)
          ORDER BY s DESC, p.path`,
        [projectId, resolution, step, HISTOGRAM, from, to],
      );
    const kept = `SELECT '/resource' || i || '/{id}' FROM generate_series(1, ${ENDPOINTS}) i`;
    const raw = `SELECT '/raw' || i || '/{id}' FROM generate_series(1, ${RAW_ENDPOINTS}) i`;
    const all = `${kept} UNION ALL ${raw}`;
    await insert(all, 'day', '1 day', 0, DAYS);
    await insert(all, 'hour', '1 hour', 0, DAYS * 24 - 1);
    await insert(kept, 'minute', '1 minute', 0, MINUTE_DAYS * 1440 - 1);
    await insert(raw, 'minute', '1 minute', 0, DAYS * 1440 - 1);
    await pool.query('VACUUM ANALYZE runtime_buckets');
    const [size] = (
      await pool.query<{ rows: string; heap: string; total: string; leaves: number }>(
        `SELECT (SELECT count(*) FROM runtime_buckets)::text AS rows, sum(pg_table_size(relid))::text AS heap,
                sum(pg_total_relation_size(relid))::text AS total, count(*) FILTER (WHERE isleaf)::int AS leaves
           FROM pg_partition_tree('runtime_buckets')`,
      )
    ).rows as [{ rows: string; heap: string; total: string; leaves: number }];
    console.log(
      `seeded ${Number(size.rows).toLocaleString('en')} rows in ${((performance.now() - started) / 1000).toFixed(0)} s: ` +
        `${(Number(size.heap) / Number(size.rows)).toFixed(0)} B/row of table, ` +
        `${(Number(size.total) / Number(size.rows)).toFixed(0)} B/row with the primary key and age index, ` +
        `in ${size.leaves} partitions`,
    );

    const ids = async (prefix: string) =>
      (await pool.query<{ id: string }>(`SELECT id FROM endpoints WHERE path LIKE $1`, [`${prefix}%`])).rows.map(
        (r) => r.id,
      );
    const keptIds = await ids('/resource');
    const rawIds = await ids('/raw');
    const since30 = () => new Date(Date.now() - DAYS * 24 * 3600_000).toISOString();
    const since1 = () => new Date(Date.now() - 24 * 3600_000 + 60_000).toISOString();
    const cases: Array<{ name: string; ids: string[]; query: () => string; minuteDays: number; points: number }> = [
      {
        name: '30 days, kept (2 d minutes + hours), step hour',
        ids: keptIds,
        query: () => `since=${since30()}`,
        minuteDays: MINUTE_DAYS,
        points: 0,
      },
      {
        name: '30 days of minute rows, step hour',
        ids: rawIds,
        query: () => `since=${since30()}`,
        minuteDays: DAYS,
        points: 0,
      },
      {
        name: '24 hours, step minute',
        ids: keptIds,
        query: () => `since=${since1()}`,
        minuteDays: MINUTE_DAYS,
        points: 0,
      },
    ];
    const contenders = ['route over HTTP', "the route's SQL alone", 'before (3318d2f), SQL only'] as const;
    // The route's statement (RuntimeRepository.steps) through the bench's pool: what of the route is SQL.
    const alone = new RuntimeRepository({
      query: async (sql: string, parameters: unknown[]) => (await pool.query(sql, parameters)).rows,
    } as unknown as DataSource);
    /** The route's statement for endpoint `id` over the window and step the route `answer`ed with. */
    const stepsOf = (repository: RuntimeRepository, id: string, answer: { since: string; step: number }) =>
      repository.steps(
        {
          projectId,
          method: 'GET',
          path: pathOf.get(id) as string,
          kind: 'production',
          name: null,
          since: new Date(answer.since),
        },
        (answer.step === 60 ? 'minute' : answer.step === 3600 ? 'hour' : 'day') as RuntimeResolution,
      );
    /** `ROUNDS` rounds of `CALLS` calls of each case; printed as `label`. */
    const measure = async (label: string, withBefore: boolean): Promise<void> => {
      const timings = new Map(cases.map((c) => [c.name, contenders.map(() => [] as number[])]));
      for (let round = 0; round < ROUNDS; round++)
        for (let call = 0; call < CALLS; call++)
          for (const c of cases) {
            const id = c.ids[Math.floor(Math.random() * c.ids.length)] as string;
            let t0 = performance.now();
            const answer = await api<{ since: string; step: number; versions: Array<{ points: unknown[] }> }>(
              'GET',
              `/projects/bench/endpoints/${id}/runtime?environment=production&${c.query()}`,
            );
            const [http, sql, before] = timings.get(c.name)!;
            http!.push(performance.now() - t0);
            c.points = answer.versions.reduce((n, v) => n + v.points.length, 0);
            const scope = [projectId, 'GET', pathOf.get(id), 'production', null, answer.since];
            t0 = performance.now();
            await stepsOf(alone, id, answer);
            sql!.push(performance.now() - t0);
            if (!withBefore) continue;
            t0 = performance.now();
            await pool.query(BEFORE, [...scope, answer.step, new Date(Date.now() - c.minuteDays * 24 * 3600_000)]);
            before!.push(performance.now() - t0);
          }
      for (const c of cases)
        contenders.forEach((contender, i) => {
          const t = timings.get(c.name)![i]!;
          if (t.length === 0) return;
          console.log(
            `${label}${c.name}: ${contender}: ${c.points} points, p50 ${median(t).toFixed(1)} ms, p95 ${percentile(t, 95).toFixed(1)} ms (${t.length} calls)`,
          );
        });
    };
    const pathOf = new Map(
      (await pool.query<{ id: string; path: string }>('SELECT id, path FROM endpoints')).rows.map((r) => [
        r.id,
        r.path,
      ]),
    );
    await measure('', WITH_BEFORE);
    if (WAITING > 0) {
      // Folds of the build: FOLD_MINUTES endpoints each (drawn from all), at one of the last 10 minutes.
      const folds = createDataSource((pool.options as { connectionString: string }).connectionString, { poolSize: 2 });
      await folds.initialize();
      const repository = new RuntimeRepository(folds);
      const paths = [...pathOf.values()];
      const histogram = JSON.parse(HISTOGRAM) as WireHistogram;
      const minuteNow = Date.now() - (Date.now() % 60_000);
      const t0 = performance.now();
      for (let added = 0; added < WAITING; added += FOLD_MINUTES) {
        const minute = new Date(minuteNow - Math.floor(Math.random() * 10) * 60_000).toISOString();
        const drawn = new Set<string>();
        while (drawn.size < Math.min(FOLD_MINUTES, WAITING - added, paths.length))
          drawn.add(paths[Math.floor(Math.random() * paths.length)] as string);
        await folds.transaction((manager) =>
          repository.addMinutes(
            manager,
            projectId,
            { kind: 'production', name: 'p-1' },
            [...drawn].map((path) => ({
              method: 'GET',
              path,
              minute,
              requests: 60,
              serverErrors: 1,
              upstreamFailures: 0,
              clientLeft: 0,
              ttfb: histogram,
              ttlb: histogram,
            })),
          ),
        );
      }
      await folds.destroy();
      await pool.query('ANALYZE');
      console.log(
        `added ${WAITING.toLocaleString('en')} minutes waiting in ${Math.ceil(WAITING / FOLD_MINUTES)} folds ` +
          `(${((performance.now() - t0) / Math.ceil(WAITING / FOLD_MINUTES)).toFixed(1)} ms a fold, with its cells)`,
      );
      await measure(`${WAITING.toLocaleString('en')} minutes waiting: `, false);
    }
    // BENCH_RUNTIME_EXPLAIN=1: the plan of the route's statement for one endpoint of each case.
    if (process.env.BENCH_RUNTIME_EXPLAIN)
      for (const c of cases) {
        const id = c.ids[0] as string;
        const answer = await api<{ since: string; step: number }>(
          'GET',
          `/projects/bench/endpoints/${id}/runtime?environment=production&${c.query()}`,
        );
        const explaining = new RuntimeRepository({
          query: async (sql: string, parameters: unknown[]) => {
            const plan = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, parameters);
            console.log(`${c.name}:\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}`);
            return [];
          },
        } as unknown as DataSource);
        await stepsOf(explaining, id, answer);
      }
    console.log(`load average at the end: ${loadAverage()}`);
  });
}

runBench(main);
