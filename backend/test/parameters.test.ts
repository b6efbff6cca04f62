/**
 * Query parameters and request headers documented end to end: the real agent in front of a real
 * upstream, documentation commits, versions, proposals and the OpenAPI round trip. Parameter
 * values are canaries that must never reach the database.
 */
import { startAgent, type RunningAgent } from '@spectator/agent';
import type {
  DiffResponse,
  DocumentationResponse,
  EndpointResponse,
  EvidenceResponse,
  ObservedEndpointResponse,
  OpenApiImportResponse,
  ProposalResponse,
  TokenResponse,
  UndocumentedEndpointResponse,
} from '@spectator/shared';
import { startTestBackend, startTestReplica, type TestBackend } from './support';
import { eventually, type LocalServer, startJsonApp, withAgent } from './support/evidence-helpers';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';
import { tablesContaining } from './support/privacy';

const CANARY = 'CANARY4412';

let backend: TestBackend;
let upstream: LocalServer;
let agent: RunningAgent;
let agentToken: string;

/** GET /orders through the agent, with the given query parameters and headers (values are canaries). */
async function getOrders(query: string[], headers: Record<string, string>): Promise<void> {
  const search = query.map((name) => `${name}=${CANARY}`).join('&');
  const answer = await fetch(`${agent.proxyUrl}/orders${search ? `?${search}` : ''}`, { headers });
  expect(answer.status).toBe(200);
  await answer.arrayBuffer();
}

const endpoints = async (project: string): Promise<EndpointResponse[]> =>
  (await backend.api<EndpointResponse[]>('GET', `/projects/${project}/endpoints`)).body;

beforeAll(async () => {
  backend = await startTestBackend();
  for (const slug of ['shop', 'copy']) await backend.api('POST', '/projects', { slug, name: slug });
  agentToken = (await backend.api<TokenResponse>('POST', '/projects/shop/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  upstream = await startJsonApp({
    'GET /orders': () => ({ status: 200, body: [{ id: 1, total: 9.5 }] }),
    'GET /customers': () => ({ status: 200, body: [] }),
  });
  agent = await startAgent({
    listen: '127.0.0.1:0',
    upstream: upstream.url,
    backend: backend.url,
    token: agentToken,
    environment: { kind: 'local' },
    logLevel: 'silent',
    tuning: { flushIntervalMs: 100 },
  });
});
afterAll(async () => {
  await agent?.close();
  await upstream?.close();
  await backend?.close();
});

describe('query parameters and request headers', () => {
  let captureId: string;
  let endpointId: string;

  it('shows the names seen for review and documents them, as optional, when the bodies are documented', async () => {
    captureId = agent.captureId();
    await getOrders(['limit', 'q'], { 'x-tenant': CANARY, 'user-agent': CANARY, accept: 'application/json' });
    await getOrders(['q'], { 'X-Tenant': CANARY, 'x-forwarded-for': CANARY });
    await eventually(
      async () =>
        (await backend.api<UndocumentedEndpointResponse[]>('GET', `/projects/shop/captures/${captureId}/undocumented`))
          .body,
      (list) => list.some((u) => u.path === '/orders' && u.interactions === 2),
    );
    const observed = (
      await backend.api<ObservedEndpointResponse>(
        'GET',
        `/projects/shop/captures/${captureId}/observed?method=GET&path=/orders`,
      )
    ).body;
    expect(observed.query).toEqual(['limit', 'q']);
    expect(observed.requestHeaders).toEqual(expect.arrayContaining(['x-tenant', 'user-agent', 'x-forwarded-for']));

    const commit = await backend.api<DocumentationResponse>('POST', '/projects/shop/documentation', {
      captureId,
      endpoints: [{ method: 'GET', path: '/orders', documentBodies: true }],
    });
    expect(commit.status).toBe(201);
    expect(commit.body.versions).toEqual([expect.objectContaining({ version: '1.0' })]);
    endpointId = commit.body.versions[0]?.endpointId as string;
    const [documented] = await endpoints('shop');
    expect(documented?.parameters).toEqual({
      query: [
        { name: 'limit', required: false },
        { name: 'q', required: false },
      ],
      headers: [{ name: 'x-tenant', required: false }],
    });
  });

  it('a documentation commit without bodies leaves the parameters undocumented', async () => {
    await getOrders([], {});
    const other = await fetch(`${agent.proxyUrl}/customers?email=${CANARY}`);
    expect(other.status).toBe(200);
    await other.arrayBuffer();
    await eventually(
      async () =>
        (await backend.api<UndocumentedEndpointResponse[]>('GET', `/projects/shop/captures/${captureId}/undocumented`))
          .body,
      (list) => list.some((u) => u.path === '/customers'),
    );
    const commit = await backend.api<DocumentationResponse>('POST', '/projects/shop/documentation', {
      captureId,
      endpoints: [{ method: 'GET', path: '/customers', documentBodies: false }],
    });
    expect(commit.status).toBe(201);
    expect((await endpoints('shop')).find((e) => e.path === '/customers')?.parameters).toBeNull();
  });

  it('a new query parameter is a change naming it, and committing it makes the next minor version', async () => {
    const diffs = async (): Promise<DiffResponse[]> =>
      (await backend.api<DiffResponse[]>('GET', `/projects/shop/captures/${captureId}/diffs`)).body;
    // Read (and so cache) the capture's diffs while it conforms: the new name must still show.
    expect(await diffs()).toEqual([]);
    await getOrders(['page', 'q'], { 'x-tenant': CANARY });
    await eventually(
      async () => (await backend.api<{ interactions: number }>('GET', `/projects/shop/captures/${captureId}`)).body,
      (capture) => capture.interactions >= 5,
    );
    // (A stored row whose names grow, read on a replica without kept views: the last test below.)
    expect(await eventually(diffs, (list) => list.length > 0)).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/orders',
        version: '1.0',
        breaking: false,
        changes: [{ change: 'added', in: 'query', at: 'page', breaking: false }],
      }),
    ]);
    // A proposal from the capture shows what committing would change, before anything is written.
    const proposal = await backend.api<ProposalResponse>('POST', '/projects/shop/proposals', {
      title: 'Paging',
      captureId,
      endpoints: [{ method: 'GET', path: '/orders' }],
    });
    expect(proposal.status).toBe(201);
    expect(proposal.body.endpoints).toEqual([
      expect.objectContaining({
        endpointId,
        fromVersion: '1.0',
        toVersion: '1.1',
        changes: [{ change: 'added', in: 'query', at: 'page', breaking: false }],
      }),
    ]);

    const commit = await backend.api<DocumentationResponse>('POST', '/projects/shop/documentation', {
      captureId,
      endpoints: [{ method: 'GET', path: '/orders', documentBodies: true }],
    });
    expect(commit.body.versions).toEqual([expect.objectContaining({ endpointId, version: '1.1', previous: '1.0' })]);
    expect((await endpoints('shop')).find((e) => e.path === '/orders')?.parameters?.query.map((p) => p.name)).toEqual([
      'limit',
      'page',
      'q',
    ]);
    const versions = (
      await backend.api<Array<{ version: string; changes: unknown[] }>>(
        'GET',
        `/projects/shop/endpoints/${endpointId}/versions`,
      )
    ).body;
    expect(versions[0]).toMatchObject({
      version: '1.1',
      changes: [{ change: 'added', in: 'query', at: 'page', breaking: false }],
    });
  });

  it('evidence: staging runs the version whose parameters its traffic sends; an undocumented one is drift', async () => {
    const staging = async (query: string[]): Promise<EvidenceResponse['endpoints'][number] | undefined> => {
      await withAgent(
        backend.url,
        agentToken,
        upstream.url,
        { kind: 'staging', build: `b-${query.join('-')}` },
        async (proxyUrl) => {
          const answer = await fetch(`${proxyUrl}/orders?${query.map((name) => `${name}=${CANARY}`).join('&')}`, {
            headers: { 'x-tenant': CANARY },
          });
          await answer.arrayBuffer();
        },
      );
      return (
        await backend.api<EvidenceResponse>('GET', '/projects/shop/evidence?environment=staging')
      ).body.endpoints.find((e) => e.path === '/orders');
    };
    // `page` is documented from 1.1 on.
    expect(await staging(['page', 'q'])).toMatchObject({ version: '1.1', drift: false });
    // Same bodies, but a query parameter no version documents: no version conforms.
    expect(await staging(['debug', 'q'])).toMatchObject({ drift: true });
  });

  it('planned parameters: documented as given, a standard header or a repeated name refused naming the field', async () => {
    const planned = (parameters: unknown) =>
      backend.api<ProposalResponse>('POST', '/projects/shop/proposals', {
        title: 'Search',
        endpoints: [{ method: 'GET', path: '/search', responses: [{ status: 200 }], parameters }],
      });
    expect((await planned({ headers: [{ name: 'Accept', required: true }] })).body).toMatchObject({
      statusCode: 400,
      message: "endpoints[0].parameters.headers[0]: accept is a standard header, not part of an API's documentation",
    });
    expect(
      (
        await planned({
          query: [
            { name: 'q', required: true },
            { name: 'q', required: false },
          ],
        })
      ).body,
    ).toMatchObject({ statusCode: 400, message: 'endpoints[0].parameters.query[1] repeats "q"' });
    expect((await planned({ query: [{ name: 'q' }] })).status).toBe(400);
    const made = await planned({
      query: [{ name: 'q', required: true }],
      headers: [{ name: 'X-Region', required: false }],
    });
    expect(made.status).toBe(201);
    expect(
      (await backend.api<ProposalResponse>('POST', `/projects/shop/proposals/${made.body.id}/approve`)).status,
    ).toBe(200);
    expect((await endpoints('shop')).find((e) => e.path === '/search')?.parameters).toEqual({
      query: [{ name: 'q', required: true }],
      headers: [{ name: 'x-region', required: false }],
    });
  });

  it('exports them as OpenAPI parameters, and an import of the export documents the same parameters', async () => {
    const exported = (
      await backend.api<{ paths: Record<string, Record<string, { parameters?: unknown[] }>> }>(
        'GET',
        '/projects/shop/openapi.json',
      )
    ).body;
    expect(exported.paths['/orders']?.get?.parameters).toEqual([
      { name: 'limit', in: 'query', required: false, schema: { type: 'string' } },
      { name: 'page', in: 'query', required: false, schema: { type: 'string' } },
      { name: 'q', in: 'query', required: false, schema: { type: 'string' } },
      { name: 'x-tenant', in: 'header', required: false, schema: { type: 'string' } },
    ]);
    const imported = await backend.api<OpenApiImportResponse>(
      'POST',
      '/projects/copy/openapi/import?approve=true',
      exported,
    );
    expect(imported.status).toBe(201);
    expect(imported.body.warnings).toEqual([]);
    // Endpoints whose versions document parameters (an export cannot tell "none documented" from "not documented").
    const original = (await endpoints('shop')).filter((e) => e.parameters !== null);
    expect(original.map((e) => e.path)).toEqual(['/orders', '/search']);
    const copied = (await endpoints('copy')).filter((e) =>
      original.some((o) => o.method === e.method && o.path === e.path),
    );
    const documentation = (list: EndpointResponse[]) =>
      list.map(({ method, path, parameters }) => ({ method, path, parameters }));
    expect(documentation(copied)).toEqual(documentation(original));
  });

  it('never stores a parameter or header value', async () => {
    expect(await tablesContaining(backend.databaseUrl, CANARY)).toEqual([]);
    // The names are stored, so the search does find what is there.
    expect(await tablesContaining(backend.databaseUrl, 'x-tenant')).toEqual(
      expect.arrayContaining(['endpoint_versions', 'observations']),
    );
  });
});

describe('a stored row whose names grow', () => {
  it('shows the new name as a diff on every replica, though its status and bodies were seen before', async () => {
    await backend.api('POST', '/projects', { slug: 'grow', name: 'grow' });
    const token = (await backend.api<TokenResponse>('POST', '/projects/grow/tokens', { name: 'agent', scope: 'agent' }))
      .body.token as string;
    const planned = await backend.api<ProposalResponse>('POST', '/projects/grow/proposals', {
      title: 'Items',
      endpoints: [
        {
          method: 'GET',
          path: '/items',
          responses: [{ status: 200 }],
          parameters: { query: [{ name: 'limit', required: false }], headers: [] },
        },
      ],
    });
    expect((await backend.api('POST', `/projects/grow/proposals/${planned.body.id}/approve`)).status).toBe(200);
    const agent = await connectTestAgent(backend.url, token);
    const hello = helloMessage({ agentId: 'grow' });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    // One observation key (GET /items 200, no bodies), sent twice with different query names.
    const batch = (query: string[]) => {
      const message = batchMessage(hello.capture.id, [{ method: 'GET', path: '/items', status: 200 }]);
      return { ...message, observations: message.observations.map((o) => ({ ...o, query })) };
    };
    const diffs = async (on: TestBackend) =>
      (await on.api<DiffResponse[]>('GET', `/projects/grow/captures/${hello.capture.id}/diffs`)).body;
    expect(await agent.request(batch(['limit']))).toMatchObject({ type: 'ack' });
    // Read once, so the endpoint's stored flag says it conforms.
    expect(await diffs(backend)).toEqual([]);
    expect(await agent.request(batch(['limit', 'page']))).toMatchObject({ type: 'ack' });
    await agent.close();
    const named = [
      expect.objectContaining({
        method: 'GET',
        path: '/items',
        changes: [{ change: 'added', in: 'query', at: 'page', breaking: false }],
      }),
    ];
    expect(await diffs(backend)).toEqual(named);
    // A replica without kept views computes from the stored flags: the grown names made them stale.
    const fresh = await startTestReplica(backend);
    try {
      expect(await diffs(fresh)).toEqual(named);
    } finally {
      await fresh.close();
    }
  });
});
