/** Captures past retention are deleted with their observations; evidence, proposals and live captures stay. */
import type { AgentResponse, HelloMessage, ProposalResponse, TokenResponse } from '@spectator/shared';
import pg from 'pg';
import pino from 'pino';
import { parseConfig } from '../src/config/config';
import { createDataSource } from '../src/database/data-source';
import { OBSERVATIONS } from '../src/partitions/partitions';
import { PartitionsRepository } from '../src/partitions/partitions.repository';
import { PartitionsService } from '../src/partitions/partitions.service';
import { RETENTION_LOCK, RetentionRepository } from '../src/retention/retention.repository';
import { RetentionService } from '../src/retention/retention.service';
import type { Runtime } from '../src/config/runtime';
import { startTestBackend, type TestBackend } from './support';
import { eventually, untilFolded } from './support/evidence-helpers';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';

let backend: TestBackend;
let db: pg.Client;
let token: string;

beforeAll(async () => {
  backend = await startTestBackend();
  await backend.api('POST', '/projects', { slug: 'keep', name: 'Keep' });
  token = (await backend.api<TokenResponse>('POST', '/projects/keep/tokens', { name: 'agents', scope: 'agent' })).body
    .token as string;
  db = new pg.Client({ connectionString: backend.databaseUrl });
  await db.connect();
});
afterAll(async () => {
  await db.end();
  await backend.close();
});

/** One capture of `agentId` with one exchange; its id. */
async function capture(agentId: string, environment: HelloMessage['environment'] = { kind: 'local' }): Promise<string> {
  const agent = await connectTestAgent(backend.url, token);
  const hello = helloMessage({ agentId, environment });
  await agent.request(hello);
  expect(
    await agent.request(
      batchMessage(hello.capture.id, [
        { method: 'POST', path: '/orders', status: 201, request: { sku: 'x' }, response: { id: 1 } },
      ]),
    ),
  ).toMatchObject({ type: 'ack' });
  await agent.close();
  // A staging batch is acknowledged at commit: its evidence is folded before the test moves it in time.
  await untilFolded(backend.databaseUrl);
  return hello.capture.id;
}

/** Moves a capture's start, end and traffic `days` into the past. */
async function age(captureId: string, days: number, traffic = true): Promise<void> {
  await db.query(
    `UPDATE captures SET started_at = now() - make_interval(days => $2), ended_at = now() - make_interval(days => $2 - 1) WHERE id = $1`,
    [captureId, days],
  );
  if (traffic)
    await db.query(
      `UPDATE observations SET first_seen = now() - make_interval(days => $2), last_seen = now() - make_interval(days => $2) WHERE capture_id = $1`,
      [captureId, days],
    );
}

const count = async (table: string, captureId: string): Promise<number> =>
  (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE capture_id = $1`, [captureId])).rows[0]!
    .n;

/** Makes the partition of observations holding `at` (as the backend makes the coming weeks'). */
async function weekOf(at: Date): Promise<void> {
  const ds = createDataSource(backend.databaseUrl, { poolSize: 1 });
  await ds.initialize();
  try {
    await new PartitionsService(new PartitionsRepository(ds), { log: pino({ level: 'silent' }) } as Runtime).cover(
      [OBSERVATIONS],
      at,
      at,
    );
  } finally {
    await ds.destroy();
  }
}

/** A retention service on its own data source (as another replica's), for one call. */
async function withRetention<T>(
  captureRetentionDays: number,
  work: (service: RetentionService) => Promise<T>,
): Promise<T> {
  const ds = createDataSource(backend.databaseUrl, { poolSize: 2 });
  await ds.initialize();
  try {
    const runtime = {
      config: { ...parseConfig({}), captureRetentionDays },
      databaseUrl: backend.databaseUrl,
      log: pino({ level: 'silent' }),
    } as Runtime;
    return await work(new RetentionService(new RetentionRepository(ds, new PartitionsRepository(ds)), runtime));
  } finally {
    await ds.destroy();
  }
}

async function prune(captureRetentionDays: number): Promise<number> {
  return withRetention(captureRetentionDays, (service) => service.pruneCaptures());
}

describe('capture retention', () => {
  it("deletes captures whose last traffic is past retention, with their rows; keeps each agent's newest capture, recent traffic, evidence and proposals", async () => {
    const old = await capture('pod-a', { kind: 'staging', build: 'b-1' });
    const newestOfA = await capture('pod-a', { kind: 'staging', build: 'b-1' });
    const oldButBusy = await capture('pod-b');
    await capture('pod-b'); // pod-b's newest
    const proposal = await backend.api<ProposalResponse>('POST', '/projects/keep/proposals', {
      title: 'from the old capture',
      captureId: old,
      endpoints: [{ method: 'POST', path: '/orders' }],
    });
    expect(proposal.status).toBe(201);
    await age(old, 40);
    await age(newestOfA, 40);
    await age(oldButBusy, 40, false); // started long ago, traffic still recent
    const rowsBefore = (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM environment_rows')).rows[0]!.n;

    expect(await prune(0)).toBe(0);
    expect(await prune(60)).toBe(0);
    expect(await prune(30)).toBe(1);

    expect((await backend.api('GET', `/projects/keep/captures/${old}`)).status).toBe(404);
    for (const table of ['observations', 'capture_endpoints', 'capture_endpoint_counts', 'processed_batches'])
      expect({ table, rows: await count(table, old) }).toEqual({ table, rows: 0 });
    for (const kept of [newestOfA, oldButBusy])
      expect((await backend.api('GET', `/projects/keep/captures/${kept}`)).status).toBe(200);
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM environment_rows')).rows[0]!.n).toBe(
      rowsBefore,
    );
    expect(
      (await backend.api<ProposalResponse>('GET', `/projects/keep/proposals/${proposal.body.id}`)).body,
    ).toMatchObject({ title: 'from the old capture', endpoints: [{ method: 'POST', path: '/orders' }] });
    expect(await prune(30)).toBe(0);
  });

  it('skips the run while another replica holds the retention lock, and prunes once it is released', async () => {
    const stale = await capture('pod-c');
    await capture('pod-c'); // pod-c's newest
    await age(stale, 40);
    await db.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK]);
    try {
      expect(await prune(30)).toBe(0);
      expect((await backend.api('GET', `/projects/keep/captures/${stale}`)).status).toBe(200);
    } finally {
      await db.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK]);
    }
    expect(await prune(30)).toBe(1);
    expect((await backend.api('GET', `/projects/keep/captures/${stale}`)).status).toBe(404);
  });

  it('drops a week of observations whole once every capture created in it is past retention', async () => {
    // Captures made 60 and 50 days ago: their observations go to those weeks' partitions.
    const made = async (agentId: string, daysAgo: number): Promise<string> => {
      const agent = await connectTestAgent(backend.url, token);
      const hello = helloMessage({ agentId });
      await agent.request(hello);
      await db.query(`UPDATE captures SET created_at = now() - make_interval(days => $2) WHERE id = $1`, [
        hello.capture.id,
        daysAgo,
      ]);
      await weekOf(new Date(Date.now() - daysAgo * 24 * 3600_000));
      const batch = batchMessage(hello.capture.id, [{ method: 'GET', path: '/old', status: 200 }]);
      expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
      await agent.close();
      return hello.capture.id;
    };
    const partitionOf = async (captureId: string): Promise<string> =>
      (
        await db.query<{ p: string }>(
          'SELECT DISTINCT tableoid::regclass::text AS p FROM observations WHERE capture_id = $1',
          [captureId],
        )
      ).rows[0]!.p;
    const gone = await made('gone-pod', 60);
    const weekGone = await partitionOf(gone);
    const staleOfKeptWeek = await made('gone-pod-2', 50);
    const busy = await made('busy-pod', 50);
    const weekKept = await partitionOf(busy);
    expect(weekGone).not.toBe(weekKept);
    expect(await partitionOf(staleOfKeptWeek)).toBe(weekKept);
    await age(gone, 40);
    await age(staleOfKeptWeek, 40);
    await age(busy, 40, false); // started long ago, traffic still recent
    // The pods are gone: their agents were last seen 40 days ago (each is its agent's newest capture).
    // Their connections closed first: a close sets the agent's last sight to now.
    await eventually(
      async () =>
        (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_connections WHERE closed_at IS NULL'))
          .rows[0]!.n,
      (open) => open === 0,
    );
    await db.query(
      `UPDATE agents SET last_seen_at = now() - interval '40 days' WHERE agent_key IN ('gone-pod', 'gone-pod-2', 'busy-pod')`,
    );
    const exists = async (table: string): Promise<boolean> =>
      (await db.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [table])).rows[0]!.t !== null;

    expect(await prune(30)).toBe(2);
    // The old week went as one table; the week with recent traffic stays, its stale capture deleted by row.
    expect(await exists(weekGone)).toBe(false);
    expect(await exists(weekKept)).toBe(true);
    for (const deleted of [gone, staleOfKeptWeek]) {
      expect((await backend.api('GET', `/projects/keep/captures/${deleted}`)).status).toBe(404);
      for (const table of ['observations', 'capture_endpoints', 'capture_endpoint_counts', 'processed_batches'])
        expect({ table, rows: await count(table, deleted) }).toEqual({ table, rows: 0 });
    }
    expect((await backend.api('GET', `/projects/keep/captures/${busy}`)).status).toBe(200);
    expect(await count('observations', busy)).toBe(1);
    expect(await prune(30)).toBe(0);
  });

  it('deletes agents not seen within retention with their connections; a capture kept past its agent loses only the link', async () => {
    const kept = await capture('kept-pod');
    const lost = await capture('lost-pod');
    // Their connections closed (a close marks the agent seen now); then one pod was last seen 40 days ago.
    await eventually(
      async () =>
        (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_connections WHERE closed_at IS NULL'))
          .rows[0]!.n,
      (open) => open === 0,
    );
    await db.query(`UPDATE agents SET last_seen_at = now() - interval '40 days' WHERE agent_key = 'lost-pod'`);
    const agentOf = async (key: string): Promise<string | undefined> =>
      (await db.query<{ id: string }>('SELECT id FROM agents WHERE agent_key = $1', [key])).rows[0]?.id;
    const lostId = await agentOf('lost-pod');
    expect(lostId).toBeDefined();
    const connections = async (agentId: string): Promise<number> =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM agent_connections WHERE agent_id = $1', [agentId]))
        .rows[0]!.n;
    expect(await connections(lostId!)).toBe(1);

    // Retention off keeps every agent.
    expect(await withRetention(0, (service) => service.pruneAgents())).toBe(0);
    expect(await agentOf('lost-pod')).toBe(lostId);
    // The hourly run deletes agents after captures.
    expect((await withRetention(30, (service) => service.prune())).agents).toBeGreaterThanOrEqual(1);
    expect(await agentOf('lost-pod')).toBeUndefined();
    expect(await connections(lostId!)).toBe(0);
    expect(await agentOf('kept-pod')).toBeDefined();
    // Its capture had traffic just now: kept, without its agent.
    expect(
      (await db.query<{ agent: string | null }>('SELECT agent_id AS agent FROM captures WHERE id = $1', [lost])).rows,
    ).toEqual([{ agent: null }]);
    expect((await backend.api('GET', `/projects/keep/captures/${lost}`)).status).toBe(200);
    expect((await backend.api('GET', `/projects/keep/captures/${kept}`)).status).toBe(200);
    const listed = (await backend.api<AgentResponse[]>('GET', '/projects/keep/agents?limit=100')).body.map(
      (agent) => agent.agentKey,
    );
    expect(listed).toContain('kept-pod');
    expect(listed).not.toContain('lost-pod');
    expect(await withRetention(30, (service) => service.pruneAgents())).toBe(0);
  });
});
