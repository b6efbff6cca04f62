/**
 * Removal as a proposal (issue 19), as a story with real agents in front of a real API: GET /users
 * and GET /legacy are documented and production calls only /users, so /legacy is safe to remove.
 * A removal proposal of GET /legacy is made from that list through the API, reviewed (1.0 → 2.0,
 * "endpoint removed") and approved like any proposal, with its audit entry and chat messages; the
 * endpoint list, the OpenAPI export, the matrix and the changelog treat it as removed. Steps move
 * from evidence alone: a staging build whose API answers 404 for it moves Appeared in Staging, a
 * production build that still answers 200 does not (and the proposal says why), a CI run with too
 * few calls does not either, and a production build without it moves Appeared in Production.
 */
import {
  type ChangelogResponse,
  type EndpointResponse,
  type ProposalResponse,
  REMOVAL_MIN_CALLS,
  type SafeToRemoveResponse,
  type TokenResponse,
  type VersionMatrixResponse,
  type WebhookResponse,
  type AgentEnvironment,
} from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { type ChatReceiver, startChatReceiver, teamsProblems } from './support/chat-receiver';
import { call, documentGet, eventually, report, startJsonApp, withAgent } from './support/evidence-helpers';

const P = 'gone';

let backend: TestBackend;
let receiver: ChatReceiver;
let agentToken: string;
let writeToken: string;
let removal: ProposalResponse;

/**
 * Runs a real agent for `environment` in front of the API (serving GET /legacy or answering 404 for
 * it), calls GET /legacy `legacy` times and then GET /users `users` times (the legacy calls first:
 * a row is judged on what its folds have so far), then closes the agent (its evidence acknowledged).
 */
async function run(environment: AgentEnvironment, serving: boolean, users: number, legacy: number): Promise<void> {
  const app = await startJsonApp({
    'GET /users': () => ({ status: 200, body: { id: 1 } }),
    ...(serving ? { 'GET /legacy': () => ({ status: 200, body: { code: 'x' } }) } : {}),
  });
  try {
    await withAgent(backend.url, agentToken, app.url, environment, async (proxy) => {
      for (let i = 0; i < legacy; i++) await call(proxy, 'GET', '/legacy');
      for (let i = 0; i < users; i++) await call(proxy, 'GET', '/users');
    });
  } finally {
    await app.close();
  }
}

const proposal = async (): Promise<ProposalResponse> =>
  (await backend.api<ProposalResponse>('GET', `/projects/${P}/proposals/${removal.id}`)).body;

/** Waits until `kind`'s evidence of GET /users comes from row `name` (its batches folded). */
async function folded(environment: string, name: string): Promise<void> {
  await eventually(
    async () =>
      (
        await backend.api<{ endpoints: Array<{ path: string; row: string | null }> }>(
          'GET',
          `/projects/${P}/evidence?environment=${environment}`,
        )
      ).body.endpoints,
    (rows) => rows.some((row) => row.path === '/users' && row.row === name),
  );
}

const waitingFor = (p: ProposalResponse, step: string): string | undefined =>
  p.waiting?.find((w) => w.step === step)?.reason;

beforeAll(async () => {
  backend = await startTestBackend({ publicUrl: 'https://spectator.example.com' });
  expect((await backend.api('POST', '/projects', { slug: P, name: 'Gone' })).status).toBe(201);
  const token = async (name: string, scope: string): Promise<string> =>
    (await backend.api<TokenResponse>('POST', `/projects/${P}/tokens`, { name, scope })).body.token as string;
  agentToken = await token('agents', 'agent');
  writeToken = await token('team', 'write');
  receiver = await startChatReceiver(teamsProblems);
  for (const format of ['slack', 'teams'])
    expect(
      (
        await backend.api<WebhookResponse>('POST', `/projects/${P}/webhooks`, {
          url: `${receiver.url}/${format}`,
          format,
        })
      ).status,
    ).toBe(201);
  await documentGet(backend, P, '/users', { id: { type: 'number' } });
  await documentGet(backend, P, '/legacy', { code: { type: 'string' } });
  await run({ kind: 'production', build: 'p-1' }, true, 20, 0);
  await folded('production', 'p-1');
});

afterAll(async () => {
  await backend?.close();
  await receiver?.close();
});

describe('removing an endpoint', () => {
  it('refuses a removal it cannot make, naming why', async () => {
    const refused = async (body: unknown): Promise<string> => {
      const answer = await backend.api<{ message: string }>('POST', `/projects/${P}/proposals`, body, writeToken);
      expect(answer.status).toBe(400);
      return answer.body.message;
    };
    const remove = (path: string) => ({ method: 'GET', path, remove: true });
    expect(await refused({ title: 'x', endpoints: [remove('/nothing')] })).toMatch(
      /endpoints\[0\]: GET \/nothing is not documented/,
    );
    expect(
      await refused({
        title: 'x',
        endpoints: [remove('/legacy'), { method: 'GET', path: '/new', responses: [{ status: 204 }] }],
      }),
    ).toMatch(/endpoints\[1\]: a proposal removes endpoints or documents them, not both/);
    expect(await refused({ title: 'x', endpoints: [{ ...remove('/legacy'), responses: [{ status: 204 }] }] })).toMatch(
      /endpoints\[0\]: request, responses and parameters are not allowed with remove/,
    );
    expect(
      await refused({ title: 'x', captureId: '00000000-0000-4000-8000-000000000000', endpoints: [remove('/legacy')] }),
    ).toMatch(/captureId/);
  });

  it('is proposed from what is safe to remove, reviewed and approved like any proposal', async () => {
    const safe = (await backend.api<SafeToRemoveResponse>('GET', `/projects/${P}/usage/safe-to-remove`)).body;
    expect(safe.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual(['GET /legacy']);
    const made = await backend.api<ProposalResponse>(
      'POST',
      `/projects/${P}/proposals`,
      {
        title: safe.draft?.title,
        description: safe.draft?.description,
        endpoints: safe.endpoints.map((e) => ({ method: e.method, path: e.path, remove: true })),
      },
      writeToken,
    );
    expect(made.status).toBe(201);
    removal = made.body;
    expect(removal).toMatchObject({ status: 'Open', removal: true });
    expect(removal.endpoints).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/legacy',
        fromVersion: '1.0',
        toVersion: '2.0',
        changes: [{ change: 'endpoint removed', in: 'response', at: '$', breaking: true }],
      }),
    ]);

    const approved = await backend.api<ProposalResponse>('POST', `/projects/${P}/proposals/${removal.id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body.status).toBe('Approved');
    expect(approved.body.endpoints[0]).toMatchObject({ fromVersion: '1.0', toVersion: '2.0' });
    // Nothing of staging, production or CI was first seen after the approval yet.
    expect(waitingFor(approved.body, 'Appeared in Staging')).toBe('no staging build first seen since the approval');
    expect(waitingFor(approved.body, 'Implemented')).toBe('no CI run first seen since the approval');

    const audit = await backend.api<{ events: Array<{ action: string; target: string }> }>(
      'GET',
      `/projects/${P}/audit?action=proposal.approved`,
    );
    expect(audit.body.events.map((e) => e.target)).toContain(removal.id);
    // Removed again: refused.
    const again = await backend.api<{ message: string }>(
      'POST',
      `/projects/${P}/proposals`,
      { title: 'again', endpoints: [{ method: 'GET', path: '/legacy', remove: true }] },
      writeToken,
    );
    expect(again.status).toBe(400);
    expect(again.body.message).toMatch(/GET \/legacy is removed already \(2\.0\)/);
  });

  it('leaves the removed endpoint out of the list and the export, and marks it in the matrix and changelog', async () => {
    const endpoints = (await backend.api<EndpointResponse[]>('GET', `/projects/${P}/endpoints`)).body;
    expect(endpoints.map((e) => e.path)).toEqual(['/users']);
    const exported = (await backend.api<{ paths: Record<string, unknown> }>('GET', `/projects/${P}/openapi.json`)).body;
    expect(Object.keys(exported.paths)).toEqual(['/users']);
    const atTwo = (
      await backend.api<{ paths: Record<string, unknown> }>('GET', `/projects/${P}/openapi.json?version=2.0`)
    ).body;
    expect(Object.keys(atTwo.paths)).toEqual([]);
    const matrix = (await backend.api<VersionMatrixResponse>('GET', `/projects/${P}/versions`)).body;
    expect(matrix.endpoints.find((e) => e.path === '/legacy')).toMatchObject({ version: '2.0', removed: true });
    expect(matrix.endpoints.find((e) => e.path === '/users')?.removed).toBeUndefined();
    const changelog = (await backend.api<ChangelogResponse>('GET', `/projects/${P}/changelog`)).body;
    expect(changelog.entries[0]).toMatchObject({ path: '/legacy', version: '2.0', previous: '1.0', breaking: true });
    const markdown = (await backend.api<string>('GET', `/projects/${P}/changelog.md`)).body;
    expect(markdown).toContain('### `GET /legacy` 2.0 — breaking');
    expect(markdown).toContain('- **breaking** endpoint removed');
    const atom = (await backend.api<string>('GET', `/projects/${P}/changelog.atom`)).body;
    expect(atom).toContain('endpoint removed');
    const safe = (await backend.api<SafeToRemoveResponse>('GET', `/projects/${P}/usage/safe-to-remove`)).body;
    expect(safe.endpoints).toEqual([]);
  });

  it('moves Appeared in Staging when a staging build shows it gone, and tells the chats', async () => {
    await run({ kind: 'staging', build: 's-2' }, false, REMOVAL_MIN_CALLS, 3);
    const moved = await eventually(proposal, (p) => p.steps.some((s) => s.step === 'Appeared in Staging'));
    expect(moved.status).toBe('Appeared in Staging');
    expect(moved.steps.find((s) => s.step === 'Appeared in Staging')).toMatchObject({ build: 's-2' });
    expect(waitingFor(moved, 'Appeared in Staging')).toBeUndefined();
    // 404s of the endpoint conform to the removed version: a build that answered them shows 2.0, not
    // drift (sent by the hand-driven agent: a real one counts 404s as noise until it has the templates).
    await report(backend.url, agentToken, { kind: 'staging', build: 's-3' }, [
      { method: 'GET', path: '/legacy', status: 404, response: { error: 'not found' } },
    ]);
    const matrix = await eventually(
      async () => (await backend.api<VersionMatrixResponse>('GET', `/projects/${P}/versions?kind=staging`)).body,
      (m) => m.rows[0]?.name === 's-3',
    );
    const column = matrix.endpoints.findIndex((e) => e.path === '/legacy');
    expect(matrix.cells[0]?.[column]).toEqual({ version: '2.0' });
    for (const format of ['/slack', '/teams'])
      await eventually(
        () => JSON.stringify(receiver.received.get(format) ?? []),
        (text) => text.includes('Appeared in Staging') && text.includes('Remove 1 endpoint'),
      );
    expect(receiver.problems).toEqual([]);
  });

  it('does not move a step while the endpoint still answers 200 there or too few calls were seen, and says why', async () => {
    await run({ kind: 'production', build: 'p-2' }, true, REMOVAL_MIN_CALLS, 41);
    await run({ kind: 'ci', pullRequest: '7' }, false, 5, 0);
    // Every call folded: the reasons name all of them.
    const p = await eventually(
      proposal,
      (read) =>
        waitingFor(read, 'Appeared in Production') === 'still answered 200 in production build p-2, 41 calls' &&
        waitingFor(read, 'Implemented') === `CI run PR #7 has 5 of the ${REMOVAL_MIN_CALLS} calls it needs`,
    );
    expect(p.steps.map((s) => s.step)).toEqual(['Approved', 'Appeared in Staging']);
    expect(p.status).toBe('Appeared in Staging');
  });

  it('moves Appeared in Production when a production build without it has enough calls', async () => {
    await run({ kind: 'production', build: 'p-3' }, false, REMOVAL_MIN_CALLS, 0);
    const moved = await eventually(proposal, (p) => p.steps.some((s) => s.step === 'Appeared in Production'));
    expect(moved.status).toBe('Appeared in Production');
    expect(moved.steps.find((s) => s.step === 'Appeared in Production')).toMatchObject({ build: 'p-3' });
  });
});
