/**
 * A CI run's batches are acknowledged at their commit, as staging and production batches are, and
 * folded after (issue 20); the CI gate still sees every batch's evidence, because the agent's stop
 * waits for `capture-ended` and the backend answers it only once none of the row's batches queued
 * before the end is left unfolded, whichever replica folds them. Real backends, PostgreSQL and
 * WebSockets; the folds are held back by a transaction holding the pull request's row (a fold takes
 * it `SKIP LOCKED`: it finds the row busy and tries again), so the waits are seen, not raced.
 * When the folds are held back longer than the end waits (SETTLE_MS), the end is answered unfolded
 * (counted) and the gate's read, on any replica, waits for the fold itself: it never reads short.
 */
import { type RunningAgent, startAgent } from '@spectator/agent';
import type { BackendMessage, CiRuntimeResponse, TokenResponse } from '@spectator/shared';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { batchMessage, connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
import { apiCall, sqlOn, startTestBackend, startTestReplica, type TestBackend } from './support';
import { documentGet, eventually, startJsonApp, type LocalServer } from './support/evidence-helpers';

let first: TestBackend;
let second: TestBackend;
let agentToken: string;
let readToken: string;
let app: LocalServer;
const METRICS_TOKEN = 'metrics-token-for-the-ci-end-test';

const sql = <T>(text: string, values: unknown[] = []): Promise<T[]> => sqlOn<T>(first.databaseUrl, text, values);

beforeAll(async () => {
  first = await startTestBackend({ metricsToken: METRICS_TOKEN });
  second = await startTestReplica(first, { metricsToken: METRICS_TOKEN });
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
 * folds find it busy meanwhile (batches still commit, they do not take the row). Released once.
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
  let released = false;
  return {
    release: async () => {
      if (released) return;
      released = true;
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

/** The runtime gate's requests per path for a pull request, as `spectator-agent check` reads them (on `backend`). */
async function gateRequests(pullRequest: string, backend: TestBackend = first): Promise<Record<string, number>> {
  const { status, body } = await backend.api<CiRuntimeResponse>(
    'GET',
    `/projects/gated/ci/${pullRequest}/runtime`,
    undefined,
    readToken,
  );
  expect(status).toBe(200);
  return Object.fromEntries(body.endpoints.map((e) => [e.path, e.pullRequest.requests]));
}

/** A counter of `backend`'s /metrics. */
async function metric(backend: TestBackend, name: string): Promise<number> {
  const { status, body } = await apiCall<string>(backend.url, METRICS_TOKEN, 'GET', '/metrics');
  expect(status).toBe(200);
  return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(body)?.[1] ?? NaN);
}

/** An agent of pull request `pullRequest`'s CI run, in front of the app, reporting to `backend`. */
function ciAgent(pullRequest: string, backend: string): Promise<RunningAgent> {
  return startAgent({
    listen: '127.0.0.1:0',
    upstream: app.url,
    backend,
    token: agentToken,
    environment: { kind: 'ci', pullRequest, commit: `c${pullRequest}` },
    configPath: path.join(os.tmpdir(), 'spectator-no-service.yml'),
    logLevel: 'silent',
    tuning: { flushIntervalMs: 20, probeIntervalMs: 200, ackWaitMs: 60_000 },
  });
}

/**
 * Rounds of requests through `agent`, each acknowledged before the next (one batch or more each);
 * from the second round on the row's folds are held back (the acks still come, at commit).
 * @returns the requests sent per path and the hold on the pull request's row.
 */
async function heldRounds(
  agent: RunningAgent,
  pullRequest: string,
  rounds: number,
): Promise<{ sent: Record<string, number>; hold: { release: () => Promise<void> } }> {
  const sent: Record<string, number> = { '/orders': 0, '/items': 0 };
  let hold: { release: () => Promise<void> } | null = null;
  try {
    for (let round = 0; round < rounds; round++) {
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
      hold ??= await holdRow(pullRequest);
    }
  } catch (error) {
    await hold?.release();
    throw error;
  }
  if (hold === null) throw new Error('no round held the row');
  expect(await queued(pullRequest)).toBeGreaterThan(0);
  return { sent, hold };
}

/**
 * Reads the gate's requests of `pullRequest` on `backend` while its row is held (the read is seen
 * waiting for the fold, by `backend`'s counter), releasing the row only then.
 */
async function readWhileHeld(
  backend: TestBackend,
  pullRequest: string,
  hold: { release: () => Promise<void> },
): Promise<Record<string, number>> {
  const waiting = await metric(backend, 'spectator_gate_reads_waiting_for_folds_total');
  const reading = gateRequests(pullRequest, backend);
  reading.catch(() => undefined);
  try {
    await eventually(
      () => metric(backend, 'spectator_gate_reads_waiting_for_folds_total'),
      (n) => n > waiting,
    );
    expect(await queued(pullRequest)).toBeGreaterThan(0);
  } finally {
    await hold.release();
  }
  return reading;
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
    const agent = await ciAgent('31', first.url);
    let closing: Promise<void> | null = null;
    try {
      const { sent, hold } = await heldRounds(agent, '31', 8);
      const captureId = agent.captureId();
      let stopped = false;
      closing = agent.close().then(() => void (stopped = true));
      // The end is stored, its answer waits for the folds the held row keeps from running.
      await eventually(
        () => ended(captureId),
        (done) => done,
      );
      expect(stopped).toBe(false);
      await hold.release();
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

  it("is all in the gate's answer on the other replica when the folds are held back past the end's bound", async () => {
    const agent = await ciAgent('33', first.url);
    let closing: Promise<void> | null = null;
    try {
      const { sent, hold } = await heldRounds(agent, '33', 4);
      try {
        const unfolded = await metric(first, 'spectator_ingest_capture_ends_unfolded_total');
        // The end's answer waits SETTLE_MS at most: the agent stops with the row still held, its
        // end answered unfolded (and counted), its batches still queued.
        closing = agent.close();
        await closing;
        expect(agent.metrics.get('capture_ends_acked_total')).toBe(1);
        expect(await metric(first, 'spectator_ingest_capture_ends_unfolded_total')).toBe(unfolded + 1);
        expect(await folded('33')).not.toEqual(sent);
        // The gate's read, on the other replica, waits for the fold, and has every request.
        expect(await readWhileHeld(second, '33', hold)).toEqual(sent);
        expect(await folded('33')).toEqual(sent);
        expect(await queued('33')).toBe(0);
      } finally {
        await hold.release();
      }
    } finally {
      await (closing ?? agent.close());
    }
  });

  it("is all in the gate's answer when the backend restarts between the last ack and the end", async () => {
    let restarting: TestBackend | null = await startTestReplica(first, { metricsToken: METRICS_TOKEN });
    const port = Number(new URL(restarting.url).port);
    const agent = await ciAgent('34', restarting.url);
    let closing: Promise<void> | null = null;
    try {
      const { sent, hold } = await heldRounds(agent, '34', 4);
      try {
        // Every batch is acknowledged; the backend stops before the agent does, so the end goes
        // out only to the backend started again on the same address.
        await restarting.close();
        restarting = null;
        closing = agent.close();
        restarting = await startTestReplica(first, { metricsToken: METRICS_TOKEN, port });
        await closing;
        expect(agent.metrics.get('capture_ends_acked_total')).toBe(1);
        expect(await readWhileHeld(first, '34', hold)).toEqual(sent);
        expect(await folded('34')).toEqual(sent);
      } finally {
        await hold.release();
      }
    } finally {
      await (closing ?? agent.close());
      await restarting?.close();
    }
  });
});
