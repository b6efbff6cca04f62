/** The version matrix and the evidence view, from batches sent by hand-driven agents over real WebSockets. */
import type {
  CiSummaryResponse,
  EvidenceResponse,
  ProposalResponse,
  TokenResponse,
  VersionMatrixResponse,
} from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { report } from './support/evidence-helpers';

let backend: TestBackend;
let agentToken: string;

const item = { method: 'GET', path: '/items', status: 200, response: { id: 1, name: 'x' } };
const itemSchema = {
  type: 'object',
  properties: { id: { type: 'number' }, name: { type: 'string' } },
  required: ['id', 'name'],
};

async function documentItems(responses: unknown[]): Promise<ProposalResponse> {
  const created = await backend.api<ProposalResponse>('POST', '/projects/matrix/proposals', {
    title: 'Items',
    endpoints: [{ method: 'GET', path: '/items', responses }],
  });
  expect(created.status).toBe(201);
  const approved = await backend.api<ProposalResponse>('POST', `/projects/matrix/proposals/${created.body.id}/approve`);
  expect(approved.status).toBe(200);
  return approved.body;
}

async function matrix(query = ''): Promise<VersionMatrixResponse> {
  const { status, body } = await backend.api<VersionMatrixResponse>('GET', `/projects/matrix/versions${query}`);
  expect(status).toBe(200);
  return body;
}

/** `row name → cell of GET /items` (drift marked `~`). */
function itemsColumn(m: VersionMatrixResponse): Record<string, string> {
  const column = m.endpoints.findIndex((e) => e.path === '/items');
  return Object.fromEntries(
    m.rows.map((row, r) => [row.name, `${m.cells[r]?.[column]?.drift ? '~' : ''}${m.cells[r]?.[column]?.version}`]),
  );
}

beforeAll(async () => {
  backend = await startTestBackend();
  await backend.api('POST', '/projects', { slug: 'matrix', name: 'Matrix' });
  agentToken = (await backend.api<TokenResponse>('POST', '/projects/matrix/tokens', { name: 'agents', scope: 'agent' }))
    .body.token as string;
  await documentItems([{ status: 200, contentType: 'application/json', schema: itemSchema }]);
  await backend.api('POST', '/projects/matrix/proposals', {
    title: 'Orders, planned',
    endpoints: [
      {
        method: 'GET',
        path: '/orders',
        responses: [
          { status: 200, contentType: 'application/json', schema: { type: 'array', items: { type: 'number' } } },
        ],
      },
    ],
  });
});
afterAll(async () => {
  await backend.close();
});

describe('the version matrix', () => {
  it('has a row per CI pull request, staging build and production build (not local), newest first per kind, N/A where never seen', async () => {
    await report(backend.url, agentToken, { kind: 'local' }, [item]);
    await report(backend.url, agentToken, { kind: 'ci', pullRequest: '7', commit: 'c7' }, [item]);
    await report(backend.url, agentToken, { kind: 'production', build: 'p-1', commit: 'c1' }, [item]);
    await report(backend.url, agentToken, { kind: 'staging', build: 's-1', commit: 'c1' }, [item]);
    await report(backend.url, agentToken, { kind: 'staging', build: 's-2', commit: 'c2' }, [
      { ...item, path: '/unknown' },
    ]);
    const m = await matrix();
    // Only documented endpoints are columns: the open proposal's GET /orders is not one yet.
    expect(m.endpoints).toEqual([{ id: expect.any(String), method: 'GET', path: '/items', version: '1.0' }]);
    expect(m.rows.map((r) => [r.kind, r.name, r.pullRequest, r.build, r.commit])).toEqual([
      ['ci', 'PR #7', '7', null, 'c7'],
      ['staging', 's-2', null, 's-2', 'c2'],
      ['staging', 's-1', null, 's-1', 'c1'],
      ['production', 'p-1', null, 'p-1', 'c1'],
    ]);
    expect(itemsColumn(m)).toEqual({ 'PR #7': '1.0', 's-2': 'N/A', 's-1': '1.0', 'p-1': '1.0' });
    expect(m.rows.every((r) => !Number.isNaN(Date.parse(r.lastSeen)))).toBe(true);
    expect(m.nextCursor).toBeNull();
  });

  it('pages with a cursor, per kind or across kinds, without repeating or skipping a row', async () => {
    for (const build of ['s-3', 's-4', 's-5'])
      await report(backend.url, agentToken, { kind: 'staging', build }, [item]);
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: VersionMatrixResponse = await matrix(`?kind=staging&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.rows.length).toBeLessThanOrEqual(2);
      expect(page.cells).toHaveLength(page.rows.length);
      names.push(...page.rows.map((r) => r.name));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(names).toEqual(['s-5', 's-4', 's-3', 's-2', 's-1']);
    const first = await matrix('?limit=3');
    const rest = await matrix(`?limit=100&cursor=${first.nextCursor}`);
    expect([...first.rows, ...rest.rows].map((r) => r.name)).toEqual([
      'PR #7',
      's-5',
      's-4',
      's-3',
      's-2',
      's-1',
      'p-1',
    ]);
  });

  it.each([
    ['?kind=local', 'kind must be one of'],
    ['?limit=0', 'limit must not be less than 1'],
    ['?limit=101', 'limit must not be greater than 100'],
    ['?cursor=nope', 'cursor must be a UUID'],
    ['?cursor=00000000-0000-4000-8000-000000000000', 'is not a row of this matrix'],
  ])('answers 400 naming the problem for %s', async (query, message) => {
    const { status, body } = await backend.api<{ message: string }>('GET', `/projects/matrix/versions${query}`);
    expect(status).toBe(400);
    expect(body.message).toContain(message);
  });

  it('flags drift with the nearest version, then shows the new version once one is made that the traffic conforms to', async () => {
    const extra = { ...item, response: { id: 1, name: 'x', tags: ['a'] } };
    await report(backend.url, agentToken, { kind: 'production', build: 'p-2' }, [item, item, extra]);
    // A status code the version does not document is not conforming either.
    await report(backend.url, agentToken, { kind: 'production', build: 'p-3' }, [
      { ...item, status: 404, response: { error: 'gone' } },
    ]);
    expect(itemsColumn(await matrix('?kind=production'))).toEqual({ 'p-3': '~1.0', 'p-2': '~1.0', 'p-1': '1.0' });

    const withTags = {
      ...itemSchema,
      properties: { ...itemSchema.properties, tags: { type: 'array', items: { type: 'string' } } },
      required: ['id', 'name'],
    };
    const made = await documentItems([{ status: 200, contentType: 'application/json', schema: withTags }]);
    expect(made.endpoints.map((e) => [e.fromVersion, e.toVersion])).toEqual([['1.0', '1.1']]);
    expect(itemsColumn(await matrix('?kind=production'))).toEqual({ 'p-3': '~1.1', 'p-2': '1.1', 'p-1': '1.0' });
  });
});

describe('the evidence view', () => {
  it('tells which version of each endpoint runs in an environment now, with build, commit and last seen', async () => {
    const { status, body } = await backend.api<EvidenceResponse>(
      'GET',
      '/projects/matrix/evidence?environment=staging',
    );
    expect(status).toBe(200);
    // s-5 is the newest staging build that saw GET /items.
    expect(body).toEqual({
      environment: 'staging',
      pullRequest: null,
      endpoints: [
        {
          endpointId: expect.any(String),
          method: 'GET',
          path: '/items',
          version: '1.0',
          drift: false,
          row: 's-5',
          pullRequest: null,
          build: 's-5',
          commit: null,
          lastSeen: expect.any(String),
        },
      ],
    });
    const production = await backend.api<EvidenceResponse>('GET', '/projects/matrix/evidence?environment=production');
    expect(production.body.endpoints[0]).toMatchObject({ version: '1.1', drift: true, row: 'p-3' });
  });

  it('reads CI per pull request, or the newest of any', async () => {
    await report(backend.url, agentToken, { kind: 'ci', pullRequest: '8', commit: 'c8' }, [
      { ...item, response: { id: 1, name: 'x', tags: [] } },
    ]);
    const pr7 = await backend.api<EvidenceResponse>('GET', '/projects/matrix/evidence?environment=ci&pullRequest=7');
    expect(pr7.body.endpoints[0]).toMatchObject({ version: '1.0', row: 'PR #7', pullRequest: '7', commit: 'c7' });
    const any = await backend.api<EvidenceResponse>('GET', '/projects/matrix/evidence?environment=ci');
    expect(any.body.endpoints[0]).toMatchObject({ version: '1.1', row: 'PR #8', pullRequest: '8' });
    const unseen = await backend.api<EvidenceResponse>(
      'GET',
      '/projects/matrix/evidence?environment=ci&pullRequest=99',
    );
    expect(unseen.body.endpoints[0]).toMatchObject({ version: 'N/A', row: null, build: null, lastSeen: null });
  });

  it.each([
    ['', 'environment must be one of'],
    ['?environment=local', 'environment must be one of'],
    ['?environment=staging&pullRequest=7', 'pullRequest is only for environment=ci'],
  ])('answers 400 naming the problem for "%s"', async (query, message) => {
    const { status, body } = await backend.api<{ message: string }>('GET', `/projects/matrix/evidence${query}`);
    expect(status).toBe(400);
    expect(body.message).toContain(message);
  });
});

describe('the CI gate summary', () => {
  it("summarises a pull request's captures at its newest commit", async () => {
    await report(backend.url, agentToken, { kind: 'ci', pullRequest: '9', commit: 'old' }, [
      { ...item, path: '/gone' },
    ]);
    const capture = await report(backend.url, agentToken, { kind: 'ci', pullRequest: '9', commit: 'new' }, [
      item,
      { ...item, response: { id: 1 } },
      { ...item, path: '/fresh' },
    ]);
    const { status, body } = await backend.api<CiSummaryResponse>('GET', '/projects/matrix/ci/9');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      pullRequest: '9',
      commit: 'new',
      captures: [capture],
      undocumented: [{ method: 'GET', path: '/fresh', interactions: 1, count: 1 }],
      breaking: true,
    });
    // One response of the capture has name and one lacks it: name is read as now optional (breaking),
    // as accepting would document it; from the differing response alone it read 'removed'.
    expect(body.diffs).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/items',
        breaking: true,
        changes: [expect.objectContaining({ change: 'now optional', at: '$.name', breaking: true })],
      }),
    ]);
  });

  it.each([
    ['/projects/matrix/ci/404', 404, 'pull request 404 has no CI capture in project matrix'],
    ['/projects/matrix/ci/a%20b', 400, 'pr must be a pull request number'],
  ])('answers %s with %i', async (route, expected, message) => {
    const { status, body } = await backend.api<{ message: string }>('GET', route);
    expect(status).toBe(expected);
    expect(body.message).toContain(message);
  });
});
