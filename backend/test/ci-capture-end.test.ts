/**
 * A CI run's batches are acknowledged at their commit, as staging and production batches are, and
 * folded after (issue 20); the CI gate still sees every batch's evidence, because the agent's stop
 * waits for `capture-ended` and the backend answers it only once none of the row's batches queued
 * before the end is left unfolded, whichever replica folds them. Real backends, PostgreSQL and
 * WebSockets; the folds are held back by a transaction holding the pull request's row (a fold takes
 * it `SKIP LOCKED`: it finds the row busy and tries again), so the waits are seen, not raced.
 */
import { type RunningAgent, startAgent } from '@spectator/agent';
import type { BackendMessage, CiRuntimeResponse, TokenResponse } from '@spectator/shared';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { batchMessage, connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
import { sqlOn, startTestBackend, startTestReplica, type TestBackend } from './support';
import { documentGet, eventually, startJsonApp, type LocalServer } from './support/evidence-helpers';

let first: TestBackend;
let second: TestBackend;
let agentToken: string;
let readToken: string;
let app: LocalServer;

const sql = <T>(text: string, values: unknown[] = []): Promise<T[]> => sqlOn<T>(first.databaseUrl, text, values);

beforeAll(async () => {
  first = await startTestBackend();
  second = await startTestReplica(first);
  expect((await first.api('POST', '/projects', { slug: 'gated', name: 'Gated' })).status).toBe(201);
  const token = async (name: string, scope: string): Promise<string> =>
    (await first.api<TokenResponse>('POST', '/projects/gated/tokens', { name, scope })).body.token as string;
  agentToken = await token('agents', 'agent');
  readToken = await token('ci gate', 'read');
  for (const route of ['/orders', '/items']) await documentGet(first, 'gated', route, { id: { type: 'string' } });
  app = await startJsonApp({
    'GET /orders': () => ({ status: 200, body: { id: 'o-1' } }),
    'GET /items': () => ({ status: 200, body: { id: 'i-1' } }),
  });
});
afterAll(async () => {
  await app?.close();
  await second?.close();
  await first?.close();
});

/**
 * Holds pull request `pullRequest`'s row in a transaction of its own until `release`: the row's
 * folds find it busy meanwhile (batches still commit, they do not take the row).
 */
async function holdRow(pullRequest: string): Promise<{ release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: first.databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  await client.query('BEGIN');
  const { rowCount } = await client.query(
    `SELECT 1 FROM environment_rows WHERE kind = 'ci' AND name = $1 FOR NO KEY UPDATE`,
    [`PR #${pullRequest}`],
  );
  expect(rowCount).toBe(1);
  return {
    release: async () => {
      await client.query('COMMIT');
      await client.end();
    },
  };
}

/** Batches of pull request `pullRequest`'s row still queued (committed, not folded). */
async function queued(pullRequest: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    `SELECT count(*)::int AS n FROM evidence_queue q JOIN environment_rows r ON r.id = q.row_id
      WHERE r.kind = 'ci' AND r.name = $1`,
    [`PR #${pullRequest}`],
  );
  return row?.n ?? -1;
}

/** Requests folded into pull request `pullRequest`'s evidence, per path. */
async function folded(pullRequest: string): Promise<Record<string, number>> {
  const rows = await sql<{ path: string; n: number }>(
    `SELECT o.path, sum(o.count)::int AS n FROM evidence_observations o JOIN environment_rows r ON r.id = o.row_id
      WHERE r.kind = 'ci' AND r.name = $1 GROUP BY o.path`,
    [`PR #${pullRequest}`],
  );
  return Object.fromEntries(rows.map((row) => [row.path, row.n]));
}

/** Whether capture `captureId`'s end is stored (the backend handled the agent's `capture-end`). */
async function ended(captureId: string): Promise<boolean> {
  const [row] = await sql<{ ended: boolean }>('SELECT ended_at IS NOT NULL AS ended FROM captures WHERE id = $1', [
    captureId,
  ]);
  return row?.ended ?? false;
}

/** The runtime gate's requests per path for a pull request, as `spectator-agent check` reads them. */
async function gateRequests(pullRequest: string): Promise<Record<string, number>> {
  const { status, body } = await first.api<CiRuntimeResponse>(
    'GET',
    `/projects/gated/ci/${pullRequest}/runtime`,
    undefined,
    readToken,
  );
  expect(status).toBe(200);
  return Object.fromEntries(body.endpoints.map((e) => [e.path, e.pullRequest.requests]));
}

/** Messages of a test agent's kind `type` as they arrive (beside its `next`). */
function arrivals(agent: TestAgent, type: BackendMessage['type']): BackendMessage[] {
  const seen: BackendMessage[] = [];
  agent.socket.on('message', (data) => {
    const message = JSON.parse(data.toString()) as BackendMessage;
    if (message.type === type) seen.push(message);
  });
  return seen;
}

describe("a CI run's evidence", () => {
  it("is all in the gate's answer right after the agent's stop, its folds held back until then", async () => {
    const agent: RunningAgent = await startAgent({
      listen: '127.0.0.1:0',
      upstream: app.url,
      backend: first.url,
      token: agentToken,
      environment: { kind: 'ci', pullRequest: '31', commit: 'c31' },
      configPath: path.join(os.tmpdir(), 'spectator-no-service.yml'),
      logLevel: 'silent',
      tuning: { flushIntervalMs: 20, probeIntervalMs: 200, ackWaitMs: 60_000 },
    });
    let closing: Promise<void> | null = null;
    try {
      const sent: Record<string, number> = { '/orders': 0, '/items': 0 };
      let hold: { release: () => Promise<void> } | null = null;
      // Rounds of requests, each acknowledged before the next: one batch or more each.
      for (let round = 0; round < 8; round++) {
        const acked = agent.metrics.get('batches_acked_total');
        for (let i = 0; i <= round; i++)
          for (const route of ['/orders', '/items']) {
            expect((await fetch(`${agent.proxyUrl}${route}`)).status).toBe(200);
            sent[route] = (sent[route] ?? 0) + 1;
          }
        await eventually(
          () => agent.metrics.get('batches_acked_total'),
          (n) => n > acked,
        );
        // From the second round on the row's folds are held back: the acks still come (at commit).
        hold ??= await holdRow('31');
      }
      expect(await queued('31')).toBeGreaterThan(0);
      const captureId = agent.captureId();
      let stopped = false;
      closing = agent.close().then(() => void (stopped = true));
      // The end is stored, its answer waits for the folds the held row keeps from running.
      await eventually(
        () => ended(captureId),
        (done) => done,
      );
      expect(stopped).toBe(false);
      await hold?.release();
      await closing;
      // Asked at once, as the CI job's next step does: every request is in.
      expect(await gateRequests('31')).toEqual(sent);
      expect(await folded('31')).toEqual(sent);
      expect(await queued('31')).toBe(0);
    } finally {
      await (closing ?? agent.close());
    }
  });

  it('is acknowledged at commit, and ended on another replica after a dropped connection once folded there or here', async () => {
    const hello = helloMessage({ agentId: 'ci-moving', environment: { kind: 'ci', pullRequest: '32', commit: 'c32' } });
    const exchange = (n: number) => ({ method: 'GET', path: '/orders', status: 200, response: { id: 'o' }, count: n });
    const onFirst = await connectTestAgent(first.url, agentToken);
    expect(await onFirst.request(hello)).toMatchObject({ type: 'welcome' });
    const opening = batchMessage(hello.capture.id, [exchange(1)]);
    expect(await onFirst.request(opening)).toEqual({ type: 'ack', batchId: opening.batchId });
    const hold = await holdRow('32');
    let released = false;
    try {
      // Each ack comes with its batch committed (its observations stored, its evidence queued),
      // while no fold of the row can run.
      let sent = 1;
      let last = opening;
      for (let b = 2; b <= 12; b++) {
        last = batchMessage(hello.capture.id, [exchange(b)]);
        expect(await onFirst.request(last)).toEqual({ type: 'ack', batchId: last.batchId });
        sent += b;
        const [stored] = await sql<{ n: number }>(
          `SELECT coalesce(sum(count), 0)::int AS n FROM observations WHERE capture_id = $1`,
          [hello.capture.id],
        );
        expect(stored?.n).toBe(sent);
        expect(await queued('32')).toBeGreaterThanOrEqual(1);
      }
      // The connection drops before the end; the agent comes back on the other replica, resends its
      // last batch (its ack was lost, say) and ends its capture there.
      onFirst.socket.terminate();
      await onFirst.closed;
      const onSecond = await connectTestAgent(second.url, agentToken);
      try {
        const endings = arrivals(onSecond, 'capture-ended');
        expect(await onSecond.request(hello)).toMatchObject({ type: 'welcome' });
        expect(await onSecond.request(last)).toEqual({ type: 'ack', batchId: last.batchId, duplicate: true });
        onSecond.send({ type: 'capture-end', captureId: hello.capture.id, endedAt: new Date().toISOString() });
        await eventually(
          () => ended(hello.capture.id),
          (done) => done,
        );
        expect(endings).toEqual([]);
        await hold.release();
        released = true;
        expect(await onSecond.next(30_000)).toEqual({ type: 'capture-ended', captureId: hello.capture.id });
        // Read at once: every batch's evidence is in.
        expect(await folded('32')).toEqual({ '/orders': sent });
        expect(await gateRequests('32')).toEqual({ '/orders': sent });
      } finally {
        await onSecond.close();
      }
    } finally {
      if (!released) await hold.release();
    }
  });
});
