/**
 * Backend benchmark, bounded (a few minutes on 2 cores), all contenders in one run on one
 * embedded PostgreSQL:
 *  1. ingest: simulated agents stream batches over real WebSockets to the backend, against the same
 *     rows written by a plain multi-row INSERT … ON CONFLICT through `pg` (alternating rounds,
 *     medians, ratio);
 *  2. views: p95 of the undocumented and diffs API calls on a project with 10,000 endpoints and
 *     1,000,000 aggregated observations (seeded with generate_series).
 */
import { fingerprint, inferShape, type Shape, type WireObservation } from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { median, percentile, runBench, withBenchBackend } from './harness';
import { connectTestAgent, helloMessage, type TestAgent } from '../test/support/agent-client';

const AGENTS = 4;
const BATCHES_PER_AGENT = 25;
const ROWS_PER_BATCH = 500;
const ROUNDS = 3;
const ENDPOINTS = 10_000;
const CAPTURES = 100;
const QUERY_SAMPLES = 40;


const requestShape = inferShape({ title: 't', author: 'a' });
const responseShape = inferShape({ id: 1, title: 't', author: 'a' });
const driftShape = inferShape({ title: 't', author: 'a', draft: true });
const SHAPES: Record<string, Shape> = { [fingerprint(requestShape)]: requestShape, [fingerprint(responseShape)]: responseShape, [fingerprint(driftShape)]: driftShape };

/** The batches of one agent in one round: distinct keys over 2,000 paths so rows are both inserted and updated. */
function batchesFor(agent: number, round: number): WireObservation[][] {
  const now = new Date().toISOString();
  return Array.from({ length: BATCHES_PER_AGENT }, (_, b) =>
    Array.from({ length: ROWS_PER_BATCH }, (_, r): WireObservation => {
      const i = (agent * 7919 + round * 104_729 + b * ROWS_PER_BATCH + r) % 2000;
      return {
        method: 'POST',
        path: `/resource${i}`,
        status: r % 10 === 0 ? 400 : 201,
        query: [],
        requestHeaders: ['content-type'],
        responseHeaders: ['content-type'],
        request: { contentType: 'application/json', shape: fingerprint(requestShape) },
        response: { contentType: 'application/json', shape: fingerprint(responseShape) },
        count: 1 + (r % 3),
        firstSeen: now,
        lastSeen: now,
      };
    }),
  );
}

async function ingestThroughBackend(agents: TestAgent[], captureId: string, round: number): Promise<number> {
  // Serialised before the clock starts: the agents' own JSON work is not the backend's cost.
  const work = agents.map((_, a) => batchesFor(a, round).map((observations) => JSON.stringify({ type: 'batch', batchId: randomUUID(), captureId, shapes: {}, observations })));
  const started = performance.now();
  await Promise.all(
    agents.map(async (agent, a) => {
      // Like the real agent: a window of batches in flight, each kept until its ack.
      const window = 8;
      let next = 0;
      const send = (): void => agent.send(work[a]?.[next++] as string);
      let inFlight = 0;
      while (next < BATCHES_PER_AGENT && inFlight < window) {
        send();
        inFlight++;
      }
      while (inFlight > 0) {
        const message = await agent.next(60_000);
        if (message.type !== 'ack') throw new Error(`unexpected ${JSON.stringify(message)}`);
        inFlight--;
        if (next < BATCHES_PER_AGENT) {
          send();
          inFlight++;
        }
      }
    }),
  );
  return (AGENTS * BATCHES_PER_AGENT * ROWS_PER_BATCH) / ((performance.now() - started) / 1000);
}

async function ingestPlain(pool: pg.Pool, captureId: string, round: number): Promise<number> {
  const work = Array.from({ length: AGENTS }, (_, a) => batchesFor(a, round));
  const started = performance.now();
  await Promise.all(
    work.map(async (batches) => {
      const client = await pool.connect();
      try {
        for (const rows of batches) {
          // Fold duplicate keys as any correct writer must (ON CONFLICT cannot touch a row twice).
          const folded = new Map<string, WireObservation>();
          for (const row of rows) {
            const key = `${row.path} ${row.status}`;
            const before = folded.get(key);
            if (before) before.count += row.count;
            else folded.set(key, { ...row });
          }
          const values: unknown[] = [];
          const tuples = [...folded.values()]
            .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : x.status - y.status))
            .map((row) => {
              const base = values.length;
              values.push(captureId, row.method, row.path, row.status, row.request?.contentType, row.request?.shape, row.response?.contentType, row.response?.shape, row.count, row.firstSeen, row.lastSeen);
              return `(${Array.from({ length: 11 }, (_, k) => `$${base + k + 1}`).join(', ')})`;
            });
          await client.query('BEGIN');
          await client.query(
            `INSERT INTO observations AS o (capture_id, method, path, status, request_content_type, request_shape, response_content_type, response_shape, count, first_seen, last_seen)
             VALUES ${tuples.join(', ')}
             ON CONFLICT (capture_id, method, path, status, (coalesce(request_content_type, ' ')), (coalesce(request_shape, ' ')),
                          (coalesce(response_content_type, ' ')), (coalesce(response_shape, ' ')))
             DO UPDATE SET count = o.count + EXCLUDED.count, last_seen = greatest(o.last_seen, EXCLUDED.last_seen)`,
            values,
          );
          await client.query('COMMIT');
        }
      } finally {
        client.release();
      }
    }),
  );
  return (AGENTS * BATCHES_PER_AGENT * ROWS_PER_BATCH) / ((performance.now() - started) / 1000);
}

async function seedViews(pool: pg.Pool, projectId: string): Promise<string> {
  const fpRequest = fingerprint(requestShape);
  const fpResponse = fingerprint(responseShape);
  const fpDrift = fingerprint(driftShape);
  const documented = { request: { contentType: 'application/json', shape: requestShape }, responses: [{ status: 201, contentType: 'application/json', shape: responseShape }] };
  const t0 = performance.now();
  await pool.query(
    `INSERT INTO endpoints (project_id, method, path, description) SELECT $1, 'POST', '/item' || i, 'seeded' FROM generate_series(1, $2::int) i`,
    [projectId, ENDPOINTS],
  );
  // Half of the endpoints documented (1.0), the other half undocumented.
  await pool.query(
    `WITH v AS (
       INSERT INTO endpoint_versions (endpoint_id, major, minor, request, responses)
       SELECT id, 1, 0, $2::jsonb, $3::jsonb FROM endpoints WHERE project_id = $1 AND substr(path, 6)::int % 2 = 0
       RETURNING id, endpoint_id)
     UPDATE endpoints e SET current_version_id = v.id FROM v WHERE e.id = v.endpoint_id`,
    [projectId, JSON.stringify(documented.request), JSON.stringify(documented.responses)],
  );
  await pool.query(
    `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at)
     SELECT gen_random_uuid(), $1, 'staging', 'staging', 'agent-start', now() - make_interval(mins => c) FROM generate_series(1, $2::int) c`,
    [projectId, CAPTURES],
  );
  // One row per endpoint per capture; every 50th endpoint sends a drifting request body. Seeding
  // only: foreign-key triggers off and the aggregate index rebuilt once afterwards, for speed.
  const client = await pool.connect();
  const index = (await client.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = 'observations_aggregate_key'`)).rows[0]?.indexdef as string;
  await client.query('SET session_replication_role = replica');
  await client.query('DROP INDEX observations_aggregate_key');
  await client.query(
    `INSERT INTO observations (capture_id, method, path, status, request_content_type, request_shape, response_content_type, response_shape, count, first_seen, last_seen)
     SELECT c.id, 'POST', '/item' || i, 201, 'application/json', CASE WHEN i % 50 = 0 THEN $3 ELSE $2 END, 'application/json', $4, 1 + i % 7, now(), now()
       FROM captures c CROSS JOIN generate_series(1, $5::int) i
      WHERE c.project_id = $1`,
    [projectId, fpRequest, fpDrift, fpResponse, ENDPOINTS],
  );
  await client.query(index);
  // The per-endpoint summaries the ingest transaction would have kept (both bodies JSON: 2 of interest per interaction).
  await client.query(
    `INSERT INTO capture_endpoints (capture_id, method, path, interactions, interest)
     SELECT o.capture_id, o.method, o.path, sum(o.count), 2 * sum(o.count) FROM observations o JOIN captures c ON c.id = o.capture_id
      WHERE c.project_id = $1 GROUP BY o.capture_id, o.method, o.path`,
    [projectId],
  );
  await client.query('SET session_replication_role = DEFAULT');
  client.release();
  await pool.query('ANALYZE');
  const count = (await pool.query<{ n: string }>('SELECT count(*) AS n FROM observations o JOIN captures c ON c.id = o.capture_id WHERE c.project_id = $1', [projectId])).rows[0]?.n;
  console.log(`seeded ${ENDPOINTS} endpoints (${ENDPOINTS / 2} documented), ${CAPTURES} captures, ${count} observations in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const latest = await pool.query<{ id: string }>('SELECT id FROM captures WHERE project_id = $1 ORDER BY started_at DESC LIMIT 1', [projectId]);
  return latest.rows[0]?.id as string;
}

/**
 * p50/p95 of an API call, alternating call by call with a SQL contender (so both see the same load
 * on the shared machine): the query the view ran before per-endpoint summaries, timed alone.
 */
async function timeCalls(url: string, token: string, samples: number, pool: pg.Pool, before: { sql: string; params: unknown[] }): Promise<{ p50: number; p95: number; items: number; beforeP50: number; beforeP95: number }> {
  const times: number[] = [];
  const beforeTimes: number[] = [];
  let items = 0;
  for (let i = 0; i < samples + 3; i++) {
    const started = performance.now();
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    const body = (await response.json()) as unknown[];
    if (response.status !== 200) throw new Error(`${url}: ${response.status} ${JSON.stringify(body)}`);
    const between = performance.now();
    await pool.query(before.sql, before.params);
    if (i >= 3) {
      // the first calls warm caches
      times.push(between - started);
      beforeTimes.push(performance.now() - between);
    }
    items = body.length;
  }
  return { p50: percentile(times, 50), p95: percentile(times, 95), items, beforeP50: percentile(beforeTimes, 50), beforeP95: percentile(beforeTimes, 95) };
}

/** The SQL the views ran before summaries (aggregating observations per request), as contenders. */
const BEFORE_UNDOCUMENTED = `SELECT o.method, o.path, o.request_content_type, o.response_content_type, sum(o.count)::float8 AS count
   FROM observations o
  WHERE o.capture_id = $1
    AND NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.project_id = $2 AND e.method = o.method AND e.path = o.path AND e.current_version_id IS NOT NULL)
  GROUP BY o.method, o.path, o.request_content_type, o.response_content_type`;
const BEFORE_DIFFS = `SELECT e.id, e.current_version_id, o.method, o.path, o.status, o.request_content_type, o.request_shape,
        o.response_content_type, o.response_shape, o.count::float8 AS count
   FROM observations o JOIN endpoints e ON e.project_id = $2 AND e.method = o.method AND e.path = o.path
  WHERE o.capture_id = $1 AND e.current_version_id IS NOT NULL`;

async function main(): Promise<void> {
  await withBenchBackend(AGENTS + 1, async ({ backend, pool, api }) => {
    const project = await api<{ id: string }>('POST', '/projects', { slug: 'bench', name: 'Bench' });
    const { token } = await api<{ token: string }>('POST', '/projects/bench/tokens', { name: 'bench agents', scope: 'agent' });
    await pool.query(`INSERT INTO shapes (fingerprint, shape) SELECT key, value FROM jsonb_each($1::jsonb) ON CONFLICT DO NOTHING`, [JSON.stringify(SHAPES)]);

    // Two sets of agents: staging (evidence is recorded in each batch's transaction, issue 5) and
    // local (captures only, no evidence), so the cost of each part shows.
    const sessions: Array<{ label: string; agents: TestAgent[]; captureId: string }> = [];
    for (const environment of [{ kind: 'staging' as const, build: 'bench' }, { kind: 'local' as const }]) {
      const hello = helloMessage({ environment });
      const agents: TestAgent[] = [];
      for (let a = 0; a < AGENTS; a++) {
        const agent = await connectTestAgent(backend.url, token);
        await agent.request({ ...hello, agentId: `bench-${environment.kind}-${a}` });
        agents.push(agent);
      }
      sessions.push({ label: `backend (${environment.kind})`, agents, captureId: hello.capture.id });
    }
    const plainCapture = randomUUID();
    await pool.query(
      `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at) VALUES ($1, $2, 'staging', 'staging', 'agent-start', now())`,
      [plainCapture, project.id],
    );

    const contenders: Array<{ label: string; run: (round: number) => Promise<number>; rates: number[] }> = [
      ...sessions.map((session) => ({ label: session.label, run: (round: number) => ingestThroughBackend(session.agents, session.captureId, round), rates: [] as number[] })),
      { label: 'plain INSERT … ON CONFLICT', run: (round: number) => ingestPlain(pool, plainCapture, round), rates: [] as number[] },
    ];
    // SPECTATOR_BENCH_ONLY=views skips the ingest part, e.g. while profiling the views.
    for (let round = 0; round < (process.env.SPECTATOR_BENCH_ONLY === 'views' ? 0 : ROUNDS); round++) {
      // Rotate the order so no contender always gets the warmer database.
      for (let k = 0; k < contenders.length; k++) {
        const contender = contenders[(round + k) % contenders.length] as (typeof contenders)[number];
        contender.rates.push(await contender.run(round));
      }
      console.log(`round ${round + 1}: ${contenders.map((c) => `${c.label} ${c.rates[round]?.toFixed(0)} obs/s`).join(', ')}`);
    }
    await Promise.all(sessions.flatMap((session) => session.agents.map((agent) => agent.close())));
    const plainMedian = median(contenders[contenders.length - 1]?.rates ?? []);
    if (process.env.SPECTATOR_BENCH_ONLY !== 'views') console.log(`ingest (${AGENTS} agents × ${BATCHES_PER_AGENT} batches × ${ROWS_PER_BATCH} observations per round, medians of ${ROUNDS} rounds, aim ≥ 0.50 of plain):`);
    for (const contender of process.env.SPECTATOR_BENCH_ONLY === 'views' ? [] : contenders) {
      const rate = median(contender.rates);
      console.log(`  ${contender.label.padEnd(28)} ${rate.toFixed(0).padStart(7)} obs/s  ratio to plain ${(rate / plainMedian).toFixed(2)}`);
    }

    // SPECTATOR_BENCH_ONLY=ingest skips the (slower to seed) views part, e.g. while profiling.
    if (process.env.SPECTATOR_BENCH_ONLY === 'ingest') return;
    const views = await api<{ id: string }>('POST', '/projects', { slug: 'views', name: 'Views' });
    const latest = await seedViews(pool, views.id);
    const base = `${backend.url}/api/v1/projects/views/captures/${latest}`;
    const undocumented = await timeCalls(`${base}/undocumented`, backend.adminToken, QUERY_SAMPLES, pool, { sql: BEFORE_UNDOCUMENTED, params: [latest, views.id] });
    const diffs = await timeCalls(`${base}/diffs`, backend.adminToken, QUERY_SAMPLES, pool, { sql: BEFORE_DIFFS, params: [latest, views.id] });
    for (const [label, t] of [['undocumented', undocumented], ['diffs', diffs]] as const) {
      console.log(
        `${label} (${t.items} endpoints): p50 ${t.p50.toFixed(1)} ms, p95 ${t.p95.toFixed(1)} ms (aim < 50 ms); ` +
          `the SQL alone of the view before summaries: p50 ${t.beforeP50.toFixed(1)} ms, p95 ${t.beforeP95.toFixed(1)} ms; ratio API/that SQL p50 ${(t.p50 / t.beforeP50).toFixed(2)}`,
      );
    }
  });
}

runBench(main);
