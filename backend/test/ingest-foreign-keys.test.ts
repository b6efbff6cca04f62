/**
 * The ingest path's rows without their foreign keys (issue 20, migration
 * IngestWithoutRowForeignKeys): what the keys guaranteed still holds. No observation names a shape
 * that is not stored, and deleting a capture or a project leaves no observation, summary or batch
 * id of it, even while a batch of the capture is being written; nor any queued evidence of it
 * (migration BatchWithoutSharedRowLock).
 */
import type { TokenResponse } from '@spectator/shared';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import {
  batchPart,
  type BatchPart,
  WRITE_BATCH,
  writeBatchParameters,
  writeBatchStatement,
} from '../src/captures/batch-statement';
import { CapturesRepository } from '../src/captures/captures.repository';
import { createDataSource } from '../src/database/data-source';
import { packList } from '../src/evidence/queued-payload';
import { startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';
import { aggregatedRow } from './support/batch-rows';
import { eventually } from './support/evidence-helpers';

const TABLES = ['observations', 'capture_endpoints', 'capture_endpoint_counts', 'processed_batches'] as const;

let backend: TestBackend;
let db: pg.Client;
let ds: DataSource;

beforeAll(async () => {
  backend = await startTestBackend();
  db = new pg.Client({ connectionString: backend.databaseUrl });
  await db.connect();
  ds = createDataSource(backend.databaseUrl, { poolSize: 1 });
  await ds.initialize();
});
afterAll(async () => {
  await ds.destroy();
  await db.end();
  await backend.close();
});

/** A project with an agent token; its id and the token. */
async function project(slug: string): Promise<{ id: string; token: string }> {
  const made = await backend.api<{ id: string }>('POST', '/projects', { slug, name: slug });
  const token = (await backend.api<TokenResponse>('POST', `/projects/${slug}/tokens`, { name: 'a', scope: 'agent' }))
    .body.token as string;
  return { id: made.body.id, token };
}

/** A capture of a local agent with one acknowledged batch of two endpoints; its id. */
async function capture(token: string): Promise<string> {
  const agent = await connectTestAgent(backend.url, token);
  try {
    const hello = helloMessage();
    await agent.request(hello);
    const batch = batchMessage(hello.capture.id, [
      { method: 'POST', path: '/orders', status: 201, request: { sku: 'x' }, response: { id: 1 } },
      { method: 'GET', path: '/orders', status: 200, response: [{ id: 1 }] },
    ]);
    expect(await agent.request(batch)).toEqual({ type: 'ack', batchId: batch.batchId });
    return hello.capture.id;
  } finally {
    await agent.close();
  }
}

/** Rows of each ingest table that name a capture (or, with `byProject`, a project). */
async function rowsOf(id: string, byProject = false): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES)
    counts[table] = (
      await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE ${byProject ? 'project_id' : 'capture_id'} = $1`,
        [id],
      )
    ).rows[0]!.n;
  return counts;
}

const NONE = { observations: 0, capture_endpoints: 0, capture_endpoint_counts: 0, processed_batches: 0 };

/** One row of `GET /race` in a capture, as the batch statement's part. */
function raceBatchPart(projectId: string, captureId: string): BatchPart {
  return batchPart({ batchId: crypto.randomUUID(), projectId, captureId, observations: 1, shapes: [] }, [
    aggregatedRow('/race'),
  ]);
}

/** The batch statement's parameters for one row of `GET /race` in a capture. */
function raceBatch(projectId: string, captureId: string): unknown[] {
  return writeBatchStatement([raceBatchPart(projectId, captureId)]).values;
}

/**
 * The batch statement's parameters for one row of `GET /race` queued as evidence of environment row
 * `rowId`, and the queue row kept from the evidence folder's sweep (queued "in an hour"), so only a
 * delete takes it.
 */
async function queueRaceBatch(client: pg.Client, projectId: string, captureId: string, rowId: string): Promise<void> {
  const parameters = writeBatchParameters(
    {
      batchId: crypto.randomUUID(),
      projectId,
      captureId,
      observations: 1,
      shapes: [],
      evidence: {
        rowId,
        build: 'b1',
        commit: null,
        exchanges: packList([{ method: 'GET', path: '/race', status: 200 }]),
        minutes: '[]',
        consumers: '[]',
      },
    },
    [aggregatedRow('/race')],
  );
  const [written] = (await client.query(WRITE_BATCH, parameters)).rows as Array<{ queued: string | null }>;
  expect(written?.queued).not.toBeNull();
  await client.query(`UPDATE evidence_queue SET queued_at = now() + interval '1 hour' WHERE id = $1`, [
    written?.queued,
  ]);
}

/** Waits until some backend's statement starting with `prefix` (after white space) waits for a lock. */
async function untilWaiting(prefix: string): Promise<void> {
  await eventually(
    async () =>
      (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND ltrim(query, E' \\n') LIKE $1`,
          [`${prefix}%`],
        )
      ).rows[0]!.n,
    (n) => n > 0,
  );
}

describe('ingest rows without foreign keys', () => {
  it('refuses a fingerprint every object has by inheritance as an unknown shape and stores nothing', async () => {
    const { token } = await project('inherited');
    const agent = await connectTestAgent(backend.url, token);
    try {
      const hello = helloMessage();
      await agent.request(hello);
      for (const fp of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
        const batch = batchMessage(hello.capture.id, [{ method: 'GET', path: '/things', status: 200 }]);
        batch.observations[0]!.response = { contentType: 'application/json', shape: fp };
        expect(await agent.request(batch)).toMatchObject({
          type: 'error',
          message: `observations[0].response.shape ${fp} is an unknown shape: include it in shapes`,
        });
        // A good message between bad ones keeps the connection open.
        const good = batchMessage(hello.capture.id, [{ method: 'GET', path: '/good', status: 204 }]);
        expect(await agent.request(good)).toEqual({ type: 'ack', batchId: good.batchId });
      }
      expect((await db.query('SELECT path FROM observations WHERE capture_id = $1', [hello.capture.id])).rows).toEqual([
        { path: '/good' },
      ]);
    } finally {
      await agent.close();
    }
  });

  it('keeps every shape: deleting or truncating shapes is refused', async () => {
    await capture((await project('shaped')).token);
    await expect(db.query('DELETE FROM shapes')).rejects.toThrow('shapes are never deleted');
    await expect(db.query('TRUNCATE shapes')).rejects.toThrow('shapes are never deleted');
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM shapes')).rows[0]!.n).toBeGreaterThan(0);
  });

  it("deletes a deleted project's captures with their observations, summaries and batch ids; another project's stay", async () => {
    const gone = await project('gone');
    const kept = await project('kept');
    const goneCapture = await capture(gone.token);
    const keptCapture = await capture(kept.token);
    const keptRows = await rowsOf(keptCapture);
    expect(keptRows).toEqual({
      observations: 2,
      capture_endpoints: 2,
      capture_endpoint_counts: 1,
      processed_batches: 1,
    });
    expect(await rowsOf(goneCapture)).toEqual(keptRows);

    await db.query('DELETE FROM projects WHERE id = $1', [gone.id]);

    expect(await rowsOf(gone.id, true)).toEqual(NONE);
    expect(await rowsOf(keptCapture)).toEqual(keptRows);
  });

  it('deletes the rows of a batch that held its capture while the capture was deleted', async () => {
    const { id: projectId, token } = await project('held');
    const captureId = await capture(token);
    const writer = new pg.Client({ connectionString: backend.databaseUrl });
    const deleter = new pg.Client({ connectionString: backend.databaseUrl });
    await writer.connect();
    await deleter.connect();
    try {
      await writer.query('BEGIN');
      const [written] = (await writer.query(WRITE_BATCH, raceBatch(projectId, captureId))).rows as Array<{
        claimed: boolean;
        captured: boolean;
      }>;
      expect(written).toMatchObject({ claimed: true, captured: true });
      // The delete waits for the batch's lock on the capture, then sees the batch's rows.
      const deleted = deleter.query('DELETE FROM captures WHERE id = $1', [captureId]);
      await untilWaiting('DELETE FROM captures');
      await writer.query('COMMIT');
      expect((await deleted).rowCount).toBe(1);
      expect(await rowsOf(captureId)).toEqual(NONE);
    } finally {
      await writer.end();
      await deleter.end();
    }
  });

  it('fails a batch whose capture is deleted while it waits and writes none of its rows', async () => {
    const { id: projectId, token } = await project('late');
    const captureId = await capture(token);
    const deleter = new pg.Client({ connectionString: backend.databaseUrl });
    await deleter.connect();
    try {
      await deleter.query('BEGIN');
      await deleter.query('DELETE FROM captures WHERE id = $1', [captureId]);
      const written = new CapturesRepository(ds).writeBatch(raceBatchPart(projectId, captureId));
      // Failed the same way whatever the order: no unhandled rejection while the delete is held.
      const outcome = written.then(
        () => 'written',
        (error: Error) => error.message,
      );
      await untilWaiting('WITH batches AS');
      await deleter.query('COMMIT');
      expect(await outcome).toBe(`capture ${captureId} no longer exists`);
      expect(await rowsOf(captureId)).toEqual(NONE);
    } finally {
      await deleter.end();
    }
  });
  it("deletes a deleted project's queued evidence, also of a batch that held its capture meanwhile", async () => {
    const { id: projectId, token } = await project('queued');
    const captureId = await capture(token);
    const [{ id: rowId }] = (
      await db.query<{ id: string }>(
        `INSERT INTO environment_rows (project_id, kind, name, scope, build, first_seen, last_seen)
         VALUES ($1, 'production', 'b1', '', 'b1', now(), now()) RETURNING id`,
        [projectId],
      )
    ).rows as [{ id: string }];
    const queued = async (): Promise<number> =>
      (
        await db.query<{ n: number }>('SELECT count(*)::int AS n FROM evidence_queue WHERE project_id = $1', [
          projectId,
        ])
      ).rows[0]!.n;
    const writer = new pg.Client({ connectionString: backend.databaseUrl });
    const deleter = new pg.Client({ connectionString: backend.databaseUrl });
    await writer.connect();
    await deleter.connect();
    try {
      await queueRaceBatch(writer, projectId, captureId, rowId);
      await writer.query('BEGIN');
      await queueRaceBatch(writer, projectId, captureId, rowId);
      // The delete waits for the batch's lock on its capture (the environment row, no key of the
      // queue's now, holds nothing up): the batch's queued evidence commits while the delete runs.
      const deleted = deleter.query('DELETE FROM projects WHERE id = $1', [projectId]);
      await untilWaiting('DELETE FROM projects');
      await writer.query('COMMIT');
      expect((await deleted).rowCount).toBe(1);
      expect(await queued()).toBe(0);
      expect(await rowsOf(projectId, true)).toEqual(NONE);
    } finally {
      await writer.end();
      await deleter.end();
    }
  });
});
