import type { BatchMessage, ProjectResponse, TokenResponse, WireObservation } from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { batchMessage, connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
import { createTestDatabase, startTestBackend, type TestBackend, type TestDatabase } from './support';

/** Names and values that need quoting or escaping in a PostgreSQL array literal, or look like NULL. */
const AWKWARD_NAMES = ['', ' ', 'NULL', 'a"b', 'a,b', 'back\\slash', 'x-trace', '{braces}', 'ünï☃'];
const AWKWARD_PATH = '/odd/"quoted",\\{x}/NULL';

async function query<T extends pg.QueryResultRow>(
  databaseUrl: string,
  text: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function setUpProject(backend: TestBackend): Promise<string> {
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'batches', name: 'Batches' })).status).toBe(
    201,
  );
  const { body } = await backend.api<TokenResponse>('POST', '/projects/batches/tokens', {
    name: 'agent',
    scope: 'agent',
  });
  return body.token as string;
}

async function openAgent(
  backend: TestBackend,
  token: string,
  captureId?: string,
): Promise<{ agent: TestAgent; captureId: string }> {
  const agent = await connectTestAgent(backend.url, token);
  const hello = helloMessage(
    captureId === undefined
      ? {}
      : { capture: { id: captureId, startedAt: new Date().toISOString(), reason: 'agent-start' } },
  );
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  return { agent, captureId: hello.capture.id };
}

describe('batch writes', () => {
  let backend: TestBackend;
  let token: string;

  beforeAll(async () => {
    backend = await startTestBackend();
    token = await setUpProject(backend);
  });
  afterAll(async () => {
    await backend.close();
  });

  it('stores paths, content types and names exactly, however they must be quoted, and merges name lists', async () => {
    const { agent, captureId } = await openAgent(backend, token);
    const first = batchMessage(captureId, [{ method: 'POST', path: AWKWARD_PATH, status: 201, request: { a: 1 } }]);
    const [template] = first.observations as [WireObservation];
    const sorted = [...AWKWARD_NAMES].sort();
    first.observations = [
      {
        ...template,
        query: sorted,
        requestHeaders: ['a"b', 'x-trace'],
        responseHeaders: [],
        request: { contentType: 'application/json; x="a,b"', shape: template.request?.shape as string },
      },
      // Same lists on another row (one shared slice) and an empty list where the first has names.
      { ...template, status: 400, query: sorted, requestHeaders: [], responseHeaders: ['NULL'] },
    ];
    expect(await agent.request(first)).toEqual({ type: 'ack', batchId: first.batchId });
    // The same key again with one more query name: the stored list becomes the sorted union.
    const second: BatchMessage = {
      ...first,
      batchId: randomUUID(),
      shapes: {},
      observations: [{ ...(first.observations[1] as WireObservation), query: ['zzz'], count: 2 }],
    };
    expect(await agent.request(second)).toEqual({ type: 'ack', batchId: second.batchId });

    const rows = await query<{
      path: string;
      status: number;
      request_content_type: string;
      query: string[];
      request_headers: string[];
      response_headers: string[];
      count: string;
    }>(
      backend.databaseUrl,
      'SELECT path, status, request_content_type, query, request_headers, response_headers, count FROM observations WHERE capture_id = $1 ORDER BY status',
      [captureId],
    );
    expect(rows).toEqual([
      {
        path: AWKWARD_PATH,
        status: 201,
        request_content_type: 'application/json; x="a,b"',
        query: sorted,
        request_headers: ['a"b', 'x-trace'],
        response_headers: [],
        count: '1',
      },
      // The merged list is ordered by the database's collation: compare it as a set.
      {
        path: AWKWARD_PATH,
        status: 400,
        request_content_type: 'application/json',
        query: expect.any(Array),
        request_headers: [],
        response_headers: ['NULL'],
        count: '3',
      },
    ]);
    expect([...(rows[1]?.query ?? [])].sort()).toEqual([...sorted, 'zzz'].sort());
    const [summary] = await query<{ revision: string }>(
      backend.databaseUrl,
      'SELECT revision FROM capture_endpoints WHERE capture_id = $1',
      [captureId],
    );
    // Revision 1 per batch that brought a new observation key (the first) or new request names on
    // a stored one (the second: `zzz`); its 4 interactions are read from the observation rows above.
    expect(summary).toEqual({ revision: '2' });
    await agent.close();
  });

  it('writes nothing for a duplicate, not even the shapes it brings', async () => {
    const { agent, captureId } = await openAgent(backend, token);
    const batch = batchMessage(captureId, [
      { method: 'GET', path: '/dup', status: 200, response: { onlyInThisBatch: true } },
    ]);
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    // Sent again under its id, with a shape never stored (shapes are never deleted).
    const resent = batchMessage(
      captureId,
      [{ method: 'GET', path: '/dup', status: 200, response: { onlyInTheResend: true } }],
      batch.batchId,
    );
    const [fingerprint] = Object.keys(resent.shapes);
    await query(backend.databaseUrl, 'DELETE FROM observations WHERE capture_id = $1', [captureId]);
    expect(await agent.request(resent)).toEqual({ type: 'ack', batchId: batch.batchId, duplicate: true });
    expect(await query(backend.databaseUrl, 'SELECT 1 FROM shapes WHERE fingerprint = $1', [fingerprint])).toEqual([]);
    expect(await query(backend.databaseUrl, 'SELECT 1 FROM observations WHERE capture_id = $1', [captureId])).toEqual(
      [],
    );
    await agent.close();
  });
});

describe('pruning committed batch ids', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('forgets ids older than the retention bound when a replica starts, keeps younger ones', async () => {
    const first = await startTestBackend({ databaseUrl: database.url });
    const token = await setUpProject(first);
    const { agent, captureId } = await openAgent(first, token);
    const old = batchMessage(captureId, [{ method: 'GET', path: '/old', status: 200 }]);
    const recent = batchMessage(captureId, [{ method: 'GET', path: '/recent', status: 200 }]);
    for (const batch of [old, recent])
      expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    await agent.close();
    await first.close();
    // Committed 31 and 29 days ago: one beyond the bound of 30 days, one within it.
    await query(
      database.url,
      `UPDATE processed_batches SET committed_at = now() - interval '31 days' WHERE batch_id = $1`,
      [old.batchId],
    );
    await query(
      database.url,
      `UPDATE processed_batches SET committed_at = now() - interval '29 days' WHERE batch_id = $1`,
      [recent.batchId],
    );

    const second = await startTestBackend({ databaseUrl: database.url, batchRetentionDays: 30 });
    try {
      // The first prune runs in the background right after start.
      const deadline = Date.now() + 10_000;
      let left: Array<{ batch_id: string }> = [];
      do {
        left = await query<{ batch_id: string }>(
          database.url,
          'SELECT batch_id FROM processed_batches WHERE batch_id = ANY($1::uuid[])',
          [[old.batchId, recent.batchId]],
        );
        if (left.length === 1) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      } while (Date.now() < deadline);
      expect(left).toEqual([{ batch_id: recent.batchId }]);

      // Within the bound a resend is still a duplicate.
      const { agent: again } = await openAgent(second, token, captureId);
      expect(await again.request(recent)).toEqual({ type: 'ack', batchId: recent.batchId, duplicate: true });
      await again.close();
    } finally {
      await second.close();
    }
  });
});
