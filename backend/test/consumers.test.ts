/**
 * Issue 19's consumers and blast radius, as a story: seeded clients of known usage call a small
 * API through a real production agent that names consumers by JWT claim or API key; a real backend
 * keeps their pseudonyms; pull requests break parts of the API in CI. The affected set of each
 * breaking change is measured against the known usage (precision and recall), the CI gate
 * `--fail-on breaking-with-consumers` passes a breaking change no consumer used and fails one a
 * consumer used, naming them; and no client id, token, API key or the agent's key reaches a table.
 */
import { consumerId, runCheck, startAgent } from '@spectator/agent';
import type {
  AgentEnvironment,
  BlastRadiusResponse,
  CaptureResponse,
  CiSummaryResponse,
  ConsumerLabelResponse,
  ConsumersResponse,
  EndpointConsumersResponse,
  EndpointResponse,
  ProposalResponse,
  TokenResponse,
} from '@spectator/shared';
import { readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sqlOn, startTestBackend, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';
import { tablesContaining } from './support/privacy';

const KEY = 'story-consumer-key-5e0b7a1c';
const PROJECT = 'shop';
const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The clients, their identities (canaries: none may reach the backend) and what each calls in production. */
const CLIENTS = {
  mobile: {
    value: 'canary-mobile-client-id-31c7',
    headers: () => ({
      authorization: `Bearer ${base64url({ alg: 'RS256' })}.${base64url({ sub: 'canary-mobile-user-8d20', client_id: 'canary-mobile-client-id-31c7' })}.canary-signature-77ab`,
    }),
    calls: { 'GET /users': 5, 'GET /orders': 2 },
  },
  web: {
    value: 'canary-web-api-key-4a9e',
    headers: () => ({ 'x-api-key': 'canary-web-api-key-4a9e' }),
    calls: { 'GET /users': 3 },
  },
  partner: {
    value: 'canary-partner-api-key-0f62',
    headers: () => ({ 'x-api-key': 'canary-partner-api-key-0f62' }),
    calls: { 'GET /orders': 4 },
  },
  // Its key is refused: it only ever gets 401 from GET /users, never the 200 a response change breaks.
  batch: {
    value: 'canary-batch-api-key-9b13',
    headers: () => ({ 'x-api-key': 'canary-batch-api-key-9b13' }),
    calls: { 'GET /users': 2 },
  },
  anonymous: { value: null, headers: () => ({}), calls: { 'GET /users': 2, 'GET /legacy': 1 } },
} as const;
type Client = keyof typeof CLIENTS;
const CANARIES = [
  KEY,
  'canary-mobile-client-id-31c7',
  'canary-mobile-user-8d20',
  'canary-signature-77ab',
  'canary-web-api-key-4a9e',
  'canary-partner-api-key-0f62',
  'canary-batch-api-key-9b13',
];

const pseudonymOf = (client: Client): string => consumerId(KEY, PROJECT, CLIENTS[client].value as string);

/** The API as each pull request leaves it: v2 drops the users' `name`, v3 drops legacy's `code`. */
type Variant = 'v1' | 'v2' | 'v3';

async function startApi(variant: Variant): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const route = `${req.method} ${(req.url ?? '/').split('?')[0]}`;
    if (route === 'GET /users') {
      if (req.headers['x-api-key'] === CLIENTS.batch.value) return send(401, { error: 'revoked key' });
      return send(200, variant === 'v2' ? [{ id: 1 }] : [{ id: 1, name: 'Ann' }]);
    }
    if (route === 'GET /orders') return send(200, { id: 7, total: 12 });
    if (route === 'GET /legacy') return send(200, variant === 'v3' ? {} : { code: 'x' });
    send(404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

let backend: TestBackend;
let agentToken: string;
let readToken: string;
let writeToken: string;
/** The proposal that drops the users' `name` (a breaking change of GET /users 200). */
let usersProposal: string;

/** Runs a real agent (naming consumers when `named`) in front of a variant, sends `traffic`, closes it (flushing). */
async function run(
  environment: AgentEnvironment,
  variant: Variant,
  traffic: Array<{ client: Client; route: string }>,
  named: boolean,
): Promise<string> {
  const api = await startApi(variant);
  const agent = await startAgent({
    listen: '127.0.0.1:0',
    upstream: api.url,
    backend: backend.url,
    token: agentToken,
    environment,
    configPath: path.join(os.tmpdir(), 'spectator-no-service.yml'),
    logLevel: 'silent',
    tuning: { flushIntervalMs: 50, probeIntervalMs: 200, ackWaitMs: 10_000 },
    consumers: named
      ? {
          sources: [
            { kind: 'jwt', claim: 'client_id' },
            { kind: 'header', name: 'x-api-key' },
          ],
          key: KEY,
          project: PROJECT,
        }
      : null,
  });
  let captureId: string;
  try {
    for (const { client, route } of traffic) {
      const [method, target] = route.split(' ') as [string, string];
      const response = await fetch(`${agent.proxyUrl}${target}`, { method, headers: CLIENTS[client].headers() });
      await response.text();
    }
    captureId = agent.captureId();
  } finally {
    await agent.close();
    await api.close();
  }
  // Consumer calls are counted when a batch's queued evidence is folded. An acknowledgement waits
  // for that at most a few seconds (the batch is durable anyway), and a fold that fails is taken
  // again by the sweep: the counts are read once nothing is left in the queue.
  await eventually(
    () => sqlOn<{ queued: number }>(backend.databaseUrl, 'SELECT count(*)::int AS queued FROM evidence_queue'),
    (rows) => rows[0]?.queued === 0,
  );
  return captureId;
}

/** Every call of the seeded usage, client by client. */
const productionTraffic = (): Array<{ client: Client; route: string }> =>
  (Object.keys(CLIENTS) as Client[]).flatMap((client) =>
    Object.entries(CLIENTS[client].calls).flatMap(([route, times]) =>
      Array.from({ length: times }, () => ({ client, route })),
    ),
  );

/** What CI runs: each endpoint once, without consumers. */
const ciTraffic = [
  { client: 'anonymous' as const, route: 'GET /users' },
  { client: 'anonymous' as const, route: 'GET /orders' },
  { client: 'anonymous' as const, route: 'GET /legacy' },
];

async function gate(pr: string, failOn: string, more: string[] = []): Promise<{ code: number; output: string }> {
  let output = '';
  const sink = { write: (text: string) => (output += text) };
  const args = [
    ...['--backend', backend.url, '--token', readToken, '--project', PROJECT, '--pr', pr, '--fail-on', failOn],
    ...more,
  ];
  return { code: await runCheck(args, {}, sink, sink), output };
}

/** The documented endpoint at a path. */
async function endpointOf(path: string): Promise<EndpointResponse> {
  const endpoints = await backend.api<EndpointResponse[]>(
    'GET',
    `/projects/${PROJECT}/endpoints`,
    undefined,
    readToken,
  );
  return endpoints.body.find((e) => e.path === path) as EndpointResponse;
}

/** Precision and recall of an affected set against the truth. */
function precisionRecall(found: readonly string[], truth: readonly string[]): { precision: number; recall: number } {
  const hits = found.filter((id) => truth.includes(id)).length;
  return {
    precision: found.length === 0 ? 1 : hits / found.length,
    recall: truth.length === 0 ? 1 : hits / truth.length,
  };
}

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api('POST', '/projects', { slug: PROJECT, name: 'Shop' })).status).toBe(201);
  const token = async (name: string, scope: string): Promise<string> =>
    (await backend.api<TokenResponse>('POST', `/projects/${PROJECT}/tokens`, { name, scope })).body.token as string;
  agentToken = await token('agents', 'agent');
  readToken = await token('ci gate', 'read');
  writeToken = await token('team', 'admin');

  // Production first: the seeded clients' known usage, through an agent that names consumers.
  const production = await run({ kind: 'production', build: 'p-1' }, 'v1', productionTraffic(), true);
  // Documented from production's capture: every endpoint 1.0.
  const proposal = await backend.api<ProposalResponse>(
    'POST',
    `/projects/${PROJECT}/proposals`,
    {
      title: 'Document the shop',
      captureId: production,
      endpoints: ['/users', '/orders', '/legacy'].map((p) => ({ method: 'GET', path: p })),
    },
    writeToken,
  );
  expect(proposal.status).toBe(201);
  expect(
    (await backend.api('POST', `/projects/${PROJECT}/proposals/${proposal.body.id}/approve`, undefined, writeToken))
      .status,
  ).toBe(200);
}, 120_000);
afterAll(async () => {
  await backend?.close();
});

describe('consumers and blast radius', () => {
  it('counts each consumer per endpoint, status and environment, with its share and last call', async () => {
    const label = await backend.api<ConsumerLabelResponse>(
      'PUT',
      `/projects/${PROJECT}/consumers/${pseudonymOf('mobile')}/label`,
      { label: 'mobile app 5.x' },
      writeToken,
    );
    expect(label.status).toBe(200);
    expect(label.body).toMatchObject({ consumer: pseudonymOf('mobile'), label: 'mobile app 5.x', updatedBy: 'team' });

    const users = await endpointOf('/users');
    const { status, body } = await backend.api<EndpointConsumersResponse>(
      'GET',
      `/projects/${PROJECT}/endpoints/${users.id}/consumers?environment=production`,
      undefined,
      readToken,
    );
    expect(status).toBe(200);
    const byStatus = Object.fromEntries(
      body.rows.map((row) => [
        `${row.environment} ${row.status}`,
        { calls: row.calls, consumers: row.consumers.map((c) => [c.label ?? c.consumer, c.calls, c.share]) },
      ]),
    );
    expect(byStatus).toEqual({
      'production 200': {
        calls: 10,
        consumers: [
          ['mobile app 5.x', 5, 0.5],
          [pseudonymOf('web'), 3, 0.3],
        ],
      },
      'production 401': { calls: 2, consumers: [[pseudonymOf('batch'), 2, 1]] },
    });
    for (const row of body.rows) for (const c of row.consumers) expect(Date.parse(c.lastCall)).toBeGreaterThan(0);

    const all = await backend.api<ConsumersResponse>('GET', `/projects/${PROJECT}/consumers`, undefined, readToken);
    expect(all.body.calls).toBe(19);
    expect(all.body.consumers.map((c) => [c.label ?? c.consumer, c.calls, c.endpoints])).toEqual([
      ['mobile app 5.x', 7, 2],
      [pseudonymOf('partner'), 4, 1],
      [pseudonymOf('web'), 3, 1],
      [pseudonymOf('batch'), 2, 1],
    ]);
  });

  it('finds exactly the consumers a breaking change breaks, and the gate fails naming them', async () => {
    await run({ kind: 'ci', pullRequest: '1', commit: 'c1' }, 'v2', ciTraffic, false);
    const summary = await backend.api<CiSummaryResponse>('GET', `/projects/${PROJECT}/ci/1`, undefined, readToken);
    expect(summary.status).toBe(200);
    const radius = summary.body.consumers as BlastRadiusResponse;
    expect(radius.parts.map((p) => [p.method, p.path, p.status, p.changes.map((c) => `${c.change} ${c.at}`)])).toEqual([
      ['GET', '/users', 200, ['removed $[].name']],
    ]);
    // The truth from the seeded usage: who got GET /users 200 in production.
    const truth = (['mobile', 'web'] as Client[]).map(pseudonymOf);
    const found = radius.consumers.map((c) => c.consumer);
    expect(precisionRecall(found, truth)).toEqual({ precision: 1, recall: 1 });
    expect(radius.parts[0]?.consumers.map((c) => [c.label ?? c.consumer, c.share])).toEqual([
      ['mobile app 5.x', 0.5],
      [pseudonymOf('web'), 0.3],
    ]);

    const failed = await gate('1', 'breaking-with-consumers');
    expect(failed.code).toBe(1);
    expect(failed.output).toContain('mobile app 5.x');
    expect(failed.output).toContain(pseudonymOf('web'));
    expect(failed.output).not.toContain(pseudonymOf('partner'));
    expect(failed.output).toMatch(/FAILED: 2 production consumer\(s\) used a broken part in the last 30 days/);
  });

  it('passes a breaking change no consumer used, which --fail-on breaking still fails', async () => {
    await run({ kind: 'ci', pullRequest: '2', commit: 'c2' }, 'v3', ciTraffic, false);
    const summary = await backend.api<CiSummaryResponse>('GET', `/projects/${PROJECT}/ci/2`, undefined, readToken);
    const radius = summary.body.consumers as BlastRadiusResponse;
    expect(summary.body.breaking).toBe(true);
    // GET /legacy 200 was called once in production, by a client no source names.
    expect(radius.parts.map((p) => [p.path, p.status, p.calls, p.consumers.length])).toEqual([['/legacy', 200, 1, 0]]);
    expect(
      precisionRecall(
        radius.consumers.map((c) => c.consumer),
        [],
      ),
    ).toEqual({ precision: 1, recall: 1 });
    const passed = await gate('2', 'breaking-with-consumers');
    expect(passed.code).toBe(0);
    expect(passed.output).toContain('PASSED');
    expect((await gate('2', 'breaking')).code).toBe(1);
  });

  it('answers the blast radius of a proposal, and a window without those calls has none', async () => {
    const captures = await backend.api<CaptureResponse[]>('GET', `/projects/${PROJECT}/captures`, undefined, readToken);
    const pr1 = captures.body.find((c) => c.pullRequest === '1');
    const users2 = await backend.api<ProposalResponse>(
      'POST',
      `/projects/${PROJECT}/proposals`,
      { title: 'Users without names', captureId: pr1?.id, endpoints: [{ method: 'GET', path: '/users' }] },
      writeToken,
    );
    expect(users2.status).toBe(201);
    usersProposal = users2.body.id;
    expect(users2.body.endpoints[0]?.changes.some((c) => c.breaking)).toBe(true);
    const radius = await backend.api<BlastRadiusResponse>(
      'GET',
      `/projects/${PROJECT}/proposals/${users2.body.id}/blast-radius`,
      undefined,
      readToken,
    );
    expect(radius.status).toBe(200);
    expect(radius.body.consumers.map((c) => [c.label ?? c.consumer, c.calls])).toEqual([
      ['mobile app 5.x', 5],
      [pseudonymOf('web'), 3],
    ]);
    // The same for the capture the proposal was made from: its breaking diffs.
    const ofCapture = await backend.api<BlastRadiusResponse>(
      'GET',
      `/projects/${PROJECT}/captures/${pr1?.id}/blast-radius`,
      undefined,
      readToken,
    );
    expect(ofCapture.status).toBe(200);
    expect(ofCapture.body.parts.map((p) => [p.method, p.path, p.status])).toEqual([['GET', '/users', 200]]);
    expect(ofCapture.body.consumers.map((c) => [c.label ?? c.consumer, c.calls])).toEqual([
      ['mobile app 5.x', 5],
      [pseudonymOf('web'), 3],
    ]);
    const staging = await backend.api<BlastRadiusResponse>(
      'GET',
      `/projects/${PROJECT}/proposals/${users2.body.id}/blast-radius?environment=staging&days=7`,
      undefined,
      readToken,
    );
    expect(staging.body).toMatchObject({ environment: 'staging', days: 7, consumers: [] });
  });

  it('counts consumers per build, and answers who a change breaks in one build', async () => {
    // A second production build: web calls GET /users twice, partner GET /orders once.
    await run(
      { kind: 'production', build: 'p-2' },
      'v1',
      [
        { client: 'web', route: 'GET /users' },
        { client: 'web', route: 'GET /users' },
        { client: 'partner', route: 'GET /orders' },
      ],
      true,
    );
    const list = async (query: string) =>
      (await backend.api<ConsumersResponse>('GET', `/projects/${PROJECT}/consumers${query}`, undefined, readToken))
        .body;
    const named = (answer: ConsumersResponse) => answer.consumers.map((c) => [c.label ?? c.consumer, c.calls]);
    const first = await list('?build=p-1');
    expect({ build: first.build, calls: first.calls }).toEqual({ build: 'p-1', calls: 19 });
    expect(named(first)).toEqual([
      ['mobile app 5.x', 7],
      [pseudonymOf('partner'), 4],
      [pseudonymOf('web'), 3],
      [pseudonymOf('batch'), 2],
    ]);
    const second = await list('?environment=production&build=p-2');
    expect({ build: second.build, calls: second.calls }).toEqual({ build: 'p-2', calls: 3 });
    expect(named(second)).toEqual([
      [pseudonymOf('web'), 2],
      [pseudonymOf('partner'), 1],
    ]);
    const all = await list('');
    expect({ build: all.build, calls: all.calls }).toEqual({ build: null, calls: 22 });
    expect(all.builds.map((b) => [b.build, b.calls])).toEqual([
      ['p-2', 3],
      ['p-1', 19],
    ]);

    const radius = async (build: string) =>
      (
        await backend.api<BlastRadiusResponse>(
          'GET',
          `/projects/${PROJECT}/proposals/${usersProposal}/blast-radius?build=${build}`,
          undefined,
          readToken,
        )
      ).body;
    expect((await radius('p-2')).consumers.map((c) => [c.consumer, c.calls])).toEqual([[pseudonymOf('web'), 2]]);
    expect((await radius('p-1')).consumers.map((c) => [c.label ?? c.consumer, c.calls])).toEqual([
      ['mobile app 5.x', 5],
      [pseudonymOf('web'), 3],
    ]);

    const users = await endpointOf('/users');
    const ofUsers = await backend.api<EndpointConsumersResponse>(
      'GET',
      `/projects/${PROJECT}/endpoints/${users.id}/consumers?environment=production&build=p-2`,
      undefined,
      readToken,
    );
    expect(ofUsers.body.build).toBe('p-2');
    expect(
      ofUsers.body.rows.map((row) => [row.status, row.calls, row.consumers.map((c) => [c.consumer, c.share])]),
    ).toEqual([[200, 2, [[pseudonymOf('web'), 1]]]]);

    // The CI summary and the gate, judged on one production build: pull request 1 breaks GET /users 200.
    const summary = await backend.api<CiSummaryResponse>(
      'GET',
      `/projects/${PROJECT}/ci/1?build=p-2`,
      undefined,
      readToken,
    );
    expect(summary.status).toBe(200);
    expect(summary.body.consumers?.build).toBe('p-2');
    expect(summary.body.consumers?.consumers.map((c) => [c.consumer, c.calls])).toEqual([[pseudonymOf('web'), 2]]);
    const markdown = path.join(os.tmpdir(), `spectator-consumers-build-${process.pid}.md`);
    try {
      const failed = await gate('1', 'breaking-with-consumers', ['--consumers-build', 'p-2', '--markdown', markdown]);
      expect(failed.code).toBe(1);
      expect(failed.output).toContain(
        `FAILED: 1 production consumer(s) of build p-2 used a broken part in the last 30 days: ${pseudonymOf('web')}`,
      );
      expect(failed.output).not.toContain('mobile app 5.x');
      expect(await readFile(markdown, 'utf8')).toContain(
        '#### Production consumers of build p-2 of the broken parts (last 30 days)',
      );
    } finally {
      await rm(markdown, { force: true });
    }
    expect(await gate('1', 'breaking-with-consumers', ['--consumers-build', 'p-9'])).toEqual({
      code: 2,
      output:
        'spectator-agent check: the backend answered 404: environment production has no build p-9 in project shop\n',
    });
  });

  it('refuses bad input with a message naming it', async () => {
    const bad = async (method: string, route: string, body?: unknown) =>
      backend.api<{ message: string }>(method, `/projects/${PROJECT}${route}`, body, writeToken);
    expect((await bad('PUT', '/consumers/canary-web-api-key-4a9e/label', { label: 'x' })).body.message).toBe(
      'consumer must be a pseudonym: 16 hexadecimal digits (spectator-agent consumer-id prints it)',
    );
    expect((await bad('PUT', `/consumers/${pseudonymOf('web')}/label`, { label: ' ' })).status).toBe(400);
    expect((await bad('GET', '/consumers?days=0')).body.message).toContain('days must be an integer from 1 to 400');
    expect((await bad('GET', '/consumers?environment=moon')).status).toBe(400);
    expect((await bad('GET', '/ci/1?days=abc')).status).toBe(400);
    const noBuild = await bad('GET', '/ci/1?build=p-9');
    expect({ status: noBuild.status, message: noBuild.body.message }).toEqual({
      status: 404,
      message: 'environment production has no build p-9 in project shop',
    });
    expect((await bad('GET', `/ci/1?build=${'b'.repeat(201)}`)).body.message).toContain(
      'build must be at most 200 characters',
    );
    expect((await bad('GET', '/captures/00000000-0000-4000-8000-000000000000/blast-radius')).status).toBe(404);
    const unknown = await bad('GET', '/consumers?build=p-9');
    expect({ status: unknown.status, message: unknown.body.message }).toEqual({
      status: 404,
      message: 'environment production has no build p-9 in project shop',
    });
    const { id } = await endpointOf('/users');
    expect((await bad('GET', `/endpoints/${id}/consumers?build=p-1`)).body.message).toBe('build needs an environment');
    expect((await bad('GET', `/consumers?build=${'b'.repeat(201)}`)).body.message).toContain(
      'build must be at most 200 characters',
    );
    expect((await bad('DELETE', `/consumers/${pseudonymOf('partner')}/label`)).status).toBe(404);
    expect((await bad('DELETE', `/consumers/${pseudonymOf('mobile')}/label`)).status).toBe(204);
  });

  it('keeps no client id, token, API key or the agent key in any table', async () => {
    for (const canary of CANARIES)
      expect({ canary, tables: await tablesContaining(backend.databaseUrl, canary) }).toEqual({ canary, tables: [] });
  });
});
