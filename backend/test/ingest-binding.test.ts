import type { AgentMessage, ProjectResponse, TokenResponse, UndocumentedEndpointResponse } from '@spectator/shared';
import pg from 'pg';
import { batchMessage, connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
import { startTestBackend, type TestBackend } from './support';

// Issue 15, item 1: a token limited to `ci` could act on a production capture by its id (counts,
// rules, end) and take over the production agent's row by its agent key. Every message is now
// checked against the agent and environment of the connection.
let backend: TestBackend;
let db: pg.Client;
const tokens = { production: '', ci: '', read: '' };
const prodHello = helloMessage({
  agentId: 'prod-agent',
  environment: { kind: 'production', build: 'b-1' },
  rules: ['GET /health'],
});
const prodCapture = prodHello.capture.id;
let prodAgent: TestAgent;

const exchange = { method: 'GET', path: '/orders', status: 200, response: [{ id: 1 }] };

async function openCi(overrides: Parameters<typeof helloMessage>[0] = {}): Promise<TestAgent> {
  const agent = await connectTestAgent(backend.url, tokens.ci);
  expect(
    await agent.request(
      helloMessage({ agentId: 'ci-agent', environment: { kind: 'ci', pullRequest: '7' }, ...overrides }),
    ),
  ).toMatchObject({ type: 'welcome' });
  return agent;
}

async function prodState(): Promise<{
  interactions: number;
  rules: string[];
  endedAt: string | null;
  agentKey: string | null;
  environment: string;
}> {
  const { body, status } = await backend.api<UndocumentedEndpointResponse[]>(
    'GET',
    `/projects/bind/captures/${prodCapture}/undocumented`,
    undefined,
    tokens.read,
  );
  expect(status).toBe(200);
  const { rows } = await db.query<{
    rules: string[];
    ended_at: Date | null;
    agent_key: string | null;
    environment_kind: string;
  }>(
    'SELECT c.rules, c.ended_at, a.agent_key, c.environment_kind FROM captures c LEFT JOIN agents a ON a.id = c.agent_id WHERE c.id = $1',
    [prodCapture],
  );
  const row = rows[0];
  if (!row) throw new Error('production capture missing');
  return {
    interactions: body.reduce((sum, e) => sum + e.interactions, 0),
    rules: row.rules,
    endedAt: row.ended_at?.toISOString() ?? null,
    agentKey: row.agent_key,
    environment: row.environment_kind,
  };
}

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'bind', name: 'Bind' })).status).toBe(201);
  const token = async (name: string, body: object): Promise<string> =>
    (await backend.api<TokenResponse>('POST', '/projects/bind/tokens', { name, ...body })).body.token as string;
  tokens.production = await token('prod', { scope: 'agent', environments: ['production'] });
  tokens.ci = await token('ci', { scope: 'agent', environments: ['ci'] });
  tokens.read = await token('reader', { scope: 'read' });
  db = new pg.Client({ connectionString: backend.databaseUrl });
  await db.connect();
  prodAgent = await connectTestAgent(backend.url, tokens.production);
  expect(await prodAgent.request(prodHello)).toMatchObject({ type: 'welcome' });
  const batch = batchMessage(prodCapture, [exchange]);
  expect(await prodAgent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
});
afterAll(async () => {
  await prodAgent.close();
  await db.end();
  await backend.close();
});

const untouched = {
  interactions: 1,
  rules: ['GET /health'],
  endedAt: null,
  agentKey: 'prod-agent',
  environment: 'production',
};

describe('a connection acts only on the captures of its own agent and environment', () => {
  const hostile: Array<[string, () => AgentMessage]> = [
    ['a batch', () => ({ ...batchMessage(prodCapture, [{ ...exchange, count: 1000 }]) })],
    ['rules', () => ({ type: 'rules', captureId: prodCapture, rules: ['(.*)'] })],
    ['capture-end', () => ({ type: 'capture-end', captureId: prodCapture, endedAt: new Date().toISOString() })],
    ['learned templates', () => ({ type: 'learned', captureId: prodCapture, templates: ['/orders/{id}'] })],
    [
      'a capture with its id',
      () => ({
        type: 'capture',
        capture: { id: prodCapture, startedAt: new Date().toISOString(), reason: 'command-restart' },
      }),
    ],
    [
      'a capture that ends it as the previous one',
      () => ({
        type: 'capture',
        capture: {
          id: '22222222-2222-4222-8222-222222222222',
          startedAt: new Date().toISOString(),
          reason: 'command-restart',
        },
        previous: { id: prodCapture, endedAt: new Date().toISOString() },
      }),
    ],
  ];

  it.each(hostile)('refuses %s for another environment’s capture, and changes nothing', async (_what, make) => {
    const agent = await openCi();
    const message = make();
    const answer = await agent.request(message);
    expect(answer).toMatchObject({
      type: 'error',
      code: 'refused',
      message: `captureId ${prodCapture} belongs to another agent or environment`,
    });
    if (message.type === 'batch') expect(answer).toMatchObject({ batchId: message.batchId });
    // A refused end names its capture, so that the agent drops it rather than resending it.
    if (message.type === 'capture-end') expect(answer).toMatchObject({ captureId: message.captureId });
    expect(await agent.closed).toBe(1008);
    expect(await prodState()).toEqual(untouched);
  });

  it('refuses a hello that names another environment’s capture', async () => {
    const agent = await connectTestAgent(backend.url, tokens.ci);
    const answer = await agent.request(
      helloMessage({
        agentId: 'ci-agent',
        environment: { kind: 'ci' },
        capture: { id: prodCapture, startedAt: new Date().toISOString(), reason: 'agent-start' },
        rules: ['(.*)'],
      }),
    );
    expect(answer).toMatchObject({
      type: 'error',
      code: 'refused',
      message: `captureId ${prodCapture} belongs to another agent or environment`,
    });
    expect(await agent.closed).toBe(1008);
    expect(await prodState()).toEqual(untouched);
  });

  it('refuses a hello of another project that names this project’s capture id (ids stay unique over projects)', async () => {
    // Captures are keyed (id, project_id) for a distributed PostgreSQL; the id is still one capture's.
    expect((await backend.api('POST', '/projects', { slug: 'bind-other', name: 'Other' })).status).toBe(201);
    const other = (
      await backend.api<TokenResponse>('POST', '/projects/bind-other/tokens', { name: 'a', scope: 'agent' })
    ).body.token as string;
    const agent = await connectTestAgent(backend.url, other);
    const answer = await agent.request(
      helloMessage({
        agentId: 'other-project-agent',
        environment: { kind: 'production', build: 'b-1' },
        capture: { id: prodCapture, startedAt: new Date().toISOString(), reason: 'agent-start' },
      }),
    );
    expect(answer).toMatchObject({
      type: 'error',
      code: 'refused',
      message: `captureId ${prodCapture} belongs to another agent or environment`,
    });
    expect(await agent.closed).toBe(1008);
    expect(await prodState()).toEqual(untouched);
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM captures WHERE id = $1', [
      prodCapture,
    ]);
    expect(rows[0]?.n).toBe(1);
  });

  it('refuses a hello that takes over another environment’s agent by its key', async () => {
    const agent = await connectTestAgent(backend.url, tokens.ci);
    expect(await agent.request(helloMessage({ agentId: 'prod-agent', environment: { kind: 'ci' } }))).toMatchObject({
      type: 'error',
      code: 'refused',
      message: 'agentId prod-agent is an agent of environment production, which this token may not report',
    });
    expect(await agent.closed).toBe(1008);
    const { rows } = await db.query<{ environment_kind: string; token: string }>(
      "SELECT a.environment_kind, t.name AS token FROM agents a JOIN tokens t ON t.id = a.token_id WHERE a.agent_key = 'prod-agent'",
    );
    expect(rows).toEqual([{ environment_kind: 'production', token: 'prod' }]);
    expect(await prodState()).toEqual(untouched);
  });

  it('refuses a capture of the same agent key in another environment (a CI pull request cannot write to another one)', async () => {
    const first = await openCi({ agentId: 'ci-runner', environment: { kind: 'ci', pullRequest: '1' } });
    const capture = '33333333-3333-4333-8333-333333333333';
    first.send({
      type: 'capture',
      capture: { id: capture, startedAt: new Date().toISOString(), reason: 'command-restart' },
    });
    const own = batchMessage(capture, [exchange]);
    expect(await first.request(own)).toEqual({ type: 'ack', batchId: own.batchId });
    await first.close();
    const second = await openCi({ agentId: 'ci-runner', environment: { kind: 'ci', pullRequest: '2' } });
    const batch = batchMessage(capture, [exchange]);
    expect(await second.request(batch)).toMatchObject({ type: 'error', code: 'refused', batchId: batch.batchId });
    expect(await second.closed).toBe(1008);
    // The same agent and environment after a reconnect goes on with its capture.
    const again = await openCi({ agentId: 'ci-runner', environment: { kind: 'ci', pullRequest: '1' } });
    const resumed = batchMessage(capture, [exchange]);
    expect(await again.request(resumed)).toEqual({ type: 'ack', batchId: resumed.batchId });
    await again.close();
  });

  it('still takes everything from the agent that opened the capture', async () => {
    const batch = batchMessage(prodCapture, [exchange]);
    expect(await prodAgent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    prodAgent.send({ type: 'rules', captureId: prodCapture, rules: ['GET /health', 'GET /ready'] });
    const later = batchMessage(prodCapture, []);
    expect(await prodAgent.request(later)).toEqual({ type: 'ack', batchId: later.batchId });
    expect(await prodState()).toEqual({ ...untouched, interactions: 2, rules: ['GET /health', 'GET /ready'] });
  });
});
