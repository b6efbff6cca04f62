/**
 * The spec's walkthrough end to end: the real agent (wrapping the demo posts API as its command)
 * in front of the real backend, with deploy/service.yml ignoring the landing page.
 */
import { startAgent, type RunningAgent } from '@spectator/agent';
import {
  type DashboardEvent,
  type DiffResponse,
  type EndpointResponse,
  ROUTES,
  type TokenResponse,
  type UndocumentedEndpointResponse,
} from '@spectator/shared';
import path from 'node:path';
import WebSocket from 'ws';
import { startTestBackend, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';
import { tablesContaining } from './support/privacy';

const REPO = path.resolve(__dirname, '..', '..');
const CANARY = 'CANARY7731';

let backend: TestBackend;
let agent: RunningAgent;
let events: DashboardEvent[];
let dashboard: WebSocket;

const undocumented = async (captureId: string): Promise<UndocumentedEndpointResponse[]> =>
  (await backend.api<UndocumentedEndpointResponse[]>('GET', `/projects/demo/captures/${captureId}/undocumented`)).body;
const diffs = async (captureId: string): Promise<DiffResponse[]> =>
  (await backend.api<DiffResponse[]>('GET', `/projects/demo/captures/${captureId}/diffs`)).body;

async function post(body: unknown): Promise<Response> {
  return fetch(`${agent.proxyUrl}/posts?q=${CANARY}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-note': CANARY },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  backend = await startTestBackend();
  await backend.api('POST', '/projects', { slug: 'demo', name: 'Demo posts API' });
  const token = (
    await backend.api<TokenResponse>('POST', '/projects/demo/tokens', { name: 'local agent', scope: 'agent' })
  ).body.token as string;
  dashboard = new WebSocket(`${backend.url.replace(/^http/, 'ws')}${ROUTES.projectEvents('demo')}`, {
    headers: { authorization: `Bearer ${backend.adminToken}` },
  });
  events = [];
  dashboard.on('message', (data) => events.push(JSON.parse(data.toString()) as DashboardEvent));
  await new Promise((resolve, reject) => {
    dashboard.once('open', resolve);
    dashboard.on('error', reject); // a refused upgrade fails the hook, it does not throw in the process
  });
  agent = await startAgent({
    listen: '127.0.0.1:0',
    backend: backend.url,
    token,
    environment: { kind: 'local' },
    configPath: path.join(REPO, 'deploy', 'service.yml'),
    command: [process.execPath, path.join(REPO, 'deploy', 'demo-api', 'server.js')],
    logLevel: 'silent',
    tuning: { flushIntervalMs: 100, probeIntervalMs: 200, commandStdio: 'ignore', restartDelayMs: 100 },
  });
  // The wrapped app needs a moment to listen; the agent answers 503 until then. `GET /` is ignored traffic.
  await eventually(
    async () => (await fetch(`${agent.proxyUrl}/`)).status,
    (status) => status === 200,
  );
});
afterAll(async () => {
  dashboard?.close();
  await agent?.close();
  await backend?.close();
});

describe('the walkthrough', () => {
  let firstCapture: string;
  let endpointId: string;

  it('1-2: ignores the landing page and lists POST /posts as undocumented with count 4', async () => {
    firstCapture = agent.captureId();
    for (const asset of ['/', '/script.js', '/style.css', '/favicon.ico', '/db'])
      expect((await fetch(`${agent.proxyUrl}${asset}`)).status).toBeLessThan(500);
    await fetch(`${agent.proxyUrl}/db`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    for (const title of ['first', 'second']) {
      const created = await post({ title: `${title} ${CANARY}`, author: CANARY });
      expect(created.status).toBe(201);
      expect(await created.json()).toMatchObject({
        id: expect.any(Number),
        title: `${title} ${CANARY}`,
        author: CANARY,
      });
    }
    const list = await eventually(
      () => undocumented(firstCapture),
      (l) => l.some((u) => u.path === '/posts' && u.interactions === 2),
    );
    expect(list).toEqual([{ method: 'POST', path: '/posts', interactions: 2, count: 4 }]);
    expect(events).toContainEqual(expect.objectContaining({ type: 'capture.started', captureId: firstCapture }));
  });

  it('3: commits POST /posts with its description and bodies; it leaves the undocumented list', async () => {
    const commit = await backend.api<{ versions: Array<{ endpointId: string; version: string }> }>(
      'POST',
      '/projects/demo/documentation',
      {
        captureId: firstCapture,
        endpoints: [
          {
            method: 'POST',
            path: '/posts',
            description: 'Create a new post. Accepts author, title as JSON in request body',
            documentBodies: true,
          },
        ],
      },
    );
    expect(commit.status).toBe(201);
    expect(commit.body.versions).toEqual([expect.objectContaining({ version: '1.0' })]);
    endpointId = commit.body.versions[0]?.endpointId as string;
    const { body } = await backend.api<EndpointResponse[]>('GET', '/projects/demo/endpoints');
    expect(body).toHaveLength(1);
    const documented = body[0] as EndpointResponse;
    expect(documented).toMatchObject({
      method: 'POST',
      path: '/posts',
      description: 'Create a new post. Accepts author, title as JSON in request body',
      version: '1.0',
    });
    expect(documented.request?.shape).toMatchObject({
      type: 'object',
      properties: { title: { type: 'string' }, author: { type: 'string' } },
    });
    expect(documented.responses).toEqual([
      expect.objectContaining({
        status: 201,
        shape: expect.objectContaining({
          properties: { id: { type: 'number' }, title: { type: 'string' }, author: { type: 'string' } },
        }),
      }),
    ]);
    expect(await undocumented(firstCapture)).toEqual([]);
    await eventually(
      async () => events,
      (e) => e.some((x) => x.type === 'documentation.committed'),
    );
  });

  it('4: a later POST with a different body shape is a diff for review', async () => {
    expect((await post({ title: 'third', author: 'someone', draft: true })).status).toBe(201);
    const found = await eventually(
      () => diffs(firstCapture),
      (d) => d.length > 0,
    );
    expect(found).toEqual([
      expect.objectContaining({
        endpointId,
        method: 'POST',
        path: '/posts',
        version: '1.0',
        interactions: 1,
        changes: [expect.objectContaining({ change: 'added', in: 'request', at: '$.draft' })],
      }),
    ]);
  });

  it('5: a restart of the app is a new capture whose matching traffic shows no diff', async () => {
    await agent.restartCommand();
    const secondCapture = await eventually(
      async () => agent.captureId(),
      (id) => id !== firstCapture,
    );
    await eventually(
      async () => (await fetch(`${agent.proxyUrl}/`)).status,
      (status) => status === 200,
    );
    expect((await post({ title: 'again', author: 'me' })).status).toBe(201);
    await eventually(
      async () =>
        (await backend.api<Array<{ id: string; interactions: number }>>('GET', '/projects/demo/captures')).body,
      (captures) => captures[0]?.id === secondCapture && captures[0].interactions === 1,
    );
    expect(await diffs(secondCapture)).toEqual([]);
    expect(await undocumented(secondCapture)).toEqual([]);
    expect(await diffs(firstCapture)).toHaveLength(1);
    await eventually(
      async () => events,
      (e) => e.some((x) => x.type === 'capture.started' && x.captureId === secondCapture),
    );
  });

  it('never stores an observed value', async () => {
    expect(await tablesContaining(backend.databaseUrl, CANARY)).toEqual([]);
  });
});
