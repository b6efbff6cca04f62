/**
 * Issue 5's story end to end: real agents (one per CI run, staging build and production build) in
 * front of a small real users API, a real backend on embedded PostgreSQL, the real CI gate and a
 * real webhook receiver checking signatures.
 */
import { runCheck } from '@spectator/agent';
import type {
  AgentEnvironment,
  DashboardEvent,
  EvidenceResponse,
  ProposalResponse,
  TokenResponse,
  VersionMatrixResponse,
  WebhookResponse,
} from '@spectator/shared';
import { ROUTES } from '@spectator/shared';
import WebSocket from 'ws';
import type { WebhookBody } from '../src/webhooks/transition-events';
import { startTestBackend, type TestBackend } from './support';
import {
  eventually,
  runUsersTraffic,
  startHookReceiver,
  untilFolded,
  type UsersVariant,
} from './support/evidence-helpers';

let backend: TestBackend;
let agentToken: string;
let readToken: string;
let aliceToken: string;
let receiver: Awaited<ReturnType<typeof startHookReceiver>>;
let dashboard: WebSocket;
const dashboardEvents: DashboardEvent[] = [];
const SECRET = 'story-webhook-secret-0123456789';

/**
 * Runs an agent for an environment in front of a users API variant, sends the usual traffic, and
 * waits until its evidence is folded: the agent's `capture-ended` (and a CI batch's ack) waits for
 * the fold at most SETTLE_MS (5 s), which a fold passed once in a whole-project run at load 12
 * (case 2 read "Appeared in Staging").
 */
async function run(environment: AgentEnvironment, variant: UsersVariant, withUserById: boolean): Promise<string> {
  const capture = await runUsersTraffic(backend.url, agentToken, environment, variant, withUserById);
  await untilFolded(backend.databaseUrl);
  return capture;
}

async function proposal(id: string): Promise<ProposalResponse> {
  const { status, body } = await backend.api<ProposalResponse>(
    'GET',
    `/projects/story/proposals/${id}`,
    undefined,
    readToken,
  );
  expect(status).toBe(200);
  return body;
}

async function proposeFromCapture(
  captureId: string,
  title: string,
  endpoints: Array<{ method: string; path: string }>,
): Promise<ProposalResponse> {
  const created = await backend.api<ProposalResponse>(
    'POST',
    '/projects/story/proposals',
    { title, description: `${title} (from the CI capture)`, captureId, endpoints },
    aliceToken,
  );
  expect(created.status).toBe(201);
  expect(created.body.status).toBe('Open');
  return created.body;
}

async function approve(id: string): Promise<ProposalResponse> {
  const approved = await backend.api<ProposalResponse>(
    'POST',
    `/projects/story/proposals/${id}/approve`,
    undefined,
    aliceToken,
  );
  expect(approved.status).toBe(200);
  return approved.body;
}

/** The matrix as `{row name: {"METHOD path": version}}` (drift marked with `~`). */
async function matrix(): Promise<Record<string, Record<string, string>>> {
  const { status, body } = await backend.api<VersionMatrixResponse>(
    'GET',
    '/projects/story/versions?limit=100',
    undefined,
    readToken,
  );
  expect(status).toBe(200);
  return Object.fromEntries(
    body.rows.map((row, r) => [
      row.name,
      Object.fromEntries(
        body.endpoints.map((e, c) => [
          `${e.method} ${e.path}`,
          `${body.cells[r]?.[c]?.drift ? '~' : ''}${body.cells[r]?.[c]?.version}`,
        ]),
      ),
    ]),
  );
}

async function gate(pr: string, failOn?: string): Promise<{ code: number; output: string }> {
  let output = '';
  const sink = { write: (text: string) => (output += text) };
  const args = [
    '--backend',
    backend.url,
    '--token',
    readToken,
    '--project',
    'story',
    '--pr',
    pr,
    ...(failOn ? ['--fail-on', failOn] : []),
  ];
  const code = await runCheck(args, {}, sink, sink);
  return { code, output };
}

const stepsOf = (p: ProposalResponse): Array<[string, string | null | undefined, string | null | undefined]> =>
  p.steps.map((s) => [s.step, s.pullRequest ?? s.build ?? null, s.actor]);

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api('POST', '/projects', { slug: 'story', name: 'Users API' })).status).toBe(201);
  const token = async (name: string, scope: string, environments?: string[]): Promise<string> =>
    (await backend.api<TokenResponse>('POST', '/projects/story/tokens', { name, scope, environments })).body
      .token as string;
  agentToken = await token('agents', 'agent', ['ci', 'staging', 'production']);
  readToken = await token('ci gate', 'read');
  aliceToken = await token('alice', 'write');
  receiver = await startHookReceiver(SECRET);
  const hook = await backend.api<WebhookResponse>('POST', '/projects/story/webhooks', {
    url: `${receiver.url}/hooks`,
    secret: SECRET,
  });
  expect(hook.status).toBe(201);
  dashboard = new WebSocket(`${backend.url.replace(/^http/, 'ws')}${ROUTES.projectEvents('story')}`, {
    headers: { authorization: `Bearer ${backend.adminToken}` },
  });
  dashboard.on('message', (data) => dashboardEvents.push(JSON.parse(data.toString()) as DashboardEvent));
  await new Promise((resolve) => dashboard.once('open', resolve));
});
afterAll(async () => {
  dashboard?.close();
  await backend?.close();
  await receiver?.close();
});

describe('the story', () => {
  let first: ProposalResponse;
  let byId: ProposalResponse;
  let second: ProposalResponse;
  let third: ProposalResponse;

  it('1: PR #1 shows new GET and POST /users → documented as 1.0 → Approved, then Implemented in PR #1', async () => {
    const capture = await run({ kind: 'ci', pullRequest: '1', commit: 'c1' }, 'v1', true);
    const before = await gate('1');
    expect(before.code).toBe(1);
    expect(before.output).toContain('Undocumented endpoints (3)');
    expect(before.output).toContain('GET /users/{userId}');

    first = await proposeFromCapture(capture, 'Users', [
      { method: 'GET', path: '/users' },
      { method: 'POST', path: '/users' },
    ]);
    expect(first.endpoints.map((e) => [e.method, e.path, e.fromVersion, e.toVersion])).toEqual([
      ['GET', '/users', null, '1.0'],
      ['POST', '/users', null, '1.0'],
    ]);
    const approved = await approve(first.id);
    // PR #1's evidence was already there, so approving it also implements it.
    expect(approved.status).toBe('Implemented');
    expect(stepsOf(approved)).toEqual([
      ['Approved', null, 'alice'],
      ['Implemented', '1', null],
    ]);
    expect(approved.steps[1]?.commit).toBe('c1');
    expect(
      (await backend.api('POST', `/projects/story/proposals/${first.id}/approve`, undefined, aliceToken)).status,
    ).toBe(409);

    // The third endpoint through the dashboard's documentation commit (a proposal made and approved in one step).
    const commit = await backend.api<{ proposalId: string }>('POST', '/projects/story/documentation', {
      captureId: capture,
      endpoints: [{ method: 'GET', path: '/users/{userId}', description: 'One user', documentBodies: true }],
    });
    expect(commit.status).toBe(201);
    byId = await proposal(commit.body.proposalId);
    expect(byId.status).toBe('Implemented');
    expect((await gate('1')).code).toBe(0);
  });

  it('2: staging s-1 and production p-1 → Appeared in Staging and in Production; never seen in production is N/A', async () => {
    await run({ kind: 'staging', build: 's-1', commit: 'c1' }, 'v1', true);
    expect((await proposal(first.id)).status).toBe('Appeared in Staging');
    await run({ kind: 'production', build: 'p-1', commit: 'c1' }, 'v1', false);
    const done = await proposal(first.id);
    expect(done.status).toBe('Appeared in Production');
    expect(stepsOf(done)).toEqual([
      ['Approved', null, 'alice'],
      ['Implemented', '1', null],
      ['Appeared in Staging', 's-1', null],
      ['Appeared in Production', 'p-1', null],
    ]);
    // GET /users/{userId} was never seen in production: its proposal stays in staging.
    expect((await proposal(byId.id)).status).toBe('Appeared in Staging');
    expect(await matrix()).toEqual({
      'PR #1': { 'GET /users': '1.0', 'POST /users': '1.0', 'GET /users/{userId}': '1.0' },
      's-1': { 'GET /users': '1.0', 'POST /users': '1.0', 'GET /users/{userId}': '1.0' },
      'p-1': { 'GET /users': '1.0', 'POST /users': '1.0', 'GET /users/{userId}': 'N/A' },
    });
    const production = await backend.api<EvidenceResponse>(
      'GET',
      '/projects/story/evidence?environment=production',
      undefined,
      readToken,
    );
    expect(production.body.endpoints.map((e) => [e.method, e.path, e.version, e.build, e.commit])).toEqual([
      ['GET', '/users', '1.0', 'p-1', 'c1'],
      ['POST', '/users', '1.0', 'p-1', 'c1'],
      ['GET', '/users/{userId}', 'N/A', null, null],
    ]);
  });

  it('3: PR #2 adds an optional response field → 1.1; staging and production show 1.0 until s-2 and p-2 show it', async () => {
    const capture = await run({ kind: 'ci', pullRequest: '2', commit: 'c2' }, 'v2', false);
    // A non-breaking diff passes the default gate and fails a strict one.
    expect((await gate('2')).code).toBe(0);
    const strict = await gate('2', 'diffs');
    expect(strict.code).toBe(1);
    expect(strict.output).toContain('added response 200 $[].email');

    second = await proposeFromCapture(capture, 'Users have an email', [{ method: 'GET', path: '/users' }]);
    expect(second.endpoints.map((e) => [e.fromVersion, e.toVersion])).toEqual([['1.0', '1.1']]);
    expect((await approve(second.id)).status).toBe('Implemented');
    expect((await matrix())['PR #2']).toEqual({
      'GET /users': '1.1',
      'POST /users': '1.0',
      'GET /users/{userId}': 'N/A',
    });
    const before = await matrix();
    expect([before['s-1']?.['GET /users'], before['p-1']?.['GET /users']]).toEqual(['1.0', '1.0']);

    await run({ kind: 'staging', build: 's-2', commit: 'c2' }, 'v2', true);
    expect((await proposal(second.id)).status).toBe('Appeared in Staging');
    const staging = await backend.api<EvidenceResponse>(
      'GET',
      '/projects/story/evidence?environment=staging',
      undefined,
      readToken,
    );
    expect(staging.body.endpoints.find((e) => e.path === '/users' && e.method === 'GET')).toMatchObject({
      version: '1.1',
      build: 's-2',
      commit: 'c2',
    });
    expect((await matrix())['p-1']?.['GET /users']).toBe('1.0');

    await run({ kind: 'production', build: 'p-2', commit: 'c2' }, 'v2', false);
    expect((await proposal(second.id)).status).toBe('Appeared in Production');
    const after = await matrix();
    expect([
      after['PR #2']?.['GET /users'],
      after['s-1']?.['GET /users'],
      after['s-2']?.['GET /users'],
      after['p-1']?.['GET /users'],
      after['p-2']?.['GET /users'],
    ]).toEqual(['1.1', '1.0', '1.1', '1.0', '1.1']);
  });

  it('4: PR #3 removes a response field → the CI gate fails until it is documented as 2.0', async () => {
    const capture = await run({ kind: 'ci', pullRequest: '3', commit: 'c3' }, 'v3', false);
    const failing = await gate('3');
    expect(failing.code).toBe(1);
    expect(failing.output).toContain('GET /users  documented 1.1  BREAKING');
    expect(failing.output).toContain('FAILED: 1 breaking diff(s)');
    // The row drifts: its traffic conforms to no version of GET /users.
    expect((await matrix())['PR #3']?.['GET /users']).toMatch(/^~1\.[01]$/);

    third = await proposeFromCapture(capture, 'Users lose their name', [{ method: 'GET', path: '/users' }]);
    expect(third.endpoints.map((e) => [e.fromVersion, e.toVersion])).toEqual([['1.1', '2.0']]);
    expect(third.endpoints[0]?.changes.some((c) => c.breaking)).toBe(true);
    const approved = await approve(third.id);
    expect(approved.status).toBe('Implemented');
    expect((await matrix())['PR #3']?.['GET /users']).toBe('2.0');
    const passing = await gate('3');
    expect(passing.code).toBe(0);
    expect(passing.output).toContain('PASSED');
  });

  it('5: the webhook receiver got every step and version change, each with a valid signature', async () => {
    const expected = [
      [first.id, ['Approved', 'Implemented', 'Appeared in Staging', 'Appeared in Production']],
      [byId.id, ['Approved', 'Implemented', 'Appeared in Staging']],
      [second.id, ['Approved', 'Implemented', 'Appeared in Staging', 'Appeared in Production']],
      [third.id, ['Approved', 'Implemented']],
    ] as const;
    const total = expected.reduce((n, [, steps]) => n + steps.length, 0);
    const steps = (): WebhookBody[] =>
      receiver.received.map((r) => JSON.parse(r.body) as WebhookBody).filter((b) => b.type === 'proposal.step');
    await eventually(steps, (found) => found.length >= total);
    expect(receiver.received.every((r) => r.valid)).toBe(true);
    for (const [id, names] of expected) {
      expect(
        steps()
          .filter((b) => b.data.type === 'proposal.step' && b.data.proposalId === id)
          .map((b) => b.data.type === 'proposal.step' && b.data.step),
      ).toEqual(names);
    }
    expect(steps()).toHaveLength(total);
    const changes = receiver.received
      .map((r) => JSON.parse(r.body) as WebhookBody)
      .filter((b) => b.type === 'version.changed');
    expect(changes.map((b) => b.data)).toContainEqual(
      expect.objectContaining({
        method: 'GET',
        path: '/users',
        environment: { kind: 'staging', name: 's-2' },
        previous: '1.0',
        version: '1.1',
        build: 's-2',
        commit: 'c2',
      }),
    );
    expect(changes.map((b) => b.data)).toContainEqual(
      expect.objectContaining({
        method: 'GET',
        path: '/users',
        environment: { kind: 'ci', name: 'PR #3' },
        previous: '1.1',
        version: '2.0',
        drift: false,
        breaking: true,
      }),
    );
    expect(new Set(receiver.received.map((r) => r.delivery)).size).toBe(receiver.received.length);
    // The dashboard hears of events after their commit, gathered per replica (events/), not before the webhooks.
    await eventually(
      () => dashboardEvents,
      (events) =>
        events.some((e) => e.type === 'proposal.step' && e.proposalId === third.id && e.step === 'Implemented') &&
        events.some(
          (e) => e.type === 'version.changed' && e.environment.kind === 'production' && e.environment.name === 'p-2',
        ),
    );
    expect(dashboardEvents).toContainEqual(
      expect.objectContaining({ type: 'proposal.step', proposalId: third.id, step: 'Implemented' }),
    );
    expect(dashboardEvents).toContainEqual(
      expect.objectContaining({
        type: 'version.changed',
        environment: { kind: 'production', name: 'p-2' },
        version: '1.1',
      }),
    );
  });
});
