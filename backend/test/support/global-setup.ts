import os from 'node:os';
import path from 'node:path';
import { chmod, mkdtemp } from 'node:fs/promises';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/database/embedded';

/** The env var holding the admin (maintenance database) URL of the test run's PostgreSQL. */
export const TEST_PG_ENV = 'SPECTATOR_TEST_PG_URL';

declare global {
  var __spectatorTestPostgres: { pg: EmbeddedDatabase; dir: string } | undefined;
}

/**
 * Jest globalSetup: one embedded PostgreSQL for the whole test run (unless DATABASE_URL points at
 * one), published in SPECTATOR_TEST_PG_URL; each test file makes its own database on it.
 */
export default async function globalSetup(): Promise<void> {
  if (process.env[TEST_PG_ENV]) return;
  if (process.env.DATABASE_URL) {
    process.env[TEST_PG_ENV] = process.env.DATABASE_URL;
    return;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-test-pg-'));
  // mkdtemp makes it 0700; the postgres system user (we may run as root) must reach the cluster inside.
  await chmod(dir, 0o755);
  const pg = await startEmbeddedPostgres({
    dir: path.join(dir, 'data'),
    database: 'postgres',
    persistent: false,
    disposable: true,
  });
  globalThis.__spectatorTestPostgres = { pg, dir };
  process.env[TEST_PG_ENV] = pg.adminUrl;
}
