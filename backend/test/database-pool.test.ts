import { apiCall, sqlOn, startTestBackend, type TestBackend } from './support';
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
