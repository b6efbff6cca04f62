import type {
  DashboardEvent,
  DocumentationResponse,
  TokenResponse,
  UndocumentedEndpointResponse,
} from '@spectator/shared';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';
import { startTestBackend, startTestReplica, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';
import { listenToEvents as listen } from './support/events-client';

let first: TestBackend;
let second: TestBackend;

beforeAll(async () => {
  first = await startTestBackend();
  // A second replica on the same database, with the same admin token.
  second = await startTestReplica(first);
});
afterAll(async () => {
  await second.close();
  await first.close();
});

describe('two replicas on one database', () => {
  it('work as one service: agents on both, events on both, one view of the counts', async () => {
    expect((await first.api('POST', '/projects', { slug: 'shared', name: 'Shared' })).status).toBe(201);
    const agentToken = (
      await second.api<TokenResponse>('POST', '/projects/shared/tokens', { name: 'agent', scope: 'agent' })
    ).body.token as string;
    const readToken = (
      await first.api<TokenResponse>('POST', '/projects/shared/tokens', { name: 'dashboard', scope: 'read' })
    ).body.token as string;

    const dashboardOnFirst = await listen(first.url, 'shared', readToken, 'header');
    const dashboardOnSecond = await listen(second.url, 'shared', readToken, 'protocol');
    expect(dashboardOnSecond.socket.protocol).toBe('spectator.v1');

    const agentOnFirst = await connectTestAgent(first.url, agentToken);
    const agentOnSecond = await connectTestAgent(second.url, agentToken);
    const hello = helloMessage();
    await agentOnFirst.request(hello);
    // The same agent's capture reported through the other replica (e.g. after a reconnect elsewhere).
    await agentOnSecond.request(helloMessage({ capture: hello.capture }));

    const exchange = { method: 'GET', path: '/posts', status: 200, response: [{ id: 1 }] };
    const batches = Array.from({ length: 10 }, () => batchMessage(hello.capture.id, [exchange]));
    await Promise.all(batches.map((batch, i) => (i % 2 === 0 ? agentOnFirst : agentOnSecond).request(batch)));

    for (const backend of [first, second]) {
      const { body } = await backend.api<UndocumentedEndpointResponse[]>(
        'GET',
        `/projects/shared/captures/${hello.capture.id}/undocumented`,
      );
      expect(body).toEqual([{ method: 'GET', path: '/posts', interactions: 10, count: 10 }]);
    }
    for (const dashboard of [dashboardOnFirst, dashboardOnSecond]) {
      await eventually(
        () => dashboard.events,
        (events) => events.some((e) => e.type === 'capture.updated'),
      );
      const started = dashboard.events.filter((e) => e.type === 'capture.started');
      expect(started).toEqual([
        {
          type: 'capture.started',
          captureId: hello.capture.id,
          environment: { kind: 'local', name: 'local' },
          startedAt: new Date(hello.capture.startedAt).toISOString(),
        },
      ]);
    }

    await agentOnFirst.request(
      batchMessage(hello.capture.id, [
        { method: 'POST', path: '/posts', status: 201, request: { title: 't' }, response: { id: 1, title: 't' } },
      ]),
    );
    const commit = await second.api<{ versions: Array<{ endpointId: string }> }>(
      'POST',
      '/projects/shared/documentation',
      {
        captureId: hello.capture.id,
        endpoints: [{ method: 'POST', path: '/posts', description: 'Create', documentBodies: true }],
      },
    );
    expect(commit.status).toBe(201);
    await eventually(
      () => dashboardOnFirst.events,
      (events) => events.some((e) => e.type === 'documentation.committed'),
    );
    expect(dashboardOnFirst.events.find((e) => e.type === 'documentation.committed')).toEqual({
      type: 'documentation.committed',
      endpointIds: [commit.body.versions[0]?.endpointId],
    });

    // A new agent connection hears about documented templates from either replica.
    const late = await connectTestAgent(first.url, agentToken);
    expect(await late.request(helloMessage())).toMatchObject({ type: 'welcome', templates: ['/posts'] });

    await Promise.all([agentOnFirst.close(), agentOnSecond.close(), late.close()]);
    dashboardOnFirst.close();
    dashboardOnSecond.close();
  });

  // PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more ("payload string too long"): a commit
  // sent its endpoint ids in the payload, and no dashboard heard of it.
  it('tell dashboards of a commit of 400 endpoints, with every endpoint id (a NOTIFY payload holds under 8,000 bytes)', async () => {
    expect((await first.api('POST', '/projects', { slug: 'large', name: 'Large' })).status).toBe(201);
    const agentToken = (
      await first.api<TokenResponse>('POST', '/projects/large/tokens', { name: 'agent', scope: 'agent' })
    ).body.token as string;
    const readToken = (
      await first.api<TokenResponse>('POST', '/projects/large/tokens', { name: 'dashboard', scope: 'read' })
    ).body.token as string;
    const dashboards = [
      await listen(first.url, 'large', readToken, 'header'),
      await listen(second.url, 'large', readToken, 'header'),
    ];

    const agent = await connectTestAgent(first.url, agentToken);
    const hello = helloMessage();
    await agent.request(hello);
    const paths = Array.from({ length: 400 }, (_, i) => `/resources-${String(i).padStart(3, '0')}/{resourceId}`);
    const batch = batchMessage(
      hello.capture.id,
      paths.map((path) => ({ method: 'GET', path, status: 200, response: { id: 1 } })),
    );
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    const { body: undocumented } = await first.api<UndocumentedEndpointResponse[]>(
      'GET',
      `/projects/large/captures/${hello.capture.id}/undocumented`,
    );
    expect(undocumented).toHaveLength(400);

    const commit = await second.api<DocumentationResponse>('POST', '/projects/large/documentation', {
      captureId: hello.capture.id,
      endpoints: paths.map((path) => ({ method: 'GET', path, documentBodies: true })),
    });
    expect(commit.status).toBe(201);
    const ids = commit.body.versions.map((v) => v.endpointId).sort();
    expect(ids).toHaveLength(400);
    for (const dashboard of dashboards) {
      const events = await eventually(
        () => dashboard.events,
        (list) => list.some((e) => e.type === 'documentation.committed'),
      );
      const committed = events.find(
        (e): e is Extract<DashboardEvent, { type: 'documentation.committed' }> => e.type === 'documentation.committed',
      );
      expect([...(committed?.endpointIds ?? [])].sort()).toEqual(ids);
    }
    await agent.close();
    for (const dashboard of dashboards) dashboard.close();
  });

  it('refuses dashboards without a read token of the project', async () => {
    await expect(listen(first.url, 'shared', 'spk_nope', 'header')).rejects.toMatchObject({ status: 401 });
    await expect(listen(first.url, 'missing', first.adminToken, 'header')).rejects.toMatchObject({ status: 404 });
  });
});
