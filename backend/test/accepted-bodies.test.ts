import type {
  DiffResponse,
  DocumentationResponse,
  EndpointResponse,
  ObservedEndpointResponse,
  ProjectResponse,
  TokenResponse,
} from '@spectator/shared';
import {
  batchMessage,
  connectTestAgent,
  helloMessage,
  type TestAgent,
  type TestExchange,
} from './support/agent-client';
import { startTestBackend, type TestBackend } from './support';

// The documented request is what the API accepted (2xx/3xx). A 400 for a bad `author` used to be
// merged into it (`author: String | Object`) and offered as "Accept changes → 1.1".

let backend: TestBackend;
let agent: TestAgent;
const captures: string[] = [];

const created: TestExchange = {
  method: 'POST',
  path: '/posts',
  status: 201,
  request: { title: 't', author: 'a' },
  response: { id: 1, title: 't', author: 'a' },
};
const rejected: TestExchange = {
  method: 'POST',
  path: '/posts',
  status: 400,
  request: { title: 't', author: { name: 'x' } },
  response: { error: 'author must be a string' },
};

async function send(exchanges: TestExchange[]): Promise<void> {
  const batch = batchMessage(captures.at(-1) as string, exchanges);
  expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
}

async function get<T>(route: string): Promise<T> {
  const { status, body } = await backend.api<T>('GET', `/projects/bodies${route}`);
  expect(status).toBe(200);
  return body;
}

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'bodies', name: 'Bodies' })).status).toBe(
    201,
  );
  const token = (await backend.api<TokenResponse>('POST', '/projects/bodies/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  agent = await connectTestAgent(backend.url, token);
  const hello = helloMessage();
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  captures.push(hello.capture.id);
});
afterAll(async () => {
  await agent?.close();
  await backend?.close();
});

describe('documented request bodies come from accepted exchanges', () => {
  it('reviews the request of 2xx exchanges, and shows the 4xx request bodies apart as rejected', async () => {
    await send([created, { ...created, count: 2 }, rejected]);
    const observed = await get<ObservedEndpointResponse>(`/captures/${captures[0]}/observed?method=POST&path=/posts`);
    expect(observed.request?.shape).toMatchObject({
      properties: { title: { type: 'string' }, author: { type: 'string' } },
    });
    expect(observed.responses.map((r) => r.status)).toEqual([201, 400]);
    expect(observed.rejectedRequests).toEqual([
      {
        status: 400,
        interactions: 1,
        contentType: 'application/json',
        shape: expect.objectContaining({
          properties: expect.objectContaining({ author: expect.objectContaining({ type: 'object' }) }),
        }),
      },
    ]);
  });

  it('documents the accepted request only', async () => {
    const commit = await backend.api<DocumentationResponse>('POST', '/projects/bodies/documentation', {
      captureId: captures[0],
      endpoints: [{ method: 'POST', path: '/posts', description: 'Create a post', documentBodies: true }],
    });
    expect(commit.status).toBe(201);
    const [endpoint] = await get<EndpointResponse[]>('/endpoints');
    expect(endpoint?.request?.shape).toMatchObject({ properties: { author: { type: 'string' } } });
    expect(endpoint?.responses.map((r) => r.status)).toEqual([201, 400]);
  });

  it('offers no request change for rejected bodies: a 400 as documented is no diff, a new 4xx status only a response change', async () => {
    const id = crypto.randomUUID();
    expect(
      await agent.request({
        type: 'capture',
        capture: { id, startedAt: new Date().toISOString(), reason: 'command-restart' },
        previous: { id: captures[0] as string, endedAt: new Date().toISOString() },
      }),
    ).toEqual({ type: 'capture-ended', captureId: captures[0] });
    captures.push(id);
    await send([created, rejected, { ...rejected, request: { author: 7 } }]);
    expect(await get<DiffResponse[]>(`/captures/${id}/diffs`)).toEqual([]);

    await send([{ ...rejected, status: 422, request: { author: [1] } }]);
    const diffs = await get<DiffResponse[]>(`/captures/${id}/diffs`);
    expect(diffs).toHaveLength(1);
    expect(diffs[0]?.changes.map((c) => [c.change, c.in, c.status ?? null])).toEqual([['new status', 'response', 422]]);
  });
});

describe('review shows the required fields committing documents', () => {
  const note = (fields: object): TestExchange => ({ method: 'GET', path: '/notes', status: 200, response: fields });
  const observedRequired = async (): Promise<string[] | undefined> => {
    const observed = await get<ObservedEndpointResponse>(
      `/captures/${captures.at(-1)}/observed?method=GET&path=/notes`,
    );
    return (observed.responses[0]?.shape as { required?: string[] } | null)?.required;
  };

  it('claims a varied body required from six objects in the observed view, as the commit does', async () => {
    // Five answers; `tag` missing from some: the body varied, so five objects claim nothing.
    await send([
      note({ id: 1, title: 't', tag: 'a' }),
      note({ id: 2, title: 'u', tag: 'b' }),
      note({ id: 3, title: 'v' }),
      note({ id: 4, title: 'w' }),
      note({ id: 5, title: 'x', tag: 'c' }),
    ]);
    expect(await observedRequired()).toBeUndefined();
    // A sixth answer with `id` and `title`: six objects all had them.
    await send([note({ id: 6, title: 'y' })]);
    expect(await observedRequired()).toEqual(['id', 'title']);

    const commit = await backend.api<DocumentationResponse>('POST', '/projects/bodies/documentation', {
      captureId: captures.at(-1),
      endpoints: [{ method: 'GET', path: '/notes', documentBodies: true }],
    });
    expect(commit.status).toBe(201);
    const endpoint = (await get<EndpointResponse[]>('/endpoints')).find((e) => e.path === '/notes');
    expect((endpoint?.responses[0]?.shape as { required?: string[] } | null)?.required).toEqual(['id', 'title']);
  });
});
