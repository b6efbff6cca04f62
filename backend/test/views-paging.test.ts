import type { CaptureResponse, ProjectResponse, TokenResponse, UndocumentedEndpointResponse } from '@spectator/shared';
import pg from 'pg';
import { batchMessage, connectTestAgent, endCapture, helloMessage, type TestAgent } from './support/agent-client';
import { sqlOn, startTestBackend, type TestBackend } from './support';
import { endpointCountsDiffering } from './support/evidence-helpers';

// Issue 15, item 10: one capture took 10^5 distinct templates and its undocumented view was sent
// whole (18.7 MB). A capture keeps at most SPECTATOR_MAX_ENDPOINTS_PER_CAPTURE endpoints (the
// requests of any further one are counted, not stored), and the views are paged with a cursor.
const CAP = 5;
let backend: TestBackend;
let agent: TestAgent;
let captureId: string;

const get = (path: string, count = 1) => ({ method: 'GET', path, status: 200, count });

beforeAll(async () => {
  backend = await startTestBackend({ maxEndpointsPerCapture: CAP });
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'pages', name: 'Pages' })).status).toBe(201);
  const token = (await backend.api<TokenResponse>('POST', '/projects/pages/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  agent = await connectTestAgent(backend.url, token);
  const hello = helloMessage();
  captureId = hello.capture.id;
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
});
afterAll(async () => {
  await agent.close();
  await backend.close();
});

async function view(query = ''): Promise<{ status: number; body: UndocumentedEndpointResponse[] }> {
  return backend.api<UndocumentedEndpointResponse[]>(
    'GET',
    `/projects/pages/captures/${captureId}/undocumented${query}`,
  );
}

describe('a capture’s endpoints', () => {
  it('are capped: requests of endpoints past the cap are counted as overflow, not stored', async () => {
    const first = batchMessage(
      captureId,
      ['/a', '/b', '/c', '/d', '/e', '/f', '/g'].map((path) => get(path, 2)),
    );
    expect(await agent.request(first)).toEqual({ type: 'ack', batchId: first.batchId });
    expect((await view()).body.map((e) => e.path)).toEqual(['/a', '/b', '/c', '/d', '/e']);
    // A known endpoint is still counted; new ones are not stored however they come.
    const second = batchMessage(captureId, [get('/a', 3), get('/h', 4)]);
    expect(await agent.request(second)).toEqual({ type: 'ack', batchId: second.batchId });
    const { body } = await backend.api<CaptureResponse>('GET', `/projects/pages/captures/${captureId}`);
    expect(body).toMatchObject({ undocumented: CAP, interactions: 2 * CAP + 3, overflow: { requests: 2 * 2 + 4 } });
    expect((await view()).body.find((e) => e.path === '/a')).toMatchObject({ interactions: 5 });
    expect(await endpointCountsDiffering(backend.databaseUrl)).toEqual([]);
  });

  it('fit under the cap are stored however many are new, the capture counting them', async () => {
    const token = (await backend.api<TokenResponse>('POST', '/projects/pages/tokens', { name: 'fits', scope: 'agent' }))
      .body.token as string;
    const fits = await connectTestAgent(backend.url, token);
    const hello = helloMessage({ agentId: 'fits' });
    expect(await fits.request(hello)).toMatchObject({ type: 'welcome' });
    const counted = async (): Promise<number> => {
      const [row] = await sqlOn<{ endpoints: number }>(
        backend.databaseUrl,
        'SELECT coalesce(sum(endpoints), 0)::int AS endpoints FROM capture_endpoint_counts WHERE capture_id = $1',
        [hello.capture.id],
      );
      return row?.endpoints ?? -1;
    };
    // 3 new (room for all 5 even were all new), then 2 known and 2 new (6 offered: past the room,
    // the summaries are read), then one new past the cap.
    for (const [paths, endpoints] of [
      [['/f1', '/f2', '/f3'], 3],
      [['/f1', '/f2', '/f4', '/f5'], 5],
      [['/f1', '/f6'], 5],
    ] as const) {
      const batch = batchMessage(
        hello.capture.id,
        paths.map((path) => get(path)),
      );
      expect(await fits.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
      expect(await counted()).toBe(endpoints);
    }
    await fits.close();
    const { body } = await backend.api<CaptureResponse>('GET', `/projects/pages/captures/${hello.capture.id}`);
    expect(body).toMatchObject({ interactions: 8, overflow: { requests: 1 } });
    expect(await endpointCountsDiffering(backend.databaseUrl)).toEqual([]);
  });

  // Issue 15 (second review): past the cap, a CI capture's rows still became evidence (matrix
  // cells, proposal steps). Endpoints the capture does not keep are no evidence either.
  it('keep no evidence of endpoints past the cap', async () => {
    const token = (await backend.api<TokenResponse>('POST', '/projects/pages/tokens', { name: 'ci', scope: 'agent' }))
      .body.token as string;
    const ci = await connectTestAgent(backend.url, token);
    try {
      const hello = helloMessage({ agentId: 'ci-agent', environment: { kind: 'ci', pullRequest: '7' } });
      expect(await ci.request(hello)).toMatchObject({ type: 'welcome' });
      const paths = ['/ci/1', '/ci/2', '/ci/3', '/ci/4', '/ci/5', '/ci/6', '/ci/7'];
      const batch = batchMessage(
        hello.capture.id,
        paths.map((path) => get(path)),
      );
      expect(await ci.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
      const later = batchMessage(hello.capture.id, [get('/ci/1'), get('/ci/8', 2)]);
      expect(await ci.request(later)).toEqual({ type: 'ack', batchId: later.batchId });
      // Acknowledged at commit: the capture's end is answered once their evidence is folded.
      await endCapture(ci, hello.capture.id);
      const { body } = await backend.api<CaptureResponse>('GET', `/projects/pages/captures/${hello.capture.id}`);
      expect(body).toMatchObject({ interactions: CAP + 1, overflow: { requests: 2 + 2 } });
      const db = new pg.Client({ connectionString: backend.databaseUrl });
      await db.connect();
      try {
        const { rows } = await db.query<{ path: string; count: number }>(
          `SELECT path, sum(count)::int AS count FROM evidence_observations WHERE path LIKE '/ci/%' GROUP BY path ORDER BY path`,
        );
        expect(rows).toEqual([{ path: '/ci/1', count: 2 }, ...paths.slice(1, CAP).map((path) => ({ path, count: 1 }))]);
      } finally {
        await db.end();
      }
    } finally {
      await ci.close();
    }
  });
});

describe('the views', () => {
  it('are paged with a limit and the key of the last item seen', async () => {
    const page1 = await view('?limit=2');
    expect(page1).toMatchObject({ status: 200 });
    expect(page1.body.map((e) => e.path)).toEqual(['/a', '/b']);
    const page2 = await view(`?limit=2&after=${encodeURIComponent('GET /b')}`);
    expect(page2.body.map((e) => e.path)).toEqual(['/c', '/d']);
    const page3 = await view(`?limit=2&after=${encodeURIComponent('GET /d')}`);
    expect(page3.body.map((e) => e.path)).toEqual(['/e']);
    expect((await view(`?limit=2&after=${encodeURIComponent('GET /e')}`)).body).toEqual([]);
    // A key between items pages from the next one (the item it named may have left the view).
    expect((await view(`?after=${encodeURIComponent('POST /a')}`)).body.map((e) => e.path)).toEqual([
      '/b',
      '/c',
      '/d',
      '/e',
    ]);
    expect((await backend.api<unknown[]>('GET', `/projects/pages/captures/${captureId}/diffs?limit=10`)).body).toEqual(
      [],
    );
  });

  it('refuse a bad limit or cursor with a 400 naming it', async () => {
    expect(await view('?limit=0')).toMatchObject({ status: 400, body: { message: expect.stringContaining('limit') } });
    expect(await view('?limit=100001')).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('limit') },
    });
    expect(await view('?after=nospace')).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('after') },
    });
  });
});
