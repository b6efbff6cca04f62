import type { AgentResponse, ProjectResponse, TokenResponse } from '@spectator/shared';
import pg from 'pg';
import pino from 'pino';
import { AgentsRepository } from '../src/agents/agents.repository';
import { AgentsService } from '../src/agents/agents.service';
import { createDataSource } from '../src/database/data-source';
import { EventsRepository } from '../src/events/events.repository';
import { EventsService } from '../src/events/events.service';
import type { Runtime } from '../src/config/runtime';
import { apiCall } from './support';
import { connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
import { startTestBackend, startTestReplica, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';
import { listenToEvents } from './support/events-client';

// Two replicas on one database: agents connect to `first`, the list is read from `second`.
let first: TestBackend;
let second: TestBackend;
let db: pg.Client;
const tokens = { agent: '', read: '', otherRead: '' };

async function agents(query = ''): Promise<AgentResponse[]> {
  const response = await apiCall<AgentResponse[]>(second.url, tokens.read, 'GET', `/projects/fleet/agents${query}`);
  expect(response.status).toBe(200);
  return response.body;
}

async function agentByKey(key: string): Promise<AgentResponse | undefined> {
  return (await agents()).find((a) => a.agentKey === key);
}

async function connect(
  agentId: string,
  environment: Parameters<typeof helloMessage>[0] = {},
): Promise<{ agent: TestAgent; captureId: string }> {
  const agent = await connectTestAgent(first.url, tokens.agent);
  const hello = helloMessage({ agentId, ...environment });
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  return { agent, captureId: hello.capture.id };
}

beforeAll(async () => {
  first = await startTestBackend();
  second = await startTestReplica(first);
  for (const slug of ['fleet', 'other'])
    expect((await first.api<ProjectResponse>('POST', '/projects', { slug, name: slug })).status).toBe(201);
  tokens.agent = (await first.api<TokenResponse>('POST', '/projects/fleet/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  tokens.read = (await first.api<TokenResponse>('POST', '/projects/fleet/tokens', { name: 'dashboard', scope: 'read' }))
    .body.token as string;
  tokens.otherRead = (
    await first.api<TokenResponse>('POST', '/projects/other/tokens', { name: 'other', scope: 'read' })
  ).body.token as string;
  db = new pg.Client({ connectionString: first.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await second.close();
  await first.close();
});

describe('GET /projects/{p}/agents', () => {
  it('lists an agent after its hello as connected, with environment, commit and build of its capture, on another replica too', async () => {
    expect(await agents()).toEqual([]);
    const { agent, captureId } = await connect('ci-runner', {
      environment: { kind: 'ci', pullRequest: '42', commit: 'abc123', build: 'b-7' },
      agentVersion: '1.2.3',
    });
    const listed = await agentByKey('ci-runner');
    expect(listed).toEqual({
      id: expect.any(String),
      agentKey: 'ci-runner',
      version: '1.2.3',
      environment: { kind: 'ci', name: 'PR #42' },
      pullRequest: '42',
      commit: 'abc123',
      build: 'b-7',
      currentCaptureId: captureId,
      firstSeen: expect.any(String),
      lastSeen: expect.any(String),
      connected: true,
    });
    expect(Date.parse((listed as AgentResponse).lastSeen)).toBeGreaterThanOrEqual(
      Date.parse((listed as AgentResponse).firstSeen),
    );

    await agent.close();
    const closed = await eventually(
      () => agentByKey('ci-runner'),
      (a) => a?.connected === false,
      5000,
    );
    expect(Date.parse((closed as AgentResponse).lastSeen)).toBeGreaterThanOrEqual(
      Date.parse((listed as AgentResponse).lastSeen),
    );
  });

  it('follows the newest capture: a reconnect with a new commit moves environment, commit and currentCaptureId', async () => {
    const { agent: before } = await connect('stage', { environment: { kind: 'staging', commit: 'old' } });
    await before.close();
    const { agent, captureId } = await connect('stage', {
      environment: { kind: 'staging', commit: 'new', build: '2' },
    });
    expect(await agentByKey('stage')).toMatchObject({
      environment: { kind: 'staging', name: 'staging' },
      commit: 'new',
      build: '2',
      currentCaptureId: captureId,
      connected: true,
    });
    await agent.close();
  });

  it('tells dashboards on every replica when an agent connects and disconnects (agent.connection)', async () => {
    const dashboard = await listenToEvents(second.url, 'fleet', tokens.read, 'header');
    const otherProject = await listenToEvents(second.url, 'other', tokens.otherRead, 'header');
    try {
      const { agent } = await connect('announced');
      const agentId = (await agentByKey('announced'))?.id;
      await eventually(
        () => dashboard.events,
        (events) => events.some((e) => e.type === 'agent.connection' && e.agentId === agentId && e.connected),
      );
      await agent.close();
      await eventually(
        () => dashboard.events,
        (events) => events.some((e) => e.type === 'agent.connection' && e.agentId === agentId && !e.connected),
      );
      // Only this agent's events: an agent of an earlier test may still be announced leaving.
      expect(dashboard.events.filter((e) => e.type === 'agent.connection' && e.agentId === agentId)).toEqual([
        { type: 'agent.connection', agentId, connected: true },
        { type: 'agent.connection', agentId, connected: false },
      ]);
      expect(otherProject.events.filter((e) => e.type === 'agent.connection')).toEqual([]);
    } finally {
      dashboard.close();
      otherProject.close();
    }
  });

  it('keeps an agent connected while one of its connections is open (a reconnect before the old close)', async () => {
    const { agent: old } = await connect('flappy');
    const { agent: fresh } = await connect('flappy');
    await old.close();
    // Give the old connection's close time to be recorded, then it must still count as connected.
    await eventually(
      async () =>
        (
          await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM agent_connections k JOIN agents a ON a.id = k.agent_id WHERE a.agent_key = 'flappy' AND k.closed_at IS NOT NULL`,
          )
        ).rows[0]?.n,
      (n) => n === 1,
      5000,
    );
    expect(await agentByKey('flappy')).toMatchObject({ connected: true });
    await fresh.close();
    await eventually(
      () => agentByKey('flappy'),
      (a) => a?.connected === false,
      5000,
    );
  });

  it('treats an open connection whose replica stopped refreshing its heartbeat as not connected', async () => {
    const { agent } = await connect('orphan');
    expect(await agentByKey('orphan')).toMatchObject({ connected: true });
    // What a replica that died leaves behind: closed_at never set, heartbeat no longer refreshed.
    await db.query(
      `UPDATE agent_connections SET heartbeat_at = now() - interval '91 seconds' WHERE agent_id = (SELECT id FROM agents WHERE agent_key = 'orphan')`,
    );
    expect(await agentByKey('orphan')).toMatchObject({ connected: false });
    await db.query(
      `UPDATE agent_connections SET heartbeat_at = now() - interval '60 seconds' WHERE agent_id = (SELECT id FROM agents WHERE agent_key = 'orphan')`,
    );
    expect(await agentByKey('orphan')).toMatchObject({ connected: true });
    await agent.close();
  });

  it('refreshes the heartbeat and last seen of an open connection on a timer, and stops on close', async () => {
    const { agent } = await connect('beating');
    const agentId = (await agentByKey('beating'))?.id as string;
    await agent.close();
    await eventually(
      () => agentByKey('beating'),
      (a) => a?.connected === false,
      5000,
    );
    const ds = createDataSource(first.databaseUrl, { poolSize: 2 });
    await ds.initialize();
    try {
      const runtime = { log: pino({ level: 'silent' }) } as unknown as Runtime;
      const service = new AgentsService(
        new AgentsRepository(ds),
        runtime,
        new EventsService(new EventsRepository(ds), runtime),
      );
      const presence = service.presence(50);
      await presence.open(agentId);
      expect(await agentByKey('beating')).toMatchObject({ connected: true });
      // Both aged in one statement: a beat between two statements would leave a fresh heartbeat beside an old last seen.
      // The agents row is updated from the connection's RETURNING, so the connection is locked first, in
      // the same order as the beat's statement (an unread CTE runs last: the opposite order deadlocked).
      await db.query(
        `WITH k AS (UPDATE agent_connections SET heartbeat_at = now() - interval '91 seconds' WHERE agent_id = $1 AND closed_at IS NULL RETURNING agent_id)
         UPDATE agents SET last_seen_at = now() - interval '1 hour' WHERE id IN (SELECT agent_id FROM k)`,
        [agentId],
      );
      // The timer brings the connection and its last seen back within a few intervals.
      await eventually(
        () => agentByKey('beating'),
        (a) => a?.connected === true && Date.now() - Date.parse(a.lastSeen) < 60_000,
        5000,
      );
      await presence.close();
      expect(await agentByKey('beating')).toMatchObject({ connected: false });
      const closedAt = (
        await db.query<{ at: Date }>('SELECT heartbeat_at AS at FROM agent_connections WHERE agent_id = $1', [agentId])
      ).rows[0]?.at;
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(
        (
          await db.query<{ at: Date }>('SELECT heartbeat_at AS at FROM agent_connections WHERE agent_id = $1', [
            agentId,
          ])
        ).rows[0]?.at,
      ).toEqual(closedAt);
    } finally {
      await ds.destroy();
    }
  });

  it('lists the most recently seen first and honours ?limit', async () => {
    const { agent } = await connect('newest');
    const keys = (await agents()).map((a) => a.agentKey);
    expect(keys[0]).toBe('newest');
    expect(new Set(keys).size).toBe(keys.length);
    const seen = (await agents()).map((a) => Date.parse(a.lastSeen));
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    expect((await agents('?limit=2')).map((a) => a.agentKey)).toEqual(keys.slice(0, 2));
    await agent.close();
  });

  it('needs a read token of the project, refuses a bad limit and answers 404 for an unknown project', async () => {
    expect((await apiCall(second.url, null, 'GET', '/projects/fleet/agents')).status).toBe(401);
    expect((await apiCall(second.url, tokens.agent, 'GET', '/projects/fleet/agents')).status).toBe(403);
    // Another project's token is told the project does not exist, as for an unknown slug.
    expect(await apiCall(second.url, tokens.otherRead, 'GET', '/projects/fleet/agents')).toMatchObject({
      status: 404,
      body: { message: 'project fleet does not exist' },
    });
    expect((await apiCall(second.url, second.adminToken, 'GET', '/projects/fleet/agents')).status).toBe(200);
    expect(await apiCall(second.url, tokens.read, 'GET', '/projects/fleet/agents?limit=0')).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining('limit') },
    });
    expect(await apiCall(second.url, second.adminToken, 'GET', '/projects/nope/agents')).toMatchObject({
      status: 404,
      body: { message: 'project nope does not exist' },
    });
    expect(await apiCall(second.url, tokens.otherRead, 'GET', '/projects/other/agents')).toMatchObject({
      status: 200,
      body: [],
    });
  });
});
