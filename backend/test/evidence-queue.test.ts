/**
 * Evidence without a hot row (issue 20): batches queue their evidence in their own transaction and
 * folds take it, on any replica. Many agents of one build on two replicas at once: every batch is
 * acknowledged at its commit (durable), and its evidence and consumer calls (issue 19) are folded
 * for its build without anything more asked, each once, the proposal's step recorded once; by the
 * time an agent's `capture-ended` arrives its batches are folded. CI runs on two replicas: acked at
 * commit too, their evidence is in the pull request's row when `capture-ended` arrives (the CI gate
 * reads it next; ci-capture-end.test holds the folds back). A batch left queued (its replica
 * stopped before folding it) is folded by a sweep.
 */
import type { ConsumersResponse, TokenResponse, VersionMatrixResponse } from '@spectator/shared';
import pg from 'pg';
import { CONSUMER_CALLS, ConsumersRepository, MAX_CONSUMERS_PER_KEY } from '../src/consumers/consumers.repository';
import { createDataSource } from '../src/database/data-source';
import { packList } from '../src/evidence/queued-payload';
import { batchMessage, connectTestAgent, endCapture, helloMessage, type TestAgent } from './support/agent-client';
import { sqlOn, startTestBackend, startTestReplica, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';

let first: TestBackend;
let second: TestBackend;
let token: string;

const AGENTS = 8;
const BATCHES = 5;
const COUNT = 3;
/** Two clients every agent serves: MOBILE makes 2 of each row's calls, WEB 1. */
const MOBILE = '3f9c0a1b7d2e4c55';
const WEB = '9d0c3e51a7b2f468';
const text = { type: 'string' };

beforeAll(async () => {
  first = await startTestBackend();
  second = await startTestReplica(first);
  expect((await first.api('POST', '/projects', { slug: 'scaled', name: 'Scaled' })).status).toBe(201);
  token = (await first.api<TokenResponse>('POST', '/projects/scaled/tokens', { name: 'agents', scope: 'agent' })).body
    .token as string;
  const imported = await first.api('POST', '/projects/scaled/openapi/import?approve=true', {
    openapi: '3.1.0',
    info: { title: 'scaled', version: '1' },
    paths: {
      '/items': {
        post: {
          requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { title: text } } } } },
          responses: {
            '201': {
              description: 'created',
              content: {
                'application/json': {
                  schema: { type: 'object', properties: { id: { type: 'integer' }, title: text } },
                },
              },
            },
          },
        },
      },
    },
  });
  expect(imported.status).toBe(201);
});
afterAll(async () => {
  await second?.close();
  await first?.close();
});

const sql = <T>(text: string, values: unknown[] = []): Promise<T[]> => sqlOn<T>(first.databaseUrl, text, values);

/** Requests folded into the evidence of environment row `name` of `kind` (production build b1 unless named). */
async function evidenceTotal(kind = 'production', name = 'b1'): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT coalesce(sum(o.count), 0)::int AS n FROM evidence_observations o
       JOIN environment_rows r ON r.id = o.row_id WHERE r.kind = $1 AND r.name = $2`,
    [kind, name],
  );
  return row?.n ?? -1;
}

/** Consumer calls of build b1 per consumer (`*`: every call). */
async function consumerTotals(): Promise<Record<string, number>> {
  const rows = await sql<{ consumer: string; calls: number }>(
    `SELECT e.key AS consumer, sum((e.value->>0)::bigint)::int AS calls
       FROM ${CONSUMER_CALLS} c CROSS JOIN LATERAL jsonb_each(c.consumers) e JOIN environment_rows r ON r.id = c.row_id
      WHERE r.kind = 'production' AND r.name = 'b1' AND c.environment_kind = 'production' GROUP BY e.key`,
  );
  return Object.fromEntries(rows.map((row) => [row.consumer, row.calls]));
}

async function runtimeTotal(): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT (SELECT coalesce(sum(requests), 0) FROM runtime_buckets
              WHERE environment_kind = 'production' AND environment_name = 'b1' AND resolution = 'minute')::int
          + (SELECT coalesce(sum(requests), 0) FROM runtime_minutes_added
              WHERE environment_kind = 'production' AND environment_name = 'b1')::int AS n`,
  );
  return row?.n ?? -1;
}

describe('queued evidence', () => {
  it('of production is acknowledged at commit and folded once, with many agents of one build on two replicas', async () => {
    const agents: Array<{ agent: TestAgent; captureId: string }> = [];
    for (let a = 0; a < AGENTS; a++) {
      const agent = await connectTestAgent((a % 2 === 0 ? first : second).url, token);
      const hello = helloMessage({ agentId: `pod-${a}`, environment: { kind: 'production', build: 'b1' } });
      expect((await agent.request(hello)).type).toBe('welcome');
      agents.push({ agent, captureId: hello.capture.id });
    }
    // Every agent sends all its batches at once; each then waits for all its acks.
    await Promise.all(
      agents.map(async ({ agent, captureId }) => {
        for (let b = 0; b < BATCHES; b++)
          agent.send(
            batchMessage(captureId, [
              {
                method: 'POST',
                path: '/items',
                status: 201,
                request: { title: 't' },
                response: { id: b, title: 't' },
                count: COUNT,
                consumers: [
                  { id: MOBILE, count: 2, lastSeen: new Date().toISOString() },
                  { id: WEB, count: 1, lastSeen: new Date().toISOString() },
                ],
              },
            ]),
          );
        for (let b = 0; b < BATCHES; b++) expect(await agent.next(30_000)).toMatchObject({ type: 'ack' });
      }),
    );
    // Acknowledged at commit: every batch id and its observations stored. Then each agent ends its
    // capture, answered once its batches are folded: read at once, no waiting.
    const total = AGENTS * BATCHES * COUNT;
    const [stored] = await sql<{ batches: number; observations: number }>(
      `SELECT (SELECT count(*)::int FROM processed_batches WHERE capture_id = ANY ($1::uuid[])) AS batches,
              (SELECT coalesce(sum(count), 0)::int FROM observations WHERE capture_id = ANY ($1::uuid[])) AS observations`,
      [agents.map(({ captureId }) => captureId)],
    );
    expect(stored).toEqual({ batches: AGENTS * BATCHES, observations: total });
    await Promise.all(agents.map(({ agent, captureId }) => endCapture(agent, captureId)));
    expect(await evidenceTotal()).toBe(total);
    expect(await runtimeTotal()).toBe(total);
    expect(await consumerTotals()).toEqual({ '*': total, [MOBILE]: (total * 2) / 3, [WEB]: total / 3 });
    expect(await sql('SELECT id FROM evidence_queue')).toEqual([]);
    const matrix = (await second.api<VersionMatrixResponse>('GET', '/projects/scaled/versions?kind=production')).body;
    expect(matrix.rows.map((row) => row.name)).toEqual(['b1']);
    expect(matrix.cells).toEqual([[{ version: '1.0' }]]);
    const steps = await sql<{ step: string }>(
      `SELECT s.step FROM proposal_steps s JOIN proposals p ON p.id = s.proposal_id ORDER BY s.step`,
    );
    expect(steps.map((s) => s.step)).toEqual(['Appeared in Production', 'Approved']);
    await Promise.all(agents.map(({ agent }) => agent.close()));
  });

  it('of production is folded after its ack with nothing more asked', async () => {
    const agent = await connectTestAgent(second.url, token);
    const hello = helloMessage({ agentId: 'pod-b2', environment: { kind: 'production', build: 'b2' } });
    expect((await agent.request(hello)).type).toBe('welcome');
    const batch = batchMessage(hello.capture.id, [
      {
        method: 'POST',
        path: '/items',
        status: 201,
        request: { title: 't' },
        response: { id: 1, title: 't' },
        count: 4,
      },
    ]);
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    expect(
      await eventually(
        () => evidenceTotal('production', 'b2'),
        (n) => n === 4,
      ),
    ).toBe(4);
    await agent.close();
  });

  it("of CI runs is in the pull request's row when capture-ended arrives, on either replica", async () => {
    const runs = await Promise.all(
      [first, second].map(async (replica, r) => {
        const agent = await connectTestAgent(replica.url, token);
        const hello = helloMessage({
          agentId: `ci-${r}`,
          environment: { kind: 'ci', pullRequest: String(700 + r), commit: `c${r}` },
        });
        expect((await agent.request(hello)).type).toBe('welcome');
        return { agent, captureId: hello.capture.id, pullRequest: String(700 + r) };
      }),
    );
    await Promise.all(
      runs.map(async ({ agent, captureId, pullRequest }) => {
        for (let b = 1; b <= 3; b++) {
          const batch = batchMessage(captureId, [
            { method: 'POST', path: '/items', status: 201, request: { title: 't' }, response: { id: b, title: 't' } },
          ]);
          expect(await agent.request(batch, 30_000)).toEqual({ type: 'ack', batchId: batch.batchId });
        }
        await endCapture(agent, captureId);
        // Read at once, no waiting: the end was answered after the folds.
        expect(await evidenceTotal('ci', `PR #${pullRequest}`)).toBe(3);
        await agent.close();
      }),
    );
  });

  it('left queued (its replica stopped before folding it) is folded by a sweep of any replica', async () => {
    const before = await evidenceTotal();
    const runtimeBefore = await runtimeTotal();
    const consumersBefore = await consumerTotals();
    const [row] = await sql<{ id: string; project_id: string }>(
      `SELECT id, project_id FROM environment_rows WHERE kind = 'production' AND name = 'b1'`,
    );
    const now = new Date().toISOString();
    const minute = new Date(Date.parse(now) - (Date.parse(now) % 60_000)).toISOString();
    await sql(
      `INSERT INTO evidence_queue (project_id, row_id, last_seen, packed_exchanges, packed_minutes, packed_consumers)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        row?.project_id,
        row?.id,
        now,
        packList([
          {
            method: 'POST',
            path: '/items',
            status: 201,
            req_ct: null,
            req_fp: null,
            res_ct: null,
            res_fp: null,
            count: 7,
            last_seen: now,
            query: null,
            req_h: null,
          },
        ]),
        packList([
          {
            method: 'POST',
            path: '/items',
            minute,
            requests: 7,
            serverErrors: 0,
            upstreamFailures: 0,
            clientLeft: 0,
            ttfb: {},
            ttlb: {},
          },
        ]),
        packList(
          [
            ['*', 7],
            [WEB, 7],
          ].map(([consumer, calls]) => ({
            method: 'POST',
            path: '/items',
            status: 201,
            consumer,
            day: now.slice(0, 10),
            calls,
            lastCall: now,
          })),
        ),
      ],
    );
    const folded = async (): Promise<{
      queued: number;
      evidence: number;
      runtime: number;
      consumers: Record<string, number>;
    }> => ({
      queued: (await sql('SELECT id FROM evidence_queue')).length,
      evidence: await evidenceTotal(),
      runtime: await runtimeTotal(),
      consumers: await consumerTotals(),
    });
    expect(await eventually(folded, (now) => now.queued === 0)).toEqual({
      queued: 0,
      evidence: before + 7,
      runtime: runtimeBefore + 7,
      consumers: { ...consumersBefore, '*': (consumersBefore['*'] ?? 0) + 7, [WEB]: (consumersBefore[WEB] ?? 0) + 7 },
    });
  });

  it('keeps one row per build, endpoint, status and day however many consumers call, naming at most a bound', async () => {
    const agent = await connectTestAgent(first.url, token);
    const hello = helloMessage({ agentId: 'pod-many', environment: { kind: 'production', build: 'many' } });
    expect((await agent.request(hello)).type).toBe('welcome');
    // Batches of 64 consumers each (an agent's bound per row) until past the backend's bound per row.
    const BATCHES_OF_64 = Math.ceil((MAX_CONSUMERS_PER_KEY + 50) / 64);
    const yesterday = new Date(Date.now() - 24 * 60 * 60 * 1000).toISOString();
    for (let b = 0; b < BATCHES_OF_64; b++) {
      const consumers = Array.from({ length: 64 }, (_, j) => ({
        id: (b * 64 + j).toString(16).padStart(16, '0'),
        count: 1,
        // The first batch's consumers called yesterday too: their calls of that day are a row of its own.
        lastSeen: b === 0 && j < 2 ? yesterday : new Date().toISOString(),
      }));
      const batch = [{ method: 'POST', path: '/items', status: 201, request: { title: 't' }, count: 64, consumers }];
      expect(await agent.request(batchMessage(hello.capture.id, batch), 30_000)).toMatchObject({ type: 'ack' });
    }
    await agent.close();
    await eventually(
      () => sql<{ queued: number }>('SELECT count(*)::int AS queued FROM evidence_queue'),
      (rows) => rows[0]?.queued === 0,
    );
    const calls = BATCHES_OF_64 * 64;
    const totalOf = async (): Promise<number | undefined> =>
      (await first.api<ConsumersResponse>('GET', '/projects/scaled/consumers?environment=production&build=many')).body
        .calls;
    // Folds after the row's first add their calls beside its keys; every call is read all the same.
    expect(await totalOf()).toBe(calls);
    // The row's compaction (a fold's, once a minute) merges them into one row a day, naming at most the bound.
    const ds = createDataSource(first.databaseUrl, { poolSize: 1 });
    await ds.initialize();
    try {
      await ds.transaction(async (manager) => {
        const [row] = (await manager.query(
          `SELECT r.id, r.project_id AS "projectId" FROM environment_rows r WHERE r.name = 'many' FOR NO KEY UPDATE`,
        )) as Array<{ id: string; projectId: string }>;
        await new ConsumersRepository(ds).compact(manager, row?.projectId as string, {
          id: row?.id as string,
          kind: 'production',
        });
      });
    } finally {
      await ds.destroy();
    }
    // Nothing of this build waits any more (other builds' folds may have left theirs).
    expect(
      await sql(
        `SELECT a.* FROM consumer_calls_added a JOIN environment_rows r ON r.id = a.row_id WHERE r.name = 'many'`,
      ),
    ).toEqual([]);
    const rows = await sql<{ day: string; named: number; all: number; other: number }>(
      `SELECT to_char(c.day, 'YYYY-MM-DD') AS day,
              (SELECT count(*)::int FROM jsonb_object_keys(c.consumers) k WHERE k NOT IN ('*', '+')) AS named,
              coalesce((c.consumers->'*'->>0)::int, 0) AS all, coalesce((c.consumers->'+'->>0)::int, 0) AS other
         FROM consumer_calls c JOIN environment_rows r ON r.id = c.row_id
        WHERE r.name = 'many' ORDER BY c.day`,
    );
    const named = MAX_CONSUMERS_PER_KEY;
    // One row a day (all of this build's calls are of one endpoint and status), not one per consumer.
    expect(rows).toEqual([
      { day: yesterday.slice(0, 10), named: 2, all: 0, other: 0 },
      { day: new Date().toISOString().slice(0, 10), named, all: calls, other: calls - 2 - named },
    ]);
    // Read as before: every call counted, the consumers past the bound under the others' calls.
    const list = await first.api<ConsumersResponse>(
      'GET',
      '/projects/scaled/consumers?environment=production&build=many',
    );
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ calls, otherCalls: calls - 2 - named });
    expect(list.body.consumers).toHaveLength(2 + named);
  });

  it('of many rows folding at once never holds up the commits of other batches (folds have their own pool)', async () => {
    // Folds stall on their exchanges' write while a test transaction holds the table; each holds its
    // connection meanwhile. More rows than the app's pool has connections (10) fold at once.
    const blocker = new pg.Client({ connectionString: first.databaseUrl });
    await blocker.connect();
    const builds = Array.from({ length: 12 }, (_, i) => `stalled-${i}`);
    const agents: TestAgent[] = [];
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE evidence_observations IN EXCLUSIVE MODE');
      for (const build of builds) {
        const agent = await connectTestAgent(first.url, token);
        const hello = helloMessage({ agentId: `pod-${build}`, environment: { kind: 'staging', build } });
        expect((await agent.request(hello)).type).toBe('welcome');
        agents.push(agent);
        const batch = batchMessage(hello.capture.id, [
          { method: 'POST', path: '/items', status: 201, request: { title: 't' }, response: { id: 1, title: 't' } },
        ]);
        // Acknowledged at commit, while the folds of the rows before it are stalled.
        expect(await agent.request(batch, 10_000)).toEqual({ type: 'ack', batchId: batch.batchId });
      }
      expect(await sql('SELECT id FROM evidence_queue')).toHaveLength(builds.length);
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    // Let go (the 5 s the folds' waiters wait may have passed), every row is folded.
    await eventually(
      () => sql('SELECT id FROM evidence_queue'),
      (queued) => queued.length === 0,
    );
    for (const build of builds) expect(await evidenceTotal('staging', build)).toBe(1);
    await Promise.all(agents.map((agent) => agent.close()));
  });
});
