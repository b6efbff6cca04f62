import { createDataSource, MIGRATIONS } from '../src/database/data-source';
import { appliedMigrations, migrateDown, migrateUp } from '../src/database/migrate';
import { createTestDatabase, type TestDatabase } from './support';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

async function tables(ds: ReturnType<typeof createDataSource>): Promise<string[]> {
  const rows = (await ds.query(
    `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  )) as Array<{ tablename: string }>;
  return rows.map((row) => row.tablename);
}

describe('migrations', () => {
  it('go up, down to nothing, and up again to the same schema', async () => {
    const ds = createDataSource(database.url, 2);
    await ds.initialize();
    try {
      expect(await migrateUp(ds)).toEqual(MIGRATIONS.map((m) => m.name));
      const schema = await tables(ds);
      expect(schema).toEqual(
        expect.arrayContaining([
          'projects',
          'tokens',
          'agents',
          'captures',
          'shapes',
          'observations',
          'processed_batches',
          'endpoints',
          'endpoint_versions',
          'proposals',
          'proposal_steps',
        ]),
      );
      expect(await migrateUp(ds)).toEqual([]);
      for (let i = 0; i < MIGRATIONS.length; i++) expect(await migrateDown(ds)).not.toBeNull();
      expect(await migrateDown(ds)).toBeNull();
      expect(await tables(ds)).toEqual(['migrations']);
      expect(await appliedMigrations(ds)).toEqual([]);
      await migrateUp(ds);
      expect(await tables(ds)).toEqual(schema);
    } finally {
      await ds.destroy();
    }
  });

  it('enforce the constraints the code relies on', async () => {
    const ds = createDataSource(database.url, 2);
    await ds.initialize();
    try {
      await migrateUp(ds);
      const fails = async (sql: string, params: unknown[], constraint: RegExp): Promise<void> => {
        await expect(ds.query(sql, params)).rejects.toThrow(constraint);
      };
      const [project] = (await ds.query(`INSERT INTO projects (slug, name) VALUES ('c', 'C') RETURNING id`)) as Array<{
        id: string;
      }>;
      await fails(`INSERT INTO projects (slug, name) VALUES ('c', 'again')`, [], /projects_slug_unique/);
      await fails(`INSERT INTO projects (slug, name) VALUES ('Bad Slug', 'x')`, [], /projects_slug_format/);
      await fails(
        `INSERT INTO tokens (name, scope, token_hash) VALUES ('t', 'read', 'h1')`,
        [],
        /tokens_project_unless_admin/,
      );
      await fails(
        `INSERT INTO tokens (project_id, name, scope, token_hash) VALUES ($1, 't', 'root', 'h2')`,
        [project?.id],
        /tokens_scope_known/,
      );
      await fails(
        `INSERT INTO tokens (project_id, name, scope, environments, token_hash) VALUES ($1, 't', 'agent', '{moon}', 'h3')`,
        [project?.id],
        /tokens_environments_known/,
      );
      const capture = '7d3f5b2a-1c4e-4a6b-8d9f-0e1a2b3c4d5e';
      await ds.query(
        `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at) VALUES ($1, $2, 'ci', 'PR #1', 'agent-start', now())`,
        [capture, project?.id],
      );
      const observation = `INSERT INTO observations (capture_id, method, path, status, request_content_type, request_shape, count, first_seen, last_seen)
                           VALUES ($1, 'GET', '/a', $2, $3, $4, 1, now(), now())`;
      await ds.query(observation, [capture, 200, null, null]);
      // NULL (no body) takes part in the aggregate key: a second "no body" row is the same row.
      await fails(observation, [capture, 200, null, null], /observations_aggregate_key/);
      await fails(observation, [capture, 700, null, null], /observations_status_range/);
      await fails(
        observation,
        [capture, 200, 'application/json', 'no-such-fingerprint'],
        /observations_request_shape_fkey/,
      );
      await ds.query(`INSERT INTO endpoints (project_id, method, path) VALUES ($1, 'GET', '/a')`, [project?.id]);
      await fails(
        `INSERT INTO endpoints (project_id, method, path) VALUES ($1, 'GET', '/a')`,
        [project?.id],
        /endpoints_method_path_unique/,
      );
    } finally {
      await ds.destroy();
    }
  });
});
