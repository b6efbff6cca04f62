/**
 * Evidence without a hot row (issue 20): batches queue their evidence in their own transaction and
 * folds take it, on any replica. Many agents of one build on two replicas at once: every
 * acknowledged batch is in the evidence and its consumer calls (issue 19) are counted for its build
 * when its ack arrives, each once, the proposal's step recorded once; a batch left queued (its
 * replica stopped before folding it) is folded by a sweep.
 */
import type { TokenResponse, VersionMatrixResponse } from '@spectator/shared';
import { batchMessage, connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
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

async function evidenceTotal(): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT coalesce(sum(o.count), 0)::int AS n FROM evidence_observations o
       JOIN environment_rows r ON r.id = o.row_id WHERE r.kind = 'production' AND r.name = 'b1'`,
  );
  return row?.n ?? -1;
}

/** Consumer calls of build b1 per consumer (`*`: every call). */
async function consumerTotals(): Promise<Record<string, number>> {
  const rows = await sql<{ consumer: string; calls: number }>(
    `SELECT c.consumer, sum(c.calls)::int AS calls FROM consumer_calls c JOIN environment_rows r ON r.id = c.row_id
      WHERE r.kind = 'production' AND r.name = 'b1' AND c.environment_kind = 'production' GROUP BY c.consumer`,
  );
  return Object.fromEntries(rows.map((row) => [row.consumer, row.calls]));
}

async function runtimeTotal(): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT coalesce(sum(requests), 0)::int AS n FROM runtime_buckets
      WHERE environment_kind = 'production' AND environment_name = 'b1' AND resolution = 'minute'`,
  );
  return row?.n ?? -1;
}

describe('queued evidence', () => {
  it('is folded before each ack, once, with many agents of one build on two replicas at once', async () => {
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
    // Acknowledged: folded already, nothing left queued, each batch counted once.
    const total = AGENTS * BATCHES * COUNT;
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
      `INSERT INTO evidence_queue (project_id, row_id, last_seen, exchanges, minutes, consumers)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb)`,
      [
        row?.project_id,
        row?.id,
        now,
        JSON.stringify([
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
        JSON.stringify([
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
        JSON.stringify(
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
});
