import { rm } from 'node:fs/promises';

/** Jest globalTeardown: stops the embedded PostgreSQL of the test run and removes its directory. */
export default async function globalTeardown(): Promise<void> {
  const started = globalThis.__spectatorTestPostgres;
  globalThis.__spectatorTestPostgres = undefined;
  if (!started) return;
  await started.pg.stop();
  await rm(started.dir, { recursive: true, force: true });
}
