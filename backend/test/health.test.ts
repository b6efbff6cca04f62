import { Client } from 'pg';
import { apiCall, startTestBackend, type TestBackend } from './support';
import { eventually } from './support/evidence-helpers';

let backend: TestBackend;
beforeAll(async () => {
  backend = await startTestBackend();
});
afterAll(async () => {
  await backend?.close();
});

/** Runs SQL on the server of the backend's database, connected to another database of it; its rows. */
async function onServer(sql: string): Promise<Array<Record<string, unknown>>> {
  const url = new URL(backend.databaseUrl);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

describe('health', () => {
  // The Kubernetes liveness probe asks /health/live, readiness /health: a database outage takes
  // the replicas out of the Service without restarting them.
  it('/health/live answers 200 while the database is unreachable; /health answers 503 then', async () => {
    const name = new URL(backend.databaseUrl).pathname.slice(1);
    expect(await apiCall(backend.url, null, 'GET', '/health')).toEqual({
      status: 200,
      body: { status: 'ok', database: 'ok' },
    });
    expect(await apiCall(backend.url, null, 'GET', '/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
    await onServer(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`);
    try {
      await onServer(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`,
      );
      // pg_terminate_backend only signals: a session ends when its process next runs, which on a
      // loaded machine can be after connections are allowed again, and the backend's pooled
      // connection then fails the next query. The outage starts once every session has ended.
      await eventually(
        () => onServer(`SELECT count(*)::int AS sessions FROM pg_stat_activity WHERE datname = '${name}'`),
        (rows) => rows[0]?.sessions === 0,
      );
      expect((await apiCall(backend.url, null, 'GET', '/health')).status).toBe(503);
      expect(await apiCall(backend.url, null, 'GET', '/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
    } finally {
      await onServer(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`);
    }
    expect((await apiCall(backend.url, null, 'GET', '/health')).status).toBe(200);
  });
});
