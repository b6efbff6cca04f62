/**
 * Version share per environment (issue 18), against a real backend and PostgreSQL with
 * hand-driven agents: `GET /projects/{p}/runtime/share` answers which versions an environment's
 * traffic ran on, every endpoint together over time and per endpoint over the window. A staging
 * rollout with 2.0 on 30 % of the requests shows 2.0 at 30 %.
 */
import {
  type CaptureRuntimeResponse,
  LatencyHistogram,
  type TokenResponse,
  type VersionShareResponse,
} from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, endCapture, helloMessage, type TestExchange } from './support/agent-client';
import { documentGet, untilFolded } from './support/evidence-helpers';

const MINUTE = 60_000;
let backend: TestBackend;
let agentToken: string;

/** One agent run of a build sending one batch per `[at, exchanges]`, each exchange taking `ms`; resolves with its capture id. */
async function run(
  environment: { kind: 'staging' | 'production'; build: string } | { kind: 'local' },
  batches: ReadonlyArray<[number, TestExchange[]]>,
  ms = 10,
): Promise<string> {
  const agent = await connectTestAgent(backend.url, agentToken);
  try {
    const hello = helloMessage({ agentId: `share-${JSON.stringify(environment)}`, environment });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    for (const [at, exchanges] of batches) {
      const batch = batchMessage(hello.capture.id, exchanges);
      const time = new Date(at).toISOString();
      for (const observation of batch.observations) {
        const histogram = new LatencyHistogram();
        for (let i = 0; i < observation.count; i++) histogram.record(observation.status >= 500 ? 2 * ms : ms);
        const timing = histogram.toWire();
        Object.assign(observation, { firstSeen: time, lastSeen: time, runtime: { ttfb: timing, ttlb: timing } });
      }
      expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
    }
    await endCapture(agent, hello.capture.id);
    await untilFolded(backend.databaseUrl);
    return hello.capture.id;
  } finally {
    await agent.close();
  }
}

const shareOf = (query: string) =>
  backend.api<VersionShareResponse & { message?: string }>('GET', `/projects/share/runtime/share${query}`);

/** `[version, requests, share]` of a list of shares. */
const figures = (shares: ReadonlyArray<{ version: string; requests: number; share: number }>) =>
  shares.map((s) => [s.version, s.requests, Number(s.share.toFixed(6))]);

const carts = (count: number, response: unknown): TestExchange => ({
  method: 'GET',
  path: '/carts',
  status: 200,
  response,
  count,
});

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api('POST', '/projects', { slug: 'share', name: 'Share' })).status).toBe(201);
  agentToken = (await backend.api<TokenResponse>('POST', '/projects/share/tokens', { name: 'agents', scope: 'agent' }))
    .body.token as string;
  await documentGet(backend, 'share', '/carts', { id: { type: 'string' } }); // 1.0
  await documentGet(backend, 'share', '/carts', { id: { type: 'integer' } }); // 2.0 (a breaking change)
  await documentGet(backend, 'share', '/items', { name: { type: 'string' } }); // 1.0
});
afterAll(async () => {
  await backend?.close();
});

describe('version share', () => {
  it('shows a rollout on 30 % of the requests as 30 %, per step and over the window', async () => {
    const now = Date.now();
    const first = now - (now % MINUTE) - 10 * MINUTE;
    // Staging: s-1 runs 1.0 alone for a minute, then s-2 (2.0) takes 30 of each 100 requests for two.
    await run({ kind: 'staging', build: 's-1' }, [
      [first + 1_000, [carts(100, { id: 'a' })]],
      [first + MINUTE + 1_000, [carts(70, { id: 'a' })]],
      [first + 2 * MINUTE + 1_000, [carts(70, { id: 'a' })]],
    ]);
    await run({ kind: 'staging', build: 's-2' }, [
      [first + MINUTE + 2_000, [carts(30, { id: 1 })]],
      [first + 2 * MINUTE + 2_000, [carts(30, { id: 1 })]],
    ]);
    const { status, body } = await shareOf('?environment=staging&since=' + new Date(first).toISOString());
    expect(status).toBe(200);
    expect(body).toMatchObject({ environment: 'staging', name: null, step: 60, since: new Date(first).toISOString() });
    const points = Object.fromEntries(
      body.versions.map((v) => [v.version, v.points.map((p) => [p.at, p.requests, p.share])]),
    );
    const at = (i: number) => new Date(first + i * MINUTE).toISOString();
    expect(points).toEqual({
      '1.0': [
        [at(0), 100, 1],
        [at(1), 70, 0.7],
        [at(2), 70, 0.7],
      ],
      '2.0': [
        [at(1), 30, 0.3],
        [at(2), 30, 0.3],
      ],
    });
    // Over the window: 240 of 300 on 1.0.
    expect(figures(body.versions)).toEqual([
      ['1.0', 240, 0.8],
      ['2.0', 60, 0.2],
    ]);
    expect(body.endpoints).toEqual([
      {
        endpointId: expect.any(String),
        method: 'GET',
        path: '/carts',
        requests: 300,
        versions: [
          { version: '1.0', requests: 240, share: 0.8 },
          { version: '2.0', requests: 60, share: 0.2 },
        ],
      },
    ]);
    // One build alone: s-2 ran only 2.0.
    const s2 = await shareOf('?environment=staging&build=s-2&since=' + new Date(first).toISOString());
    expect(figures(s2.body.versions)).toEqual([['2.0', 60, 1]]);
    expect(s2.body.name).toBe('s-2');
  });

  it('counts every endpoint together, undocumented traffic under no version, and per endpoint', async () => {
    const now = Date.now();
    const minute = now - (now % MINUTE) - 3 * MINUTE + 1_000;
    await run({ kind: 'production', build: 'p-1' }, [
      [
        minute,
        [
          carts(70, { id: 'a' }),
          { method: 'GET', path: '/items', status: 200, response: { name: 'x' }, count: 100 },
          { method: 'GET', path: '/health', status: 200, response: { ok: true }, count: 50 },
        ],
      ],
    ]);
    await run({ kind: 'production', build: 'p-2' }, [[minute, [carts(30, { id: 1 })]]]);
    const { body } = await shareOf('?environment=production');
    // 1.0: 70 of /carts and 100 of /items; 2.0: 30 of /carts; no version: /health's 50.
    expect(figures(body.versions)).toEqual([
      ['1.0', 170, 0.68],
      ['', 50, 0.2],
      ['2.0', 30, 0.12],
    ]);
    // Each step's shares add up to 1.
    const total = body.versions.reduce((sum, v) => sum + v.points.reduce((s, p) => s + p.share, 0), 0);
    expect(total).toBeCloseTo(1, 10);
    expect(
      body.endpoints.map((e) => [e.method, e.path, e.endpointId === null, e.requests, figures(e.versions)]),
    ).toEqual([
      [
        'GET',
        '/carts',
        false,
        100,
        [
          ['1.0', 70, 0.7],
          ['2.0', 30, 0.3],
        ],
      ],
      ['GET', '/items', false, 100, [['1.0', 100, 1]]],
      ['GET', '/health', true, 50, [['', 50, 1]]],
    ]);
    // Nothing in CI.
    expect((await shareOf('?environment=ci')).body).toMatchObject({ versions: [], endpoints: [] });
  });

  it('answers every endpoint’s runtime in a capture’s build, undocumented ones too', async () => {
    const now = Date.now();
    const captureId = await run(
      { kind: 'production', build: 'p-9' },
      [
        [
          now - 30_000,
          [
            carts(40, { id: 'a' }),
            { method: 'GET', path: '/metrics', status: 200, response: { up: 1 }, count: 90 },
            { method: 'GET', path: '/metrics', status: 503, response: { down: 1 }, count: 10 },
          ],
        ],
      ],
      40,
    );
    const { status, body } = await backend.api<CaptureRuntimeResponse>(
      'GET',
      `/projects/share/captures/${captureId}/runtime`,
    );
    expect(status).toBe(200);
    expect(body.environment).toEqual({ kind: 'production', name: 'p-9' });
    expect(body.endpoints.map((e) => [e.method, e.path, e.requests, e.errorRate])).toEqual([
      ['GET', '/carts', 40, 0],
      ['GET', '/metrics', 100, 0.1],
    ]);
    // p95 of time to last byte: 40 ms for /carts; 80 ms for /metrics, whose slowest tenth failed.
    const [cartsP95, metricsP95] = body.endpoints.map((e) => e.p95 as number);
    expect(Math.abs(cartsP95! - 40) / 40).toBeLessThan(0.1);
    expect(Math.abs(metricsP95! - 80) / 80).toBeLessThan(0.1);
    // A local capture has no environment row, so no runtime; an unknown capture is a 404.
    const local = await run({ kind: 'local' }, [[now, [carts(1, { id: 'a' })]]]);
    expect((await backend.api(`GET`, `/projects/share/captures/${local}/runtime`)).body).toEqual({
      environment: null,
      endpoints: [],
    });
    expect((await backend.api('GET', `/projects/share/captures/${crypto.randomUUID()}/runtime`)).status).toBe(404);
    expect((await backend.api('GET', '/projects/share/captures/nope/runtime')).status).toBe(400);
  });

  it('refuses a bad query naming the parameter, never with a 500', async () => {
    const refused: Array<[string, string]> = [
      ['', 'environment must be one of ci, staging, production'],
      ['?environment=moon', 'environment must be one of ci, staging, production'],
      ['?environment=production&since=yesterday', 'since must be an ISO 8601 time'],
      ['?environment=production&since=2999-01-01T00:00:00Z', 'since must not be in the future'],
      ['?environment=production&step=week', 'step must be one of minute, hour, day'],
      ['?environment=production&step=minute&since=2020-01-01T00:00:00Z', 'step minute makes more than 1500 points'],
    ];
    for (const [query, message] of refused)
      expect(await shareOf(query)).toMatchObject({ status: 400, body: { message: expect.stringContaining(message) } });
  });
});
