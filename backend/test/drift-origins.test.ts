/**
 * Where drift began (issue 18): a response field no version documents appears first in pull
 * request 42's CI run, then in staging build s-102, then in production build p-5. Each drifting
 * cell answers with the first pull request, commit and build of each kind where that traffic was
 * seen (`GET /projects/{p}/drift`), and each cell that begins to drift sends `drift.appeared`, with
 * the same, to a real webhook receiver checking signatures.
 */
import type { AgentEnvironment, DriftCellResponse, ProposalResponse, TokenResponse } from '@spectator/shared';
import type { WebhookBody } from '../src/webhooks/transition-events';
import { startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, endCapture, helloMessage } from './support/agent-client';
import { eventually, startHookReceiver, untilFolded } from './support/evidence-helpers';

let backend: TestBackend;
let agentToken: string;
let receiver: Awaited<ReturnType<typeof startHookReceiver>>;
const SECRET = 'drift-webhook-secret-0123456789';

/** One batch of GET /users from an agent of `environment`: `plain` answers as documented, `withEmail` with an extra field. */
async function traffic(environment: AgentEnvironment, plain: number, withEmail: number): Promise<void> {
  const agent = await connectTestAgent(backend.url, agentToken);
  try {
    const hello = helloMessage({ agentId: `drift-${JSON.stringify(environment)}`, environment });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    const exchanges = [
      ...(plain > 0
        ? [{ method: 'GET', path: '/users', status: 200, response: [{ id: 'u', name: 'n' }], count: plain }]
        : []),
      ...(withEmail > 0
        ? [
            {
              method: 'GET',
              path: '/users',
              status: 200,
              response: [{ id: 'u', name: 'n', email: 'e' }],
              count: withEmail,
            },
          ]
        : []),
    ];
    expect(await agent.request(batchMessage(hello.capture.id, exchanges))).toMatchObject({ type: 'ack' });
    await endCapture(agent, hello.capture.id);
    await untilFolded(backend.databaseUrl);
  } finally {
    await agent.close();
  }
}

async function document(properties: string[]): Promise<void> {
  const proposal = await backend.api<ProposalResponse>('POST', '/projects/drift/proposals', {
    title: `users with ${properties.join(', ')}`,
    endpoints: [
      {
        method: 'GET',
        path: '/users',
        responses: [
          {
            status: 200,
            contentType: 'application/json',
            schema: {
              type: 'array',
              items: {
                type: 'object',
                properties: Object.fromEntries(properties.map((p) => [p, { type: 'string' }])),
                required: ['id', 'name'],
              },
            },
          },
        ],
      },
    ],
  });
  expect(proposal.status).toBe(201);
  expect((await backend.api('POST', `/projects/drift/proposals/${proposal.body.id}/approve`)).status).toBe(200);
}

const drift = async (): Promise<DriftCellResponse[]> => {
  const { status, body } = await backend.api<DriftCellResponse[]>('GET', '/projects/drift/drift');
  expect(status).toBe(200);
  return body;
};
const appeared = (): WebhookBody[] =>
  receiver.received.map((r) => JSON.parse(r.body) as WebhookBody).filter((b) => b.type === 'drift.appeared');

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api('POST', '/projects', { slug: 'drift', name: 'Users API' })).status).toBe(201);
  agentToken = (await backend.api<TokenResponse>('POST', '/projects/drift/tokens', { name: 'agents', scope: 'agent' }))
    .body.token as string;
  receiver = await startHookReceiver(SECRET);
  expect(
    (await backend.api('POST', '/projects/drift/webhooks', { url: `${receiver.url}/hooks`, secret: SECRET })).status,
  ).toBe(201);
  await document(['id', 'name']);
});
afterAll(async () => {
  await receiver?.close();
  await backend?.close();
});

describe('where drift began', () => {
  it('names the first pull request, commit and builds where the drifting traffic was seen', async () => {
    // Pull request 41 runs as documented: no drift anywhere.
    await traffic({ kind: 'ci', pullRequest: '41', commit: '0000aaa1111' }, 5, 0);
    expect(await drift()).toEqual([]);
    await traffic({ kind: 'ci', pullRequest: '42', commit: 'abc1234def' }, 5, 2);
    await traffic({ kind: 'staging', build: 's-102', commit: 'abc1234def' }, 20, 3);
    await traffic({ kind: 'production', build: 'p-5', commit: 'abc1234def' }, 90, 10);
    // A later pull request with the same field: the drift began before it.
    await traffic({ kind: 'ci', pullRequest: '43', commit: 'fff9999' }, 0, 1);

    const cells = await drift();
    const byRow = Object.fromEntries(cells.map((c) => [c.environment.name, c]));
    expect(Object.keys(byRow).sort()).toEqual(['PR #42', 'PR #43', 'p-5', 's-102']);
    const production = byRow['p-5']!;
    expect(production).toMatchObject({
      method: 'GET',
      path: '/users',
      version: '1.0',
      environment: { kind: 'production', name: 'p-5' },
      build: 'p-5',
      since: 'since PR #42 (abc1234), staging build s-102',
    });
    expect(production.origins.map((o) => [o.kind, o.name, o.pullRequest, o.build, o.commit])).toEqual([
      ['ci', 'PR #42', '42', null, 'abc1234def'],
      ['production', 'p-5', null, 'p-5', 'abc1234def'],
      ['staging', 's-102', null, 's-102', 'abc1234def'],
    ]);
    // A later pull request's drift began in pull request 42; staging and production came after it.
    expect(byRow['PR #43']!.since).toBe('since PR #42 (abc1234)');
    // The first row to show it has only itself to name.
    expect(byRow['PR #42']!.since).toBe('since PR #42 (abc1234)');
  });

  it('sends drift.appeared once per cell that begins to drift, signed, carrying where it began', async () => {
    const events = await eventually(appeared, (found) => found.length === 4);
    expect(receiver.received.every((r) => r.valid)).toBe(true);
    const production = events.find((e) => e.data.type === 'drift.appeared' && e.data.environment.name === 'p-5')!;
    expect(production).toMatchObject({
      type: 'drift.appeared',
      project: 'drift',
      data: {
        type: 'drift.appeared',
        method: 'GET',
        path: '/users',
        environment: { kind: 'production', name: 'p-5' },
        build: 'p-5',
        commit: 'abc1234def',
        version: '1.0',
        since: 'since PR #42 (abc1234), staging build s-102',
        origins: [
          expect.objectContaining({ kind: 'ci', name: 'PR #42', commit: 'abc1234def' }),
          expect.objectContaining({ kind: 'production', name: 'p-5' }),
          expect.objectContaining({ kind: 'staging', name: 's-102' }),
        ],
      },
    });
    // More of the same traffic in production: the cell was drifting already, no drift.appeared is sent.
    await traffic({ kind: 'production', build: 'p-5', commit: 'abc1234def' }, 10, 1);
    // A staging build that runs as documented sends none either, but it moves what staging runs
    // from a drifting 1.0 to 1.0: `version.changed` says so. Once that arrived, its batch has been
    // folded and told (the count of all deliveries taken right after the traffic raced with the
    // folds and deliveries still under way, and failed under load).
    await traffic({ kind: 'staging', build: 's-103', commit: 'bbb' }, 10, 0);
    await eventually(
      () => receiver.received.map((r) => JSON.parse(r.body) as WebhookBody),
      (bodies) =>
        bodies.some((b) => b.data.type === 'version.changed' && b.data.environment.name === 's-103' && !b.data.drift),
    );
    expect(appeared()).toHaveLength(4);
  });

  it('forgets a drift once a version documents the traffic', async () => {
    await document(['id', 'name', 'email']);
    expect(await eventually(drift, (cells) => cells.length === 0)).toEqual([]);
  });
});
