/** Proposals: made from planned shapes or a capture, approved by a write token, moved by evidence alone. */
import type { ProposalResponse, TokenResponse } from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { report } from './support/evidence-helpers';

let backend: TestBackend;
let agentToken: string;
let readToken: string;
let bobToken: string;

const orderSchema = {
  type: 'object',
  properties: { id: { type: 'number' }, total: { type: 'number' } },
  required: ['id', 'total'],
};
const planned = (path: string, schema: unknown = orderSchema): unknown => ({
  title: `Plan ${path}`,
  description: 'design first',
  endpoints: [
    {
      method: 'GET',
      path,
      description: 'One order',
      responses: [{ status: 200, contentType: 'application/json', schema }],
    },
  ],
});
const order = (path: string): { method: string; path: string; status: number; response: unknown } => ({
  method: 'GET',
  path,
  status: 200,
  response: { id: 1, total: 9.5 },
});

async function create(
  body: unknown,
  token = bobToken,
): Promise<{ status: number; body: ProposalResponse & { message?: string } }> {
  return backend.api('POST', '/projects/plans/proposals', body, token);
}

async function approved(path: string): Promise<ProposalResponse> {
  const made = await create(planned(path));
  expect(made.status).toBe(201);
  const result = await backend.api<ProposalResponse>(
    'POST',
    `/projects/plans/proposals/${made.body.id}/approve`,
    undefined,
    bobToken,
  );
  expect(result.status).toBe(200);
  return result.body;
}

const get = async (id: string): Promise<ProposalResponse> =>
  (await backend.api<ProposalResponse>('GET', `/projects/plans/proposals/${id}`, undefined, readToken)).body;

beforeAll(async () => {
  backend = await startTestBackend();
  await backend.api('POST', '/projects', { slug: 'plans', name: 'Plans' });
  const token = async (name: string, scope: string): Promise<string> =>
    (await backend.api<TokenResponse>('POST', '/projects/plans/tokens', { name, scope })).body.token as string;
  agentToken = await token('agents', 'agent');
  readToken = await token('reader', 'read');
  bobToken = await token('bob', 'write');
});
afterAll(async () => {
  await backend.close();
});

describe('proposals', () => {
  it('are made from planned shapes (design first): open, with the versions they would make', async () => {
    const made = await create(planned('/orders/{orderId}'));
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      title: 'Plan /orders/{orderId}',
      description: 'design first',
      status: 'Open',
      createdBy: 'bob',
      steps: [],
      endpoints: [
        {
          endpointId: null,
          method: 'GET',
          path: '/orders/{orderId}',
          fromVersion: null,
          toVersion: '1.0',
          changes: [],
        },
      ],
    });
    const list = await backend.api<ProposalResponse[]>('GET', '/projects/plans/proposals', undefined, readToken);
    expect(list.body.map((p) => p.id)).toContain(made.body.id);
  });

  it('are approved by a write token only, once; the approver is the actor and the versions are made', async () => {
    const made = await create(planned('/invoices'));
    expect(
      (await backend.api('POST', `/projects/plans/proposals/${made.body.id}/approve`, undefined, readToken)).status,
    ).toBe(403);
    expect((await create(planned('/other'), readToken)).status).toBe(403);
    const result = await backend.api<ProposalResponse>(
      'POST',
      `/projects/plans/proposals/${made.body.id}/approve`,
      undefined,
      bobToken,
    );
    expect(result.body).toMatchObject({
      status: 'Approved',
      steps: [{ step: 'Approved', actor: 'bob', at: expect.any(String) }],
    });
    expect(result.body.endpoints).toEqual([
      expect.objectContaining({ endpointId: expect.any(String), fromVersion: null, toVersion: '1.0' }),
    ]);
    const again = await backend.api<{ message: string }>(
      'POST',
      `/projects/plans/proposals/${made.body.id}/approve`,
      undefined,
      bobToken,
    );
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('already approved');
    // A breaking planned change makes the next major.
    const next = await create(
      planned('/invoices', { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }),
    );
    expect(next.body.endpoints.map((e) => [e.fromVersion, e.toVersion, e.changes.some((c) => c.breaking)])).toEqual([
      ['1.0', '2.0', true],
    ]);
  });

  it.each([
    ['a JSON Schema it cannot read', planned('/bad', { type: 'thing' }), 'endpoints[0].responses[0].schema'],
    [
      'planned shapes together with a capture',
      {
        title: 't',
        captureId: '00000000-0000-4000-8000-000000000000',
        endpoints: [{ method: 'GET', path: '/x', responses: [] }],
      },
      'capture',
    ],
    [
      'no responses without a capture',
      { title: 't', endpoints: [{ method: 'GET', path: '/x' }] },
      'endpoints[0].responses must list at least one response',
    ],
    [
      'an endpoint twice',
      {
        title: 't',
        endpoints: [
          { method: 'GET', path: '/x', responses: [{ status: 200, contentType: 'application/json' }] },
          { method: 'GET', path: '/x', responses: [{ status: 200, contentType: 'application/json' }] },
        ],
      },
      'endpoints[1] repeats GET /x',
    ],
    [
      'a status twice',
      {
        title: 't',
        endpoints: [
          {
            method: 'GET',
            path: '/x',
            responses: [
              { status: 200, contentType: 'a/b' },
              { status: 200, contentType: 'a/b' },
            ],
          },
        ],
      },
      'endpoints[0].responses[1] repeats status 200',
    ],
    [
      'an unknown method',
      { title: 't', endpoints: [{ method: 'FETCH', path: '/x', responses: [] }] },
      'endpoints[0].method',
    ],
    [
      'an unknown field',
      { title: 't', owner: 'me', endpoints: [{ method: 'GET', path: '/x', responses: [] }] },
      'owner should not exist',
    ],
    ['no title', { endpoints: [{ method: 'GET', path: '/x', responses: [] }] }, 'title'],
  ])('refuses %s with 400 naming it', async (_name, body, message) => {
    const result = await create(body);
    expect(result.status).toBe(400);
    expect(result.body.message).toContain(message);
  });

  it('answers 404 for an unknown proposal and 400 for a malformed id', async () => {
    expect(
      (await backend.api('GET', '/projects/plans/proposals/00000000-0000-4000-8000-000000000000', undefined, readToken))
        .status,
    ).toBe(404);
    expect(
      (
        await backend.api(
          'POST',
          '/projects/plans/proposals/00000000-0000-4000-8000-000000000000/approve',
          undefined,
          bobToken,
        )
      ).status,
    ).toBe(404);
    expect((await backend.api('GET', '/projects/plans/proposals/nope', undefined, readToken)).status).toBe(400);
  });
});

describe('steps from evidence', () => {
  it('records each step once, when its own evidence appears, even out of order; the status is the furthest step and never moves back', async () => {
    const p = await approved('/receipts');
    // Production shows it before any CI run did.
    await report(backend.url, agentToken, { kind: 'production', build: 'p-9', commit: 'c9' }, [order('/receipts')]);
    expect(await get(p.id)).toMatchObject({
      status: 'Appeared in Production',
      steps: [{ step: 'Approved' }, { step: 'Appeared in Production', build: 'p-9', commit: 'c9' }],
    });
    await report(backend.url, agentToken, { kind: 'ci', pullRequest: '5', commit: 'c5' }, [order('/receipts')]);
    await report(backend.url, agentToken, { kind: 'ci', pullRequest: '6', commit: 'c6' }, [order('/receipts')]);
    const later = await get(p.id);
    expect(later.status).toBe('Appeared in Production');
    expect(later.steps.map((s) => [s.step, s.pullRequest ?? s.build ?? null])).toEqual([
      ['Approved', null],
      ['Implemented', '5'],
      ['Appeared in Production', 'p-9'],
    ]);
  });

  it('waits until a row shows the version the proposal made or a later one, not an earlier one', async () => {
    const first = await approved('/bills');
    const withCurrency = {
      ...orderSchema,
      properties: { ...orderSchema.properties, currency: { type: 'string' } },
      required: ['id', 'total', 'currency'],
    };
    const madeSecond = await create(planned('/bills', withCurrency));
    expect(madeSecond.status).toBe(201);
    await backend.api('POST', `/projects/plans/proposals/${madeSecond.body.id}/approve`, undefined, bobToken);
    // Traffic without a currency conforms to the first version only: the row shows it.
    await report(backend.url, agentToken, { kind: 'staging', build: 'i-1' }, [order('/bills')]);
    expect((await get(first.id)).status).toBe('Appeared in Staging');
    expect((await get(madeSecond.body.id)).status).toBe('Approved');
    await report(backend.url, agentToken, { kind: 'staging', build: 'i-2' }, [
      { ...order('/bills'), response: { id: 1, total: 2, currency: 'EUR' } },
    ]);
    expect(await get(madeSecond.body.id)).toMatchObject({
      status: 'Appeared in Staging',
      steps: [{ step: 'Approved' }, { step: 'Appeared in Staging', build: 'i-2' }],
    });
  });

  it('waits until the evidence shows every version the proposal made', async () => {
    const made = await create({
      title: 'Two endpoints',
      endpoints: ['/a', '/b'].map((path) => ({
        method: 'GET',
        path,
        responses: [{ status: 200, contentType: 'application/json', schema: orderSchema }],
      })),
    });
    await backend.api('POST', `/projects/plans/proposals/${made.body.id}/approve`, undefined, bobToken);
    await report(backend.url, agentToken, { kind: 'staging', build: 's-1' }, [order('/a')]);
    expect((await get(made.body.id)).status).toBe('Approved');
    // Traffic that conforms to no version (a field too many) does not show it either.
    await report(backend.url, agentToken, { kind: 'staging', build: 's-1' }, [
      { ...order('/b'), response: { id: 1, total: 2, extra: true } },
    ]);
    expect((await get(made.body.id)).status).toBe('Approved');
    await report(backend.url, agentToken, { kind: 'staging', build: 's-2' }, [order('/a'), order('/b')]);
    expect(await get(made.body.id)).toMatchObject({
      status: 'Appeared in Staging',
      steps: [{ step: 'Approved' }, { step: 'Appeared in Staging', build: 's-2' }],
    });
  });
});
