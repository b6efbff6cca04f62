import {
  countOfInterest,
  type DiffResponse,
  type DocumentationResponse,
  type ProjectResponse,
  type TokenResponse,
  type UndocumentedEndpointResponse,
} from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createDataSource } from '../src/database/data-source';
import { migrateDown, migrateUp } from '../src/database/migrate';
import {
  batchMessage,
  connectTestAgent,
  helloMessage,
  type TestAgent,
  type TestExchange,
} from './support/agent-client';
import { startTestBackend, type TestBackend } from './support';

let backend: TestBackend;
let agentToken: string;
let db: pg.Client;

interface SummaryRow {
  captureId: string;
  method: string;
  path: string;
  interactions: number;
  interest: number;
}

/** The endpoints that have a summary stored, sorted. */
async function storedEndpoints(client: pg.Client, captureId: string): Promise<Array<{ method: string; path: string }>> {
  const { rows } = await client.query<{ method: string; path: string }>(
    'SELECT method, path FROM capture_endpoints WHERE capture_id = $1 ORDER BY method, path',
    [captureId],
  );
  return rows;
}

/** The same summaries recomputed from the observation rows (count of interest by the shared definition). */
async function recomputedSummaries(client: pg.Client, captureId: string): Promise<SummaryRow[]> {
  const { rows } = await client.query<{
    method: string;
    path: string;
    req: string | null;
    res: string | null;
    count: number;
  }>(
    `SELECT method, path, request_content_type AS req, response_content_type AS res, sum(count)::float8 AS count
       FROM observations WHERE capture_id = $1 GROUP BY method, path, request_content_type, response_content_type ORDER BY method, path`,
    [captureId],
  );
  const byEndpoint = new Map<string, SummaryRow>();
  for (const row of rows) {
    const key = `${row.method} ${row.path}`;
    const summary = byEndpoint.get(key) ?? {
      captureId,
      method: row.method,
      path: row.path,
      interactions: 0,
      interest: 0,
    };
    summary.interactions += row.count;
    summary.interest += countOfInterest({
      request: row.req === null ? null : { contentType: row.req },
      response: row.res === null ? null : { contentType: row.res },
      count: row.count,
    });
    byEndpoint.set(key, summary);
  }
  return [...byEndpoint.values()];
}

async function openAgents(count: number, captureId?: string): Promise<{ agents: TestAgent[]; captureId: string }> {
  const agents: TestAgent[] = [];
  let id = captureId;
  for (let i = 0; i < count; i++) {
    const agent = await connectTestAgent(backend.url, agentToken);
    // Connections sharing a capture are its one agent's (a capture belongs to the agent that opened it).
    const hello = helloMessage(
      id === undefined
        ? { agentId: 'summary' }
        : { agentId: 'summary', capture: { id, startedAt: new Date().toISOString(), reason: 'agent-start' } },
    );
    await agent.request(hello);
    id = hello.capture.id;
    agents.push(agent);
  }
  return { agents, captureId: id as string };
}

/** A batch where some bodies are not JSON (not of interest) and some responses have no body. */
function mixedBatch(captureId: string, seed: number): ReturnType<typeof batchMessage> {
  const exchanges: TestExchange[] = Array.from({ length: 12 }, (_, i) => ({
    method: i % 3 === 0 ? 'GET' : 'POST',
    path: `/things/${(seed + i) % 5}`,
    status: i % 4 === 0 ? 400 : 201,
    request: i % 3 === 0 ? undefined : { name: 'n', ...(i % 5 === 0 ? { extra: seed } : {}) },
    response: i % 6 === 0 ? undefined : { id: 1 },
    count: 1 + ((seed + i) % 4),
  }));
  const batch = batchMessage(captureId, exchanges);
  batch.observations.forEach((o, i) => {
    if (i % 7 === 0 && o.response !== null) o.response = { contentType: 'text/plain' };
  });
  return batch;
}

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'summary', name: 'Summary' })).status).toBe(
    201,
  );
  agentToken = (await backend.api<TokenResponse>('POST', '/projects/summary/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  db = new pg.Client({ connectionString: backend.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await backend.close();
});

describe('capture endpoint summaries', () => {
  it('equal a recomputation from observations after concurrent and duplicate batches', async () => {
    const { agents, captureId } = await openAgents(3);
    const batches = Array.from({ length: 9 }, (_, i) => mixedBatch(captureId, i));
    // Three connections send three batches each at once; then every batch is resent (duplicates).
    await Promise.all(
      agents.map((agent, a) => Promise.all(batches.filter((_, i) => i % 3 === a).map((batch) => agent.request(batch)))),
    );
    const resent = await Promise.all(batches.map((batch, i) => (agents[i % 3] as TestAgent).request(batch)));
    expect(resent.every((ack) => ack.type === 'ack' && 'duplicate' in ack && ack.duplicate === true)).toBe(true);
    await Promise.all(agents.map((agent) => agent.close()));

    const recomputed = await recomputedSummaries(db, captureId);
    expect(recomputed.length).toBeGreaterThan(5);
    // One summary per endpoint with observation rows; its totals are read from those rows.
    expect(await storedEndpoints(db, captureId)).toEqual(recomputed.map(({ method, path }) => ({ method, path })));
    const expectedInteractions = batches.flatMap((b) => b.observations).reduce((sum, o) => sum + o.count, 0);
    expect(recomputed.reduce((sum, row) => sum + row.interactions, 0)).toBe(expectedInteractions);

    // The undocumented view reads them: same totals per endpoint.
    const view = await backend.api<UndocumentedEndpointResponse[]>(
      'GET',
      `/projects/summary/captures/${captureId}/undocumented`,
    );
    expect(view.body.map((u) => [u.method, u.path, u.interactions, u.count]).sort()).toEqual(
      recomputed.map((s) => [s.method, s.path, s.interactions, s.interest]).sort(),
    );
  });

  it('are written only for new endpoints and grown names, not for more of the same traffic', async () => {
    const { agents, captureId } = await openAgents(1);
    const [agent] = agents as [TestAgent];
    const seen = (): Promise<Array<{ path: string; version: string; revision: string }>> =>
      db
        .query<{ path: string; version: string; revision: string }>(
          'SELECT path, xmin::text AS version, revision::text AS revision FROM capture_endpoints WHERE capture_id = $1 ORDER BY path',
          [captureId],
        )
        .then((result) => result.rows);
    const first = mixedBatch(captureId, 0);
    await agent.request(first);
    const before = await seen();
    expect(before.length).toBeGreaterThan(3);
    // The same exchanges again (a new batch id): counts grow in the observation rows, no summary row version is written.
    await agent.request({ ...first, batchId: randomUUID() });
    expect(await seen()).toEqual(before);
    const view = await backend.api<UndocumentedEndpointResponse[]>(
      'GET',
      `/projects/summary/captures/${captureId}/undocumented`,
    );
    const sent = first.observations.reduce((sum, o) => sum + o.count, 0);
    expect(view.body.reduce((sum, u) => sum + u.interactions, 0)).toBe(2 * sent);
    // A query name new to a stored observation row grows the endpoint's revision (its diff flag goes stale).
    const grown = batchMessage(captureId, [
      { method: 'POST', path: '/things/1', status: 201, request: { name: 'n' }, response: { id: 1 } },
    ]);
    grown.observations.forEach((o) => (o.query = ['fresh']));
    await agent.request(grown);
    const after = await seen();
    const revisionOf = (rows: typeof before): string | undefined =>
      rows.find((row) => row.path === '/things/1')?.revision;
    expect(Number(revisionOf(after))).toBe(Number(revisionOf(before)) + 1);
    expect(after.filter((row) => row.path !== '/things/1')).toEqual(before.filter((row) => row.path !== '/things/1'));
    await agent.close();
  });

  it('keep the diff flag right when new observation keys arrive and when the endpoint gets a new version', async () => {
    const created = { method: 'POST', path: '/posts', status: 201, request: { title: 't' }, response: { id: 1 } };
    const { agents, captureId } = await openAgents(1);
    const [agent] = agents as [TestAgent];
    await agent.request(batchMessage(captureId, [created]));
    const commit = await backend.api<DocumentationResponse>('POST', '/projects/summary/documentation', {
      captureId,
      endpoints: [{ method: 'POST', path: '/posts', documentBodies: true }],
    });
    expect(commit.status).toBe(201);
    const diffs = async (): Promise<DiffResponse[]> =>
      (await backend.api<DiffResponse[]>('GET', `/projects/summary/captures/${captureId}/diffs`)).body;
    const flag = async (): Promise<{ differs: boolean | null; fresh: boolean }> =>
      (
        await db.query<{ differs: boolean | null; fresh: boolean }>(
          `SELECT ce.differs, (ce.checked_version = e.current_version_id AND ce.checked_revision = ce.revision) AS fresh
             FROM capture_endpoints ce JOIN endpoints e ON e.method = ce.method AND e.path = ce.path
            WHERE ce.capture_id = $1 AND ce.path = '/posts'`,
          [captureId],
        )
      ).rows[0] as { differs: boolean | null; fresh: boolean };

    expect(await diffs()).toEqual([]);
    expect(await flag()).toEqual({ differs: false, fresh: true });
    // More of the same traffic: counts grow, no new key, the flag stays fresh.
    await agent.request(batchMessage(captureId, [created]));
    expect(await flag()).toEqual({ differs: false, fresh: true });

    // A new field is a new observation key: the flag goes stale and the next read finds the diff.
    await agent.request(batchMessage(captureId, [{ ...created, request: { title: 't', tags: ['x'] } }]));
    expect((await flag()).fresh).toBe(false);
    expect(await diffs()).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/posts',
        version: '1.0',
        interactions: 1,
        changes: [expect.objectContaining({ change: 'added', at: '$.tags' })],
      }),
    ]);
    expect(await flag()).toEqual({ differs: true, fresh: true });

    // A new version that documents the field: the flag is for the old version, so it is recomputed.
    const accept = await backend.api<DocumentationResponse>('POST', '/projects/summary/documentation', {
      captureId,
      endpoints: [{ method: 'POST', path: '/posts', documentBodies: true }],
    });
    expect(accept.status).toBe(201);
    expect((await flag()).fresh).toBe(false);
    expect(await diffs()).toEqual([]);
    expect(await flag()).toEqual({ differs: false, fresh: true });
    await agent.close();
  });

  it('are backfilled from existing observations by the migration', async () => {
    const { agents, captureId } = await openAgents(1);
    for (let i = 0; i < 3; i++) await (agents[0] as TestAgent).request(mixedBatch(captureId, i));
    await (agents[0] as TestAgent).close();
    const before = await storedEndpoints(db, captureId);
    // Down to before the summaries (later migrations go first) and up again (they are rebuilt from observations).
    const ds = createDataSource(backend.databaseUrl, { poolSize: 2 });
    await ds.initialize();
    try {
      const reverted: Array<string | null> = [];
      while (reverted.at(-1) !== 'CaptureEndpoints1763900000000' && reverted.length < 100)
        reverted.push(await migrateDown(ds));
      expect(reverted.at(-1)).toBe('CaptureEndpoints1763900000000');
      expect(await migrateUp(ds)).toEqual([...reverted].reverse());
    } finally {
      await ds.destroy();
    }
    expect(await storedEndpoints(db, captureId)).toEqual(before);
    expect(before).toEqual((await recomputedSummaries(db, captureId)).map(({ method, path }) => ({ method, path })));
  });
});
