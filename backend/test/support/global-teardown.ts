import { rm } from 'node:fs/promises';
import pg from 'pg';
import { TEST_PG_ENV, TEST_PG_TEMPLATE_ENV } from './global-setup';

/**
 * Jest globalTeardown: drops the template database made by globalSetup (on a server it did not
 * start), stops the embedded PostgreSQL of the test run and removes its directory.
 */
export default async function globalTeardown(): Promise<void> {
  const template = globalThis.__spectatorTestTemplate;
  globalThis.__spectatorTestTemplate = undefined;
  const started = globalThis.__spectatorTestPostgres;
  globalThis.__spectatorTestPostgres = undefined;
  if (template !== undefined) {
    delete process.env[TEST_PG_TEMPLATE_ENV];
    if (!started) {
      const admin = new pg.Client({ connectionString: process.env[TEST_PG_ENV] });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    }
  }
  if (!started) return;
  await started.pg.stop();
  await rm(started.dir, { recursive: true, force: true });
}
