/**
 * Versions and evidence benchmark (issue 5: both views < 100 ms p95 on 1,000 endpoints, 500 builds
 * and 1,000,000 observations). One embedded PostgreSQL, one backend, seeded with generate_series:
 * 1,000 documented endpoints, 500 environment rows (100 pull requests, 200 staging and 200
 * production builds), one capture per row with 2,000 aggregated observations each (1,000,000), and
 * the evidence the ingest hook keeps for them (500,000 distinct exchanges, 500,000 cells).
 *
 * Side by side, alternating, medians of rounds: the API answering from the precomputed rows
 * against the SQL a per-request computation would need at the least (the newest observation of
 * each endpoint in the environment, read from the raw observations, before any conformance work).
 * The ratio is a lower bound of what precomputing saves.
 *
 * With SPECTATOR_BENCH_BASELINE=<an earlier build's dist/.../src/backend.js>, that build also serves
 * the same database (no migrations) and its matrix pages alternate with this build's, call by call
 * in the same rounds: before/after side by side, as ratios of medians.
 */
import { fingerprint } from '@spectator/shared';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import type { RunningBackend } from '../src/backend';
import { REBUILD_CELLS_TEXT_SQL } from '../src/views/views.repository';
import { median, percentile, responseShape, runBench, withBenchBackend } from './harness';

const ENDPOINTS = 1_000;
const PULL_REQUESTS = 100;
const STAGING_BUILDS = 200;
const PRODUCTION_BUILDS = 200;
const SAMPLES = 40;
const ROUNDS = 3;

const FP = fingerprint(responseShape);

async function seed(pool: pg.Pool, projectId: string): Promise<void> {
  const q = (sql: string, params: unknown[] = []): Promise<pg.QueryResult> => pool.query(sql, params);
  await q(`INSERT INTO shapes (fingerprint, shape) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
    FP,
    JSON.stringify(responseShape),
  ]);
  await q(
    `INSERT INTO endpoints (project_id, method, path) SELECT $1, 'GET', '/resource' || i || '/{id}' FROM generate_series(1, $2::int) i`,
    [projectId, ENDPOINTS],
  );
  const responses = JSON.stringify([{ status: 200, contentType: 'application/json', shape: responseShape }]);
  await q(
    `INSERT INTO endpoint_versions (project_id, endpoint_id, major, minor, request, responses) SELECT project_id, id, 1, 0, NULL, $2::jsonb FROM endpoints WHERE project_id = $1`,
    [projectId, responses],
  );
  await q(
    `INSERT INTO endpoint_versions (project_id, endpoint_id, major, minor, request, responses) SELECT project_id, id, 1, 1, NULL, $2::jsonb FROM endpoints WHERE project_id = $1 AND path LIKE '%5/{id}'`,
    [projectId, responses],
  );
  await q(
    `UPDATE endpoints e SET current_version_id = (SELECT v.id FROM endpoint_versions v WHERE v.endpoint_id = e.id ORDER BY major DESC, minor DESC LIMIT 1) WHERE project_id = $1`,
    [projectId],
  );
  // Rows: first_seen staggered so "newest first" has an order; one capture per row.
  await q(
    `INSERT INTO environment_rows (project_id, kind, name, scope, pull_request, build, commit, first_seen, last_seen)
     SELECT $1::uuid, 'ci', 'PR #' || i, i::text, i::text, NULL, 'c' || i, now() - make_interval(mins => 1000 - i), now() - make_interval(mins => 1000 - i) FROM generate_series(1, $2::int) i
     UNION ALL
     SELECT $1::uuid, 'staging', 's-' || i, '', NULL, 's-' || i, 'c' || i, now() - make_interval(mins => 1000 - i), now() - make_interval(mins => 1000 - i) FROM generate_series(1, $3::int) i
     UNION ALL
     SELECT $1::uuid, 'production', 'p-' || i, '', NULL, 'p-' || i, 'c' || i, now() - make_interval(mins => 1000 - i), now() - make_interval(mins => 1000 - i) FROM generate_series(1, $4::int) i`,
    [projectId, PULL_REQUESTS, STAGING_BUILDS, PRODUCTION_BUILDS],
  );
  await q(
    `INSERT INTO captures (id, project_id, environment_kind, environment_name, pull_request, commit, build, reason, started_at)
     SELECT gen_random_uuid(), project_id, kind, name, pull_request, commit, build, 'agent-start', first_seen FROM environment_rows WHERE project_id = $1`,
    [projectId],
  );
  // 2,000 aggregated observations per capture: every endpoint with a 200 and a 404.
  await q(
    `INSERT INTO observations (project_id, capture_id, capture_created_at, method, path, status, response_content_type, response_shape, count, first_seen, last_seen)
     SELECT c.project_id, c.id, c.created_at, e.method, e.path, s.status, 'application/json', $2, 3, c.started_at, c.started_at
       FROM captures c CROSS JOIN endpoints e CROSS JOIN (VALUES (200), (404)) s(status)
      WHERE c.project_id = $1 AND e.project_id = $1`,
    [projectId, FP],
  );
  await q(
    `INSERT INTO evidence_observations (row_id, project_id, kind, row_first_seen, method, path, status, response_content_type, response_shape,
                                        count, last_seen)
     SELECT r.id, $1::uuid, r.kind, r.first_seen, e.method, e.path, 200, 'application/json', $2, 3, r.last_seen
       FROM environment_rows r CROSS JOIN endpoints e
      WHERE r.project_id = $1 AND e.project_id = $1`,
    [projectId, FP],
  );
  await q(
    `INSERT INTO evidence_cells (project_id, row_id, endpoint_id, version_id, version, drift, last_seen)
     SELECT r.project_id, r.id, e.id, v.id, '1.0', false, r.last_seen FROM environment_rows r CROSS JOIN endpoints e
       JOIN endpoint_versions v ON v.endpoint_id = e.id AND v.major = 1 AND v.minor = 0
      WHERE r.project_id = $1 AND e.project_id = $1`,
    [projectId],
  );
  await q(REBUILD_CELLS_TEXT_SQL, [
    projectId,
    (await q('SELECT array_agg(id) AS ids FROM environment_rows WHERE project_id = $1', [projectId])).rows[0]?.ids,
  ]);
  await q(
    `INSERT INTO evidence_current (project_id, kind, scope, endpoint_id, row_id, row_first_seen, version_id, version, drift, last_seen)
     SELECT DISTINCT ON (r.kind, r.scope, c.endpoint_id) $1::uuid, r.kind, r.scope, c.endpoint_id, r.id, r.first_seen, c.version_id, c.version, c.drift, c.last_seen
       FROM evidence_cells c JOIN environment_rows r ON r.id = c.row_id
      WHERE r.project_id = $1
      ORDER BY r.kind, r.scope, c.endpoint_id, r.first_seen DESC`,
    [projectId],
  );
  await q('ANALYZE');
}

/** The earlier build named by SPECTATOR_BENCH_BASELINE, serving the bench's database; null without it. */
async function startBaseline(pool: pg.Pool, adminToken: string, dir: string): Promise<RunningBackend | null> {
  const entry = process.env.SPECTATOR_BENCH_BASELINE;
  if (entry === undefined || entry === '') return null;
  const { startBackend } = (await import(path.resolve(entry))) as typeof import('../src/backend');
  return startBackend({
    port: 0,
    host: '127.0.0.1',
    databaseUrl: pool.options.connectionString,
    dataDir: dir,
    dashboardDir: dir,
    adminToken,
    logLevel: 'warn',
    runMigrations: false,
  });
}

/** GET of a management route of `backend`, parsed as the harness's client does. */
async function getFrom(backend: RunningBackend, route: string): Promise<unknown> {
  const response = await fetch(`${backend.url}/api/v1${route}`, {
    headers: { authorization: `Bearer ${backend.adminToken}` },
  });
  if (!response.ok) throw new Error(`baseline GET ${route}: ${response.status}`);
  return response.json();
}

/** Latencies (ms) of `samples` sequential calls of `call`, after 3 warm-up calls. */
async function time(call: () => Promise<void>, samples: number): Promise<number[]> {
  for (let i = 0; i < 3; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return times;
}

async function main(): Promise<void> {
  await withBenchBackend(2, async ({ backend, pool, api }) => {
    const get = (route: string): Promise<unknown> => api('GET', route);
    const project = await api<{ id: string }>('POST', '/projects', { slug: 'bench', name: 'Bench' });
    const seedStarted = performance.now();
    await seed(pool, project.id);
    const counts = (
      await pool.query<{ observations: string; evidence: string; cells: string; rows: string }>(
        `SELECT (SELECT count(*) FROM observations) AS observations, (SELECT count(*) FROM evidence_observations) AS evidence,
              (SELECT count(*) FROM evidence_cells) AS cells, (SELECT count(*) FROM environment_rows) AS rows`,
      )
    ).rows[0];
    console.log(
      `seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s: ${ENDPOINTS} endpoints, ${counts?.rows} rows, ${counts?.observations} observations, ${counts?.evidence} evidence exchanges, ${counts?.cells} cells`,
    );

    const middle = (await get('/projects/bench/versions?kind=staging&limit=100')) as { nextCursor: string };
    // The least a per-request computation of "what runs in production" must read: the newest production observation per endpoint.
    const naiveProduction = async (): Promise<void> => {
      await pool.query(
        `SELECT DISTINCT ON (o.method, o.path) o.method, o.path, o.status, o.response_shape, c.build, c.commit, o.last_seen
           FROM observations o JOIN captures c ON c.id = o.capture_id
          WHERE c.project_id = $1 AND c.environment_kind = 'production'
          ORDER BY o.method, o.path, c.started_at DESC`,
        [project.id],
      );
    };
    const baselineDir = await mkdtemp(path.join(os.tmpdir(), 'spectator-bench-baseline-'));
    const baseline = await startBaseline(pool, backend.adminToken, baselineDir);
    const matrixPages: Array<[string, string]> = [
      ['GET /versions (20 rows × 1,000 endpoints)', '/projects/bench/versions'],
      ['GET /versions?limit=100', '/projects/bench/versions?limit=100'],
      [
        'GET /versions?kind=staging&cursor= (page 2)',
        `/projects/bench/versions?kind=staging&limit=20&cursor=${middle.nextCursor}`,
      ],
    ];
    const contenders: Array<[string, () => Promise<void>]> = [
      ...matrixPages.flatMap(([name, route]): Array<[string, () => Promise<void>]> => [
        [name, async () => void (await get(route))],
        ...(baseline === null
          ? []
          : [[`baseline ${name}`, async () => void (await getFrom(baseline, route))] as [string, () => Promise<void>]]),
      ]),
      [
        'GET /evidence?environment=production',
        async () => void (await get('/projects/bench/evidence?environment=production')),
      ],
      [
        'GET /evidence?environment=ci&pullRequest=50',
        async () => void (await get('/projects/bench/evidence?environment=ci&pullRequest=50')),
      ],
      [
        'GET /evidence?environment=ci (newest of 100 PRs)',
        async () => void (await get('/projects/bench/evidence?environment=ci')),
      ],
      ['naive: newest production observation per endpoint (SQL only)', naiveProduction],
    ];
    const samples = new Map<string, number[]>(contenders.map(([name]) => [name, []]));
    const p95s = new Map<string, number[]>(contenders.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, call] of contenders) {
        const times = await time(call, name.startsWith('naive') ? Math.ceil(SAMPLES / 8) : SAMPLES);
        samples.get(name)?.push(...times);
        p95s.get(name)?.push(percentile(times, 95));
      }
    }
    console.log(
      `\n${'call'.padEnd(62)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)}  (median over ${ROUNDS} alternating rounds)`,
    );
    for (const [name] of contenders) {
      console.log(
        `${name.padEnd(62)} ${median(samples.get(name) ?? [])
          .toFixed(1)
          .padStart(8)} ${median(p95s.get(name) ?? [])
          .toFixed(1)
          .padStart(8)}`,
      );
    }
    const evidenceP50 = median(samples.get('GET /evidence?environment=production') ?? []);
    const naiveP50 = median(samples.get('naive: newest production observation per endpoint (SQL only)') ?? []);
    console.log(
      `\nratio (p50): naive SQL lookup / precomputed evidence API = ${(naiveP50 / evidenceP50).toFixed(1)}x (the naive side is SQL only, no HTTP, no conformance)`,
    );

    // What the stored texts cost writers: a batch that changes a row's cells rewrites that row's
    // text; a first documented endpoint rewrites every row's (rows × endpoints cells).
    const rowIds = (
      await pool.query<{ id: string }>(
        'SELECT id FROM environment_rows WHERE project_id = $1 ORDER BY first_seen DESC',
        [project.id],
      )
    ).rows.map((r) => r.id);
    const oneRow = await time(
      async () => void (await pool.query(REBUILD_CELLS_TEXT_SQL, [project.id, [rowIds[0]]])),
      SAMPLES,
    );
    const allRows = await time(async () => void (await pool.query(REBUILD_CELLS_TEXT_SQL, [project.id, rowIds])), 3);
    // A first documentation through the API: every row's text gains the column (spliced, not rebuilt).
    let documented = 0;
    const documentNew = async (): Promise<void> => {
      const path = `/resource${++documented}/{id}/new`;
      const schema = { type: 'object', properties: { id: { type: 'number' } }, required: ['id'] };
      const proposal = await api<{ id: string }>('POST', '/projects/bench/proposals', {
        title: path,
        endpoints: [{ method: 'GET', path, responses: [{ status: 200, contentType: 'application/json', schema }] }],
      });
      await api('POST', `/projects/bench/proposals/${proposal.id}/approve`);
    };
    const firstDocumentation = await time(documentNew, 3);
    console.log(
      `rewriting the cells text of 1 row (${ENDPOINTS} cells): p50 ${median(oneRow).toFixed(1)} ms, p95 ${percentile(oneRow, 95).toFixed(1)} ms; rebuilding all ${rowIds.length} rows: median ${median(allRows).toFixed(0)} ms`,
    );
    console.log(
      `documenting a new endpoint through the API (proposal + approval; every row's text gains the column): median ${median(firstDocumentation).toFixed(0)} ms`,
    );
    for (const [name] of baseline === null ? [] : matrixPages) {
      const ratio = (stat: (values: number[]) => number): string =>
        (stat(samples.get(`baseline ${name}`) ?? []) / stat(samples.get(name) ?? [])).toFixed(2);
      console.log(
        `baseline / this build, ${name}: p50 ${ratio(median)}x, p95 ${(median(p95s.get(`baseline ${name}`) ?? []) / median(p95s.get(name) ?? [])).toFixed(2)}x`,
      );
    }
    await baseline?.close();
    await rm(baselineDir, { recursive: true, force: true });
    const worst = Math.max(
      ...[...p95s.entries()]
        .filter(([name]) => !name.startsWith('naive') && !name.startsWith('baseline'))
        .map(([, values]) => median(values)),
    );
    console.log(`worst API p95: ${worst.toFixed(1)} ms (target < 100 ms): ${worst < 100 ? 'met' : 'NOT met'}`);
  });
}

runBench(main);
