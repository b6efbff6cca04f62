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
  const rows = (await ds.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)) as Array<{ tablename: string }>;
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
        expect.arrayContaining(['projects', 'tokens', 'agents', 'captures', 'shapes', 'observations', 'processed_batches', 'endpoints', 'endpoint_versions', 'proposals', 'proposal_steps']),
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
});
