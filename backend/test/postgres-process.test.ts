/**
 * A PostgreSQL started on a port another process took first (another test run beside this one):
 * `backend/test/support/postgres-process.ts`, the PostgreSQL of a fault test's own, and
 * `startEmbeddedPostgres` (jest's global setup, the backend's own database) start on another port;
 * when PostgreSQL exits early for another reason, the error says what PostgreSQL logged (it said
 * "postgres-process: undefined").
 */
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { sqlOn } from './support';
import { runTs } from './support/backend-process';

let work: string;
/** Each test runs initdb once or twice: seconds quiet, a minute at load ~20 (49 s seen at 21). */
const TEST_MS = 180_000;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'spectator-pg-process-'));
  await chmod(work, 0o755); // the postgres system user (we may run as root) must reach the cluster inside
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** A server holding a port of 127.0.0.1, the address PostgreSQL is reached at. */
async function holdPort(): Promise<{ port: number; close: () => void }> {
  const holder = net.createServer((socket) => socket.destroy());
  holder.listen(0, '127.0.0.1');
  await once(holder, 'listening');
  return { port: (holder.address() as net.AddressInfo).port, close: () => holder.close() };
}

/** Runs postgres-process.ts (or embedded-process.ts) on `dir` and `port`; resolves with its first answer (or its end) and its stderr. */
async function run(dir: string, port: number, script = 'postgres-process') {
  const { child, lines, output } = runTs(`backend/test/support/${script}.ts`, [dir, String(port)], {});
  const exited = once(child, 'exit');
  const first = await lines.next();
  return {
    answer: first.done ? undefined : (JSON.parse(first.value) as { state: string; url: string }),
    output,
    close: async (): Promise<number | null> => {
      child.stdin?.end();
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

it(
  'starts on another port, on the same data, when its port was taken first',
  async () => {
    const holder = await holdPort();
    const taken = holder.port;
    const dir = path.join(work, 'taken');
    const postgres = await run(dir, taken).finally(holder.close);
    let exitCode: number | null;
    try {
      expect(postgres.answer?.state).toBe('started');
      const url = new URL(postgres.answer!.url);
      expect(url.hostname).toBe('127.0.0.1');
      expect(Number(url.port)).not.toBe(taken);
      // The url reaches this PostgreSQL, not the port's holder.
      expect(await sqlOn<{ one: number }>(url.toString(), 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(postgres.output.join('')).toContain(`port ${taken} was taken`);
      // One cluster, made once: the second attempt started the first's data.
      expect({ first: existsSync(`${dir}/PG_VERSION`), second: existsSync(`${dir}-2`) }).toEqual({
        first: true,
        second: false,
      });
    } finally {
      exitCode = await postgres.close();
    }
    expect(exitCode).toBe(0);
  },
  TEST_MS,
);

it(
  "says PostgreSQL's last log lines when it exits early for another reason",
  async () => {
    // A port PostgreSQL refuses: it logs why and exits before it is ready.
    const postgres = await run(path.join(work, 'refused'), 70_000);
    expect(postgres.answer).toBeUndefined();
    expect(await postgres.close()).toBe(1);
    const said = postgres.output.join('');
    expect(said).toContain('PostgreSQL on port 70000 exited before it was ready');
    expect(said).toMatch(/70000 is outside the valid range for parameter "port"/);
    expect(said).not.toContain('was taken');
  },
  TEST_MS,
);

it(
  'startEmbeddedPostgres starts on another port when its port was taken, and listens on 127.0.0.1 alone',
  async () => {
    const holder = await holdPort();
    const postgres = await run(path.join(work, 'embedded'), holder.port, 'embedded-process').finally(holder.close);
    let exitCode: number | null;
    try {
      const { url, port } = postgres.answer as unknown as { url: string; port: number };
      expect(port).not.toBe(holder.port);
      expect(new URL(url).port).toBe(String(port));
      // The url reaches this PostgreSQL, not the port's holder.
      expect(await sqlOn<{ one: number }>(url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(postgres.output.join('')).toContain(`port ${holder.port} was taken`);
      // Not on ::1 (it listened on `localhost`): a port taken on 127.0.0.1 alone left it there.
      const onV6 = await new Promise<string>((resolve) => {
        const socket = net.connect(port, '::1');
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      });
      expect(onV6).toBe('ECONNREFUSED');
    } finally {
      exitCode = await postgres.close();
    }
    expect(exitCode).toBe(0);
  },
  TEST_MS,
);
