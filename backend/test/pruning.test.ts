/**
 * The periodic prunes that no request reaches: committed batch ids past `batchRetentionDays`
 * (IngestService, a chunk at a time), their touched keys past the views' hour, and dashboard
 * events every replica has read (EventsService).
 * Capture retention has its own file (retention.test.ts).
 */
import type { BatchMessage, TokenResponse } from '@spectator/shared';
import pino from 'pino';
import type { DataSource } from 'typeorm';
import { parseConfig } from '../src/config/config';
import type { Runtime } from '../src/config/runtime';
import { createDataSource } from '../src/database/data-source';
import { EventsRepository } from '../src/events/events.repository';
import { EventsService } from '../src/events/events.service';
import { IngestRepository } from '../src/ingest/ingest.repository';
import { IngestService, TOUCHED_KEYS_SECONDS } from '../src/ingest/ingest.service';
import { startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';

let backend: TestBackend;
let ds: DataSource;
let projectId: string;
let captureId: string;
let runtime: Runtime;
let token: string;
/** The batch committed before the tests, inside the retention window. */
let kept: BatchMessage;

beforeAll(async () => {
  backend = await startTestBackend();
  const project = await backend.api<{ id: string }>('POST', '/projects', { slug: 'prune', name: 'Prune' });
  projectId = project.body.id;
  token = (await backend.api<TokenResponse>('POST', '/projects/prune/tokens', { name: 'a', scope: 'agent' })).body
    .token as string;
  const agent = await connectTestAgent(backend.url, token);
  const hello = helloMessage({ agentId: 'pruned' });
  await agent.request(hello);
  captureId = hello.capture.id;
  kept = batchMessage(captureId, [{ method: 'GET', path: '/a', status: 200 }]);
  expect(await agent.request(kept)).toMatchObject({ type: 'ack' });
  await agent.close();
  ds = createDataSource(backend.databaseUrl, { poolSize: 2 });
  await ds.initialize();
  runtime = {
    config: { ...parseConfig({}), batchRetentionDays: 30 },
    databaseUrl: backend.databaseUrl,
    log: pino({ level: 'silent' }),
  } as Runtime;
});
afterAll(async () => {
  await ds?.destroy();
  await backend?.close();
});

const count = async (sql: string, parameters: unknown[]): Promise<number> =>
  ((await ds.query(sql, parameters)) as Array<{ n: number }>)[0]!.n;

/** The ingest service for its pruning only: its other collaborators are not reached. */
function pruner(): IngestService {
  const unused = null as never;
  return new IngestService(
    new IngestRepository(ds),
    unused,
    unused,
    unused,
    unused,
    unused,
    unused,
    unused,
    unused,
    unused,
    runtime,
  );
}

describe('pruning', () => {
  it('deletes committed batch ids older than the retention, more than one chunk of them, and keeps newer ones', async () => {
    // One chunk is 10,000 ids: 10,001 old ones take two statements.
    await ds.query(
      `INSERT INTO processed_batches (batch_id, project_id, capture_id, observations, committed_at)
       SELECT gen_random_uuid(), $1, $2, 1, now() - make_interval(days => 31) FROM generate_series(1, 10001)`,
      [projectId, captureId],
    );
    expect(await count('SELECT count(*)::int AS n FROM processed_batches WHERE capture_id = $1', [captureId])).toBe(
      10_002,
    );
    const ingest = pruner();
    expect(await ingest.pruneBatchIds()).toBe(10_001);
    expect(await count('SELECT count(*)::int AS n FROM processed_batches WHERE capture_id = $1', [captureId])).toBe(1);
    expect(await ingest.pruneBatchIds()).toBe(0);
  });

  it('deletes dashboard events older than five minutes and reads the others back by id', async () => {
    const repository = new EventsRepository(ds);
    const events = new EventsService(repository, runtime);
    // The backend publishes events of its own (the agent's connection), stored up to 100 ms after
    // the fact, so one can land between these two (failed at load 10): only these two are looked at.
    const before = await count('SELECT coalesce(max(id), 0)::int AS n FROM dashboard_events', []);
    await repository.store([{ projectId, event: { type: 'capture.updated', captureId } }]);
    await repository.store([{ projectId, event: { type: 'paths.hinted', template: '/a/{b}', regrouped: 0 } }]);
    const [older, newer] = (
      (await ds.query(
        `SELECT id::text AS id FROM dashboard_events
          WHERE id > $1 AND event::jsonb->>'type' IN ('capture.updated', 'paths.hinted') ORDER BY id`,
        [before],
      )) as Array<{ id: string }>
    ).map((row) => row.id);
    await ds.query(`UPDATE dashboard_events SET created_at = now() - interval '6 minutes' WHERE id = $1`, [older]);
    await events.prune();
    const left = await repository.byIds([older!, newer!]);
    expect(left).toEqual([
      { id: newer, projectId, event: JSON.stringify({ type: 'paths.hinted', template: '/a/{b}', regrouped: 0 }) },
    ]);
  });

  it('keeps a resend inside the retention window a duplicate, and counts one of a pruned batch again', async () => {
    const counted = (): Promise<number> =>
      count('SELECT coalesce(sum(count), 0)::int AS n FROM observations WHERE capture_id = $1', [captureId]);
    expect(await counted()).toBe(1);
    expect(await pruner().pruneBatchIds()).toBe(0);
    const agent = await connectTestAgent(backend.url, token);
    await agent.request(helloMessage({ agentId: 'pruned' }));
    // Committed a moment ago, inside the 30 days: pruning left it, the resend is a duplicate.
    expect(await agent.request(kept)).toEqual({ type: 'ack', batchId: kept.batchId, duplicate: true });
    expect(await counted()).toBe(1);
    // Past the window (its id pruned), the same batch is a new one: what the window bounds.
    await ds.query(
      `UPDATE processed_batches SET committed_at = now() - make_interval(days => 31) WHERE batch_id = $1`,
      [kept.batchId],
    );
    expect(await pruner().pruneBatchIds()).toBe(1);
    expect(await agent.request(kept)).toEqual({ type: 'ack', batchId: kept.batchId });
    expect(await counted()).toBe(2);
    await agent.close();
  });

  it("forgets the touched keys of batch ids past the views' hour, keeps newer ones', and resends stay duplicates", async () => {
    const agent = await connectTestAgent(backend.url, token);
    await agent.request(helloMessage({ agentId: 'pruned' }));
    const old = batchMessage(captureId, [{ method: 'GET', path: '/old', status: 200 }]);
    const recent = batchMessage(captureId, [{ method: 'GET', path: '/recent', status: 200 }]);
    expect(await agent.request(old)).toEqual({ type: 'ack', batchId: old.batchId });
    expect(await agent.request(recent)).toEqual({ type: 'ack', batchId: recent.batchId });
    await ds.query(
      `UPDATE processed_batches SET committed_at = now() - make_interval(secs => $2) WHERE batch_id = $1`,
      [old.batchId, TOUCHED_KEYS_SECONDS + 60],
    );
    const keys = async (): Promise<Record<string, string[] | null>> =>
      Object.fromEntries(
        (
          (await ds.query('SELECT batch_id, touched_paths FROM processed_batches WHERE batch_id = ANY($1::uuid[])', [
            [old.batchId, recent.batchId],
          ])) as Array<{ batch_id: string; touched_paths: string[] | null }>
        ).map((row) => [row.batch_id, row.touched_paths]),
      );
    expect(await keys()).toEqual({ [old.batchId]: ['/old'], [recent.batchId]: ['/recent'] });
    expect(await pruner().forgetTouchedKeys()).toBe(1);
    expect(await keys()).toEqual({ [old.batchId]: null, [recent.batchId]: ['/recent'] });
    expect(await pruner().forgetTouchedKeys()).toBe(0);
    // The batch id itself stays: both resends are duplicates, nothing is counted again.
    const counted = (): Promise<number> =>
      count('SELECT coalesce(sum(count), 0)::int AS n FROM observations WHERE capture_id = $1 AND path = ANY($2)', [
        captureId,
        ['/old', '/recent'],
      ]);
    expect(await counted()).toBe(2);
    expect(await agent.request(old)).toEqual({ type: 'ack', batchId: old.batchId, duplicate: true });
    expect(await agent.request(recent)).toEqual({ type: 'ack', batchId: recent.batchId, duplicate: true });
    expect(await counted()).toBe(2);
    await agent.close();
  });
});
