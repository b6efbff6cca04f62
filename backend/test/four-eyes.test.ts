import type {
  DocumentationResponse,
  EndpointResponse,
  OpenApiImportResponse,
  ProjectResponse,
  ProposalResponse,
  TokenResponse,
} from '@spectator/shared';
import { apiCall, startTestBackend, startTestReplica, type TestBackend } from './support';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';

// Four eyes ("a proposal's author cannot approve it") on every path that makes an approved
// version: approving, a documentation commit (which approves in one step without four eyes), an
// OpenAPI import with ?approve=true. Two replicas on one database: the setting is changed on one
// and must hold at once on the other, whose cache of the project still says it is off.

let first: TestBackend;
let second: TestBackend;
/** Two `write` tokens (two authors), a `read` token. */
const tokens = { ann: '', ben: '', reader: '' };
let captureId: string;

const planned = (path: string): unknown => ({
  title: `Plan ${path}`,
  endpoints: [{ method: 'GET', path, responses: [{ status: 200 }] }],
});
const openapi = (path: string): unknown => ({
  openapi: '3.1.0',
  info: { title: 'T', version: '1' },
  paths: { [path]: { get: { responses: { '200': { description: 'ok' } } } } },
});

async function setFourEyes(on: boolean): Promise<void> {
  const set = await first.api<ProjectResponse>('PATCH', '/projects/fe', { fourEyes: on });
  expect(set).toEqual({ status: 200, body: expect.objectContaining({ fourEyes: on }) });
}

async function proposalCount(): Promise<number> {
  return (await first.api<ProposalResponse[]>('GET', '/projects/fe/proposals')).body.length;
}

beforeAll(async () => {
  first = await startTestBackend();
  second = await startTestReplica(first);
  expect((await first.api('POST', '/projects', { slug: 'fe', name: 'Four eyes' })).status).toBe(201);
  for (const [name, scope] of [
    ['ann', 'write'],
    ['ben', 'write'],
    ['reader', 'read'],
  ] as const) {
    const made = await first.api<TokenResponse>('POST', '/projects/fe/tokens', { name, scope });
    tokens[name] = made.body.token as string;
  }
  const agentToken = (await first.api<TokenResponse>('POST', '/projects/fe/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  const agent = await connectTestAgent(first.url, agentToken);
  const hello = helloMessage({ agentId: 'four-eyes' });
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  captureId = hello.capture.id;
  await agent.request(
    batchMessage(captureId, [
      { method: 'GET', path: '/orders', status: 200, response: { id: 1 } },
      { method: 'GET', path: '/items', status: 200, response: { sku: 'a' } },
    ]),
  );
  await agent.close();
});
afterAll(async () => {
  await second?.close();
  await first?.close();
});
afterEach(() => setFourEyes(false));

describe('four eyes', () => {
  it('refuses a setting that is not true or false, null included, and keeps the old one', async () => {
    for (const fourEyes of [null, 'yes', 1])
      expect(await first.api('PATCH', '/projects/fe', { fourEyes })).toEqual({
        status: 400,
        body: expect.objectContaining({ message: expect.stringContaining('fourEyes must be true or false') }),
      });
    expect((await first.api<ProjectResponse>('GET', '/projects/fe')).body.fourEyes).toBe(false);
    // Left out, it stays as it was.
    expect(await first.api('PATCH', '/projects/fe', {})).toEqual({
      status: 200,
      body: expect.objectContaining({ fourEyes: false }),
    });
  });

  it('set on one replica, refuses the author on another at once (not after its 10 s cache)', async () => {
    // The second replica caches the project with four eyes off.
    expect((await second.api<ProjectResponse>('GET', '/projects/fe')).body.fourEyes).toBe(false);
    const made = await apiCall<ProposalResponse>(
      second.url,
      tokens.ann,
      'POST',
      '/projects/fe/proposals',
      planned('/a'),
    );
    expect(made.status).toBe(201);
    await setFourEyes(true);
    const own = await apiCall<{ message: string }>(
      second.url,
      tokens.ann,
      'POST',
      `/projects/fe/proposals/${made.body.id}/approve`,
    );
    expect(own).toEqual({
      status: 403,
      body: expect.objectContaining({
        message: `this project requires a second person to approve (four eyes): ann made proposal ${made.body.id}`,
      }),
    });
    const other = await apiCall<ProposalResponse>(
      second.url,
      tokens.ben,
      'POST',
      `/projects/fe/proposals/${made.body.id}/approve`,
    );
    expect(other.status).toBe(200);
    expect(other.body.steps[0]).toMatchObject({ step: 'Approved', actor: 'ben' });
  });

  it('makes a documentation commit a proposal for another approver; nothing is documented before', async () => {
    await setFourEyes(true);
    const body = {
      captureId,
      endpoints: [{ method: 'GET', path: '/orders', documentBodies: true }],
      message: 'Document orders',
    };
    const commit = await apiCall<DocumentationResponse>(
      second.url,
      tokens.ann,
      'POST',
      '/projects/fe/documentation',
      body,
    );
    expect(commit).toEqual({
      status: 201,
      body: {
        proposalId: expect.any(String),
        awaitingApproval: true,
        versions: [{ endpointId: null, method: 'GET', path: '/orders', version: '1.0', previous: null }],
      },
    });
    const id = commit.body.proposalId as string;
    const documented = await first.api<EndpointResponse[]>('GET', '/projects/fe/endpoints');
    expect(documented.body.map((e) => e.path)).not.toContain('/orders');
    const open = await first.api<ProposalResponse>('GET', `/projects/fe/proposals/${id}`);
    expect(open.body).toMatchObject({
      title: 'Document orders',
      status: 'Open',
      createdBy: 'ann',
      steps: [],
      endpoints: [{ method: 'GET', path: '/orders', fromVersion: null, toVersion: '1.0' }],
    });
    // Its author cannot approve it; another approver can, and that documents it.
    expect((await apiCall(first.url, tokens.ann, 'POST', `/projects/fe/proposals/${id}/approve`)).status).toBe(403);
    const approved = await apiCall<ProposalResponse>(
      first.url,
      tokens.ben,
      'POST',
      `/projects/fe/proposals/${id}/approve`,
    );
    expect(approved.status).toBe(200);
    expect(approved.body.steps[0]).toMatchObject({ step: 'Approved', actor: 'ben' });
    const now = await first.api<EndpointResponse[]>('GET', '/projects/fe/endpoints');
    expect(now.body.find((e) => e.path === '/orders')).toMatchObject({ version: '1.0' });
    // The same commit again changes nothing: no proposal.
    const again = await apiCall<DocumentationResponse>(
      first.url,
      tokens.ann,
      'POST',
      '/projects/fe/documentation',
      body,
    );
    expect(again.body).toEqual({
      proposalId: null,
      awaitingApproval: true,
      versions: [{ endpointId: expect.any(String), method: 'GET', path: '/orders', version: '1.0', previous: '1.0' }],
    });
  });

  it('without four eyes, a documentation commit is approved at once by its committer (as before)', async () => {
    const commit = await apiCall<DocumentationResponse>(first.url, tokens.ann, 'POST', '/projects/fe/documentation', {
      captureId,
      endpoints: [{ method: 'GET', path: '/items', documentBodies: false }],
    });
    expect(commit.status).toBe(201);
    expect(commit.body.awaitingApproval).toBeUndefined();
    expect(commit.body.versions).toEqual([
      { endpointId: expect.any(String), method: 'GET', path: '/items', version: '1.0', previous: null },
    ]);
    const proposal = await first.api<ProposalResponse>('GET', `/projects/fe/proposals/${commit.body.proposalId}`);
    expect(proposal.body).toMatchObject({ status: 'Approved', steps: [{ step: 'Approved', actor: 'ann' }] });
  });

  it('refuses an OpenAPI import with ?approve=true under four eyes, before it makes anything', async () => {
    await setFourEyes(true);
    const before = await proposalCount();
    const refused = await apiCall<{ message: string }>(
      second.url,
      tokens.ann,
      'POST',
      '/projects/fe/openapi/import?approve=true',
      openapi('/imported'),
    );
    expect(refused).toEqual({
      status: 403,
      body: expect.objectContaining({
        message:
          'this project requires a second person to approve (four eyes): ann cannot approve what they propose; propose without approving, and another approver approves',
      }),
    });
    expect(await proposalCount()).toBe(before);
    // Without ?approve it is an Open proposal, for another approver.
    const proposed = await apiCall<OpenApiImportResponse>(
      second.url,
      tokens.ann,
      'POST',
      '/projects/fe/openapi/import',
      openapi('/imported'),
    );
    expect(proposed.status).toBe(201);
    expect(proposed.body.proposal.status).toBe('Open');
  });

  it('lets an import approve at once without four eyes, for a token that may approve only', async () => {
    const reader = await apiCall(
      first.url,
      tokens.reader,
      'POST',
      '/projects/fe/openapi/import?approve=true',
      openapi('/r'),
    );
    expect(reader.status).toBe(403);
    const done = await apiCall<OpenApiImportResponse>(
      first.url,
      tokens.ann,
      'POST',
      '/projects/fe/openapi/import?approve=true',
      openapi('/approved-import'),
    );
    expect(done.status).toBe(201);
    expect(done.body.proposal.status).toBe('Approved');
  });
});
