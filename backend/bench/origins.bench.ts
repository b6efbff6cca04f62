/**
 * Where a diff's traffic was first seen (issue 18), bounded per page: `GET /captures/{id}/diffs/origins`
 * at its worst, where every environment row has every diff's exchange. One embedded PostgreSQL and
 * backend, seeded with generate_series: 1,000 documented endpoints, 500 environment rows (100 pull
 * requests, 200 staging and 200 production builds) whose evidence all has a drifting response on
 * every endpoint (500,000 distinct exchanges), and a production capture showing it on every
 * endpoint (1,000 diffs). Side by side, call by call in turn: a page of the diffs themselves (kept
 * as JSON), the origins of a page of 250 and of 1,000 diffs over HTTP, and the statement alone for
 * 250 diffs as it was before `exchange_origins` (every row's evidence of each exchange, joined to
 * its row) and as it is (one probe of the evidence's origin index per exchange and kind), and what
 * the fold's statement adding 250 exchanges to a row costs, for a new row (all new to it) and for
 * a row that has them; p50/p95 of SAMPLES calls each. BENCH_ORIGINS_EXPLAIN=1 prints the plan of the
 * statement for 250 diffs first. (Session 13's `exchange_origins`, written by
 * the fold, is compared by running this bench at its commit, 0c93127, beside this one.)
 */
import { fingerprint, inferShape } from '@spectator/shared';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../src/common/queryable';
import { EvidenceRepository, type FoldedExchangeRow, type WantedExchange } from '../src/evidence/evidence.repository';
import { percentile, responseShape, runBench, withBenchBackend } from './harness';

/** The statement before `exchange_origins`: the first row per kind read from every row's evidence of each exchange. */
const BEFORE = `SELECT DISTINCT ON (w.n, r.kind) w.n, r.kind, r.name, r.pull_request AS "pullRequest", r.build, r.commit,
              o.first_seen AS "firstSeen"
         FROM jsonb_to_recordset($2::jsonb)
              AS w(n int, method text, path text, status smallint, req_ct text, req_fp text, res_ct text, res_fp text)
         JOIN evidence_observations o
           ON o.project_id = $1 AND o.method = w.method AND o.path = w.path AND o.status = w.status
          AND o.request_content_type IS NOT DISTINCT FROM w.req_ct AND o.request_shape IS NOT DISTINCT FROM w.req_fp
          AND o.response_content_type IS NOT DISTINCT FROM w.res_ct AND o.response_shape IS NOT DISTINCT FROM w.res_fp
         JOIN environment_rows r ON r.id = o.row_id AND r.project_id = $1
        ORDER BY w.n, r.kind, o.first_seen, r.first_seen, r.id`;

const ENDPOINTS = 1_000;
const ROWS = { ci: 100, staging: 200, production: 200 };
const SAMPLES = 30;
const WARMUP = 3;

const driftShape = inferShape({ id: 1, title: 't', author: 'a', extra: true });
const FP = fingerprint(responseShape);
const FP_DRIFT = fingerprint(driftShape);

/** The pool as a repository's statements take it: rows of each statement. */
const queryableOn = (pool: pg.Pool): Queryable => ({
  query: async <T>(text: string, values?: unknown[]): Promise<T> => (await pool.query(text, values)).rows as T,
});

/** The evidence repository on the pool (the statements the backend runs, without Nest). */
const repositoryOn = (pool: pg.Pool): EvidenceRepository =>
  new EvidenceRepository(queryableOn(pool) as unknown as DataSource);

async function seed(pool: pg.Pool, projectId: string): Promise<string> {
  const q = (sql: string, params: unknown[] = []): Promise<pg.QueryResult> => pool.query(sql, params);
  await q(`INSERT INTO shapes (fingerprint, shape) VALUES ($1, $2), ($3, $4) ON CONFLICT DO NOTHING`, [
    FP,
    JSON.stringify(responseShape),
    FP_DRIFT,
    JSON.stringify(driftShape),
  ]);
  await q(
    `INSERT INTO endpoints (project_id, method, path) SELECT $1, 'GET', '/resource' || i FROM generate_series(1, $2::int) i`,
    [projectId, ENDPOINTS],
  );
  await q(
    `INSERT INTO endpoint_versions (project_id, endpoint_id, major, minor, request, responses)
     SELECT project_id, id, 1, 0, NULL, $2::jsonb FROM endpoints WHERE project_id = $1`,
    [projectId, JSON.stringify([{ status: 200, contentType: 'application/json', shape: responseShape }])],
  );
  await q(
    `UPDATE endpoints e SET current_version_id = (SELECT v.id FROM endpoint_versions v WHERE v.endpoint_id = e.id) WHERE project_id = $1`,
    [projectId],
  );
  await q(
    `INSERT INTO environment_rows (project_id, kind, name, scope, pull_request, build, commit, first_seen, last_seen)
     SELECT $1::uuid, 'ci', 'PR #' || i, i::text, i::text, NULL, 'c' || i, now() - make_interval(mins => 1000 - i), now() FROM generate_series(1, $2::int) i
     UNION ALL
     SELECT $1::uuid, 'staging', 's-' || i, '', NULL, 's-' || i, 'c' || i, now() - make_interval(mins => 1000 - i), now() FROM generate_series(1, $3::int) i
     UNION ALL
     SELECT $1::uuid, 'production', 'p-' || i, '', NULL, 'p-' || i, 'c' || i, now() - make_interval(mins => 1000 - i), now() FROM generate_series(1, $4::int) i`,
    [projectId, ROWS.ci, ROWS.staging, ROWS.production],
  );
  await q(
    `INSERT INTO evidence_observations (row_id, project_id, kind, row_first_seen, method, path, status, response_content_type, response_shape,
                                        count, first_seen, last_seen)
     SELECT r.id, $1::uuid, r.kind, r.first_seen, e.method, e.path, 200, 'application/json', $2, 3, r.first_seen, r.last_seen
       FROM environment_rows r CROSS JOIN endpoints e WHERE r.project_id = $1 AND e.project_id = $1`,
    [projectId, FP_DRIFT],
  );
  const capture = (
    await q(
      `INSERT INTO captures (id, project_id, environment_kind, environment_name, build, commit, reason, started_at)
       VALUES (gen_random_uuid(), $1, 'production', 'p-200', 'p-200', 'c200', 'agent-start', now()) RETURNING id`,
      [projectId],
    )
  ).rows[0]?.id as string;
  await q(
    `INSERT INTO observations (project_id, capture_id, capture_created_at, method, path, status, response_content_type, response_shape, count, first_seen, last_seen)
     SELECT c.project_id, c.id, c.created_at, e.method, e.path, 200, 'application/json', $3, 2, now(), now()
       FROM captures c CROSS JOIN endpoints e WHERE c.id = $1 AND c.project_id = $2 AND e.project_id = $2`,
    [capture, projectId, FP_DRIFT],
  );
  await q(
    `INSERT INTO capture_endpoints (project_id, capture_id, method, path)
     SELECT $2, capture_id, method, path FROM observations WHERE capture_id = $1 GROUP BY capture_id, method, path`,
    [capture, projectId],
  );
  await q('ANALYZE');
  return capture;
}

/**
 * Milliseconds of one fold's statement adding `exchanges` to a row, in a transaction rolled back
 * after (so every sample finds the same tables): a production row made in it (`row` null: all its
 * exchanges are new to it, every one's first row elsewhere), or row `row`, which has them.
 */
async function timedFold(
  pool: pg.Pool,
  projectId: string,
  row: string | null,
  add: (db: Queryable, rowId: string) => Promise<unknown>,
): Promise<{ ms: number; items: number }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const rowId =
      row ??
      ((
        await client.query(
          `INSERT INTO environment_rows (project_id, kind, name, scope, pull_request, build, commit, first_seen, last_seen)
           VALUES ($1, 'production', 'p-new', '', NULL, 'p-new', 'cnew', now(), now()) RETURNING id`,
          [projectId],
        )
      ).rows[0]?.id as string);
    const started = performance.now();
    await add(queryableOn(client as unknown as pg.Pool), rowId);
    const ms = performance.now() - started;
    await client.query('ROLLBACK');
    return { ms, items: 0 };
  } finally {
    client.release();
  }
}

/** Milliseconds to the rows of one statement, and how many rows it had. */
async function timedSql(run: () => Promise<unknown[]>): Promise<{ ms: number; items: number }> {
  const started = performance.now();
  const rows = await run();
  return { ms: performance.now() - started, items: rows.length };
}

/** Milliseconds to the whole answer of one call, and how many items it had. */
async function timed(url: string, token: string): Promise<{ ms: number; items: number }> {
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text}`);
  return { ms, items: (JSON.parse(text) as unknown[]).length };
}

runBench(() =>
  withBenchBackend(4, async ({ backend, pool, api }) => {
    const project = await api<{ id: string }>('POST', '/projects', { slug: 'origins', name: 'origins' });
    const t0 = performance.now();
    const capture = await seed(pool, project.id);
    console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const base = `${backend.url}/api/v1/projects/origins/captures/${capture}`;
    // The first 250 diffs' exchanges, as the route asks for them.
    const wanted: WantedExchange[] = Array.from({ length: 250 }, (_, n) => ({
      n,
      method: 'GET',
      path: `/resource${n + 1}`,
      status: 200,
      req_ct: null,
      req_fp: null,
      res_ct: 'application/json',
      res_fp: FP_DRIFT,
    }));
    const repository = repositoryOn(pool);
    // What a fold adds for those exchanges, and a row that has them all (the newest production build).
    const folded: FoldedExchangeRow[] = wanted.map(({ n: _n, ...key }) => ({
      ...key,
      count: 3,
      last_seen: new Date().toISOString(),
      query: null,
      req_h: null,
      commit: 'cnew',
      build: 'p-new',
    }));
    if (process.env.BENCH_ORIGINS_EXPLAIN === '1') {
      // The plan of the statement for 250 diffs, once: the repository's statement run under EXPLAIN.
      const explained = new EvidenceRepository({
        query: async (text: string, values?: unknown[]) =>
          (await pool.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, values)).rows,
      } as unknown as DataSource);
      const plan = (await explained.firstRowsShowing(project.id, wanted)) as unknown as Array<Record<string, string>>;
      console.log(plan.map((line) => Object.values(line).join('')).join('\n'));
    }
    const existing = (
      await pool.query(`SELECT id FROM environment_rows WHERE project_id = $1 AND name = 'p-200'`, [project.id])
    ).rows[0]?.id as string;
    const contenders: Array<
      | { label: string; url: string }
      | { label: string; sql: () => Promise<unknown[]> }
      | { label: string; fold: (db: Queryable, rowId: string) => Promise<unknown>; row: string | null }
    > = [
      { label: 'diffs, page of 250 (kept JSON)', url: `${base}/diffs?limit=250` },
      { label: 'origins, page of 250', url: `${base}/diffs/origins?limit=250` },
      { label: 'origins, page of 1,000', url: `${base}/diffs/origins?limit=1000` },
      {
        label: 'statement alone, 250 diffs, before (every row of each exchange)',
        sql: async () => (await pool.query(BEFORE, [project.id, JSON.stringify(wanted)])).rows,
      },
      {
        label: 'statement alone, 250 diffs, now (origin index)',
        sql: () => repository.firstRowsShowing(project.id, wanted),
      },
      ...(
        [
          ['new to a new row', null],
          ['the row has', existing],
        ] as const
      ).map(([what, row]) => ({
        label: `fold's statement, 250 exchanges ${what}`,
        fold: (db: Queryable, rowId: string) => repository.addExchanges(db, project.id, rowId, folded),
        row,
      })),
    ];
    const times = contenders.map(() => [] as number[]);
    const items = contenders.map(() => 0);
    for (let i = 0; i < SAMPLES + WARMUP; i++)
      for (const [c, contender] of contenders.entries()) {
        const { ms, items: n } =
          'sql' in contender
            ? await timedSql(contender.sql)
            : 'fold' in contender
              ? await timedFold(pool, project.id, contender.row, contender.fold)
              : await timed(contender.url, backend.adminToken);
        items[c] = n;
        if (i >= WARMUP) times[c]?.push(ms);
      }
    const origins = (await (
      await fetch(`${base}/diffs/origins?limit=1`, { headers: { authorization: `Bearer ${backend.adminToken}` } })
    ).json()) as Array<{ since: string }>;
    console.log(`one diff's origins: ${origins[0]?.since}`);
    for (const [c, contender] of contenders.entries())
      console.log(
        `${contender.label}: ${items[c]} items, p50 ${percentile(times[c] ?? [], 50).toFixed(1)} ms, p95 ${percentile(times[c] ?? [], 95).toFixed(1)} ms`,
      );
  }),
);
