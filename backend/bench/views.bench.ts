/**
 * Backend views benchmark, bounded: p95 of the undocumented and diffs API calls on a project with
 * 10,000 endpoints and 1,000,000 aggregated observations (seeded with generate_series): each view
 * just after a new batch of 500 endpoints for its capture (the kept view patched), just after a
 * batch that did not record its endpoints (computed in full, as every first read after a batch was
 * before patching), and unchanged since the last call (kept in memory), round by round with the
 * SQL the view ran before per-endpoint summaries.
 */
import { fingerprint } from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { type AggregatedRow, WRITE_BATCH, writeBatchParameters } from '../src/captures/batch-statement';
import {
  driftShape,
  loadAverage,
  percentile,
  requestShape,
  responseShape,
  runBench,
  SHAPES,
  withBenchBackend,
} from './harness';

const ENDPOINTS = 10_000;
const CAPTURES = 100;
const QUERY_SAMPLES = 40;
/** Endpoints per batch, as the ingest bench's batches (each observation a distinct endpoint). */
const BATCH_ENDPOINTS = 500;

/**
 * A batch of BATCH_ENDPOINTS random seeded endpoints (same bodies as seeded, so no new observation
 * key), written by the ingest statement as an agent's batch would be.
 */
async function writeSeededBatch(pool: pg.Pool, projectId: string, captureId: string): Promise<void> {
  const fpRequest = fingerprint(requestShape);
  const fpDrift = fingerprint(driftShape);
  const fpResponse = fingerprint(responseShape);
  const picked = new Set<number>();
  while (picked.size < BATCH_ENDPOINTS) picked.add(1 + Math.floor(Math.random() * ENDPOINTS));
  const now = new Date().toISOString();
  const rows = [...picked]
    .map((i): AggregatedRow => ({
      method: 'POST',
      path: `/item${i}`,
      status: 201,
      req_ct: 'application/json',
      req_fp: i % 50 === 0 ? fpDrift : fpRequest,
      req_note: null,
      res_ct: 'application/json',
      res_fp: fpResponse,
      res_note: null,
      query: [],
      req_h: [],
      res_h: [],
      count: 1,
      first_seen: now,
      last_seen: now,
    }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  await pool.query(
    WRITE_BATCH,
    writeBatchParameters({ batchId: randomUUID(), projectId, captureId, observations: rows.length, shapes: [] }, rows),
  );
}

async function seedViews(pool: pg.Pool, projectId: string): Promise<string> {
  const fpRequest = fingerprint(requestShape);
  const fpResponse = fingerprint(responseShape);
  const fpDrift = fingerprint(driftShape);
  const documented = {
    request: { contentType: 'application/json', shape: requestShape },
    responses: [{ status: 201, contentType: 'application/json', shape: responseShape }],
  };
  const t0 = performance.now();
  await pool.query(
    `INSERT INTO endpoints (project_id, method, path, description) SELECT $1, 'POST', '/item' || i, 'seeded' FROM generate_series(1, $2::int) i`,
    [projectId, ENDPOINTS],
  );
  // Half of the endpoints documented (1.0), the other half undocumented.
  await pool.query(
    `WITH v AS (
       INSERT INTO endpoint_versions (project_id, endpoint_id, major, minor, request, responses)
       SELECT project_id, id, 1, 0, $2::jsonb, $3::jsonb FROM endpoints WHERE project_id = $1 AND substr(path, 6)::int % 2 = 0
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
  const index = (
    await client.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'observations_aggregate_key'`,
    )
  ).rows[0]?.indexdef as string;
  await client.query('SET session_replication_role = replica');
  await client.query('DROP INDEX observations_aggregate_key');
  await client.query(
    `INSERT INTO observations (project_id, capture_id, capture_created_at, method, path, status, request_content_type, request_shape, response_content_type, response_shape, count, first_seen, last_seen)
     SELECT c.project_id, c.id, c.created_at, 'POST', '/item' || i, 201, 'application/json', CASE WHEN i % 50 = 0 THEN $3 ELSE $2 END, 'application/json', $4, 1 + i % 7, now(), now()
       FROM captures c CROSS JOIN generate_series(1, $5::int) i
      WHERE c.project_id = $1`,
    [projectId, fpRequest, fpDrift, fpResponse, ENDPOINTS],
  );
  // The definition of a partitioned table's index reads `ON ONLY`, which would make the parent's index alone (no
  // partition's): each partition then has no unique key and the batch statement's ON CONFLICT finds no arbiter.
  await client.query(index.replace(' ON ONLY ', ' ON '));
  // The per-endpoint summaries the ingest transaction would have kept (their totals are read from the observations).
  await client.query(
    `INSERT INTO capture_endpoints (project_id, capture_id, method, path)
     SELECT c.project_id, o.capture_id, o.method, o.path FROM observations o JOIN captures c ON c.id = o.capture_id
      WHERE c.project_id = $1 GROUP BY c.project_id, o.capture_id, o.method, o.path`,
    [projectId],
  );
  await client.query('SET session_replication_role = DEFAULT');
  client.release();
  await pool.query('ANALYZE');
  const count = (
    await pool.query<{ n: string }>(
      'SELECT count(*) AS n FROM observations o JOIN captures c ON c.id = o.capture_id WHERE c.project_id = $1',
      [projectId],
    )
  ).rows[0]?.n;
  console.log(
    `seeded ${ENDPOINTS} endpoints (${ENDPOINTS / 2} documented), ${CAPTURES} captures, ${count} observations in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const latest = await pool.query<{ id: string }>(
    'SELECT id FROM captures WHERE project_id = $1 ORDER BY started_at DESC LIMIT 1',
    [projectId],
  );
  return latest.rows[0]?.id as string;
}

/** What one timed run saw: its items and, for an API call, the time to the answer's last byte. */
interface RunResult {
  items: number;
  lastByteMs?: number;
}

/** One contender of a round: optional untimed preparation, then the timed work. */
interface Contender {
  label: string;
  prepare?: () => Promise<unknown>;
  run: () => Promise<RunResult>;
}

interface Timing {
  label: string;
  p50: number;
  p95: number;
  items: number;
  /** p50/p95 to the answer's last byte (before the client parses it), for API calls. */
  lastByte?: { p50: number; p95: number };
}

/**
 * p50/p95 of each contender, run round by round in turn (so all see the same load on the shared
 * machine); the first rounds warm caches and are not counted.
 */
async function timeRounds(samples: number, contenders: readonly Contender[]): Promise<Timing[]> {
  const times = contenders.map(() => [] as number[]);
  const lastBytes = contenders.map(() => [] as number[]);
  const items = contenders.map(() => 0);
  for (let i = 0; i < samples + 3; i++) {
    for (const [c, contender] of contenders.entries()) {
      await contender.prepare?.();
      const started = performance.now();
      const result = await contender.run();
      const elapsed = performance.now() - started;
      items[c] = result.items;
      if (i < 3) continue;
      times[c]?.push(elapsed);
      if (result.lastByteMs !== undefined) lastBytes[c]?.push(result.lastByteMs);
    }
  }
  return contenders.map((contender, c) => {
    const lastByte = lastBytes[c] ?? [];
    return {
      label: contender.label,
      p50: percentile(times[c] ?? [], 50),
      p95: percentile(times[c] ?? [], 95),
      items: items[c] ?? 0,
      ...(lastByte.length === 0 ? {} : { lastByte: { p50: percentile(lastByte, 50), p95: percentile(lastByte, 95) } }),
    };
  });
}

/** An API call with the admin token, its JSON parsed (as a dashboard would). */
async function apiCall(url: string, token: string): Promise<RunResult> {
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  const lastByteMs = performance.now() - started;
  const body = JSON.parse(text) as unknown[];
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text}`);
  return { items: body.length, lastByteMs };
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
  await withBenchBackend(2, async ({ backend, pool, api }) => {
    await pool.query(
      `INSERT INTO shapes (fingerprint, shape) SELECT key, value FROM jsonb_each($1::jsonb) ON CONFLICT DO NOTHING`,
      [JSON.stringify(SHAPES)],
    );
    const views = await api<{ id: string }>('POST', '/projects', { slug: 'views', name: 'Views' });
    const latest = await seedViews(pool, views.id);
    const base = `${backend.url}/api/v1/projects/views/captures/${latest}`;
    // A new batch of 500 endpoints: the next call patches the kept view (reads those 500 summaries).
    const newBatch = (): Promise<unknown> => writeSeededBatch(pool, views.id, latest);
    // A batch row that does not list the endpoints it touched: the next call computes the view in
    // full, which is what every first call after a batch cost before views were patched.
    const unlistedBatch = (): Promise<unknown> =>
      pool.query(
        `INSERT INTO processed_batches (batch_id, project_id, capture_id, observations) VALUES (gen_random_uuid(), $1, $2, 0)`,
        [views.id, latest],
      );
    for (const [view, before] of [
      ['undocumented', BEFORE_UNDOCUMENTED],
      ['diffs', BEFORE_DIFFS],
    ] as const) {
      const results = await timeRounds(QUERY_SAMPLES, [
        {
          label: `after a new batch of ${BATCH_ENDPOINTS} endpoints (patched)`,
          prepare: newBatch,
          run: () => apiCall(`${base}/${view}`, backend.adminToken),
        },
        {
          label: 'after a batch that did not list its endpoints (computed in full)',
          prepare: unlistedBatch,
          run: () => apiCall(`${base}/${view}`, backend.adminToken),
        },
        { label: 'unchanged since the last call', run: () => apiCall(`${base}/${view}`, backend.adminToken) },
        {
          label: 'the SQL alone of the view before summaries',
          run: async () => ({ items: (await pool.query(before, [latest, views.id])).rowCount ?? 0 }),
        },
      ]);
      const sql = results[3] as { p50: number };
      for (const t of results) {
        const lastByte =
          t.lastByte === undefined
            ? ''
            : ` (to the last byte, before the client parses it: p50 ${t.lastByte.p50.toFixed(1)} ms, p95 ${t.lastByte.p95.toFixed(1)} ms)`;
        console.log(
          `${view}, ${t.label} (${t.items} rows): p50 ${t.p50.toFixed(1)} ms, p95 ${t.p95.toFixed(1)} ms${lastByte}; p50 ratio to that SQL ${(t.p50 / sql.p50).toFixed(2)}`,
        );
      }
      console.log(`  load average ${loadAverage()}`);
    }
  });
}

runBench(main);
