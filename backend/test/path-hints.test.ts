import type {
  DashboardEvent,
  PathHintCreatedResponse,
  PathHintResponse,
  ProjectResponse,
  TokenResponse,
  UndocumentedEndpointResponse,
} from '@spectator/shared';
import pg from 'pg';
import { MAX_PATH_HINTS } from '../src/paths/path-hints.service';
import { batchMessage, connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
import { startTestBackend, startTestReplica, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';
import { listenToEvents } from './support/events-client';
import { tablesContaining } from './support/privacy';

// "This segment is a parameter": a template stated in the dashboard regroups what is stored under
// its literal paths at once, reaches agents, and never takes paths from a documented template.

let backend: TestBackend;
let agent: TestAgent;
let captureId: string;
let readToken: string;

const hints = (route = '', method = 'GET', body?: unknown, token?: string) =>
  backend.api<unknown>(method, `/projects/hints/path-hints${route}`, body, token);
const undocumented = async (): Promise<UndocumentedEndpointResponse[]> =>
  (await backend.api<UndocumentedEndpointResponse[]>('GET', `/projects/hints/captures/${captureId}/undocumented`)).body;

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'hints', name: 'Hints' })).status).toBe(201);
  const token = (await backend.api<TokenResponse>('POST', '/projects/hints/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  readToken = (await backend.api<TokenResponse>('POST', '/projects/hints/tokens', { name: 'reader', scope: 'read' }))
    .body.token as string;
  agent = await connectTestAgent(backend.url, token);
  const hello = helloMessage();
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  captureId = hello.capture.id;
  const batch = batchMessage(captureId, [
    { method: 'GET', path: '/images/alice-cli-k3v', status: 200, response: { name: 'x' } },
    { method: 'GET', path: '/images/bob-web-k3v', status: 200, response: { name: 'x' }, count: 2 },
    { method: 'GET', path: '/images/latest', status: 200, response: { name: 'x' } },
    { method: 'GET', path: '/users/{userId}', status: 200, response: { id: 1 } },
  ]);
  expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
  const commit = await backend.api('POST', '/projects/hints/documentation', {
    captureId,
    endpoints: [
      { method: 'GET', path: '/images/latest', documentBodies: true },
      { method: 'GET', path: '/users/{userId}', documentBodies: true },
    ],
  });
  expect(commit.status).toBe(201);
});
afterAll(async () => {
  await agent?.close();
  await backend?.close();
});

describe('path hints', () => {
  it('regroup the stored literal paths at once, leave documented paths alone, and tell dashboards', async () => {
    const dashboard = await listenToEvents(backend.url, 'hints', readToken, 'header');
    expect((await hints('', 'POST', { template: '/images/{image}' }, readToken)).status).toBe(403);
    const { status, body } = await hints('', 'POST', { template: '/images/{image}' });
    expect(status).toBe(201);
    expect(body).toEqual({
      template: '/images/{image}',
      createdBy: expect.any(String),
      createdAt: expect.any(String),
      regrouped: 4,
    } satisfies PathHintCreatedResponse);
    expect(await undocumented()).toEqual([{ method: 'GET', path: '/images/{image}', interactions: 3, count: 3 }]);
    expect(await tablesContaining(backend.databaseUrl, 'k3v')).toEqual([]);
    const events = await eventually(
      () => dashboard.events,
      (list) => list.some((e) => e.type === 'paths.hinted'),
    );
    expect(events.find((e) => e.type === 'paths.hinted')).toEqual({
      type: 'paths.hinted',
      template: '/images/{image}',
      regrouped: 4,
    } satisfies DashboardEvent);
    dashboard.close();
  });

  it('store rows an agent sends before the hint reached it under the hint, documented paths apart', async () => {
    expect((await hints('', 'POST', { template: '/images/{image}' })).status).toBe(201);
    // The agent had not heard of the hint yet: it sends literal paths.
    const late = batchMessage(captureId, [
      { method: 'GET', path: '/images/carol-api-k3v', status: 200, response: { name: 'x' } },
      { method: 'GET', path: '/images/latest', status: 200, response: { name: 'x' } },
    ]);
    expect(await agent.request(late)).toMatchObject({ type: 'ack' });
    expect(await undocumented()).toEqual([{ method: 'GET', path: '/images/{image}', interactions: 4, count: 4 }]);
    expect(await tablesContaining(backend.databaseUrl, 'k3v')).toEqual([]);
  });

  it('from service.yml keep the paths stated literal apart: `/teams/me` beside `/teams/{team}`', async () => {
    const late = batchMessage(captureId, [
      { method: 'GET', path: '/teams/me', status: 200, response: { plan: 'x' } },
      { method: 'GET', path: '/teams/dave-k3v', status: 200, response: { slug: 'x' } },
    ]);
    expect(await agent.request(late)).toMatchObject({ type: 'ack' });
    // service.yml paths: [/teams/{team}, /teams/me], as the agent reports them.
    agent.send({ type: 'learned', captureId, templates: ['/teams/{team}'], hint: true, literals: ['/teams/me'] });
    const teams = async () =>
      (await undocumented()).filter((e) => e.path.startsWith('/teams/')).sort((a, b) => (a.path < b.path ? -1 : 1));
    const expected = [
      { method: 'GET', path: '/teams/me', interactions: 1, count: 1 },
      { method: 'GET', path: '/teams/{team}', interactions: 1, count: 1 },
    ];
    expect(await eventually(teams, (list) => JSON.stringify(list) === JSON.stringify(expected))).toEqual(expected);
    // Later rows under the literal path, and under a value, as an agent that has not heard of the hint sends them.
    const later = batchMessage(captureId, [
      { method: 'GET', path: '/teams/me', status: 200, response: { plan: 'x' } },
      { method: 'GET', path: '/teams/erin-k3v', status: 200, response: { slug: 'x' } },
    ]);
    expect(await agent.request(later)).toMatchObject({ type: 'ack' });
    expect(await teams()).toEqual([
      { method: 'GET', path: '/teams/me', interactions: 2, count: 2 },
      { method: 'GET', path: '/teams/{team}', interactions: 2, count: 2 },
    ]);
    expect(await tablesContaining(backend.databaseUrl, 'k3v')).toEqual([]);
  });

  it('reach connected agents at once: documented templates first', async () => {
    // The documentation commit before the hint was pushed too; the newest push has both.
    await eventually(
      () => agent.templates,
      (pushed) => pushed.some((m) => m.templates.includes('/images/{image}')),
    );
    expect(agent.templates.at(-1)).toEqual({
      type: 'templates',
      templates: ['/images/latest', '/users/{userId}', '/images/{image}'],
    });
  });

  it('added on one replica apply to the batches another replica stores next (its read of them forgotten)', async () => {
    const replica = await startTestReplica(backend);
    const token = (
      await backend.api<TokenResponse>('POST', '/projects/hints/tokens', { name: 'replica agent', scope: 'agent' })
    ).body.token as string;
    const other = await connectTestAgent(replica.url, token);
    try {
      const hello = helloMessage({ agentId: 'replica-agent' });
      expect(await other.request(hello)).toMatchObject({ type: 'welcome' });
      const avatar = (path: string) =>
        batchMessage(hello.capture.id, [{ method: 'GET', path, status: 200, response: { url: 'x' } }]);
      // The replica reads the project's hints for this batch (none covers it) and keeps what it read.
      expect(await other.request(avatar('/avatars/small'))).toMatchObject({ type: 'ack' });
      expect((await hints('', 'POST', { template: '/avatars/{avatar}' })).status).toBe(201);
      // The replica heard of the hint (its agent is sent the templates): its next batch goes under it.
      await eventually(
        () => other.templates,
        (pushed) => pushed.some((m) => m.templates.includes('/avatars/{avatar}')),
      );
      expect(await other.request(avatar('/avatars/erin-k3v'))).toMatchObject({ type: 'ack' });
      const stored = await backend.api<UndocumentedEndpointResponse[]>(
        'GET',
        `/projects/hints/captures/${hello.capture.id}/undocumented`,
      );
      expect(stored.body).toEqual([{ method: 'GET', path: '/avatars/{avatar}', interactions: 2, count: 2 }]);
      expect(await tablesContaining(backend.databaseUrl, 'k3v')).toEqual([]);
    } finally {
      await other.close();
      await replica.close();
      await hints(`?template=${encodeURIComponent('/avatars/{avatar}')}`, 'DELETE');
    }
  });

  it('are listed, and sent to agents after the documented templates', async () => {
    expect((await hints()).body).toEqual([
      { template: '/images/{image}', createdBy: expect.any(String), createdAt: expect.any(String) },
    ] satisfies PathHintResponse[]);
    const late = await connectTestAgent(
      backend.url,
      (await backend.api<TokenResponse>('POST', '/projects/hints/tokens', { name: 'agent 2', scope: 'agent' })).body
        .token as string,
    );
    expect(await late.request(helloMessage())).toMatchObject({
      type: 'welcome',
      templates: ['/images/latest', '/users/{userId}', '/images/{image}'],
    });
    await late.close();
  });

  it('lose to documented templates and refuse what is not a template, naming it', async () => {
    expect(await hints('', 'POST', { template: '/users/{user}' })).toEqual({
      status: 409,
      body: expect.objectContaining({
        message: 'template /users/{user} is covered by the documented /users/{userId}, which wins over a hint',
      }),
    });
    expect(await hints('', 'POST', { template: 'images/{image}' })).toEqual({
      status: 400,
      body: expect.objectContaining({ message: 'template must start with /' }),
    });
    expect(await hints('', 'POST', { template: '/images/all' })).toEqual({
      status: 400,
      body: expect.objectContaining({ message: 'template /images/all has no {parameter}' }),
    });
  });

  it('can be forgotten', async () => {
    expect((await hints(`?template=${encodeURIComponent('/images/{image}')}`, 'DELETE')).status).toBe(204);
    expect((await hints()).body).toEqual([]);
    expect(await hints(`?template=${encodeURIComponent('/images/{image}')}`, 'DELETE')).toEqual({
      status: 404,
      body: expect.objectContaining({ message: 'project hints has no path hint /images/{image}' }),
    });
  });

  it('are kept up to a cap per project; one more is refused, naming the cap', async () => {
    const db = new pg.Client({ connectionString: backend.databaseUrl });
    await db.connect();
    try {
      // All but one of the cap stored directly: stating each would regroup the project each time.
      await db.query(
        `INSERT INTO path_hints (project_id, template, created_by)
         SELECT p.id, '/filler/' || n || '/{id}', 'test' FROM projects p, generate_series(1, $1::int - 1) AS n WHERE p.slug = 'hints'`,
        [MAX_PATH_HINTS],
      );
      expect((await hints('', 'POST', { template: '/last/{id}' })).status).toBe(201);
      expect(await hints('', 'POST', { template: '/one-more/{id}' })).toEqual({
        status: 400,
        body: expect.objectContaining({ message: `project hints already has ${MAX_PATH_HINTS} path hints` }),
      });
      expect((await hints()).body).toHaveLength(MAX_PATH_HINTS);
    } finally {
      await db.query(`DELETE FROM path_hints WHERE project_id = (SELECT id FROM projects WHERE slug = 'hints')`);
      await db.end();
    }
  });
});
