/**
 * Usage reads benchmark (issue 19): what `GET /usage` (whole, and a page of 100), `/usage/orphans`
 * and `/usage/safe-to-remove` cost on a project of N documented endpoints with production evidence.
 * One embedded PostgreSQL, one backend. N endpoints are documented through the API (planned
 * proposals of 500, approved); production evidence is seeded with SQL: BUILDS production builds,
 * each with two distinct exchanges per endpoint (200 with a response shape of its own per
 * endpoint, and 404), the last tenth of the endpoints never called (orphans), and one field of
 * every tenth endpoint marked deprecated. Then, alternating in rounds, each read over HTTP with
 * auth: p50 and p95 of all calls, side by side in one run.
 *
 * `ENDPOINTS=N` (default 2,000) sets N.
 */
import { fingerprint, inferShape } from '@spectator/shared';
import { performance } from 'node:perf_hooks';
import { median, percentile, runBench, withBenchBackend } from './harness';

const ENDPOINTS = Number(process.env.ENDPOINTS ?? 2_000);
const BUILDS = 5;
const ROUNDS = 5;
const CALLS = 4;
const PER_PROPOSAL = 500;

const pathOf = (i: number): string => `/resource${i}/{id}`;
/** The 200 answer of endpoint i: fields of its own, so every endpoint has its own shape. */
const shapeOf = (i: number) => inferShape({ id: 1, name: 'n', [`field${i}`]: 'x', nested: { [`inner${i}`]: 1 } });

async function main(): Promise<void> {
  await withBenchBackend(4, async ({ pool, api }) => {
    await api('POST', '/projects', { slug: 'bench', name: 'Bench' });
    const started = performance.now();
    for (let from = 0; from < ENDPOINTS; from += PER_PROPOSAL) {
      const endpoints = [];
      for (let i = from; i < Math.min(ENDPOINTS, from + PER_PROPOSAL); i++)
        endpoints.push({
          method: 'GET',
          path: pathOf(i),
          responses: [
            {
              status: 200,
              contentType: 'application/json',
              schema: {
                type: 'object',
                properties: { id: { type: 'number' }, name: { type: 'string' }, [`field${i}`]: { type: 'string' } },
              },
            },
          ],
        });
      const proposal = await api<{ id: string }>('POST', '/projects/bench/proposals', {
        title: `endpoints from ${from}`,
        endpoints,
      });
      await api('POST', `/projects/bench/proposals/${proposal.id}/approve`, {});
    }
    const [{ id: projectId }] = (await pool.query<{ id: string }>(`SELECT id FROM projects WHERE slug = 'bench'`))
      .rows as [{ id: string }];
    const called = Math.floor(ENDPOINTS * 0.9);
    const shapes = Array.from({ length: called }, (_, i) => shapeOf(i));
    await pool.query(
      `INSERT INTO shapes (fingerprint, shape) SELECT * FROM unnest($1::text[], $2::jsonb[]) ON CONFLICT DO NOTHING`,
      [shapes.map((s) => fingerprint(s)), shapes.map((s) => JSON.stringify(s))],
    );
    for (let build = 0; build < BUILDS; build++) {
      const [{ id: rowId }] = (
        await pool.query<{ id: string }>(
          `INSERT INTO environment_rows (project_id, kind, name, scope, build, first_seen, last_seen)
           VALUES ($1, 'production', $2, '', $2, now() - make_interval(days => $3), now() - make_interval(days => $3))
           RETURNING id`,
          [projectId, `p-${build}`, BUILDS - build],
        )
      ).rows as [{ id: string }];
      await pool.query(
        `INSERT INTO evidence_observations (row_id, project_id, kind, row_first_seen, method, path, status, response_content_type,
                                            response_shape, count, last_seen, query, request_headers)
         SELECT $1::uuid, $2::uuid, r.kind, r.first_seen, 'GET', p.path, s.status, 'application/json',
                CASE WHEN s.status = 200 THEN p.fp END, 100, now() - make_interval(days => $3), '{page}', '{x-tenant}'
           FROM environment_rows r, unnest($4::text[], $5::text[]) AS p(path, fp), (VALUES (200), (404)) AS s(status)
          WHERE r.id = $1::uuid`,
        [rowId, projectId, BUILDS - build, shapes.map((_, i) => pathOf(i)), shapes.map((s) => fingerprint(s))],
      );
    }
    const marked = Array.from({ length: Math.ceil(called / 10) }, (_, n) => n * 10);
    await pool.query(
      `INSERT INTO deprecations (project_id, method, path, location, name, source)
       SELECT $1::uuid, 'GET', m.path, 'response', m.name, 'dashboard' FROM unnest($2::text[], $3::text[]) AS m(path, name)`,
      [projectId, marked.map(pathOf), marked.map((i) => `$.field${i}`)],
    );
    await pool.query('VACUUM ANALYZE evidence_observations');
    console.log(
      `${ENDPOINTS.toLocaleString('en')} endpoints, ${(called * 2 * BUILDS).toLocaleString('en')} evidence rows, ` +
        `seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );

    const middle = encodeURIComponent(`GET ${pathOf(Math.floor(called / 2))}`);
    const cases: Array<{ name: string; route: string; size: (answer: unknown) => number }> = [
      {
        name: 'GET /usage (all)',
        route: '/projects/bench/usage?environment=production',
        size: (a) => (a as { endpoints: unknown[] }).endpoints.length,
      },
      {
        name: 'GET /usage?limit=100',
        route: '/projects/bench/usage?environment=production&limit=100',
        size: (a) => (a as { endpoints: unknown[] }).endpoints.length,
      },
      {
        name: 'GET /usage?limit=100&after=<middle>',
        route: `/projects/bench/usage?environment=production&limit=100&after=${middle}`,
        size: (a) => (a as { endpoints: unknown[] }).endpoints.length,
      },
      {
        name: 'GET /usage/orphans',
        route: '/projects/bench/usage/orphans?days=30',
        size: (a) => (a as { orphans: unknown[] }).orphans.length,
      },
      {
        name: 'GET /usage/safe-to-remove',
        route: '/projects/bench/usage/safe-to-remove?days=30',
        size: (a) => (a as { endpoints: unknown[] }).endpoints.length,
      },
    ];
    const timings = new Map(cases.map((c) => [c.name, [] as number[]]));
    const sizes = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++)
      for (let call = 0; call < CALLS; call++)
        for (const c of cases) {
          const t0 = performance.now();
          const answer = await api<unknown>('GET', c.route);
          timings.get(c.name)!.push(performance.now() - t0);
          sizes.set(c.name, c.size(answer));
        }
    for (const c of cases) {
      const t = timings.get(c.name)!;
      console.log(
        `${c.name}: ${sizes.get(c.name)} items, p50 ${median(t).toFixed(1)} ms, p95 ${percentile(t, 95).toFixed(1)} ms (${t.length} calls)`,
      );
    }
  });
}

runBench(main);
