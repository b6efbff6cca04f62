/**
 * Where the traffic of each diff was first seen (issue 18), with real agents in front of a real
 * users API (support/evidence-helpers.ts) on a real backend and PostgreSQL: `GET /users` gains an
 * optional `email` first in pull request 42's CI run (commit abc1234…), then in staging build s-102,
 * then in production build p-5. Each capture's diff of it says "since PR #42 (abc1234)…", from its
 * own place in the lifecycle, and so does a later pull request's CI summary; a change production
 * shows first (no pull request ran it) says it began there; and traffic first stored under literal
 * paths keeps its origins once regrouped into a template.
 */
import type {
  AgentEnvironment,
  CiSummaryResponse,
  DiffOriginsResponse,
  DriftCellResponse,
  TokenResponse,
} from '@spectator/shared';
import { originsDifferingFromEvidence } from '../src/evidence/evidence.repository';
import type { DriftAppearedEvent, WebhookBody } from '../src/webhooks/transition-events';
import { sqlOn, startTestBackend, type TestBackend } from './support';
import {
  approveUsersPlan,
  documentGet,
  eventually,
  report,
  runUsersTraffic,
  startHookReceiver,
} from './support/evidence-helpers';

let backend: TestBackend;
let agentToken: string;
const captures: Record<string, string> = {};

/** A real agent of `environment` in front of the users API `variant`; the capture is kept under `name`. */
async function run(name: string, environment: AgentEnvironment, variant: 'v1' | 'v2' | 'v3'): Promise<void> {
  captures[name] = await runUsersTraffic(backend.url, agentToken, environment, variant, false);
}

async function origins(name: string, query = ''): Promise<DiffOriginsResponse[]> {
  const { status, body } = await backend.api<DiffOriginsResponse[]>(
    'GET',
    `/projects/origins/captures/${captures[name]}/diffs/origins${query}`,
  );
  expect(status).toBe(200);
  return body;
}

/** The origins of the capture's diff of one endpoint once `since` reads `expected` (evidence is folded after ingest). */
async function sinceOf(name: string, route: string, expected: string): Promise<DiffOriginsResponse> {
  const answer = await eventually(
    () => origins(name),
    (list) => list.find((o) => `${o.method} ${o.path}` === route)?.since === expected,
  );
  return answer.find((o) => `${o.method} ${o.path}` === route)!;
}

const where = (o: DiffOriginsResponse): string[][] =>
  o.origins.map((x) => [x.kind, x.name, String(x.pullRequest), String(x.build), String(x.commit)]);

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api('POST', '/projects', { slug: 'origins', name: 'Users API' })).status).toBe(201);
  agentToken = (
    await backend.api<TokenResponse>('POST', '/projects/origins/tokens', { name: 'agents', scope: 'agent' })
  ).body.token as string;
  await approveUsersPlan(backend, 'origins', 'Users', ['id', 'name']);
});
afterAll(async () => {
  await backend?.close();
});

describe('where the traffic of each diff was first seen', () => {
  it('names the first pull request, commit and builds, from each capture of the change', async () => {
    // Pull request 41 runs as documented: no diff, nothing to name.
    await run('pr41', { kind: 'ci', pullRequest: '41', commit: '0000aaa1111' }, 'v1');
    expect(await origins('pr41')).toEqual([]);

    await run('pr42', { kind: 'ci', pullRequest: '42', commit: 'abc1234def' }, 'v2');
    const first = await sinceOf('pr42', 'GET /users', 'since PR #42 (abc1234)');
    expect(where(first)).toEqual([['ci', 'PR #42', '42', 'null', 'abc1234def']]);

    await run('s102', { kind: 'staging', build: 's-102', commit: 'abc1234def' }, 'v2');
    await run('p5', { kind: 'production', build: 'p-5', commit: 'abc1234def' }, 'v2');
    const production = await sinceOf('p5', 'GET /users', 'since PR #42 (abc1234), staging build s-102');
    expect(where(production)).toEqual([
      ['ci', 'PR #42', '42', 'null', 'abc1234def'],
      ['staging', 's-102', 'null', 's-102', 'abc1234def'],
      ['production', 'p-5', 'null', 'p-5', 'abc1234def'],
    ]);
    // Staging names what came before it, not the production build that came after.
    expect((await sinceOf('s102', 'GET /users', 'since PR #42 (abc1234)')).origins).toHaveLength(3);
    // The pull request that ran as documented is named nowhere; nor is its capture's diff list changed.
    expect(JSON.stringify(await origins('p5'))).not.toContain('PR #41');
    const diffs = await backend.api<unknown[]>('GET', `/projects/origins/captures/${captures.p5}/diffs`);
    expect(diffs.body).toHaveLength(1);
    expect(diffs.body[0]).not.toHaveProperty('since');
  });

  it("puts them in a later pull request's CI summary and check report", async () => {
    await run('pr43', { kind: 'ci', pullRequest: '43', commit: 'fff9999' }, 'v2');
    const summary = await eventually(
      async () => (await backend.api<CiSummaryResponse>('GET', '/projects/origins/ci/43')).body,
      (s) => s.diffs[0]?.since === 'since PR #42 (abc1234)',
    );
    expect(summary.diffs.map((d) => [d.method, d.path, d.origins?.map((o) => o.name)])).toEqual([
      ['GET', '/users', ['PR #42', 's-102', 'p-5']],
    ]);
  });

  it('says a change first seen in production began there', async () => {
    // Build p-6 drops `name`: no pull request or staging build ran it.
    await run('p6', { kind: 'production', build: 'p-6', commit: '6666666aaa' }, 'v3');
    const dropped = await sinceOf('p6', 'GET /users', 'since production build p-6');
    expect(where(dropped)).toEqual([['production', 'p-6', 'null', 'p-6', '6666666aaa']]);
  });

  it('keeps the origins of traffic stored under literal paths once it is regrouped into a template', async () => {
    const team = (name: string) => ({
      method: 'GET',
      path: `/teams/${name}`,
      status: 200,
      response: { id: 't', name: 'n', plan: 'p' },
    });
    const literal = ['alpha-r9', 'beta-r9', 'gamma-r9'].map(team);
    captures.pr50 = await report(
      backend.url,
      agentToken,
      { kind: 'ci', pullRequest: '50', commit: '5050aaa0' },
      literal,
    );
    captures.p9 = await report(backend.url, agentToken, { kind: 'production', build: 'p-9' }, literal);
    const hinted = await backend.api<{ regrouped: number }>('POST', '/projects/origins/path-hints', {
      template: '/teams/{team}',
    });
    expect(hinted.status).toBe(201);
    expect(hinted.body.regrouped).toBeGreaterThan(0);
    await documentGet(backend, 'origins', '/teams/{team}', { id: { type: 'string' }, name: { type: 'string' } });
    const regrouped = await sinceOf('p9', 'GET /teams/{team}', 'since PR #50 (5050aaa)');
    expect(where(regrouped)).toEqual([
      ['ci', 'PR #50', '50', 'null', '5050aaa0'],
      ['production', 'p-9', 'null', 'p-9', 'null'],
    ]);
    expect(JSON.stringify(regrouped)).not.toContain('alpha-r9');
  });

  it('names the pull request that brought a change, not an older one that picked it up later', async () => {
    await documentGet(backend, 'origins', '/items', { id: { type: 'string' } });
    const items = (tagged: boolean) => [
      { method: 'GET', path: '/items', status: 200, response: { id: 'i', ...(tagged ? { tag: 't' } : {}) } },
    ];
    // Pull request 60 runs first, as documented; 61 brings a `tag`; then 60 is rebased onto it.
    await report(backend.url, agentToken, { kind: 'ci', pullRequest: '60', commit: '6060aaa0' }, items(false));
    captures.pr61 = await report(
      backend.url,
      agentToken,
      { kind: 'ci', pullRequest: '61', commit: '6161bbb0' },
      items(true),
    );
    await sinceOf('pr61', 'GET /items', 'since PR #61 (6161bbb)');
    captures.pr60 = await report(
      backend.url,
      agentToken,
      { kind: 'ci', pullRequest: '60', commit: '6060ccc0' },
      items(true),
    );
    // Pull request 60's cell drifts once its batch is folded: its evidence then has the `tag` too.
    await eventually(
      async () => (await backend.api<DriftCellResponse[]>('GET', '/projects/origins/drift')).body,
      (cells) => cells.some((c) => c.path === '/items' && c.environment.name === 'PR #60'),
    );
    captures.p10 = await report(backend.url, agentToken, { kind: 'production', build: 'p-10' }, items(true));
    const production = await sinceOf('p10', 'GET /items', 'since PR #61 (6161bbb)');
    expect(where(production)).toEqual([
      ['ci', 'PR #61', '61', 'null', '6161bbb0'],
      ['production', 'p-10', 'null', 'p-10', 'null'],
    ]);
    expect((await sinceOf('pr60', 'GET /items', 'since PR #61 (6161bbb)')).origins.map((o) => o.name)).toEqual([
      'PR #61',
      'p-10',
    ]);
  });

  it("names the push that first showed a change, not the pull request's newest, also in drift.appeared", async () => {
    const secret = 'origins-webhook-secret-0123456789';
    const receiver = await startHookReceiver(secret);
    try {
      expect(
        (await backend.api('POST', '/projects/origins/webhooks', { url: `${receiver.url}/hooks`, secret })).status,
      ).toBe(201);
      await documentGet(backend, 'origins', '/orders', { id: { type: 'string' } });
      const orders = (noted: boolean) => [
        { method: 'GET', path: '/orders', status: 200, response: { id: 'o', ...(noted ? { note: 'n' } : {}) } },
      ];
      // Pull request 70's first push runs as documented, its second brings a `note`, its third keeps it.
      const pr70 = (commit: string) => ({ kind: 'ci', pullRequest: '70', commit }) as const;
      await report(backend.url, agentToken, pr70('7070aaa0'), orders(false));
      captures.pr70b = await report(backend.url, agentToken, pr70('7070bbb0'), orders(true));
      await sinceOf('pr70b', 'GET /orders', 'since PR #70 (7070bbb)');
      captures.pr70c = await report(backend.url, agentToken, pr70('7070ccc0'), orders(true));
      // The row follows the pushes (its drifting cell names the newest commit) ...
      const cell = await eventually(
        async () => (await backend.api<DriftCellResponse[]>('GET', '/projects/origins/drift')).body,
        (cells) => cells.some((c) => c.path === '/orders' && c.commit === '7070ccc0'),
      );
      // ... while every origin names the push that brought the `note`.
      const drifting = cell.find((c) => c.path === '/orders')!;
      expect(drifting.origins.map((o) => [o.name, o.commit])).toEqual([['PR #70', '7070bbb0']]);
      expect(drifting.since).toBe('since PR #70 (7070bbb)');
      const latest = await sinceOf('pr70c', 'GET /orders', 'since PR #70 (7070bbb)');
      expect(where(latest)).toEqual([['ci', 'PR #70', '70', 'null', '7070bbb0']]);
      const summary = (await backend.api<CiSummaryResponse>('GET', '/projects/origins/ci/70')).body;
      expect(summary.commit).toBe('7070ccc0');
      expect(summary.diffs.map((d) => [d.path, d.since, d.origins?.map((o) => o.commit)])).toEqual([
        ['/orders', 'since PR #70 (7070bbb)', ['7070bbb0']],
      ]);
      // The webhook sent when the cell began to drift carries the same origin.
      const appeared = async (): Promise<DriftAppearedEvent[]> =>
        receiver.received
          .map((r) => (JSON.parse(r.body) as WebhookBody).data)
          .filter((event): event is DriftAppearedEvent => event.type === 'drift.appeared');
      const hooks = await eventually(appeared, (events) => events.some((e) => e.path === '/orders'));
      const hook = hooks.find((e) => e.path === '/orders')!;
      expect([hook.commit, hook.since, hook.origins.map((o) => o.commit)]).toEqual([
        '7070bbb0',
        'since PR #70 (7070bbb)',
        ['7070bbb0'],
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('keeps every first row equal to a recomputation from the evidence of every row', async () => {
    const [project] = await sqlOn<{ id: string }>(backend.databaseUrl, 'SELECT id FROM projects WHERE slug = $1', [
      'origins',
    ]);
    const check = await originsDifferingFromEvidence(
      { query: (text: string, values?: unknown[]) => sqlOn(backend.databaseUrl, text, values) as never },
      project!.id,
    );
    // Users, teams, items and orders, each per kind that showed it.
    expect(check.stored).toBeGreaterThan(10);
    expect(check.differing).toBe(0);
  });

  it('pages with the diffs and refuses what is not a page or a capture', async () => {
    const all = await origins('p9');
    expect(all.map((o) => `${o.method} ${o.path}`)).toEqual(['GET /teams/{team}']);
    expect(await origins('p5', '?limit=1&after=GET%20/users')).toEqual([]);
    expect((await origins('p5', '?limit=1')).map((o) => o.path)).toEqual(['/users']);
    const bad = async (query: string) =>
      (await backend.api<{ message: string }>('GET', `/projects/origins/captures/${captures.p5}/diffs/origins${query}`))
        .body.message;
    expect(await bad('?limit=0')).toMatch(/limit/);
    expect(await bad('?limit=1001')).toMatch(/limit must not be greater than 1000/);
    expect(await bad('?after=users')).toMatch(/after must be the method and path/);
    const unknown = await backend.api('GET', `/projects/origins/captures/${crypto.randomUUID()}/diffs/origins`);
    expect(unknown.status).toBe(404);
    expect((await backend.api('GET', '/projects/origins/captures/nope/diffs/origins')).status).toBe(400);
  });
});
