import type { DataSource } from 'typeorm';

// One key for every replica and the migration Job, so only one of them migrates at a time.
const MIGRATION_LOCK_KEY = 'spectator-migrations';

/**
 * The oldest PostgreSQL the schema and its statements work on: foreign keys that set only some of
 * their columns to NULL on delete (`ON DELETE SET NULL (agent_id)`: a capture keeps its project
 * when its agent goes) came with PostgreSQL 15. Every test runs on the newest (18, embedded);
 * backend/test/postgres-versions.test.ts runs the migrations and a fold story on 15, 16 and 17.
 */
export const MIN_POSTGRES_VERSION = 150000;

/** @throws Error naming both versions when the server is older than MIN_POSTGRES_VERSION. */
export async function ensurePostgresVersion(dataSource: DataSource): Promise<void> {
  const [row] = (await dataSource.query(
    `SELECT current_setting('server_version_num')::int AS num, current_setting('server_version') AS text`,
  )) as Array<{ num: number; text: string }>;
  if (row !== undefined && row.num < MIN_POSTGRES_VERSION) {
    throw new Error(
      `PostgreSQL ${row.text} is too old: Spectator needs PostgreSQL ${MIN_POSTGRES_VERSION / 10_000} or later`,
    );
  }
}

/** Runs the pending migrations under a PostgreSQL advisory lock, once the server is new enough; returns the names applied. */
export async function migrateUp(dataSource: DataSource): Promise<string[]> {
  await ensurePostgresVersion(dataSource);
  return withMigrationLock(dataSource, async () =>
    (await dataSource.runMigrations({ transaction: 'each' })).map((m) => m.name),
  );
}

/** Reverts the last applied migration; returns its name, or null when none was applied. */
export async function migrateDown(dataSource: DataSource): Promise<string | null> {
  return withMigrationLock(dataSource, async () => {
    const before = await appliedMigrations(dataSource);
    if (before.length === 0) return null;
    await dataSource.undoLastMigration({ transaction: 'each' });
    return before[before.length - 1] ?? null;
  });
}

/** Names of the applied migrations, oldest first. */
export async function appliedMigrations(dataSource: DataSource): Promise<string[]> {
  const exists = (await dataSource.query(`SELECT to_regclass('migrations') IS NOT NULL AS present`)) as Array<{
    present: boolean;
  }>;
  if (!exists[0]?.present) return [];
  const rows = (await dataSource.query('SELECT name FROM migrations ORDER BY id')) as Array<{ name: string }>;
  return rows.map((row) => row.name);
}

async function withMigrationLock<T>(dataSource: DataSource, work: () => Promise<T>): Promise<T> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock(hashtext($1))', [MIGRATION_LOCK_KEY]);
    return await work();
  } finally {
    await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await runner.release();
  }
}
