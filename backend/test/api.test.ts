import type {
  CaptureResponse,
  DiffResponse,
  DocumentationResponse,
  EndpointResponse,
  ObservedEndpointResponse,
  TokenResponse,
} from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { batchMessage, connectTestAgent, endCapture, helloMessage } from './support/agent-client';
import { apiCall, startTestBackend, type TestBackend } from './support';

let backend: TestBackend;
const METRICS_TOKEN = 'metrics-scraper-token-0123456789';
const tokens: Record<'agent' | 'read' | 'write' | 'admin' | 'otherRead', string> = {
  agent: '',
  read: '',
  write: '',
  admin: '',
  otherRead: '',
};
let captureId: string;

async function token(project: string, scope: string): Promise<string> {
  const response = await backend.api<TokenResponse>('POST', `/projects/${project}/tokens`, {
    name: `${scope} token`,
    scope,
  });
  expect(response.status).toBe(201);
  return response.body.token as string;
}

beforeAll(async () => {
  backend = await startTestBackend({ metricsToken: METRICS_TOKEN });
  await backend.api('POST', '/projects', { slug: 'api', name: 'API' });
  await backend.api('POST', '/projects', { slug: 'other', name: 'Other' });
  tokens.agent = await token('api', 'agent');
  tokens.read = await token('api', 'read');
  tokens.write = await token('api', 'write');
  tokens.admin = await token('api', 'admin');
  tokens.otherRead = await token('other', 'read');
  const agent = await connectTestAgent(backend.url, tokens.agent);
  const hello = helloMessage();
  captureId = hello.capture.id;
  await agent.request(hello);
  const batch = batchMessage(captureId, [
    {
      method: 'POST',
      path: '/posts',
      status: 201,
      request: { title: 't', author: 'a' },
      response: { id: 1, title: 't', author: 'a' },
      count: 2,
    },
    { method: 'GET', path: '/posts/{postId}', status: 200, response: { id: 1, title: 't', author: 'a' } },
  ]);
  expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
  await agent.close();
});
afterAll(async () => {
  await backend.close();
});

describe('auth', () => {
  const routes: Array<[string, () => string, string]> = [
    ['GET', () => '/projects', 'read'],
    ['GET', () => '/me', 'read'],
    ['GET', () => '/projects/api/captures', 'read'],
    ['GET', () => `/projects/api/captures/${captureId}/undocumented`, 'read'],
    ['GET', () => `/projects/api/captures/${captureId}/diffs`, 'read'],
    ['GET', () => '/projects/api/endpoints', 'read'],
    ['POST', () => '/projects/api/documentation', 'write'],
    ['POST', () => '/projects/api/tokens', 'admin'],
  ];

  it.each(routes)('%s %s needs a token', async (method, route) => {
    const response = await apiCall(backend.url, null, method, route(), method === 'POST' ? {} : undefined);
    expect(response).toEqual({
      status: 401,
      body: { statusCode: 401, error: 'Unauthorized', message: 'missing bearer token (Authorization: Bearer <token>)' },
    });
    expect((await apiCall(backend.url, 'spk_not-a-token', method, route())).status).toBe(401);
  });

  it.each(routes)('%s %s needs scope %s', async (method, route, needed) => {
    const order = ['read', 'write', 'admin'];
    for (const scope of ['agent', 'read', 'write', 'admin'] as const) {
      const allowed = scope !== 'agent' && order.indexOf(scope) >= order.indexOf(needed);
      const response = await apiCall(backend.url, tokens[scope], method, route(), method === 'POST' ? {} : undefined);
      if (allowed) expect(response.status).not.toBe(403);
      else
        expect(response).toMatchObject({
          status: 403,
          body: { statusCode: 403, error: 'Forbidden', message: expect.stringContaining(`scope ${needed}`) },
        });
    }
  });

  it('keeps a token inside its project', async () => {
    expect(
      (await apiCall<Array<{ slug: string }>>(backend.url, tokens.otherRead, 'GET', '/projects')).body.map(
        (p) => p.slug,
      ),
    ).toEqual(['other']);
    expect((await backend.api<Array<{ slug: string }>>('GET', '/projects')).body.map((p) => p.slug)).toEqual([
      'api',
      'other',
    ]);
    expect(await apiCall(backend.url, tokens.admin, 'POST', '/projects', { slug: 'nope', name: 'Nope' })).toMatchObject(
      { status: 403 },
    );
  });

  it('answers 404 alike for another project and an unknown one, so slugs cannot be listed', async () => {
    const unknown = {
      status: 404,
      body: { statusCode: 404, error: 'Not Found', message: 'project nope does not exist' },
    };
    expect(await apiCall(backend.url, tokens.otherRead, 'GET', '/projects/nope/captures')).toEqual(unknown);
    expect(await apiCall(backend.url, tokens.otherRead, 'GET', '/projects/api/captures')).toEqual({
      ...unknown,
      body: { ...unknown.body, message: 'project api does not exist' },
    });
    expect((await apiCall(backend.url, tokens.otherRead, 'GET', '/projects/api')).status).toBe(404);
    expect((await apiCall(backend.url, tokens.agent, 'GET', '/projects/other')).status).toBe(404);
    // The dashboard's events socket answers the same.
    for (const slug of ['api', 'nope']) {
      const socket = new WebSocket(`${backend.url.replace(/^http/, 'ws')}/api/v1/projects/${slug}/events`, {
        headers: { authorization: `Bearer ${tokens.otherRead}` },
      });
      const status = await new Promise<number | undefined>((resolve) => {
        socket.once('unexpected-response', (_request, response) => resolve(response.statusCode));
        socket.once('open', () => resolve(101));
        socket.once('error', () => resolve(undefined));
      });
      socket.terminate();
      expect(status).toBe(404);
    }
  });

  it('never takes a token from a WebSocket URL, and never echoes one back as the sub-protocol', async () => {
    const base = backend.url.replace(/^http/, 'ws');
    const upgrade = (url: string, protocols?: string[]): Promise<{ status: number; protocol?: string }> =>
      new Promise((resolve) => {
        const socket = protocols ? new WebSocket(url, protocols) : new WebSocket(url);
        socket.once('unexpected-response', (_request, response) => {
          resolve({ status: response.statusCode ?? 0 });
          socket.terminate();
        });
        socket.once('open', () => {
          resolve({ status: 101, protocol: socket.protocol });
          socket.close();
        });
        socket.once('error', () => resolve({ status: -1 }));
      });
    // A token in the URL lands in access logs and browser consoles (issue 15, item 12).
    expect(await upgrade(`${base}/api/v1/projects/api/events?token=${tokens.read}`)).toEqual({ status: 401 });
    expect(await upgrade(`${base}/api/v1/agents/stream?token=${tokens.agent}`)).toEqual({ status: 401 });
    expect(await upgrade(`${base}/api/v1/projects/api/events`, ['spectator.v1', `bearer.${tokens.read}`])).toEqual({
      status: 101,
      protocol: 'spectator.v1',
    });
    expect(await upgrade(`${base}/api/v1/agents/stream`, [`bearer.${tokens.agent}`, 'spectator.v1'])).toEqual({
      status: 101,
      protocol: 'spectator.v1',
    });
  });

  it('tells a token who it is: name, scope and project (the dashboard offers only what it may do)', async () => {
    expect(await apiCall(backend.url, tokens.read, 'GET', '/me')).toEqual({
      status: 200,
      body: { kind: 'token', name: 'read token', scope: 'read', project: 'api', environments: null },
    });
    expect((await apiCall(backend.url, tokens.write, 'GET', '/me')).body).toMatchObject({
      scope: 'write',
      project: 'api',
    });
    expect((await backend.api('GET', '/me')).body).toEqual({
      kind: 'token',
      name: 'admin',
      scope: 'admin',
      project: null,
      environments: null,
    });
  });

  it('shows a token once and stores only its hash', async () => {
    const list = await backend.api<TokenResponse[]>('GET', '/projects/api/tokens');
    expect(list.status).toBe(200);
    expect(list.body.length).toBe(4);
    for (const t of list.body) expect(t.token).toBeUndefined();
  });

  it('revokes a token', async () => {
    const created = await backend.api<TokenResponse>('POST', '/projects/api/tokens', { name: 'temp', scope: 'read' });
    expect((await apiCall(backend.url, created.body.token as string, 'GET', '/projects/api/captures')).status).toBe(
      200,
    );
    expect((await backend.api('DELETE', `/projects/api/tokens/${created.body.id}`)).status).toBe(204);
    expect((await apiCall(backend.url, created.body.token as string, 'GET', '/projects/api/captures')).status).toBe(
      401,
    );
  });
});

describe('bad input answers 400 naming the field, never 500', () => {
  // Bodies that need the capture id are functions: it is known only after beforeAll.
  const cases: Array<[string, string, () => string, unknown, RegExp]> = [
    ['missing slug', 'POST', () => '/projects', { name: 'x' }, /^slug /],
    ['bad slug', 'POST', () => '/projects', { slug: 'Has Spaces', name: 'x' }, /^slug must be 1-63 characters/],
    [
      'unknown field',
      'POST',
      () => '/projects',
      { slug: 'ok', name: 'x', extra: 1 },
      /property extra should not exist/,
    ],
    ['array body', 'POST', () => '/projects', [1, 2], /./],
    ['invalid JSON', 'POST', () => '/projects', '{"slug":', /^body is not valid JSON$/],
    ['bad scope', 'POST', () => '/projects/api/tokens', { name: 'x', scope: 'root' }, /^scope must be one of/],
    [
      'bad environment',
      'POST',
      () => '/projects/api/tokens',
      { name: 'x', scope: 'agent', environments: ['moon'] },
      /^environments /,
    ],
    [
      'environments on a read token',
      'POST',
      () => '/projects/api/tokens',
      { name: 'x', scope: 'read', environments: ['ci'] },
      /^environments applies only/,
    ],
    ['bad token id', 'DELETE', () => '/projects/api/tokens/123', undefined, /^tokenId must be a UUID$/],
    ['bad project slug', 'GET', () => '/projects/NOT_A_SLUG/captures', undefined, /^project slug must be/],
    ['bad limit', 'GET', () => '/projects/api/captures?limit=abc', undefined, /^limit /],
    [
      'limit too large',
      'GET',
      () => '/projects/api/captures?limit=1000',
      undefined,
      /^limit must not be greater than 100/,
    ],
    ['bad before', 'GET', () => '/projects/api/captures?before=yesterday', undefined, /^before /],
    ['bad capture id', 'GET', () => '/projects/api/captures/abc/undocumented', undefined, /^id must be a UUID$/],
    ['bad capture id (diffs)', 'GET', () => '/projects/api/captures/abc/diffs', undefined, /^id must be a UUID$/],
    [
      'observed without method',
      'GET',
      () => `/projects/api/captures/${captureId}/observed?path=/posts`,
      undefined,
      /^method must be one of/,
    ],
    [
      'observed with a bad path',
      'GET',
      () => `/projects/api/captures/${captureId}/observed?method=GET&path=posts`,
      undefined,
      /^path must start with \//,
    ],
    [
      'observed for an endpoint not seen',
      'GET',
      () => `/projects/api/captures/${captureId}/observed?method=GET&path=/nothing`,
      undefined,
      /^GET \/nothing was not observed/,
    ],
    [
      'documentation without endpoints',
      'POST',
      () => '/projects/api/documentation',
      { captureId: randomUUID(), endpoints: [] },
      /^endpoints must contain at least 1 elements$/,
    ],
    [
      'documentation with a bad capture id',
      'POST',
      () => '/projects/api/documentation',
      { captureId: 'x', endpoints: [] },
      /^captureId must be a UUID/,
    ],
    // A missing field is told what it must be, without the size limits of a value it does not have.
    [
      'documentation with an empty body',
      'POST',
      () => '/projects/api/documentation',
      {},
      /^captureId must be a UUID; endpoints must be an array$/,
    ],
    [
      'documentation without documentBodies',
      'POST',
      () => '/projects/api/documentation',
      { captureId: randomUUID(), endpoints: [{ method: 'POST', path: '/posts' }] },
      /^endpoints\[0\]\.documentBodies must be a boolean value$/,
    ],
    [
      'documentation with a bad method',
      'POST',
      () => '/projects/api/documentation',
      { captureId: randomUUID(), endpoints: [{ method: 'FETCH', path: '/posts', documentBodies: true }] },
      /^endpoints\[0\]\.method must be one of/,
    ],
    [
      'documentation of an endpoint not observed',
      'POST',
      () => '/projects/api/documentation',
      () => ({ captureId, endpoints: [{ method: 'DELETE', path: '/posts', documentBodies: true }] }),
      /^endpoints\[0\]: DELETE \/posts was not observed/,
    ],
    [
      'documentation repeating an endpoint',
      'POST',
      () => '/projects/api/documentation',
      () => ({
        captureId,
        endpoints: [
          { method: 'POST', path: '/posts', documentBodies: true },
          { method: 'POST', path: '/posts', documentBodies: false },
        ],
      }),
      /^endpoints\[1\] repeats POST \/posts$/,
    ],
    ['bad endpoint id', 'GET', () => '/projects/api/endpoints/xyz/versions', undefined, /^id must be a UUID$/],
    // A value of another type is told its type only (`?limit=abc` listed the bounds too).
    [
      'a limit that is not a number',
      'GET',
      () => '/projects/api/proposals?limit=abc',
      undefined,
      /^limit must be an integer number$/,
    ],
    // PostgreSQL keeps no NUL in text or jsonb: each of these answered 500.
    [
      'a NUL in a token name',
      'POST',
      () => '/projects/api/tokens',
      { name: 'ci\u0000', scope: 'read' },
      /^name must not contain NUL characters$/,
    ],
    [
      'a NUL in a planned description',
      'POST',
      () => '/projects/api/proposals',
      {
        title: 't',
        endpoints: [
          {
            method: 'GET',
            path: '/x',
            description: 'a\u0000b',
            responses: [{ status: 200, contentType: 'application/json' }],
          },
        ],
      },
      /^endpoints\[0\]\.description must not contain NUL characters$/,
    ],
    [
      'a NUL in a schema field name',
      'POST',
      () => '/projects/api/proposals',
      {
        title: 't',
        endpoints: [
          {
            method: 'GET',
            path: '/x',
            responses: [
              {
                status: 200,
                contentType: 'application/json',
                schema: { type: 'object', properties: { 'a\u0000': { type: 'string' } } },
              },
            ],
          },
        ],
      },
      /^endpoints\[0\]\.responses\[0\]\.schema\.properties\.a. must not contain NUL characters$/,
    ],
    [
      'a NUL in a query value',
      'GET',
      () => '/projects/api/evidence?environment=ci&pullRequest=%00',
      undefined,
      /^pullRequest must not contain NUL characters$/,
    ],
    [
      'a NUL in an observed path',
      'GET',
      () => `/projects/api/captures/${captureId}/observed?method=GET&path=/po%00sts`,
      undefined,
      /^path must not contain NUL characters$/,
    ],
  ];

  it.each(cases)('%s', async (_name, method, route, body, message) => {
    const response = await backend.api<{ statusCode: number; error: string; message: string }>(
      method,
      route(),
      typeof body === 'function' ? (body as () => unknown)() : body,
    );
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(message) });
  });

  it.each([
    [
      'curl -d (form-urlencoded)',
      'application/x-www-form-urlencoded',
      /^content-type must be application\/json \(got application\/x-www-form-urlencoded\); with curl, add -H 'content-type: application\/json'$/,
    ],
    ['text/plain', 'text/plain; charset=utf-8', /^content-type must be application\/json \(got text\/plain\)/],
    ['no content-type', null, /^content-type is missing: send the body as application\/json/],
  ])(
    'answers 415 naming the media type for a JSON body sent as %s (was a 400 listing every field)',
    async (_name, contentType, message) => {
      const body = JSON.stringify({ captureId, endpoints: [{ method: 'POST', path: '/posts', documentBodies: true }] });
      const headers: Record<string, string> = { authorization: `Bearer ${tokens.write}` };
      if (contentType) headers['content-type'] = contentType;
      // A Blob body lets fetch send no content-type at all.
      const response = await fetch(`${backend.url}/api/v1/projects/api/documentation`, {
        method: 'POST',
        headers,
        body: contentType ? body : new Blob([body]),
      });
      expect(response.status).toBe(415);
      expect(await response.json()).toEqual({
        statusCode: 415,
        error: 'Unsupported Media Type',
        message: expect.stringMatching(message),
      });
    },
  );

  it('still takes JSON with a charset and a vendor +json type, and bodiless POSTs', async () => {
    const post = (contentType: string) =>
      fetch(`${backend.url}/api/v1/projects`, {
        method: 'POST',
        headers: { authorization: `Bearer ${backend.adminToken}`, 'content-type': contentType },
        body: JSON.stringify({ name: 'x' }),
      });
    for (const type of ['application/json; charset=utf-8', 'application/merge-patch+json'])
      expect(await (await post(type)).json()).toMatchObject({
        statusCode: 400,
        message: expect.stringMatching(/^slug /),
      });
    const approve = await fetch(`${backend.url}/api/v1/projects/api/proposals/${randomUUID()}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.write}` },
    });
    expect(approve.status).toBe(404);
  });

  it('answers 404 for what does not exist and 409 for a taken slug', async () => {
    expect(await backend.api('GET', '/projects/nope/captures')).toMatchObject({
      status: 404,
      body: { statusCode: 404, error: 'Not Found', message: 'project nope does not exist' },
    });
    expect((await backend.api('GET', `/projects/api/captures/${randomUUID()}/undocumented`)).status).toBe(404);
    expect((await backend.api('GET', `/projects/api/endpoints/${randomUUID()}/versions`)).status).toBe(404);
    expect((await backend.api('GET', '/projects/api/nothing-here')).status).toBe(404);
    // A path under /api without the version is told where the API is, as JSON (it got an HTML page).
    const unversioned = await fetch(`${backend.url}/api/projects?limit=1`, {
      headers: { authorization: `Bearer ${backend.adminToken}` },
    });
    expect(unversioned.status).toBe(404);
    expect(await unversioned.json()).toEqual({
      statusCode: 404,
      error: 'Not Found',
      message: 'Cannot GET /api/projects: the management API is under /api/v1 (e.g. /api/v1/projects)',
    });
    expect(await backend.api('POST', '/projects', { slug: 'api', name: 'again' })).toMatchObject({
      status: 409,
      body: { error: 'Conflict', message: 'slug api is already taken' },
    });
  });
});

describe('documentation and diffs', () => {
  it('documents an endpoint as version 1.0 from observed traffic, removes it from undocumented, and diffs later traffic', async () => {
    const observed = await backend.api<ObservedEndpointResponse>(
      'GET',
      `/projects/api/captures/${captureId}/observed?method=POST&path=/posts`,
      undefined,
      tokens.read,
    );
    expect(observed.status).toBe(200);
    expect(observed.body).toMatchObject({
      method: 'POST',
      path: '/posts',
      interactions: 2,
      request: { contentType: 'application/json' },
      requestHeaders: ['content-type'],
    });

    const commit = await backend.api<DocumentationResponse>(
      'POST',
      '/projects/api/documentation',
      {
        captureId,
        endpoints: [{ method: 'POST', path: '/posts', description: 'Create a post', documentBodies: true }],
      },
      tokens.write,
    );
    expect(commit.status).toBe(201);
    expect(commit.body.versions).toEqual([
      { endpointId: expect.any(String), method: 'POST', path: '/posts', version: '1.0', previous: null },
    ]);
    expect(commit.body.proposalId).toEqual(expect.any(String));

    const undocumented = await backend.api<Array<{ method: string; path: string }>>(
      'GET',
      `/projects/api/captures/${captureId}/undocumented`,
    );
    expect(undocumented.body.map((u) => `${u.method} ${u.path}`)).toEqual(['GET /posts/{postId}']);
    const endpoints = await backend.api<EndpointResponse[]>('GET', '/projects/api/endpoints');
    expect(endpoints.body).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/posts',
        description: 'Create a post',
        version: '1.0',
        request: {
          contentType: 'application/json',
          shape: expect.objectContaining({ type: 'object', required: ['author', 'title'] }),
        },
        responses: [
          { status: 201, contentType: 'application/json', shape: expect.objectContaining({ type: 'object' }) },
        ],
      }),
    ]);
    expect((await backend.api<DiffResponse[]>('GET', `/projects/api/captures/${captureId}/diffs`)).body).toEqual([]);

    // A new field in the request of a later capture is a diff for review in that capture only.
    const agent = await connectTestAgent(backend.url, tokens.agent);
    const hello = helloMessage();
    await agent.request(hello);
    await agent.request(
      batchMessage(hello.capture.id, [
        {
          method: 'POST',
          path: '/posts',
          status: 201,
          request: { title: 't', author: 'a', tags: ['x'] },
          response: { id: 2, title: 't', author: 'a' },
        },
      ]),
    );
    await agent.close();
    const diffs = await backend.api<DiffResponse[]>('GET', `/projects/api/captures/${hello.capture.id}/diffs`);
    expect(diffs.body).toEqual([
      {
        endpointId: commit.body.versions[0]?.endpointId,
        method: 'POST',
        path: '/posts',
        version: '1.0',
        interactions: 1,
        breaking: expect.any(Boolean),
        changes: [expect.objectContaining({ change: 'added', in: 'request', at: '$.tags' })],
      },
    ]);
    const captures = await backend.api<CaptureResponse[]>('GET', '/projects/api/captures');
    expect(captures.body[0]).toMatchObject({ id: hello.capture.id, interactions: 1, undocumented: 0, diffs: 1 });
    expect(captures.body[1]).toMatchObject({ id: captureId, interactions: 3, undocumented: 1, diffs: 0 });

    // Accepting the change makes the next version.
    const accept = await backend.api<DocumentationResponse>('POST', '/projects/api/documentation', {
      captureId: hello.capture.id,
      endpoints: [{ method: 'POST', path: '/posts', documentBodies: true }],
      message: 'Accept tags',
    });
    expect(accept.body.versions[0]).toMatchObject({ version: expect.stringMatching(/^(1\.1|2\.0)$/), previous: '1.0' });
    expect((await backend.api<DiffResponse[]>('GET', `/projects/api/captures/${hello.capture.id}/diffs`)).body).toEqual(
      [],
    );
    const history = await backend.api<
      Array<{ version: string; proposal: { title: string; status: string; approvedBy: string } }>
    >('GET', `/projects/api/endpoints/${commit.body.versions[0]?.endpointId}/versions`);
    expect(history.body.map((v) => v.version)).toEqual([accept.body.versions[0]?.version, '1.0']);
    expect(history.body[0]?.proposal).toMatchObject({ title: 'Accept tags', status: 'Approved', approvedBy: 'admin' });
    expect(history.body[1]?.proposal).toMatchObject({ status: 'Approved', approvedBy: 'write token' });
    // An endpoint's history is read within its project only.
    const elsewhere = await backend.api(
      'GET',
      `/projects/other/endpoints/${commit.body.versions[0]?.endpointId}/versions`,
    );
    expect(elsewhere.status).toBe(404);
  });
});

describe('a diff and the version its acceptance makes agree', () => {
  it('reads a field some interactions of the capture send as optional, as accepting does (the diff said breaking, → 2.0, and accepting made 1.1)', async () => {
    const agent = await connectTestAgent(backend.url, tokens.agent);
    const first = helloMessage();
    await agent.request(first);
    await agent.request(
      batchMessage(first.capture.id, [
        { method: 'POST', path: '/comments', status: 201, request: { text: 't' }, response: { id: 1, text: 't' } },
      ]),
    );
    const documented = await backend.api<DocumentationResponse>('POST', '/projects/api/documentation', {
      captureId: first.capture.id,
      endpoints: [{ method: 'POST', path: '/comments', documentBodies: true }],
    });
    expect(documented.body.versions[0]).toMatchObject({ version: '1.0' });

    // The app restarts; most clients send what is documented, one also sends tags.
    const second = helloMessage();
    await agent.request(second);
    await agent.request(
      batchMessage(second.capture.id, [
        {
          method: 'POST',
          path: '/comments',
          status: 201,
          request: { text: 't' },
          response: { id: 2, text: 't' },
          count: 2,
        },
        {
          method: 'POST',
          path: '/comments',
          status: 201,
          request: { text: 't', tags: ['x'] },
          response: { id: 3, text: 't' },
        },
      ]),
    );
    await agent.close();
    const diffs = await backend.api<DiffResponse[]>('GET', `/projects/api/captures/${second.capture.id}/diffs`);
    expect(diffs.body).toEqual([
      expect.objectContaining({
        method: 'POST',
        path: '/comments',
        version: '1.0',
        interactions: 1,
        breaking: false,
        changes: [
          expect.objectContaining({
            change: 'added',
            in: 'request',
            at: '$.tags',
            breaking: false,
            observed: expect.objectContaining({ type: 'array' }),
          }),
        ],
      }),
    ]);
    const accepted = await backend.api<DocumentationResponse>('POST', '/projects/api/documentation', {
      captureId: second.capture.id,
      endpoints: [{ method: 'POST', path: '/comments', documentBodies: true }],
    });
    expect(accepted.body.versions[0]).toMatchObject({ version: '1.1', previous: '1.0' });
  });
});

describe('service endpoints', () => {
  // Issue 15 item 14: /metrics was public.
  it('serves /metrics only with the metrics token', async () => {
    const variants: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: `Bearer ${backend.adminToken}` },
    ];
    for (const headers of variants) {
      const response = await fetch(`${backend.url}/metrics`, { headers });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({
        statusCode: 401,
        message: 'metrics need Authorization: Bearer <SPECTATOR_METRICS_TOKEN>',
      });
    }
    const unset = await startTestBackend();
    try {
      const response = await fetch(`${unset.url}/metrics`, {
        headers: { authorization: `Bearer ${unset.adminToken}` },
      });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({
        statusCode: 404,
        message: 'metrics are not served: set SPECTATOR_METRICS_TOKEN to serve them',
      });
    } finally {
      await unset.close();
    }
  });

  it("counts where acknowledgements' time went (waiting, to the commit) and the folds after", async () => {
    const read = async (): Promise<Record<string, number>> => {
      const text = await (
        await fetch(`${backend.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
      ).text();
      return Object.fromEntries(
        [
          ...text.matchAll(
            /^(spectator_ingest_(?:batch_\w+|evidence_\w+|fold_waits_timed_out|capture_ends_unfolded)_total) (\S+)$/gm,
          ),
        ].map((m) => [m[1] as string, Number(m[2])]),
      );
    };
    const before = await read();
    expect(Object.keys(before).sort()).toEqual([
      'spectator_ingest_batch_acks_total',
      'spectator_ingest_batch_commit_seconds_total',
      'spectator_ingest_batch_fold_wait_seconds_total',
      'spectator_ingest_batch_wait_seconds_total',
      'spectator_ingest_capture_ends_unfolded_total',
      'spectator_ingest_evidence_batches_total',
      'spectator_ingest_evidence_fold_seconds_total',
      'spectator_ingest_fold_waits_timed_out_total',
    ]);
    // A CI batch is acknowledged at its commit; its capture's end waits for its fold.
    const agent = await connectTestAgent(backend.url, tokens.agent);
    const hello = helloMessage({
      agentId: 'metrics-agent',
      environment: { kind: 'ci', pullRequest: '77', commit: 'metrics1' },
    });
    await agent.request(hello);
    const batch = batchMessage(hello.capture.id, [
      { method: 'GET', path: '/metered', status: 200, response: { n: 1 } },
    ]);
    expect(await agent.request(batch)).toMatchObject({ type: 'ack', batchId: batch.batchId });
    await endCapture(agent, hello.capture.id);
    await agent.close();
    const after = await read();
    expect(after.spectator_ingest_batch_acks_total).toBe((before.spectator_ingest_batch_acks_total as number) + 1);
    for (const part of ['wait', 'commit'])
      expect(after[`spectator_ingest_batch_${part}_seconds_total`]).toBeGreaterThanOrEqual(
        before[`spectator_ingest_batch_${part}_seconds_total`] as number,
      );
    // The fold runs after the commit and the ack: the batch was followed to its fold, the end waited for it.
    expect(after.spectator_ingest_batch_fold_wait_seconds_total).toBeGreaterThanOrEqual(
      before.spectator_ingest_batch_fold_wait_seconds_total as number,
    );
    expect(after.spectator_ingest_capture_ends_unfolded_total).toBe(
      before.spectator_ingest_capture_ends_unfolded_total as number,
    );
    expect(after.spectator_ingest_evidence_batches_total).toBe(
      (before.spectator_ingest_evidence_batches_total as number) + 1,
    );
    expect(after.spectator_ingest_evidence_fold_seconds_total).toBeGreaterThan(
      before.spectator_ingest_evidence_fold_seconds_total as number,
    );
  });

  it('reports health, metrics and its own OpenAPI document', async () => {
    expect(await apiCall(backend.url, null, 'GET', '/health')).toEqual({
      status: 200,
      body: { status: 'ok', database: 'ok' },
    });
    const metrics = await fetch(`${backend.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toMatch(/^spectator_ingest_batches_total \d+$/m);
    const openapi = await apiCall<{ openapi: string; paths: Record<string, unknown> }>(
      backend.url,
      null,
      'GET',
      '/api/docs/openapi.json',
    );
    expect(openapi.status).toBe(200);
    expect(Object.keys(openapi.body.paths)).toEqual(
      expect.arrayContaining(['/api/v1/projects', '/api/v1/projects/{p}/documentation']),
    );
    // Every template variable of a path is declared once as a path parameter ({p} was missing everywhere).
    const undeclared: string[] = [];
    for (const [route, operations] of Object.entries(
      openapi.body.paths as Record<string, Record<string, { parameters?: Array<{ name: string; in: string }> }>>,
    )) {
      for (const [method, operation] of Object.entries(operations)) {
        const declared = (operation.parameters ?? [])
          .filter((parameter) => parameter.in === 'path')
          .map((parameter) => parameter.name);
        const variables = [...route.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
        if (JSON.stringify([...declared].sort()) !== JSON.stringify([...variables].sort()))
          undeclared.push(`${method.toUpperCase()} ${route}: ${declared.join(',')}`);
      }
    }
    expect(undeclared).toEqual([]);
    const page = await fetch(`${backend.url}/api/docs`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });
});
