import pino from 'pino';
import { connectDataSource, createDataSource, openConnections, REQUEST_POOL_SIZE } from '../src/database/data-source';
import { WRITERS } from '../src/ingest/batch-writer';
import { FOLD_POOL_SIZE } from '../src/ingest/evidence-folder';
import { apiCall, createTestDatabase, sqlOn, startTestBackend, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';

interface PoolConnections {
  /** The request pool's (application `spectator-backend`). */
  requests: number;
  /** The folds' pool's (application `spectator-backend-folds`). */
  folds: number;
}

/** Connections of a backend's two pools open on its database. */
async function poolConnections(backend: TestBackend): Promise<PoolConnections> {
  const name = new URL(backend.databaseUrl).pathname.slice(1);
  const rows = await sqlOn<{ application: string; n: number }>(
    backend.databaseUrl,
    `SELECT application_name AS application, count(*)::int AS n FROM pg_stat_activity
      WHERE datname = $1 GROUP BY application_name`,
    [name],
  );
  const of = (application: string): number => rows.find((row) => row.application === application)?.n ?? 0;
  return { requests: of('spectator-backend'), folds: of('spectator-backend-folds') };
}

/** Several requests at once, so the request pool opens several connections; the pools' connections after. */
async function widenPool(backend: TestBackend): Promise<PoolConnections> {
  await Promise.all(Array.from({ length: 8 }, () => apiCall(backend.url, backend.adminToken, 'GET', '/projects')));
  return poolConnections(backend);
}

describe("the database pools' connections at start", () => {
  let backend: TestBackend | undefined;
  afterAll(async () => {
    await backend?.close();
  });

  // Issue 20: the pools opened their connections as the first batches came, each paying
  // authentication, cold catalog caches and, on a writer's, the batch statement's plan.
  it('opens every pool connection before serving, the batch statement prepared on each writer', async () => {
    backend = await startTestBackend({ databaseIdleSeconds: 300, openPoolsAtStart: true });
    const name = new URL(backend.databaseUrl).pathname.slice(1);
    // Nothing was asked of the backend: what is open is what it opened at start.
    const rows = await sqlOn<{ application: string; query: string }>(
      backend.databaseUrl,
      `SELECT application_name AS application, query FROM pg_stat_activity WHERE datname = $1`,
      [name],
    );
    const of = (application: string): string[] =>
      rows.filter((row) => row.application === application).map((row) => row.query);
    expect(of('spectator-backend')).toHaveLength(REQUEST_POOL_SIZE);
    expect(of('spectator-backend-folds')).toHaveLength(FOLD_POOL_SIZE);
    const writers = of('spectator-backend-writers');
    expect(writers).toHaveLength(WRITERS);
    // A session's last statement: the batch statement (of no batches) on every writer's connection.
    for (const query of writers) expect(query.trimStart()).toMatch(/^WITH batches AS \(/);
  });
});

describe('openConnections', () => {
  it('logs a pool it could not open at start and leaves the pool working', async () => {
    const database = await createTestDatabase();
    const dataSource = createDataSource(database.url, { poolSize: 3, applicationName: 'spectator-open-test' });
    try {
      await connectDataSource(dataSource, database.url, 'the test');
      const warnings: string[] = [];
      const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
      let prepared = 0;
      await openConnections(dataSource, log, 'the test pool', async (manager) => {
        if (++prepared === 2) throw new Error('refused');
        await manager.query('SELECT 1');
      });
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0] as string)).toMatchObject({
        msg: "could not open the test pool's connections at start: they open when asked for",
        count: 3,
        err: { message: 'refused' },
      });
      // Every connection it held went back: the pool's three serve three queries at once.
      const pids = await Promise.all(
        Array.from({ length: 3 }, () =>
          dataSource.transaction(async (manager) => {
            const [row] = (await manager.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>;
            return row?.pid;
          }),
        ),
      );
      expect(pids.every((pid) => typeof pid === 'number')).toBe(true);
    } finally {
      await dataSource.destroy();
      await database.drop();
    }
  });
});

describe("the database pools' idle connections (SPECTATOR_DATABASE_IDLE_SECONDS)", () => {
  let keeping: TestBackend | undefined;
  let closing: TestBackend | undefined;
  afterAll(async () => {
    await keeping?.close();
    await closing?.close();
  });

  // node-postgres closes a connection idle for 10 s by default: a replica whose agents paused that
  // long reopened its pools (a new PostgreSQL backend each: authentication, cold catalog caches).
  it('keeps idle connections for the seconds set, and closes them after a short setting', async () => {
    // The keeping backend starts and goes idle first: were both pools' idle time the same for both
    // backends (the setting not reaching them), its connections would close first.
    keeping = await startTestBackend({ databaseIdleSeconds: 300 });
    closing = await startTestBackend({ databaseIdleSeconds: 1 });
    const kept = await widenPool(keeping);
    expect(kept.requests).toBeGreaterThanOrEqual(2);
    expect(kept.folds).toBeGreaterThanOrEqual(1);
    expect((await widenPool(closing)).requests).toBeGreaterThanOrEqual(2);
    // One request-pool connection stays busy with the replica's periodic jobs (webhook deliveries).
    await eventually(
      () => poolConnections(closing as TestBackend),
      (open) => open.requests <= 1 && open.folds === 0,
      60_000,
    );
    const after = await poolConnections(keeping);
    expect(after.requests).toBeGreaterThanOrEqual(kept.requests);
    expect(after.folds).toBeGreaterThanOrEqual(kept.folds);
  }, 120_000);
});
