import os from 'node:os';
import path from 'node:path';
import { chmod, mkdtemp } from 'node:fs/promises';
import pg from 'pg';
import { createDataSource } from '../../src/database/data-source';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/database/embedded';
import { migrateUp } from '../../src/database/migrate';

/** The env var holding the admin (maintenance database) URL of the test run's PostgreSQL. */
export const TEST_PG_ENV = 'SPECTATOR_TEST_PG_URL';
/** The env var naming the database with every migration applied that test databases are copied from. */
export const TEST_PG_TEMPLATE_ENV = 'SPECTATOR_TEST_PG_TEMPLATE';

declare global {
  var __spectatorTestPostgres: { pg: EmbeddedDatabase; dir: string } | undefined;
  var __spectatorTestTemplate: string | undefined;
}

/**
 * Makes a database with every migration applied, for test databases to be copied from
 * (`CREATE DATABASE … TEMPLATE`, a file copy) instead of each running the 50-odd migrations.
 */
async function createTemplate(adminUrl: string): Promise<string> {
  const name = `spectator_test_template_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const ds = createDataSource(url.toString(), { poolSize: 2 });
  await ds.initialize();
  try {
    await migrateUp(ds);
  } finally {
    await ds.destroy();
  }
  return name;
}

/**
 * Jest globalSetup: one embedded PostgreSQL for the whole test run (unless DATABASE_URL points at
 * one), published in SPECTATOR_TEST_PG_URL; each test file makes its own database on it. A migrated
 * template database is made once and published in SPECTATOR_TEST_PG_TEMPLATE.
 */
export default async function globalSetup(): Promise<void> {
  if (!process.env[TEST_PG_ENV]) await startPostgres();
  if (!process.env[TEST_PG_TEMPLATE_ENV]) {
    const template = await createTemplate(process.env[TEST_PG_ENV] as string);
    globalThis.__spectatorTestTemplate = template;
    process.env[TEST_PG_TEMPLATE_ENV] = template;
  }
}

async function startPostgres(): Promise<void> {
  if (process.env.DATABASE_URL) {
    process.env[TEST_PG_ENV] = process.env.DATABASE_URL;
    return;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-test-pg-'));
  // mkdtemp makes it 0700; the postgres system user (we may run as root) must reach the cluster inside.
  await chmod(dir, 0o755);
  const embedded = await startEmbeddedPostgres({
    dir: path.join(dir, 'data'),
    database: 'postgres',
    persistent: false,
    disposable: true,
  });
  globalThis.__spectatorTestPostgres = { pg: embedded, dir };
  process.env[TEST_PG_ENV] = embedded.adminUrl;
}
