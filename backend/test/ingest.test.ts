import {
  type CaptureResponse,
  pathDigest,
  type ProjectResponse,
  type TokenResponse,
  type UndocumentedEndpointResponse,
} from '@spectator/shared';
import pg from 'pg';
import { batchMessage, connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
import { startTestBackend, type TestBackend } from './support';

let backend: TestBackend;
let agentToken: string;
let readToken: string;

const postExchange = {
  method: 'POST',
  path: '/posts',
  status: 201,
  request: { title: 't', author: 'a' },
  response: { id: 1, title: 't', author: 'a' },
};

async function openAgent(token = agentToken): Promise<{ agent: TestAgent; captureId: string }> {
  const agent = await connectTestAgent(backend.url, token);
  const hello = helloMessage();
  const welcome = await agent.request(hello);
  expect(welcome).toMatchObject({ type: 'welcome', project: 'ingest' });
  return { agent, captureId: hello.capture.id };
}

async function undocumented(captureId: string): Promise<UndocumentedEndpointResponse[]> {
  const { status, body } = await backend.api<UndocumentedEndpointResponse[]>(
    'GET',
    `/projects/ingest/captures/${captureId}/undocumented`,
    undefined,
    readToken,
  );
  expect(status).toBe(200);
  return body;
}

async function rowCount(table: string): Promise<number> {
  const client = new pg.Client({ connectionString: backend.databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
    return Number(result.rows[0]?.n);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'ingest', name: 'Ingest' })).status).toBe(
    201,
  );
  agentToken = (
    await backend.api<TokenResponse>('POST', '/projects/ingest/tokens', {
      name: 'agent',
      scope: 'agent',
      environments: ['local', 'ci'],
    })
  ).body.token as string;
  readToken = (await backend.api<TokenResponse>('POST', '/projects/ingest/tokens', { name: 'reader', scope: 'read' }))
    .body.token as string;
});
afterAll(async () => {
  await backend.close();
});

describe('agent stream', () => {
  it('acknowledges a batch after committing it and counts requests and responses of interest', async () => {
    const { agent, captureId } = await openAgent();
    const batch = batchMessage(captureId, [
      postExchange,
      { ...postExchange, count: 1 },
      { method: 'GET', path: '/posts', status: 200, response: [{ id: 1 }] },
    ]);
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    expect(await undocumented(captureId)).toEqual([
      { method: 'GET', path: '/posts', interactions: 1, count: 1 },
      { method: 'POST', path: '/posts', interactions: 2, count: 4 },
    ]);
    await agent.close();
  });

  it('acknowledges a resent batch as a duplicate without counting it twice', async () => {
    const { agent, captureId } = await openAgent();
    const batch = batchMessage(captureId, [postExchange]);
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId, duplicate: true });
    await agent.close();
    // A resend on another connection (after a reconnect) is a duplicate too.
    const again = await connectTestAgent(backend.url, agentToken);
    await again.request(
      helloMessage({ capture: { id: captureId, startedAt: new Date().toISOString(), reason: 'agent-start' } }),
    );
    expect(await again.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId, duplicate: true });
    expect(await undocumented(captureId)).toEqual([{ method: 'POST', path: '/posts', interactions: 1, count: 2 }]);
    await again.close();
  });

  it('never loses an increment when batches for one row arrive concurrently on several connections', async () => {
    const { agent: first, captureId } = await openAgent();
    const agents = [first];
    for (let i = 0; i < 3; i++) {
      const agent = await connectTestAgent(backend.url, agentToken);
      // The same agent on several connections (as after reconnects): a capture is its agent's only.
      await agent.request(
        helloMessage({ capture: { id: captureId, startedAt: new Date().toISOString(), reason: 'agent-start' } }),
      );
      agents.push(agent);
    }
    const perAgent = 10;
    await Promise.all(
      agents.map(async (agent) => {
        const batches = Array.from({ length: perAgent }, () =>
          batchMessage(captureId, [{ ...postExchange, count: 3 }]),
        );
        for (const batch of batches) agent.send(batch);
        for (const batch of batches) expect(await agent.next(10_000)).toEqual({ type: 'ack', batchId: batch.batchId });
      }),
    );
    expect(await undocumented(captureId)).toEqual([
      {
        method: 'POST',
        path: '/posts',
        interactions: agents.length * perAgent * 3,
        count: agents.length * perAgent * 3 * 2,
      },
    ]);
    await Promise.all(agents.map((agent) => agent.close()));
  });

  it('answers a bad message with an error naming the problem, writes nothing, and closes after repeated bad messages', async () => {
    const { agent, captureId } = await openAgent();
    const observationsBefore = await rowCount('observations');
    const good = batchMessage(captureId, [postExchange]);
    const badStatus = { ...good, observations: [{ ...good.observations[0], status: 42 }] };
    expect(await agent.request(JSON.stringify(badStatus))).toEqual({
      type: 'error',
      code: 'invalid-message',
      batchId: good.batchId,
      retryable: false,
      message: 'observations[0].status must be an integer 100-599',
    });
    expect(await agent.request('{not json')).toMatchObject({ type: 'error', message: 'message is not valid JSON' });
    // A good message in between resets the count of bad ones.
    expect(await agent.request(good)).toEqual({ type: 'ack', batchId: good.batchId });
    const unknownShape = batchMessage(captureId, [{ ...postExchange, request: { neverSentBefore: true } }]);
    unknownShape.shapes = {};
    expect(await agent.request(unknownShape)).toMatchObject({
      type: 'error',
      message: expect.stringMatching(/^observations\[0\]\.request\.shape \S+ is an unknown shape/),
    });
    const forged = batchMessage(captureId, [{ ...postExchange, request: { forged: 1 } }]);
    const [firstKey] = Object.keys(forged.shapes);
    forged.shapes[firstKey as string] = { kind: 'number' };
    expect(await agent.request(forged)).toMatchObject({
      type: 'error',
      message: expect.stringContaining('does not match its fingerprint'),
    });
    expect(
      await agent.request({ type: 'rules', captureId: '00000000-0000-4000-8000-000000000000', rules: [] }),
    ).toMatchObject({
      type: 'error',
      message: expect.stringContaining('is not a capture of this project'),
    });
    expect(await agent.closed).toBe(1008);
    // Only the good batch was written: one new row (the same key as before in a new capture).
    expect(await rowCount('observations')).toBe(observationsBefore + 1);
  });

  it('refuses a message over the size limit with an error naming its batch, for good', async () => {
    const { agent, captureId } = await openAgent();
    const batch = batchMessage(captureId, [postExchange]);
    const huge = JSON.stringify({ ...batch, padding: 'x'.repeat(4 * 1024 * 1024 + 10) });
    expect(await agent.request(huge)).toMatchObject({
      type: 'error',
      code: 'too-large',
      retryable: false,
      batchId: batch.batchId,
    });
    const good = batchMessage(captureId, [postExchange]);
    expect(await agent.request(good)).toEqual({ type: 'ack', batchId: good.batchId });
    await agent.close();
  });

  it('wants a hello first and checks the protocol version', async () => {
    const agent = await connectTestAgent(backend.url, agentToken);
    expect(await agent.request(batchMessage('00000000-0000-4000-8000-000000000000', [postExchange]))).toMatchObject({
      type: 'error',
      code: 'hello-required',
    });
    expect(await agent.request(helloMessage({ protocol: 99 }))).toMatchObject({
      type: 'error',
      code: 'refused',
      message: expect.stringContaining('protocol 99'),
    });
    expect(await agent.closed).toBe(1008);
  });

  it('limits an agent token to its environments', async () => {
    const agent = await connectTestAgent(backend.url, agentToken);
    expect(await agent.request(helloMessage({ environment: { kind: 'production', build: 'b1' } }))).toMatchObject({
      type: 'error',
      code: 'refused',
      message: 'environment.kind production is not allowed for this token (allowed: local, ci)',
    });
    expect(await agent.closed).toBe(1008);
  });

  it('refuses connections without an agent token', async () => {
    await expect(connectTestAgent(backend.url, null)).rejects.toMatchObject({ status: 401 });
    await expect(connectTestAgent(backend.url, 'spk_unknown')).rejects.toMatchObject({ status: 401 });
    await expect(connectTestAgent(backend.url, readToken)).rejects.toMatchObject({ status: 403 });
    await expect(connectTestAgent(backend.url, backend.adminToken)).rejects.toMatchObject({ status: 403 });
  });

  it('records captures from hello and capture messages, newest first, with their environment', async () => {
    const agent = await connectTestAgent(backend.url, agentToken);
    const hello = helloMessage({ environment: { kind: 'ci', pullRequest: '42', commit: 'abc123' }, rules: ['GET /'] });
    await agent.request(hello);
    const next = {
      id: '11111111-1111-4111-8111-111111111111',
      startedAt: new Date(Date.now() + 1000).toISOString(),
      reason: 'command-restart' as const,
    };
    // The previous capture's end is acknowledged, so that the agent stops resending it.
    expect(
      await agent.request({
        type: 'capture',
        capture: next,
        previous: { id: hello.capture.id, endedAt: new Date().toISOString() },
      }),
    ).toEqual({ type: 'capture-ended', captureId: hello.capture.id });
    const batch = batchMessage(next.id, [postExchange]);
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    const { body } = await backend.api<
      Array<{
        id: string;
        endedAt: string | null;
        environment: unknown;
        pullRequest: string | null;
        commit: string | null;
        rules: string[];
        interactions: number;
      }>
    >('GET', '/projects/ingest/captures?limit=2', undefined, readToken);
    expect(body.map((c) => c.id)).toEqual([next.id, hello.capture.id]);
    expect(body[0]).toMatchObject({
      environment: { kind: 'ci', name: 'PR #42' },
      pullRequest: '42',
      commit: 'abc123',
      rules: ['GET /'],
      endedAt: null,
      interactions: 1,
    });
    expect(body[1]?.endedAt).not.toBeNull();
    await agent.close();
  });

  it('applies the rules in effect on every view, so a rule added later hides traffic already captured', async () => {
    const { agent, captureId } = await openAgent();
    const batch = batchMessage(captureId, [
      postExchange,
      { method: 'GET', path: '/style.css', status: 200 },
      { method: 'OPTIONS', path: '/posts', status: 204 },
    ]);
    await agent.request(batch);
    expect((await undocumented(captureId)).map((u) => `${u.method} ${u.path}`)).toEqual([
      'OPTIONS /posts',
      'POST /posts',
      'GET /style.css',
    ]);
    agent.send({ type: 'rules', captureId, rules: ['GET (.*).css', 'OPTIONS (.*)', 'NOT A RULE'] });
    // The next acknowledged batch proves the rules message before it was handled.
    const later = batchMessage(captureId, []);
    expect(await agent.request(later)).toEqual({ type: 'ack', batchId: later.batchId });
    expect((await undocumented(captureId)).map((u) => `${u.method} ${u.path}`)).toEqual(['POST /posts']);
    const { body } = await backend.api<Array<{ id: string; rules: string[]; interactions: number }>>(
      'GET',
      `/projects/ingest/captures/${captureId}`,
      undefined,
      readToken,
    );
    expect(body).toMatchObject({ rules: ['GET (.*).css', 'OPTIONS (.*)', 'NOT A RULE'], interactions: 1 });
    await agent.close();
  });

  it('adds up noise counts apart from endpoints, and keeps the largest count of distinct paths', async () => {
    const { agent, captureId } = await openAgent();
    const first = { ...batchMessage(captureId, [postExchange]), unmatched: { requests: 900, paths: 40 } };
    expect(await agent.request(first)).toEqual({ type: 'ack', batchId: first.batchId });
    const second = { ...batchMessage(captureId, []), unmatched: { requests: 334, paths: 51 } };
    expect(await agent.request(second)).toEqual({ type: 'ack', batchId: second.batchId });
    // A resend is a duplicate: its counts are not added again.
    expect(await agent.request(second)).toEqual({ type: 'ack', batchId: second.batchId, duplicate: true });
    const { body } = await backend.api<CaptureResponse>(
      'GET',
      `/projects/ingest/captures/${captureId}`,
      undefined,
      readToken,
    );
    expect(body).toMatchObject({ unmatched: { requests: 1234, paths: 51 }, interactions: 1 });
    expect((await undocumented(captureId)).map((u) => `${u.method} ${u.path}`)).toEqual(['POST /posts']);
    await agent.close();
  });

  it('regroups rows stored under literal paths when the agent learns their template, and stores later ones under it', async () => {
    const { agent, captureId } = await openAgent();
    // Sent while the position was undecided (one value each), then learned.
    const early = batchMessage(captureId, [
      { method: 'GET', path: '/users/dave', status: 200, response: { login: 'x' } },
    ]);
    expect(await agent.request(early)).toEqual({ type: 'ack', batchId: early.batchId });
    expect((await undocumented(captureId)).map((u) => u.path)).toEqual(['/users/dave']);
    agent.send({ type: 'learned', captureId, templates: ['/users/{user}', '/repos/{owner}/{repo}'] });
    // A batch spooled before the agent learned the templates arrives after the learned message.
    const late = batchMessage(captureId, [
      { method: 'GET', path: '/users/alice', status: 200, response: { login: 'x' } },
      { method: 'GET', path: '/users/bob', status: 200, response: { login: 'x' } },
      { method: 'GET', path: '/repos/carol/web', status: 200, response: { name: 'x' } },
      { method: 'GET', path: '/users/me', status: 200, response: { login: 'x' } },
    ]);
    expect(await agent.request(late)).toEqual({ type: 'ack', batchId: late.batchId });
    expect((await undocumented(captureId)).map((u) => `${u.method} ${u.path} ${u.interactions}`).sort()).toEqual([
      'GET /repos/{owner}/{repo} 1',
      'GET /users/{user} 4',
    ]);
    const client = new pg.Client({ connectionString: backend.databaseUrl });
    await client.connect();
    try {
      const literal = await client.query(
        `SELECT count(*)::int AS n FROM observations WHERE capture_id = $1 AND (path LIKE '%alice%' OR path LIKE '%bob%' OR path LIKE '%carol%' OR path LIKE '%dave%')`,
        [captureId],
      );
      expect(literal.rows[0]).toEqual({ n: 0 });
      const endpoints = await client.query(
        `SELECT count(*)::int AS n FROM capture_endpoints WHERE capture_id = $1 AND path LIKE '%dave%'`,
        [captureId],
      );
      expect(endpoints.rows[0]).toEqual({ n: 0 });
    } finally {
      await client.end();
    }
    // A learned message for another project's (or no) capture is refused.
    expect(
      await agent.request({
        type: 'learned',
        captureId: '00000000-0000-4000-8000-000000000000',
        templates: ['/users/{user}'],
      }),
    ).toMatchObject({
      type: 'error',
      message: expect.stringContaining('is not a capture of this project'),
    });
    await agent.close();
  });

  it('joins a route stored under other parameter names to the learned template, its own 404 and 429 too', async () => {
    const { agent, captureId } = await openAgent();
    // Before `/{name}/components/trim` was learned, one value went out under a template of its own
    // naming (`{id}`, answered 429) and one was held literal (answered 404).
    const early = batchMessage(captureId, [
      { method: 'GET', path: '/{id}/components/trim', status: 429, response: { message: 'x' } },
      { method: 'GET', path: '/heidi-blue/components/trim', status: 404, response: { message: 'x' } },
      { method: 'GET', path: '/{id}/components/rim', status: 200, response: { rim: 'x' } },
      { method: 'GET', path: '/{id}/vehicle/{id2}', status: 200, response: { vin: 'x' } },
    ]);
    expect(await agent.request(early)).toEqual({ type: 'ack', batchId: early.batchId });
    agent.send({
      type: 'learned',
      captureId,
      templates: ['/{name}/components/trim', '/{name}/vehicle'],
      covers: {
        '/{name}/components/trim': [pathDigest(captureId, '/heidi-blue/components/trim')],
        '/{name}/vehicle': [],
      },
    });
    // Later rows under the other name (a batch spooled before the learning) are stored under it too.
    const late = batchMessage(captureId, [
      { method: 'GET', path: '/{id}/components/trim', status: 200, response: { trim: 'x' } },
    ]);
    expect(await agent.request(late)).toEqual({ type: 'ack', batchId: late.batchId });
    // Another route (`/rim`), and a template with another parameter more, stay apart.
    expect((await undocumented(captureId)).map((u) => `${u.method} ${u.path} ${u.interactions}`).sort()).toEqual([
      'GET /{id}/components/rim 1',
      'GET /{id}/vehicle/{id2} 1',
      'GET /{name}/components/trim 3',
    ]);
    const client = new pg.Client({ connectionString: backend.databaseUrl });
    await client.connect();
    try {
      const rows = await client.query<{ path: string; status: number }>(
        `SELECT path, status FROM observations WHERE capture_id = $1 AND path LIKE '%trim' ORDER BY status`,
        [captureId],
      );
      expect(rows.rows).toEqual([
        { path: '/{name}/components/trim', status: 200 },
        { path: '/{name}/components/trim', status: 404 },
        { path: '/{name}/components/trim', status: 429 },
      ]);
    } finally {
      await client.end();
    }
    await agent.close();
  });
});
