/** Comparing the versions two environments run, from evidence sent by hand-driven agents over real WebSockets. */
import type { CiSummaryResponse, CompareResponse, ProposalResponse, TokenResponse } from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { report } from './support/evidence-helpers';

let backend: TestBackend;

const json = 'application/json';
const id = { type: 'number' };
const name = { type: 'string' };
const tags = { type: 'array', items: { type: 'string' } };

async function document(
  method: string,
  path: string,
  properties: Record<string, unknown>,
  required: string[],
): Promise<string> {
  const created = await backend.api<ProposalResponse>('POST', '/projects/release/proposals', {
    title: `${method} ${path}`,
    endpoints: [
      {
        method,
        path,
        responses: [{ status: 200, contentType: json, schema: { type: 'object', properties, required } }],
      },
    ],
  });
  expect(created.status).toBe(201);
  const approved = await backend.api<ProposalResponse>(
    'POST',
    `/projects/release/proposals/${created.body.id}/approve`,
  );
  expect(approved.status).toBe(200);
  return approved.body.endpoints[0]?.toVersion as string;
}

async function compare(query: string): Promise<CompareResponse> {
  const { status, body } = await backend.api<CompareResponse>('GET', `/projects/release/compare?${query}`);
  expect(status).toBe(200);
  return body;
}

beforeAll(async () => {
  backend = await startTestBackend();
  await backend.api('POST', '/projects', { slug: 'release', name: 'Release' });
  const token = (
    await backend.api<TokenResponse>('POST', '/projects/release/tokens', { name: 'agents', scope: 'agent' })
  ).body.token as string;
  // GET /items: 1.0 {id, name}; 1.1 adds optional tags; 2.0 drops name (breaking for clients).
  expect(await document('GET', '/items', { id, name }, ['id', 'name'])).toBe('1.0');
  expect(await document('GET', '/items', { id, name, tags }, ['id', 'name'])).toBe('1.1');
  expect(await document('GET', '/items', { id, tags }, ['id'])).toBe('2.0');
  await document('GET', '/orders', { id }, ['id']);
  await document('GET', '/health', { name }, ['name']);

  const items = { method: 'GET', path: '/items', status: 200 };
  await report(backend.url, token, { kind: 'production', build: 'p-1', commit: 'aaa' }, [
    { ...items, response: { id: 1, name: 'x' } },
    { method: 'GET', path: '/health', status: 200, response: { name: 'ok' } },
  ]);
  await report(backend.url, token, { kind: 'staging', build: 's-1', commit: 'bbb' }, [
    { ...items, response: { id: 1, name: 'x', tags: ['a'] } },
    { method: 'GET', path: '/orders', status: 200, response: { id: 7 } },
  ]);
  await report(backend.url, token, { kind: 'ci', pullRequest: '9', commit: 'ccc' }, [
    { ...items, response: { id: 1, tags: [] } },
  ]);
});
afterAll(async () => {
  await backend.close();
});

describe('GET /projects/{p}/compare', () => {
  it('tells what production clients would see change if staging replaced it: versions, changes, endpoints seen on one side only', async () => {
    const result = await compare('from=production&to=staging');
    expect(result.from).toEqual({ environment: 'production', pullRequest: null });
    expect(result.to).toEqual({ environment: 'staging', pullRequest: null });
    expect(result.breaking).toBe(false);
    const byPath = Object.fromEntries(result.endpoints.map((e) => [e.path, e]));
    expect(Object.keys(byPath).sort()).toEqual(['/health', '/items', '/orders']);
    expect(byPath['/items']).toMatchObject({
      method: 'GET',
      status: 'changed',
      from: { version: '1.0', drift: false, build: 'p-1', commit: 'aaa' },
      to: { version: '1.1', drift: false, build: 's-1', commit: 'bbb' },
      breaking: false,
      changes: [{ change: 'added', in: 'response', status: 200, at: '$.tags', breaking: false }],
    });
    expect(byPath['/orders']).toMatchObject({
      status: 'only in to',
      from: { version: 'N/A' },
      to: { version: '1.0' },
      changes: [],
    });
    expect(byPath['/health']).toMatchObject({
      status: 'only in from',
      from: { version: '1.0' },
      to: { version: 'N/A' },
      changes: [],
    });
  });

  it("marks a pull request's breaking change against production", async () => {
    const result = await compare('from=production&to=ci&toPullRequest=9');
    expect(result.to).toEqual({ environment: 'ci', pullRequest: '9' });
    expect(result.breaking).toBe(true);
    const items = result.endpoints.find((e) => e.path === '/items');
    expect(items).toMatchObject({
      status: 'changed',
      from: { version: '1.0' },
      to: { version: '2.0', pullRequest: '9', commit: 'ccc' },
      breaking: true,
    });
    expect(items?.changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ change: 'removed', in: 'response', at: '$.name', breaking: true }),
        expect.objectContaining({ change: 'added', in: 'response', at: '$.tags', breaking: false }),
      ]),
    );
    // The same environment on both sides of one version is `same`, with no changes.
    const same = await compare('from=ci&to=ci&toPullRequest=9');
    expect(same.endpoints.find((e) => e.path === '/items')).toMatchObject({
      status: 'same',
      changes: [],
      breaking: false,
    });
  });

  it("is part of the CI gate's summary: what the pull request changes for production's clients (not the endpoints its CI did not call)", async () => {
    const { status, body } = await backend.api<CiSummaryResponse>('GET', '/projects/release/ci/9');
    expect(status).toBe(200);
    expect(body.againstProduction).toEqual({
      ...(await compare('from=production&to=ci&toPullRequest=9')),
      endpoints: expect.any(Array),
    });
    expect(
      body.againstProduction.endpoints.map((e) => [e.path, e.status, e.from.version, e.to.version, e.breaking]),
    ).toEqual([['/items', 'changed', '1.0', '2.0', true]]);
  });

  it('answers bad input with 400 naming what is wrong', async () => {
    const cases: Array<[string, RegExp]> = [
      ['from=moon&to=staging', /^from must be one of the following values: ci, staging, production$/],
      ['to=staging', /^from must be one of/],
      ['from=production&to=staging&toPullRequest=9', /^toPullRequest is only for to=ci$/],
      ['from=staging&to=ci&fromPullRequest=9', /^fromPullRequest is only for from=ci$/],
      ['from=staging&to=staging', /^from and to are the same \(staging\)$/],
    ];
    for (const [query, message] of cases) {
      const { status, body } = await backend.api<{ message: string }>('GET', `/projects/release/compare?${query}`);
      expect({ query, status, message: body.message }).toEqual({
        query,
        status: 400,
        message: expect.stringMatching(message),
      });
    }
  });
});
