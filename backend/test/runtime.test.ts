/**
 * Runtime evidence (issue 18): the timings and counts agents send are kept per endpoint, version,
 * environment row and minute, merged exactly (resends not counted twice, minute rows rolled up into
 * hours and days without changing a figure), and read back by
 * `GET /projects/{p}/endpoints/{id}/runtime` as p50/p95/p99, error rate and request rate per version.
 */
import { startAgent } from '@spectator/agent';
import {
  histogramBucket,
  LatencyHistogram,
  type BatchMessage,
  type ProposalResponse,
  type RuntimeResponse,
  type TokenResponse,
  type VersionMatrixResponse,
  type WireFailure,
  type WireHistogram,
} from '@spectator/shared';
import { createServer } from 'node:http';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { parseConfig } from '../src/config/config';
import type { Runtime } from '../src/config/runtime';
import { createDataSource, MIGRATIONS } from '../src/database/data-source';
import { migrateDown, migrateUp } from '../src/database/migrate';
import { RUNTIME_ROWS } from '../src/partitions/partitions';
import { PartitionsRepository } from '../src/partitions/partitions.repository';
import { PartitionsService } from '../src/partitions/partitions.service';
import type { ProjectEntity } from '../src/projects/project.entity';
import { RuntimeRepository } from '../src/runtime/runtime.repository';
import { foldedMinutes, RuntimeService } from '../src/runtime/runtime.service';
import { VersionStore } from '../src/versions/version-store';
import { createMigratedDatabase, startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
import { eventually, untilFolded } from './support/evidence-helpers';
import { seeded } from './support/seeded';

let backend: TestBackend;
let agentToken: string;
let endpointId: string;
let version: string;
let ds: DataSource;

const MINUTE = 60_000;

/** A histogram of `samples` (ms) in wire form. */
const wire = (samples: readonly number[]) => {
  const histogram = new LatencyHistogram();
  for (const ms of samples) histogram.record(ms);
  return histogram.toWire();
};
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/** The sample at quantile `q` (rank ⌊q·(n−1)⌋) of sorted samples. */
const exact = (sorted: readonly number[], q: number): number => sorted[Math.floor(q * (sorted.length - 1))] as number;
const within10 = (estimate: number | undefined, truth: number): boolean =>
  estimate !== undefined && Math.abs(estimate - truth) / truth <= 0.1;

async function runtimeOf(query: string, id = endpointId) {
  return backend.api<RuntimeResponse & { message?: string }>('GET', `/projects/rt/endpoints/${id}/runtime${query}`);
}

/** A batch of GET /orders/{orderId}: `ok` answered 200 in 1–100 ms, `failed` 500 in 200 ms, `down` 503 by the agent. */
function ordersBatch(captureId: string, at: Date, ok = 100, failed = 10, down = 5): BatchMessage {
  const time = at.toISOString();
  const batch = batchMessage(captureId, [
    { method: 'GET', path: '/orders/{orderId}', status: 200, response: { id: 'x', total: 1 }, count: ok },
    ...(failed > 0 ? [{ method: 'GET', path: '/orders/{orderId}', status: 500, count: failed }] : []),
  ]);
  const [success, error] = batch.observations;
  Object.assign(success!, {
    firstSeen: time,
    lastSeen: time,
    runtime: { ttfb: wire(range(1, ok)), ttlb: wire(range(1, ok).map((ms) => ms + 5)), clientLeft: 2 },
  });
  if (error)
    Object.assign(error, {
      firstSeen: time,
      lastSeen: time,
      runtime: { ttfb: wire(Array(failed).fill(200)), ttlb: wire(Array(failed).fill(201)) },
    });
  const failure: WireFailure = {
    method: 'GET',
    path: '/orders/{orderId}',
    status: 503,
    count: down,
    firstSeen: time,
    lastSeen: time,
    elapsed: wire(Array(down).fill(1)),
  };
  return down > 0 ? { ...batch, failures: [failure] } : batch;
}

/** Proposes and approves GET `path` answering 200 with an object of these required string fields. */
async function documentGet(path: string, fields: string[]): Promise<void> {
  const proposal = await backend.api<ProposalResponse>('POST', '/projects/rt/proposals', {
    title: `document ${path}`,
    endpoints: [
      {
        method: 'GET',
        path,
        responses: [
          {
            status: 200,
            contentType: 'application/json',
            schema: {
              type: 'object',
              properties: Object.fromEntries(fields.map((field) => [field, { type: 'string' }])),
              required: fields,
            },
          },
        ],
      },
    ],
  });
  expect(proposal.status).toBe(201);
  expect((await backend.api('POST', `/projects/rt/proposals/${proposal.body.id}/approve`)).status).toBe(200);
}

async function connect(build: string): Promise<{ agent: TestAgent; captureId: string }> {
  const agent = await connectTestAgent(backend.url, agentToken);
  const hello = helloMessage({ agentId: `rt-${build}`, environment: { kind: 'production', build } });
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  // Production batches are acknowledged at commit: closing waits for their folds, so what a test reads next has them.
  const close = agent.close;
  agent.close = async () => {
    await close();
    await untilFolded(backend.databaseUrl);
  };
  return { agent, captureId: hello.capture.id };
}

beforeAll(async () => {
  backend = await startTestBackend();
  await backend.api('POST', '/projects', { slug: 'rt', name: 'Runtime' });
  agentToken = (await backend.api<TokenResponse>('POST', '/projects/rt/tokens', { name: 'agents', scope: 'agent' }))
    .body.token as string;
  const proposal = await backend.api<ProposalResponse>('POST', '/projects/rt/proposals', {
    title: 'orders',
    endpoints: [
      {
        method: 'GET',
        path: '/orders/{orderId}',
        responses: [
          {
            status: 200,
            contentType: 'application/json',
            schema: {
              type: 'object',
              properties: { id: { type: 'string' }, total: { type: 'number' } },
              required: ['id', 'total'],
            },
          },
        ],
      },
    ],
  });
  expect((await backend.api('POST', `/projects/rt/proposals/${proposal.body.id}/approve`)).status).toBe(200);
  const endpoints = await backend.api<Array<{ id: string; path: string; version: string }>>(
    'GET',
    '/projects/rt/endpoints',
  );
  endpointId = endpoints.body.find((e) => e.path === '/orders/{orderId}')!.id;
  version = endpoints.body.find((e) => e.path === '/orders/{orderId}')!.version;
  ds = createDataSource(backend.databaseUrl, { poolSize: 2 });
  await ds.initialize();
});
afterAll(async () => {
  await ds?.destroy();
  await backend?.close();
});

describe('runtime evidence', () => {
  it('answers p50/p95/p99, error rate and request rate per version; a resent batch counts once', async () => {
    const now = new Date();
    const { agent, captureId } = await connect('b-1');
    try {
      const batch = ordersBatch(captureId, now);
      expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
      expect(await agent.request(batch)).toMatchObject({ type: 'ack', duplicate: true });
    } finally {
      await agent.close();
    }
    // The cell of build b-1 names the documented version: the runtime goes under it.
    const matrix = await backend.api<VersionMatrixResponse>('GET', '/projects/rt/versions?kind=production');
    expect(matrix.body.cells[0]?.[0]?.version).toBe(version);

    const { status, body } = await runtimeOf('?environment=production&build=b-1');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      endpoint: { id: endpointId, method: 'GET', path: '/orders/{orderId}' },
      environment: 'production',
      name: 'b-1',
      step: 60,
    });
    expect(body.versions.map((v) => v.version)).toEqual([version]);
    const [series] = body.versions;
    expect(series!.points).toHaveLength(1);
    const point = series!.points[0]!;
    expect(point.at).toBe(new Date(now.getTime() - (now.getTime() % MINUTE)).toISOString());
    // 100 + 10 answered by the upstream, 5 by the agent: 15 server errors of 115.
    expect(point).toMatchObject({ requests: 115, serverErrors: 15, upstreamFailures: 5, clientLeft: 2 });
    expect(point.errorRate).toBeCloseTo(15 / 115, 10);
    expect(point.requestRate).toBeCloseTo(115 / 60, 10);
    // Time to first byte of the 110 upstream answers: 1..100 ms and ten of 200 ms.
    const ttfb = [...range(1, 100), ...Array<number>(10).fill(200)];
    for (const q of ['p50', 'p95', 'p99'] as const) {
      const truth = exact(ttfb, { p50: 0.5, p95: 0.95, p99: 0.99 }[q]);
      expect({ q, estimate: point.ttfb?.[q], ok: within10(point.ttfb?.[q], truth) }).toMatchObject({ ok: true });
    }
    expect(within10(point.ttlb?.p50, exact([...range(6, 105), ...Array<number>(10).fill(201)], 0.5))).toBe(true);
    // The window's total, over the whole 24 hours asked by default.
    expect(series!.total).toMatchObject({ requests: 115, serverErrors: 15 });
    // The matrix cell carries the same figures beside the version: p95 of time to last byte, error rate.
    const cells = await backend.api<VersionMatrixResponse>('GET', '/projects/rt/versions?kind=production');
    const b1 = cells.body.rows.findIndex((row) => row.name === 'b-1');
    expect(cells.body.runtime[b1]).toEqual([{ column: 0, requests: 115, errorRate: 15 / 115, p95: point.ttlb?.p95 }]);
    // Time to last byte of the 110 answered: 6..105 ms and ten of 201 ms; the 95th is 201.
    expect(within10(cells.body.runtime[b1]?.[0]?.p95 ?? undefined, 201)).toBe(true);
    // Every build of the environment when none is named.
    expect((await runtimeOf('?environment=production')).body.versions[0]?.total.requests).toBe(115);
    expect((await runtimeOf('?environment=staging')).body.versions).toEqual([]);
  });

  it('shows a rollout: the share of each version of the requests in a step', async () => {
    await documentGet('/carts/{cartId}', ['id']);
    await documentGet('/carts/{cartId}', ['id', 'owner']);
    // Build c-old answers as the first version did (70 requests), the canary c-new as the second (30),
    // both in one minute.
    const minute = new Date(Date.now() - 5 * MINUTE - (Date.now() % MINUTE) + 10_000).toISOString();
    for (const [build, response, count] of [
      ['c-old', { id: 'x' }, 70],
      ['c-new', { id: 'x', owner: 'y' }, 30],
    ] as const) {
      const { agent, captureId } = await connect(build);
      try {
        const batch = batchMessage(captureId, [
          { method: 'GET', path: '/carts/{cartId}', status: 200, response, count },
        ]);
        Object.assign(batch.observations[0]!, { firstSeen: minute, lastSeen: minute });
        expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
      } finally {
        await agent.close();
      }
    }
    const endpoints = await backend.api<Array<{ id: string; path: string; version: string }>>(
      'GET',
      '/projects/rt/endpoints',
    );
    const carts = endpoints.body.find((e) => e.path === '/carts/{cartId}')!;
    const { body } = await runtimeOf('?environment=production', carts.id);
    const byVersion = Object.fromEntries(
      body.versions.map((v) => [v.version, v.points.map((p) => [p.requests, p.share])]),
    );
    expect(Object.keys(byVersion)).toHaveLength(2);
    expect(byVersion[carts.version]).toEqual([[30, 0.3]]);
    const [older] = Object.keys(byVersion).filter((v) => v !== carts.version);
    expect(byVersion[older!]).toEqual([[70, 0.7]]);
  });

  it('accepts batches of agents without timings, counting their exchanges only', async () => {
    const { agent, captureId } = await connect('b-old');
    try {
      const batch = batchMessage(captureId, [
        { method: 'GET', path: '/orders/{orderId}', status: 200, response: { id: 'y', total: 2 }, count: 7 },
      ]);
      expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
    } finally {
      await agent.close();
    }
    const { body } = await runtimeOf('?environment=production&build=b-old');
    expect(body.versions[0]?.points[0]).toMatchObject({ requests: 7, serverErrors: 0, ttfb: null, ttlb: null });
  });

  it('refuses bad histograms naming the field, and bad queries naming the parameter, never with a 500', async () => {
    const { agent, captureId } = await connect('b-bad');
    try {
      const batch = ordersBatch(captureId, new Date());
      batch.observations[0]!.runtime!.ttfb = { '500': 1 };
      expect(await agent.request(batch)).toMatchObject({
        type: 'error',
        code: 'invalid-message',
        message: 'observations[0].runtime.ttfb["500"] must be a bucket index -40–108',
      });
    } finally {
      await agent.close();
    }
    const cases: Array<[string, number, string]> = [
      ['', 400, 'environment must be one of ci, staging, production'],
      ['?environment=moon', 400, 'environment must be one of ci, staging, production'],
      ['?environment=production&since=yesterday', 400, 'since must be an ISO 8601 time'],
      ['?environment=production&since=2999-01-01T00:00:00Z', 400, 'since must not be in the future'],
      ['?environment=production&step=week', 400, 'step must be one of minute, hour, day'],
      [
        `?environment=production&step=minute&since=${new Date(Date.now() - 30 * 24 * 3600_000).toISOString()}`,
        400,
        'step minute makes more than 1500 points',
      ],
    ];
    for (const [query, status, message] of cases) {
      const answer = await runtimeOf(query);
      expect({ query, status: answer.status, message: JSON.stringify(answer.body) }).toMatchObject({
        query,
        status,
        message: expect.stringContaining(message),
      });
    }
    expect((await runtimeOf('?environment=production', '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await runtimeOf('?environment=production', 'nope')).status).toBe(400);
  });

  it('keeps minutes, hours and days from ingest exactly, and drops each past its retention', async () => {
    const now = new Date();
    const days = (n: number) => new Date(now.getTime() - n * 24 * 3600_000);
    const { agent, captureId } = await connect('b-old-data');
    try {
      // Spooled batches of long ago: three minutes of one hour three days back, one 40 days back, one 500 days back.
      const hour = days(3).getTime() - (days(3).getTime() % (60 * MINUTE));
      for (const at of [1, 2, 3].map((m) => new Date(hour + m * MINUTE)))
        expect(await agent.request(ordersBatch(captureId, at))).toMatchObject({ type: 'ack' });
      expect(await agent.request(ordersBatch(captureId, days(40), 50, 0, 0))).toMatchObject({ type: 'ack' });
      expect(await agent.request(ordersBatch(captureId, days(500), 9, 0, 0))).toMatchObject({ type: 'ack' });
    } finally {
      await agent.close();
    }
    const query = `?environment=production&build=b-old-data&step=day&since=${days(600).toISOString()}`;
    const before = (await runtimeOf(query)).body;
    expect(before.versions[0]?.total.requests).toBe(3 * 115 + 50 + 9);
    // Hours and days are rolled up from the minutes folds add.
    await new RuntimeRepository(ds).rollUp(null, true);
    const rows = async () =>
      (await ds.query(
        `SELECT resolution, count(*)::int AS n FROM runtime_buckets WHERE environment_name = 'b-old-data' GROUP BY resolution ORDER BY resolution`,
      )) as Array<{ resolution: string; n: number }>;
    // Each minute also went into its hour and its day: 3 minutes of one hour, and two lone ones.
    expect(await rows()).toEqual([
      { resolution: 'day', n: 3 },
      { resolution: 'hour', n: 3 },
      { resolution: 'minute', n: 5 },
    ]);

    const runtime = { config: parseConfig({}), databaseUrl: backend.databaseUrl, log: pino({ level: 'silent' }) };
    const service = new RuntimeService(
      new RuntimeRepository(ds),
      new PartitionsRepository(ds),
      new VersionStore(ds),
      runtime as Runtime,
    );
    const done = await service.rollUp(now);
    // All 5 minute rows are past 2 days, the 2 hours of 40 and 500 days past 35 days, 1 day past 400 days.
    expect(done).toEqual({ minute: 5, hour: 2, day: 1 });
    expect(await rows()).toEqual([
      { resolution: 'day', n: 2 },
      { resolution: 'hour', n: 1 },
    ]);
    // Running it again deletes nothing.
    expect(await service.rollUp(now)).toEqual({ minute: 0, hour: 0, day: 0 });
    const after = (await runtimeOf(query)).body;
    const kept = (response: RuntimeResponse) =>
      response.versions[0]!.points.filter((p) => Date.parse(p.at) > days(400).getTime());
    // The same figures per day, the histograms' percentiles too, without the day past retention.
    expect(kept(after)).toEqual(kept(before));
    expect(after.versions[0]?.total.requests).toBe(3 * 115 + 50);
  });

  it('keeps minute rows as long as configured (SPECTATOR_RUNTIME_MINUTE_DAYS)', async () => {
    const now = new Date();
    const { agent, captureId } = await connect('b-retention');
    try {
      expect(await agent.request(ordersBatch(captureId, new Date(now.getTime() - 36 * 3600_000)))).toMatchObject({
        type: 'ack',
      });
    } finally {
      await agent.close();
    }
    const resolutions = async () =>
      (
        (await ds.query(
          `SELECT DISTINCT resolution FROM runtime_buckets WHERE environment_name = 'b-retention' ORDER BY resolution`,
        )) as Array<{
          resolution: string;
        }>
      ).map((r) => r.resolution);
    const service = (env: NodeJS.ProcessEnv) =>
      new RuntimeService(new RuntimeRepository(ds), new PartitionsRepository(ds), new VersionStore(ds), {
        config: parseConfig(env),
        databaseUrl: backend.databaseUrl,
        log: pino({ level: 'silent' }),
      } as Runtime);
    // 36 hours old: kept as minutes by default (two days), only in its hour and day when minutes are kept one day.
    await new RuntimeRepository(ds).rollUp(null, true);
    await service({}).rollUp(now);
    expect(await resolutions()).toEqual(['day', 'hour', 'minute']);
    await service({ SPECTATOR_RUNTIME_MINUTE_DAYS: '1' }).rollUp(now);
    expect(await resolutions()).toEqual(['day', 'hour']);
  });

  it('keeps what a real agent measured in front of a slow upstream', async () => {
    // The upstream answers after 40 ms.
    const slow = createServer((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      }, 40);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const upstream = `http://127.0.0.1:${(slow.address() as { port: number }).port}`;
    const agent = await startAgent({
      listen: '127.0.0.1:0',
      upstream,
      backend: backend.url,
      token: agentToken,
      environment: { kind: 'production', build: 'b-real' },
      configPath: '/nonexistent/service.yml',
      logLevel: 'silent',
      tuning: { flushIntervalMs: 100 },
    });
    try {
      for (let i = 0; i < 5; i++) expect((await fetch(`${agent.proxyUrl}/slow`)).status).toBe(200);
    } finally {
      await agent.close();
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
    // /slow is not documented, so it has no endpoint id to ask by: its runtime, kept under no
    // version (''), is read from the table, its minutes rolled up first (the backend's own roll-up
    // runs every 60 s).
    const rolledUp = new RuntimeRepository(ds);
    const [row] = (await eventually(
      async () => {
        await rolledUp.rollUp(null, true);
        return ds.query(
          `SELECT version, sum(requests)::int AS requests, runtime_histogram_sum(ttfb) AS ttfb FROM runtime_buckets
            WHERE environment_name = 'b-real' AND path = '/slow' AND resolution = 'minute' GROUP BY version`,
        ) as Promise<Array<{ requests: number }>>;
      },
      (found: Array<{ requests: number }>) => found[0]?.requests === 5,
    )) as Array<{ version: string; requests: number; ttfb: Record<string, number> }>;
    expect(row!.version).toBe('');
    const ttfb = LatencyHistogram.fromWire(row!.ttfb);
    expect(ttfb.total).toBe(5);
    expect(ttfb.quantile(0)).toBeGreaterThanOrEqual(40 * 0.9);
    // The API reaches it by method and path: no endpoint id, no version.
    const byRoute = await backend.api<RuntimeResponse>(
      'GET',
      '/projects/rt/runtime?environment=production&build=b-real&method=GET&path=/slow',
    );
    expect(byRoute.status).toBe(200);
    expect(byRoute.body.endpoint).toEqual({ id: null, method: 'GET', path: '/slow' });
    expect(byRoute.body.versions.map((v) => [v.version, v.total.requests])).toEqual([['', 5]]);
    expect(byRoute.body.versions[0]!.total.ttfb!.p50).toBeGreaterThanOrEqual(40 * 0.9);
    // A documented endpoint asked so names its id; a bad route is a 400 naming the parameter.
    const documented = await backend.api<RuntimeResponse>(
      'GET',
      `/projects/rt/runtime?environment=production&method=GET&path=${encodeURIComponent('/orders/{orderId}')}`,
    );
    expect(documented.body.endpoint.id).toBe(endpointId);
    for (const [query, message] of [
      ['environment=production&path=/slow', 'method must be an HTTP method such as GET'],
      ['environment=production&method=GET&path=slow', 'path must start with /'],
      ['method=GET&path=/slow', 'environment must be one of ci, staging, production'],
    ] as const) {
      const refused = await backend.api<{ message: string }>('GET', `/projects/rt/runtime?${query}`);
      expect({ query, status: refused.status, message: JSON.stringify(refused.body) }).toMatchObject({
        query,
        status: 400,
        message: expect.stringContaining(message),
      });
    }
  });
  it('adds folds to stored minutes (once rolled up) and cells: counts added, histograms merged, new minutes inserted', async () => {
    const [project] = (await ds.query(`SELECT id FROM projects WHERE slug = 'rt'`)) as Array<{ id: string }>;
    const repository = new RuntimeRepository(ds);
    const now = Date.now() - (Date.now() % MINUTE);
    const minute = (at: number, requests: number, ms: number) => ({
      method: 'GET',
      path: '/folded',
      minute: new Date(at).toISOString(),
      requests,
      serverErrors: 1,
      upstreamFailures: 1,
      clientLeft: 1,
      ttfb: wire(Array<number>(requests).fill(ms)),
      ttlb: wire(Array<number>(requests).fill(ms + 1)),
    });
    const fold = (minutes: ReturnType<typeof minute>[]): Promise<void> =>
      ds.transaction((manager) =>
        repository.addMinutes(manager, project!.id, { kind: 'staging', name: 's-fold' }, foldedMinutes(minutes)),
      );
    await fold([minute(now - MINUTE, 3, 10)]);
    await fold([minute(now - MINUTE, 2, 30), minute(now, 4, 50)]);
    // The minutes wait for the roll-up, which adds them to their minute rows.
    await repository.rollUp(project!.id, true);
    const rows = (await ds.query(
      `SELECT bucket, requests::int, server_errors::int AS errors, upstream_failures::int AS failures, client_left::int AS "left", ttfb, ttlb
         FROM runtime_buckets WHERE environment_name = 's-fold' AND resolution = 'minute' ORDER BY bucket`,
    )) as Array<{
      bucket: Date;
      requests: number;
      errors: number;
      failures: number;
      left: number;
      ttfb: WireHistogram;
      ttlb: WireHistogram;
    }>;
    expect(rows.map((row) => ({ ...row, bucket: new Date(row.bucket).getTime() }))).toEqual([
      {
        bucket: now - MINUTE,
        requests: 5,
        errors: 2,
        failures: 2,
        left: 2,
        ttfb: wire([10, 10, 10, 30, 30]),
        ttlb: wire([11, 11, 11, 31, 31]),
      },
      {
        bucket: now,
        requests: 4,
        errors: 1,
        failures: 1,
        left: 1,
        ttfb: wire([50, 50, 50, 50]),
        ttlb: wire([51, 51, 51, 51]),
      },
    ]);
    // The 95th percentile's bucket is read in Node as the fold writes the cell, the one PostgreSQL's function reads.
    const cells = (await ds.query(
      `SELECT requests::int, server_errors::int AS errors, ttlb, ttlb_p95 AS p95, runtime_histogram_quantile(ttlb, 0.95) AS "sqlP95"
         FROM runtime_cells WHERE environment_name = 's-fold'`,
    )) as Array<{ requests: number; errors: number; ttlb: WireHistogram; p95: number; sqlP95: number }>;
    expect(cells).toEqual([
      {
        requests: 9,
        errors: 3,
        ttlb: wire([11, 11, 11, 31, 31, 51, 51, 51, 51]),
        p95: histogramBucket(51),
        sqlP95: histogramBucket(51),
      },
    ]);
  });

  it('partitions rows by resolution and time: a partition made late takes its rows from the default one, and goes whole past retention', async () => {
    // A database of its own: no backend's rollup runs beside this one.
    const database = await createMigratedDatabase();
    const ds = database.ds;
    const [project] = (await ds.query(
      `INSERT INTO projects (slug, name) VALUES ('parted', 'Parted') RETURNING id`,
    )) as Array<{ id: string }>;
    const repository = new RuntimeRepository(ds);
    const partitions = new PartitionsRepository(ds);
    const service = new RuntimeService(repository, partitions, new VersionStore(ds), {
      config: parseConfig({}),
      databaseUrl: backend.databaseUrl,
      log: pino({ level: 'silent' }),
    } as Runtime);
    // Three years back (a spooled batch of long ago, say): no partition holds that time yet.
    const then = Date.now() - 3 * 365 * 24 * 3600_000;
    const at = then - (then % MINUTE);
    const fold = (requests: number, ms: number): Promise<void> =>
      ds
        .transaction((manager) =>
          repository.addMinutes(
            manager,
            project!.id,
            { kind: 'staging', name: 's-parted' },
            foldedMinutes([
              {
                method: 'GET',
                path: '/parted',
                minute: new Date(at).toISOString(),
                requests,
                serverErrors: 0,
                upstreamFailures: 0,
                clientLeft: 0,
                ttfb: wire(Array<number>(requests).fill(ms)),
                ttlb: wire(Array<number>(requests).fill(ms)),
              },
            ]),
          ),
        )
        .then(() => repository.rollUp(project!.id, true).then(() => undefined));
    const stored = async () =>
      (await ds.query(
        `SELECT tableoid::regclass::text AS partition, requests::int, ttfb FROM runtime_buckets
          WHERE environment_name = 's-parted' ORDER BY resolution DESC`,
      )) as Array<{ partition: string; requests: number; ttfb: WireHistogram }>;
    await fold(3, 10);
    expect((await stored()).map((row) => row.partition)).toEqual([
      'runtime_buckets_minute_default',
      'runtime_buckets_hour_default',
      'runtime_buckets_day_default',
    ]);

    const day = new Date(at).toISOString().slice(0, 10).replaceAll('-', '');
    const maker = new PartitionsService(partitions, { log: pino({ level: 'silent' }) } as Runtime);
    const runtimeTables = Object.values(RUNTIME_ROWS);
    const made = await maker.cover(runtimeTables, new Date(at), new Date(at));
    expect(made).toEqual(expect.arrayContaining([`runtime_buckets_minute_${day}`]));
    expect(made).toHaveLength(3);
    // Made once: a second run (another replica) finds them.
    expect(await maker.cover(runtimeTables, new Date(at), new Date(at))).toEqual([]);
    // The rows moved into them, and a later fold adds to them there.
    await fold(2, 20);
    const rows = await stored();
    expect(rows.map((row) => row.partition)).toEqual(made);
    expect(rows.map(({ requests, ttfb }) => ({ requests, ttfb }))).toEqual(
      Array(3).fill({ requests: 5, ttfb: wire([10, 10, 10, 20, 20]) }),
    );

    // All three are past their retention now: dropped whole, their rows counted.
    const done = await service.rollUp();
    for (const resolution of ['minute', 'hour', 'day'] as const) expect(done[resolution]).toBeGreaterThanOrEqual(1);
    expect(await stored()).toEqual([]);
    const left = (await ds.query(`SELECT count(*)::int AS n FROM pg_class WHERE relname = ANY($1)`, [made])) as Array<{
      n: number;
    }>;
    expect(left).toEqual([{ n: 0 }]);
    await database.close();
  });

  it('answers the same figures as merging the minute rows when asked (the query before 1765955000000)', async () => {
    const [project] = (await ds.query(`SELECT id FROM projects WHERE slug = 'rt'`)) as Array<{ id: string }>;
    const repository = new RuntimeRepository(ds);
    // A seeded draw (mulberry32): 400 minutes over the last 40 hours, of two staging builds, of
    // latencies spread over three decades, some server errors.
    const random = seeded(18);
    const now = Date.now();
    for (const build of ['s-same-1', 's-same-2']) {
      const minutes = Array.from({ length: 200 }, () => {
        const at = now - Math.floor(random() * 40 * 60) * MINUTE;
        const requests = 1 + Math.floor(random() * 30);
        const samples = Array.from({ length: requests }, () => 10 ** (random() * 3));
        return {
          method: 'GET',
          path: '/same/{id}',
          minute: new Date(at - (at % MINUTE)).toISOString(),
          requests,
          serverErrors: Math.floor(random() * 3),
          upstreamFailures: 0,
          clientLeft: Math.floor(random() * 2),
          ttfb: wire(samples.map((ms) => ms / 2)),
          ttlb: wire(samples),
        };
      });
      // In batches of 50, as folds add them.
      for (let i = 0; i < minutes.length; i += 50)
        await repository.addMinutes(
          ds.manager,
          project!.id,
          { kind: 'staging', name: build },
          foldedMinutes(minutes.slice(i, i + 50)),
        );
    }
    // The second build runs another version (its minutes rolled up into hours and days first).
    await repository.rollUp(project!.id, true);
    await ds.query(`UPDATE runtime_buckets SET version = '2.0' WHERE environment_name = 's-same-2'`);
    const micros = (ms: number): number => Math.round(ms * 1000) / 1000;
    const percentilesOf = (wire: Record<string, number>) => {
      const histogram = LatencyHistogram.fromWire(wire);
      const at = (q: number): number => micros(histogram.quantile(q) as number);
      return histogram.total === 0 ? null : { p50: at(0.5), p95: at(0.95), p99: at(0.99) };
    };
    for (const [step, seconds, hours] of [
      ['minute', 60, 20],
      ['hour', 3600, 40],
      ['day', 86400, 47],
    ] as const) {
      const since = new Date(now - hours * 3600_000);
      const answer = await backend.api<RuntimeResponse>(
        'GET',
        `/projects/rt/runtime?environment=staging&method=GET&path=${encodeURIComponent('/same/{id}')}` +
          `&step=${step}&since=${since.toISOString()}`,
      );
      expect(answer.status).toBe(200);
      // What every minute row merged per version and step answers (runtime_histogram_sum, in SQL).
      const merged = (await ds.query(
        `SELECT version, date_bin(make_interval(secs => $3), bucket, 'epoch'::timestamptz) AS at,
                sum(requests)::int AS requests, sum(server_errors)::int AS "serverErrors",
                sum(client_left)::int AS "clientLeft",
                runtime_histogram_sum(ttfb) AS ttfb, runtime_histogram_sum(ttlb) AS ttlb
           FROM runtime_buckets
          WHERE path = '/same/{id}' AND environment_kind = 'staging' AND resolution = 'minute' AND bucket >= $1
            AND project_id = $2
          GROUP BY version, at ORDER BY version, at`,
        [new Date(since.getTime() - (since.getTime() % (seconds * 1000))), project!.id, seconds],
      )) as Array<{
        version: string;
        at: Date;
        requests: number;
        serverErrors: number;
        clientLeft: number;
        ttfb: Record<string, number>;
        ttlb: Record<string, number>;
      }>;
      const expected = merged.map((row) => ({
        version: row.version,
        at: new Date(row.at).toISOString(),
        requests: row.requests,
        serverErrors: row.serverErrors,
        clientLeft: row.clientLeft,
        ttfb: percentilesOf(row.ttfb),
        ttlb: percentilesOf(row.ttlb),
      }));
      const answered = answer.body.versions.flatMap(({ version, points }) =>
        points.map(({ at, requests, serverErrors, clientLeft, ttfb, ttlb }) => ({
          version,
          at,
          requests,
          serverErrors,
          clientLeft,
          ttfb,
          ttlb,
        })),
      );
      expect({ step, points: answered }).toEqual({ step, points: expected });
      expect(new Set(answered.map((p) => p.version))).toEqual(new Set(['', '2.0']));
    }
  });

  it('turns rows of one exchange each into every resolution (migration RuntimeResolutions)', async () => {
    const [project] = (await ds.query(`SELECT id FROM projects WHERE slug = 'rt'`)) as Array<{ id: string }>;
    const reverted: Array<string | null> = [];
    while (reverted.at(-1) !== 'RuntimeResolutions1765955000000' && reverted.length < MIGRATIONS.length)
      reverted.push(await migrateDown(ds));
    expect(reverted.at(-1)).toBe('RuntimeResolutions1765955000000');
    // As the rollup left them: minutes of two hours five days back, an hour row holding the first
    // hour's minutes moved before, and a day row of the day before.
    const HOUR = 60 * MINUTE;
    const DAY = 24 * HOUR;
    const at = Date.now() - 5 * DAY;
    const day = at - (at % DAY) + 2 * HOUR;
    const insert = (resolution: string, bucket: number, samples: number[]) =>
      ds.query(
        `INSERT INTO runtime_buckets (project_id, method, path, environment_kind, environment_name, version, resolution,
                                      bucket, requests, server_errors, upstream_failures, client_left, ttfb, ttlb)
         VALUES ($1, 'GET', '/migrated', 'production', 'b-migrated', '1.0', $2, $3, $4, 1, 0, 0, $5, $5)`,
        [project!.id, resolution, new Date(bucket), samples.length, JSON.stringify(wire(samples))],
      );
    await insert('minute', day + MINUTE, [10, 10, 10]);
    await insert('minute', day + 2 * MINUTE, [20, 20]);
    await insert('minute', day + HOUR + MINUTE, [30, 30, 30, 30]);
    await insert('hour', day, [40, 40, 40, 40, 40]);
    await insert('day', day - 2 * HOUR - DAY, [50, 50, 50, 50, 50, 50, 50]);
    expect(await migrateUp(ds)).toEqual([...reverted].reverse());
    const rows = (await ds.query(
      `SELECT resolution, bucket, requests::int, server_errors::int AS errors, ttfb, ttlb FROM runtime_buckets
        WHERE environment_name = 'b-migrated' ORDER BY resolution, bucket`,
    )) as Array<{ resolution: string; bucket: Date; requests: number; errors: number; ttfb: unknown; ttlb: unknown }>;
    const row = (resolution: string, bucket: number, errors: number, samples: number[]) => ({
      resolution,
      bucket: new Date(bucket).toISOString(),
      requests: samples.length,
      errors,
      ttfb: wire(samples),
      ttlb: wire(samples),
    });
    expect(rows.map((r) => ({ ...r, bucket: new Date(r.bucket).toISOString() }))).toEqual([
      row('day', day - 2 * HOUR - DAY, 1, [50, 50, 50, 50, 50, 50, 50]),
      row('day', day - 2 * HOUR, 4, [10, 10, 10, 20, 20, 30, 30, 30, 30, 40, 40, 40, 40, 40]),
      row('hour', day, 3, [10, 10, 10, 20, 20, 40, 40, 40, 40, 40]),
      row('hour', day + HOUR, 1, [30, 30, 30, 30]),
      row('minute', day + MINUTE, 1, [10, 10, 10]),
      row('minute', day + 2 * MINUTE, 1, [20, 20]),
      row('minute', day + HOUR + MINUTE, 1, [30, 30, 30, 30]),
    ]);
  });

  it('moves the cells of literal paths into their template when paths regroup', async () => {
    const [project] = (await ds.query(`SELECT id FROM projects WHERE slug = 'rt'`)) as Array<{ id: string }>;
    const repository = new RuntimeRepository(ds);
    const minute = (path: string, requests: number, ms: number) => ({
      method: 'GET',
      path,
      minute: new Date(Date.now() - (Date.now() % MINUTE)).toISOString(),
      requests,
      serverErrors: 1,
      upstreamFailures: 0,
      clientLeft: 0,
      ttfb: wire(Array<number>(requests).fill(ms)),
      ttlb: wire(Array<number>(requests).fill(ms)),
    });
    await repository.addMinutes(
      ds.manager,
      project!.id,
      { kind: 'staging', name: 's-rg' },
      foldedMinutes([minute('/items/1', 3, 10), minute('/items/2', 5, 20)]),
    );
    await repository.regroup(ds.manager, project!.id, null, ['/items/1', '/items/2'], '/items/{id}');
    const cells = (await ds.query(
      `SELECT path, requests::int, server_errors::int AS errors, ttlb, ttlb_p95 AS p95 FROM runtime_cells
        WHERE environment_name = 's-rg' ORDER BY path`,
    )) as Array<{ path: string; requests: number; errors: number; ttlb: Record<string, number>; p95: number }>;
    expect(cells.map(({ path, requests, errors, p95 }) => ({ path, requests, errors, p95 }))).toEqual([
      { path: '/items/{id}', requests: 8, errors: 2, p95: histogramBucket(20) },
    ]);
    expect(LatencyHistogram.fromWire(cells[0]!.ttlb).toWire()).toEqual(
      wire([...Array(3).fill(10), ...Array(5).fill(20)]),
    );
  });

  it('answers the same before and after the minutes are rolled up into hours and days, and rolls each minute up once', async () => {
    // A database of its own: no backend rolls up beside this test.
    const database = await createMigratedDatabase();
    const ds = database.ds;
    const [project] = (await ds.query(
      `INSERT INTO projects (slug, name) VALUES ('rolled', 'Rolled') RETURNING id, slug`,
    )) as Array<{ id: string; slug: string }>;
    const repository = new RuntimeRepository(ds);
    const service = new RuntimeService(repository, new PartitionsRepository(ds), new VersionStore(ds), {
      config: parseConfig({}),
      databaseUrl: backend.databaseUrl,
      log: pino({ level: 'silent' }),
    } as Runtime);
    // A seeded draw: 30 folds of 20 minutes each over the last 60 hours (some minutes folded
    // again), of two staging builds.
    const random = seeded(20);
    const now = Date.now();
    const fold = async (): Promise<void> => {
      const minutes = Array.from({ length: 20 }, () => {
        const at = now - Math.floor(random() * 60 * 60) * MINUTE;
        const requests = 1 + Math.floor(random() * 20);
        const samples = Array.from({ length: requests }, () => 10 ** (random() * 3));
        return {
          method: 'GET',
          path: random() < 0.5 ? '/rolled/{id}' : '/other',
          minute: new Date(at - (at % MINUTE)).toISOString(),
          requests,
          serverErrors: Math.floor(random() * 3),
          upstreamFailures: Math.floor(random() * 2),
          clientLeft: Math.floor(random() * 2),
          ttfb: wire(samples.map((ms) => ms / 2)),
          ttlb: wire(samples),
        };
      });
      const build = random() < 0.5 ? 's-rolled-1' : 's-rolled-2';
      await ds.transaction((manager) =>
        repository.addMinutes(manager, project!.id, { kind: 'staging', name: build }, foldedMinutes(minutes)),
      );
    };
    const answers = async () => {
      const series = [];
      for (const [step, hours] of [
        ['minute', 24],
        ['hour', 60],
        ['day', 60],
      ] as const) {
        const query = { environment: 'staging' as const, step, since: new Date(now - hours * 3600_000).toISOString() };
        for (const path of ['/rolled/{id}', '/other'])
          series.push(
            await service.routeSeries(project as ProjectEntity, { method: 'GET', path }, query, new Date(now)),
          );
        series.push(await service.share(project as ProjectEntity, { ...query, build: 's-rolled-1' }, new Date(now)));
      }
      return series;
    };
    const added = async () =>
      ((await ds.query('SELECT count(*)::int AS n FROM runtime_minutes_added')) as [{ n: number }])[0].n;

    for (let i = 0; i < 15; i++) await fold();
    const firstHalf = await answers();
    // One row per endpoint and minute of each fold.
    const firstAdded = await added();
    expect(firstAdded).toBeGreaterThan(15 * 10);
    expect(await service.rollUpMinutes(true)).toBe(firstAdded);
    expect(await answers()).toEqual(firstHalf);
    // Stored minutes, hours and days, and minutes added on top of them.
    for (let i = 0; i < 15; i++) await fold();
    const before = await answers();
    expect(before).not.toEqual(firstHalf);
    const secondAdded = await added();
    expect(await service.rollUpMinutes(true)).toBe(secondAdded);
    expect(await added()).toBe(0);
    expect(await answers()).toEqual(before);
    // Nothing left to roll up: a second run changes nothing.
    expect(await service.rollUpMinutes(true)).toBe(0);
    expect(await answers()).toEqual(before);

    // Every hour and day row holds exactly its minutes: counts added, histograms merged.
    const differing = (await ds.query(
      `WITH minutes AS (
         SELECT m.environment_name, m.method, m.path, m.version, r.resolution, r.bucket, m.requests, m.server_errors,
                m.upstream_failures, m.client_left, m.ttfb, m.ttlb
           FROM runtime_buckets m
          CROSS JOIN LATERAL (VALUES ('hour', date_trunc('hour', m.bucket, 'UTC')),
                                     ('day', date_trunc('day', m.bucket, 'UTC'))) AS r(resolution, bucket)
          WHERE m.project_id = $1 AND m.resolution = 'minute'),
       expected AS (
         SELECT environment_name, method, path, version, resolution, bucket, sum(requests) AS requests,
                sum(server_errors) AS server_errors, sum(upstream_failures) AS upstream_failures,
                sum(client_left) AS client_left, runtime_histogram_sum(ttfb) AS ttfb, runtime_histogram_sum(ttlb) AS ttlb
           FROM minutes GROUP BY 1, 2, 3, 4, 5, 6),
       stored AS (
         SELECT environment_name, method, path, version, resolution, bucket, requests, server_errors,
                upstream_failures, client_left, ttfb, ttlb
           FROM runtime_buckets WHERE project_id = $1 AND resolution <> 'minute')
       SELECT count(*)::int AS n, (SELECT count(*) FROM stored)::int AS rows
         FROM ((SELECT * FROM expected EXCEPT SELECT * FROM stored)
               UNION ALL (SELECT * FROM stored EXCEPT SELECT * FROM expected)) d`,
      [project!.id],
    )) as [{ n: number; rows: number }];
    expect(differing[0].n).toBe(0);
    expect(differing[0].rows).toBeGreaterThan(20);
    await database.close();
  });
});
