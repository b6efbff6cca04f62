import { AuditRepository } from '../src/audit/audit.repository';
import { AuditService } from '../src/audit/audit.service';
import type {
  CaptureResponse,
  DiffResponse,
  DocumentationResponse,
  EvidenceResponse,
  ObservedEndpointResponse,
  ProjectResponse,
  ProposalResponse,
  TokenResponse,
  UndocumentedEndpointResponse,
  VersionMatrixResponse,
} from '@spectator/shared';
import pino from 'pino';
import type { DataSource, EntityManager } from 'typeorm';
import { parseConfig } from '../src/config/config';
import type { Runtime } from '../src/config/runtime';
import { PartitionsRepository } from '../src/partitions/partitions.repository';
import { RuntimeRepository } from '../src/runtime/runtime.repository';
import { RuntimeService } from '../src/runtime/runtime.service';
import { CONSUMER_CALLS, ConsumersRepository } from '../src/consumers/consumers.repository';
import { ConsumersService } from '../src/consumers/consumers.service';
import { CapturesRepository } from '../src/captures/captures.repository';
import { ShapeStore } from '../src/captures/shape-store';
import { PathsRepository } from '../src/paths/paths.repository';
import { RegroupService } from '../src/paths/regroup.service';
import { originsDifferingFromEvidence } from '../src/evidence/evidence.repository';
import { ProjectsService } from '../src/projects/projects.service';
import { ProposalLifecycle } from '../src/proposals/proposal-lifecycle';
import { ProposalRegrouping } from '../src/proposals/proposal-regrouping';
import { ProposalsRepository } from '../src/proposals/proposals.repository';
import { createDataSource } from '../src/database/data-source';
import { storeEvents } from '../src/events/events.repository';
import type { EventsService } from '../src/events/events.service';
import { EvidenceRepository } from '../src/evidence/evidence.repository';
import { EvidenceService } from '../src/evidence/evidence.service';
import { VersionStore } from '../src/versions/version-store';
import { Notifier } from '../src/webhooks/notifier';
import { WebhooksRepository } from '../src/webhooks/webhooks.repository';
import {
  batchMessage,
  connectTestAgent,
  helloMessage,
  type TestAgent,
  type TestExchange,
} from './support/agent-client';
import { startTestBackend, type TestBackend } from './support';
import { endpointCountsDiffering, untilFolded } from './support/evidence-helpers';
import { tablesContaining } from './support/privacy';

// Regrouping: traffic stored under literal paths, then merged into the template once it is
// known, must read exactly as the same traffic sent under the template from the start. Two
// projects get the same exchanges, one under literal paths (then regrouped), one under templates.

/** Names in path positions, unique enough to find anywhere in the database. */
const NAMES = ['alice-q7zx', 'bob-q7zx', 'carol-q7zx'];

let backend: TestBackend;
let ds: DataSource;
let regroup: RegroupService;
const changedCaptures: string[] = [];

/** Exchanges of one user, at `user` (a name, or the template's parameter), each call by one named consumer. */
function exchangesOf(user: string, variant: number): TestExchange[] {
  const lastSeen = new Date().toISOString();
  return (
    [
      {
        method: 'GET',
        path: `/users/${user}`,
        status: 200,
        response: { login: 'x', id: 1, ...(variant > 0 ? { name: 'n' } : {}) },
      },
      { method: 'GET', path: `/users/${user}`, status: 404, response: { message: 'not found' } },
      {
        method: 'GET',
        path: `/users/${user}/repos`,
        status: 200,
        response: [{ name: 'r', stars: variant }],
        count: 2 + variant,
      },
      {
        method: 'POST',
        path: `/users/${user}/repos`,
        status: 201,
        request: { name: 'r', ...(variant > 1 ? { private: true } : {}) },
        response: { id: 1 },
      },
      { method: 'POST', path: `/users/${user}/repos`, status: 400, request: { name: 5 }, response: { error: 'bad' } },
    ] as TestExchange[]
  ).map((e) => ({ ...e, consumers: [{ id: '0123456789abcdef', count: e.count ?? 1, lastSeen }] }));
}

interface Side {
  slug: string;
  agent: TestAgent;
  captures: string[];
}

async function openSide(slug: string, environment: { kind: 'staging'; build: string }): Promise<Side> {
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug, name: slug })).status).toBe(201);
  const token = (
    await backend.api<TokenResponse>('POST', `/projects/${slug}/tokens`, { name: 'agent', scope: 'agent' })
  ).body.token as string;
  const agent = await connectTestAgent(backend.url, token);
  const hello = helloMessage({ agentId: `agent-${slug}`, environment });
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  return { slug, agent, captures: [hello.capture.id] };
}

async function send(side: Side, exchanges: TestExchange[]): Promise<void> {
  const batch = batchMessage(side.captures.at(-1) as string, exchanges);
  expect(await side.agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
  // Acknowledged at commit (staging): the rows counted next include its folded evidence.
  await untilFolded(backend.databaseUrl);
}

async function newCapture(side: Side): Promise<void> {
  const id = crypto.randomUUID();
  expect(
    await side.agent.request({
      type: 'capture',
      capture: { id, startedAt: new Date().toISOString(), reason: 'command-restart' },
      previous: { id: side.captures.at(-1) as string, endedAt: new Date().toISOString() },
    }),
  ).toEqual({ type: 'capture-ended', captureId: side.captures.at(-1) });
  side.captures.push(id);
}

async function get<T>(route: string): Promise<T> {
  const { status, body } = await backend.api<T>('GET', route);
  expect({ route, status, body: status === 200 ? null : body }).toEqual({ route, status: 200, body: null });
  return body;
}

/** Everything the API says about a side's captures, documentation and evidence, without ids and times. */
async function viewsOf(side: Side): Promise<unknown> {
  const p = `/projects/${side.slug}`;
  const captures = [];
  for (const id of side.captures) {
    const { interactions, undocumented, diffs } = await get<CaptureResponse>(`${p}/captures/${id}`);
    const list = await get<UndocumentedEndpointResponse[]>(`${p}/captures/${id}/undocumented`);
    const diffList = (await get<DiffResponse[]>(`${p}/captures/${id}/diffs`)).map(({ endpointId: _, ...diff }) => diff);
    const observed: ObservedEndpointResponse[] = [];
    for (const endpoint of list)
      observed.push(
        await get<ObservedEndpointResponse>(
          `${p}/captures/${id}/observed?method=${endpoint.method}&path=${encodeURIComponent(endpoint.path)}`,
        ),
      );
    captures.push({
      interactions,
      undocumented,
      diffs,
      list: sorted(list),
      diffList: sorted(diffList),
      observed: sorted(observed),
    });
  }
  const evidence = (await get<EvidenceResponse>(`${p}/evidence?environment=staging`)).endpoints.map(
    ({ endpointId: _, lastSeen: __, ...rest }) => rest,
  );
  const matrix = await get<VersionMatrixResponse>(`${p}/versions?kind=staging`);
  const cells = matrix.rows.map((row, i) => ({ name: row.name, cells: matrix.cells[i] }));
  return { captures, evidence, cells, columns: matrix.endpoints.map(({ method, path }) => ({ method, path })) };
}

function sorted<T extends { method: string; path: string }>(list: readonly T[]): T[] {
  return [...list].sort((a, b) => `${a.method} ${a.path}`.localeCompare(`${b.method} ${b.path}`));
}

/**
 * Rows of a project under paths LIKE `pattern`: observations and summaries of one capture, and all
 * evidence (the matrix's observations, the runtime evidence's buckets and the consumer calls). The
 * runtime minutes folds added are rolled up into their hours and days first, as a regrouping does.
 */
async function rowsUnder(
  slug: string,
  pattern: string,
  captureId: string,
): Promise<{ observations: number; summaries: number; evidence: number }> {
  await new RuntimeRepository(ds).rollUp(null, true);
  const [counts] = (await ds.query(
    `SELECT (SELECT count(*)::int FROM observations WHERE capture_id = $3 AND path LIKE $2) AS observations,
            (SELECT count(*)::int FROM capture_endpoints WHERE capture_id = $3 AND path LIKE $2) AS summaries,
            (SELECT count(*)::int FROM evidence_observations o JOIN projects p ON p.id = o.project_id WHERE p.slug = $1 AND o.path LIKE $2)
          + (SELECT count(*)::int FROM runtime_buckets r JOIN projects p ON p.id = r.project_id WHERE p.slug = $1 AND r.path LIKE $2)
          + (SELECT count(*)::int FROM ${CONSUMER_CALLS} c CROSS JOIN LATERAL jsonb_each(c.consumers) e
               JOIN projects p ON p.id = c.project_id WHERE p.slug = $1 AND c.path LIKE $2) AS evidence`,
    [slug, pattern, captureId],
  )) as Array<{ observations: number; summaries: number; evidence: number }>;
  return counts as { observations: number; summaries: number; evidence: number };
}

/** A project's consumer calls per build, endpoint, status and consumer. */
async function consumerCallsOf(slug: string): Promise<unknown[]> {
  return ds.query(
    `SELECT r.name AS build, c.environment_kind AS kind, c.method, c.path, c.status, e.key AS consumer,
            sum((e.value->>0)::bigint)::int AS calls
       FROM ${CONSUMER_CALLS} c CROSS JOIN LATERAL jsonb_each(c.consumers) e JOIN projects p ON p.id = c.project_id
       JOIN environment_rows r ON r.id = c.row_id
      WHERE p.slug = $1 GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6`,
    [slug],
  );
}

beforeAll(async () => {
  backend = await startTestBackend();
  ds = createDataSource(backend.databaseUrl, { poolSize: 4 });
  await ds.initialize();
  // Another process on the same database, as a second replica would be: the backend's kept views must notice.
  const events = {
    captureChanged: (_project: string, capture: string) => void changedCaptures.push(capture),
  } as unknown as EventsService;
  // Transition events are stored as the app stores them; nothing here listens for their notification.
  const stored = {
    publishWithin: async (manager: EntityManager, published: Parameters<typeof storeEvents>[1]) =>
      void (await storeEvents(manager, published)),
  } as unknown as EventsService;
  const evidence = new EvidenceService(
    new EvidenceRepository(ds),
    new Notifier(new WebhooksRepository(ds), stored, { config: { publicUrl: null } } as never),
    new ShapeStore(new CapturesRepository(ds)),
    new VersionStore(ds),
  );
  // The proposals' lifecycle records the evidence steps regrouping reaches, as in the app.
  const audit = new AuditService(new AuditRepository(ds));
  new ProposalLifecycle(
    new ProposalsRepository(ds),
    evidence,
    new Notifier(new WebhooksRepository(ds), stored, { config: { publicUrl: null } } as never),
    audit,
    new VersionStore(ds),
  );
  regroup = new RegroupService(
    new PathsRepository(ds),
    new CapturesRepository(ds),
    new ProjectsService(ds, audit),
    evidence,
    events,
    // Its log and retention are for the rollup, which no test here runs.
    new RuntimeService(new RuntimeRepository(ds), new PartitionsRepository(ds), new VersionStore(ds), {
      log: pino({ level: 'silent' }),
      config: parseConfig({}),
    } as Runtime),
    new ProposalRegrouping(new ProposalsRepository(ds), audit),
    new VersionStore(ds),
    new ConsumersService(new ConsumersRepository(ds), new VersionStore(ds), {
      log: pino({ level: 'silent' }),
    } as Runtime),
  );
});
afterAll(async () => {
  await ds?.destroy();
  await backend?.close();
});

describe('regrouping literal paths into a template', () => {
  let literal: Side;
  let direct: Side;

  beforeAll(async () => {
    literal = await openSide('literal', { kind: 'staging', build: 'b1' });
    direct = await openSide('direct', { kind: 'staging', build: 'b1' });
    // GET /users/{user} documented on both sides from template traffic, so diffs and evidence cells exist.
    for (const side of [literal, direct]) {
      await send(side, [{ method: 'GET', path: '/users/{user}', status: 200, response: { login: 'x', id: 1 } }]);
      const commit = await backend.api<DocumentationResponse>('POST', `/projects/${side.slug}/documentation`, {
        captureId: side.captures[0],
        endpoints: [{ method: 'GET', path: '/users/{user}', description: 'A user', documentBodies: true }],
      });
      expect(commit.status).toBe(201);
    }
    // The same traffic on both sides, over two captures: by name on one side, by template on the other.
    for (const [variant, name] of NAMES.entries()) {
      await send(literal, exchangesOf(name, variant));
      await send(direct, exchangesOf('{user}', variant));
    }
    for (const side of [literal, direct]) await newCapture(side);
    for (const [variant, name] of NAMES.entries()) {
      await send(literal, exchangesOf(name, variant + 1));
      await send(direct, exchangesOf('{user}', variant + 1));
    }
  });
  afterAll(async () => {
    await literal?.agent.close();
    await direct?.agent.close();
  });

  it('merges one capture only when scoped to it, leaving the other capture as it was', async () => {
    // Read first, so the backend keeps these views and must patch them.
    const before = await viewsOf(literal);
    const repos = '/users/%-q7zx/repos';
    const [first, second] = literal.captures as [string, string];
    const literalBefore = {
      first: await rowsUnder('literal', repos, first),
      second: await rowsUnder('literal', repos, second),
    };
    // 3 users × (GET 200, POST 201, POST 400) per capture; 2 endpoints per user.
    expect(literalBefore.second).toMatchObject({ observations: 9, summaries: 6 });
    const merged = await regroup.regroup(await projectId('literal'), '/users/{user}/repos', { captureId: second });
    expect(merged).toBe(
      literalBefore.second.observations + literalBefore.second.summaries + literalBefore.second.evidence,
    );
    expect(changedCaptures).toEqual([second]);
    // The capture's environment row (build b1) holds both captures' evidence: all of it moved.
    expect(await rowsUnder('literal', repos, second)).toEqual({ observations: 0, summaries: 0, evidence: 0 });
    expect(await rowsUnder('literal', repos, first)).toEqual({ ...literalBefore.first, evidence: 0 });
    expect(await viewsOf(literal)).not.toEqual(before);
    // Where each exchange was first seen follows it under the template.
    expect(await originsDifferingFromEvidence(ds, await projectId('literal'))).toMatchObject({ differing: 0 });
    // Each capture still counts its endpoints (the cap's check reads the count).
    expect(await endpointCountsDiffering(backend.databaseUrl)).toEqual([]);
  });

  it('reads as the traffic sent under the templates once every literal is merged, and no name is left in any table', async () => {
    const id = await projectId('literal');
    const [first, second] = literal.captures as [string, string];
    const all = async (pattern: string): Promise<number> => {
      const [a, b] = [await rowsUnder('literal', pattern, first), await rowsUnder('literal', pattern, second)];
      return a.observations + a.summaries + b.observations + b.summaries + a.evidence;
    };
    const repos = await all('/users/%-q7zx/repos');
    expect(repos).toBeGreaterThan(0);
    expect(await regroup.regroup(id, '/users/{user}/repos')).toBe(repos);
    const users = await all('/users/%-q7zx');
    expect(users).toBeGreaterThan(0);
    expect(await regroup.regroup(id, '/users/{user}')).toBe(users);
    // Nothing left to merge: a second call is a no-op.
    expect(await regroup.regroup(id, '/users/{user}')).toBe(0);
    expect(await viewsOf(literal)).toEqual(await viewsOf(direct));
    expect(await consumerCallsOf('literal')).toEqual(await consumerCallsOf('direct'));
    for (const name of NAMES) expect(await tablesContaining(backend.databaseUrl, name)).toEqual([]);
    expect(await endpointCountsDiffering(backend.databaseUrl)).toEqual([]);
    const origins = await originsDifferingFromEvidence(ds, id);
    expect(origins.stored).toBeGreaterThan(0);
    expect(origins.differing).toBe(0);
  });

  it('leaves documented paths alone and refuses a template without a parameter', async () => {
    const side = await openSide('documented', { kind: 'staging', build: 'b2' });
    await send(side, [
      { method: 'GET', path: '/users/me', status: 200, response: { login: 'x' } },
      { method: 'GET', path: '/users/dave-q7zx', status: 200, response: { login: 'x' } },
    ]);
    await backend.api('POST', '/projects/documented/documentation', {
      captureId: side.captures[0],
      endpoints: [{ method: 'GET', path: '/users/me', documentBodies: true }],
    });
    const id = await projectId('documented');
    // Its observation, summary, evidence and runtime rows (its minute, hour and day).
    expect(await regroup.regroup(id, '/users/{user}')).toBe(1 + 1 + 1 + 3);
    const list = await get<UndocumentedEndpointResponse[]>(
      `/projects/documented/captures/${side.captures[0]}/undocumented`,
    );
    expect(list).toEqual([{ method: 'GET', path: '/users/{user}', interactions: 1, count: 1 }]);
    expect(await rowsUnder('documented', '/users/me', side.captures[0] as string)).toEqual({
      observations: 1,
      summaries: 1,
      // Its distinct exchange and its runtime rows (minute, hour and day).
      evidence: 1 + 3,
    });
    await expect(regroup.regroup(id, '/users/me')).rejects.toThrow('template /users/me has no {parameter}');
    await expect(regroup.regroup(id, 'users/{user}')).rejects.toThrow('must start with /');
    await side.agent.close();
  });

  it('leaves a route after an identifier alone: it is no path of a template that has a value there', async () => {
    const side = await openSide('routes', { kind: 'staging', build: 'b3' });
    await send(side, [
      { method: 'PUT', path: '/articles/{articleId}/unpublish', status: 200, response: { id: 1 } },
      { method: 'PUT', path: '/articles/dave-q7zx/my-post', status: 200, response: { id: 1 } },
    ]);
    const id = await projectId('routes');
    // Only the literal path moves (its observation, summary, evidence and runtime rows: minute, hour, day).
    expect(await regroup.regroup(id, '/articles/{owner}/{article}')).toBe(1 + 1 + 1 + 3);
    const list = await get<UndocumentedEndpointResponse[]>(
      `/projects/routes/captures/${side.captures[0]}/undocumented`,
    );
    expect(list.map((row) => row.path).sort()).toEqual([
      '/articles/{articleId}/unpublish',
      '/articles/{owner}/{article}',
    ]);
    await side.agent.close();
  });
});

describe('regrouping open proposals', () => {
  it('rewrites the endpoints of open proposals made from the literal traffic to the template, one per method', async () => {
    const side = await openSide('proposals', { kind: 'staging', build: 'b4' });
    const capture = side.captures[0] as string;
    await send(side, [
      { method: 'GET', path: '/teams/erin-q7zx', status: 200, response: { slug: 'x', id: 1 } },
      { method: 'GET', path: '/teams/frank-q7zx', status: 200, response: { slug: 'x', members: 3 } },
      { method: 'GET', path: '/teams/frank-q7zx', status: 404, response: { message: 'gone' } },
      { method: 'DELETE', path: '/teams/frank-q7zx', status: 204 },
    ]);
    const fromTraffic = await backend.api<ProposalResponse>('POST', '/projects/proposals/proposals', {
      title: 'Teams',
      captureId: capture,
      endpoints: [
        { method: 'GET', path: '/teams/erin-q7zx', description: 'A team' },
        { method: 'DELETE', path: '/teams/frank-q7zx' },
        { method: 'GET', path: '/teams/frank-q7zx' },
      ],
    });
    expect(fromTraffic.status).toBe(201);
    // A planned endpoint keeps the path its author wrote.
    const planned = await backend.api<ProposalResponse>('POST', '/projects/proposals/proposals', {
      title: 'Planned',
      endpoints: [{ method: 'GET', path: '/teams/planned', responses: [{ status: 200 }] }],
    });
    expect(planned.status).toBe(201);
    const rows = await rowsUnder('proposals', '/teams/%-q7zx', capture);
    // Evidence: the matrix's 4 observation rows and the runtime evidence's buckets.
    expect(rows).toMatchObject({ observations: 4, summaries: 3 });
    expect(rows.evidence).toBeGreaterThanOrEqual(4);

    const merged = await regroup.regroup(await projectId('proposals'), '/teams/{team}', { captureId: capture });
    expect(merged).toBe(rows.observations + rows.summaries + rows.evidence + 3);

    const after = await get<ProposalResponse>(`/projects/proposals/proposals/${fromTraffic.body.id}`);
    expect(after.endpoints.map(({ method, path }) => `${method} ${path}`)).toEqual([
      'GET /teams/{team}',
      'DELETE /teams/{team}',
    ]);
    const [stored] = (await ds.query(
      `SELECT description, responses FROM proposal_endpoints WHERE proposal_id = $1 AND method = 'GET'`,
      [fromTraffic.body.id],
    )) as Array<{
      description: string;
      responses: Array<{ status: number; shape: { fields: Array<{ name: string }> } }>;
    }>;
    // What both copies showed: every status, the fields of both answers.
    expect(stored?.description).toBe('A team');
    expect(stored?.responses.map((r) => r.status)).toEqual([200, 404]);
    expect(stored?.responses[0]?.shape.fields.map((f) => f.name)).toEqual(['id', 'members', 'slug']);
    expect(
      (await get<ProposalResponse>(`/projects/proposals/proposals/${planned.body.id}`)).endpoints.map((e) => e.path),
    ).toEqual(['/teams/planned']);
    for (const name of ['erin-q7zx', 'frank-q7zx'])
      expect(await tablesContaining(backend.databaseUrl, name)).toEqual([]);

    // Approved, it documents the template.
    expect((await backend.api('POST', `/projects/proposals/proposals/${fromTraffic.body.id}/approve`)).status).toBe(
      200,
    );
    const undocumented = await get<UndocumentedEndpointResponse[]>(
      `/projects/proposals/captures/${capture}/undocumented`,
    );
    expect(undocumented).toEqual([]);
    await side.agent.close();
  });
});

async function projectId(slug: string): Promise<string> {
  return (await get<ProjectResponse>(`/projects/${slug}`)).id;
}
