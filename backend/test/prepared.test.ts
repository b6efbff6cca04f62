/**
 * Named prepared statements (common/prepared.ts): the batch statement is parsed once per
 * connection instead of for every batch (issue 20). On real PostgreSQL: a data source's pool and a
 * transaction's connection both keep the statement (`pg_prepared_statements`), a transaction's
 * statement is part of it, PostgreSQL's error code reaches the caller, and anything else that runs
 * SQL gets the text as usual. And the statements run all the time while agents stream are named.
 */
import { LatencyHistogram } from '@spectator/shared';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AgentsRepository } from '../src/agents/agents.repository';
import { queryPrepared } from '../src/common/prepared';
import type { Queryable } from '../src/common/queryable';
import { createDataSource } from '../src/database/data-source';
import { storeEvents } from '../src/events/events.repository';
import { RuntimeRepository } from '../src/runtime/runtime.repository';
import { createTestDatabase, type TestDatabase } from './support';

let database: TestDatabase;
let ds: DataSource;

beforeAll(async () => {
  database = await createTestDatabase();
  // One connection: what a statement prepared on the pool leaves is seen by the next statement.
  ds = createDataSource(database.url, { poolSize: 1 });
  await ds.initialize();
  await ds.query('CREATE TABLE prepared_items (id integer PRIMARY KEY, label text NOT NULL)');
});
afterAll(async () => {
  await ds.destroy();
  await database.drop();
});

const INSERT = 'INSERT INTO prepared_items (id, label) VALUES ($1, $2) RETURNING id, label';

/** The statements the pool's one connection keeps prepared, by name. */
async function preparedOnPool(): Promise<Array<{ name: string; statement: string }>> {
  return ds.query("SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'test_%' ORDER BY name");
}

it('prepares a statement once on the pool and runs it again with other values', async () => {
  expect(await queryPrepared(ds, 'test_insert', INSERT, [1, 'one'])).toEqual([{ id: 1, label: 'one' }]);
  expect(await queryPrepared(ds, 'test_insert', INSERT, [2, 'two'])).toEqual([{ id: 2, label: 'two' }]);
  expect(await preparedOnPool()).toEqual([{ name: 'test_insert', statement: INSERT }]);
  expect(await ds.query('SELECT id, label FROM prepared_items ORDER BY id')).toEqual([
    { id: 1, label: 'one' },
    { id: 2, label: 'two' },
  ]);
});

it("runs in a transaction's connection: rolled back with it", async () => {
  const runner = ds.createQueryRunner();
  await runner.startTransaction();
  try {
    expect(await queryPrepared(runner.manager, 'test_insert', INSERT, [3, 'three'])).toEqual([
      { id: 3, label: 'three' },
    ]);
    expect(await runner.query('SELECT count(*)::int AS n FROM prepared_items')).toEqual([{ n: 3 }]);
  } finally {
    await runner.rollbackTransaction();
    await runner.release();
  }
  expect(await ds.query('SELECT count(*)::int AS n FROM prepared_items')).toEqual([{ n: 2 }]);
});

it("keeps PostgreSQL's error code (what withRetry and the unique checks read)", async () => {
  await expect(queryPrepared(ds, 'test_insert', INSERT, [1, 'again'])).rejects.toMatchObject({ code: '23505' });
  // The prepared statement survives its failed execution.
  expect(await queryPrepared(ds, 'test_insert', INSERT, [4, 'four'])).toEqual([{ id: 4, label: 'four' }]);
});

it('runs the text as usual through anything else that runs SQL', async () => {
  const seen: Array<[string, unknown[] | undefined]> = [];
  const standIn: Queryable = {
    query: async <T>(text: string, values?: unknown[]): Promise<T> => {
      seen.push([text, values]);
      return [{ id: 9 }] as T;
    },
  };
  expect(await queryPrepared(standIn, 'test_other', 'SELECT $1::int AS id', [9])).toEqual([{ id: 9 }]);
  expect(seen).toEqual([['SELECT $1::int AS id', [9]]]);
});

describe('statements run all the time while agents stream', () => {
  let migrated: TestDatabase;
  let app: DataSource;
  beforeAll(async () => {
    migrated = await createTestDatabase({ migrated: true });
    app = createDataSource(migrated.url, { poolSize: 1 });
    await app.initialize();
  });
  afterAll(async () => {
    await app.destroy();
    await migrated.drop();
  });

  it("are named: a fold's runtime statements, the dashboard events' insert, the heartbeat", async () => {
    const [project] = (await app.query(`INSERT INTO projects (slug, name) VALUES ('p', 'P') RETURNING id`)) as [
      { id: string },
    ];
    const histogram = new LatencyHistogram();
    histogram.record(12);
    const minute = {
      method: 'GET',
      path: '/a',
      minute: '2026-11-30T01:00:00.000Z',
      requests: 1,
      serverErrors: 0,
      upstreamFailures: 0,
      clientLeft: 0,
      ttfb: histogram.toWire(),
      ttlb: histogram.toWire(),
    };
    // Unnamed statements leave nothing in pg_prepared_statements (session 23: they were planned on every call).
    await app.transaction(async (manager) => {
      await new RuntimeRepository(app).addMinutes(manager, project.id, { kind: 'production', name: 'build-1' }, [
        minute,
      ]);
      await storeEvents(manager, [
        { projectId: project.id, event: { type: 'capture.updated', captureId: randomUUID() } },
      ]);
    });
    await new AgentsRepository(app).heartbeat(randomUUID());
    expect(
      await app.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'spectator_%' ORDER BY name"),
    ).toEqual(
      [
        'spectator_fold_add_minutes',
        'spectator_fold_lock_runtime_cells',
        'spectator_fold_write_runtime_cells',
        'spectator_heartbeat',
        'spectator_store_events',
      ].map((name) => ({ name })),
    );
    expect(await app.query('SELECT requests::int AS requests FROM runtime_cells')).toEqual([{ requests: 1 }]);
  });
});
