// `npm start`, run for real: the build check, the backend on an embedded PostgreSQL, the demo
// project, the story, the demo API behind the agent; then the printed URLs are used, Ctrl-C is
// sent to the process group as a terminal does, and the data is kept or dropped as promised.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ensureDashboardBuilt } from '../../dashboard/test/support/browser';
import { REPO_ROOT } from './support/repo';

const START_TIMEOUT_MS = 240_000;

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

interface Printed {
  dashboard: URL;
  token: string;
  proxy: string;
  api: string;
}

const runs: Run[] = [];

/** Runs `node deploy/start.js <args>` in its own process group, as a terminal runs `npm start`. */
function runStart(args: string[]): Run {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // The demo must not pick up a database or tokens meant for other tests, nor Jest's NODE_ENV.
    if (!/^(DATABASE_URL|PORT|HOST|LOG_LEVEL|NODE_ENV|SPECTATOR_.*)$/.test(key)) env[key] = value;
  }
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'deploy/start.js'), ...args], {
    cwd: REPO_ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const run = { child, output: () => text, exited };
  runs.push(run);
  return run;
}

/** Waits for the ready line (or the exit), then reads the printed addresses. */
async function ready(run: Run): Promise<Printed> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exitCode: number | null | undefined;
  void run.exited.then((code) => (exitCode = code));
  while (!run.output().includes('Spectator is ready.')) {
    if (exitCode !== undefined) throw new Error(`npm start exited (${exitCode}) before it was ready:\n${run.output()}`);
    if (Date.now() > deadline)
      throw new Error(`npm start was not ready within ${START_TIMEOUT_MS / 1000} s:\n${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const field = (name: string): string => {
    const match = new RegExp(`^  ${name} +(\\S+)`, 'm').exec(run.output());
    if (!match) throw new Error(`no "${name}" line in:\n${run.output()}`);
    return match[1]!;
  };
  const dashboard = new URL(field('Dashboard'));
  const token = new URLSearchParams(dashboard.hash.split('?')[1]).get('token') ?? '';
  return { dashboard, token, proxy: field('Proxy'), api: field('API') };
}

/** Ctrl-C as a terminal sends it: SIGINT to the whole foreground process group. */
async function interrupt(run: Run): Promise<number | null> {
  if (run.child.exitCode === null && run.child.signalCode === null) process.kill(-run.child.pid!, 'SIGINT');
  return run.exited;
}

/**
 * Starts, waits until ready, runs `check`, then presses Ctrl-C (also when `check` fails, so the
 * next test finds the data directory free).
 * @returns the exit code after Ctrl-C
 */
async function withStart(
  args: string[],
  check: (printed: Printed, run: Run) => Promise<void>,
): Promise<{ code: number | null; run: Run; printed: Printed }> {
  const run = runStart(args);
  try {
    const printed = await ready(run);
    await check(printed, run);
    return { code: await interrupt(run), run, printed };
  } finally {
    await interrupt(run);
  }
}

async function getJson<T>(url: string, token: string): Promise<T> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  expect({ url, status: response.status }).toEqual({ url, status: 200 });
  return (await response.json()) as T;
}

/** Runs a node script of the repository to its end. */
function runNode(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    // 'close', not 'exit': the last output can still be in the pipes when the process exits.
    child.once('close', (code) => resolve({ code, output }));
  });
}

interface Capture {
  id: string;
  environment: { kind: string };
  pullRequest: string | null;
  build: string | null;
  interactions: number;
}

describe('npm start', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-start-'));
  // As root, the embedded PostgreSQL runs as a system user of its own, which must reach the
  // directory (mkdtemp makes it 0700).
  fs.chmodSync(dataDir, 0o755);
  let firstToken = '';
  let firstCaptures = 0;

  beforeAll(async () => {
    // The dashboard's browser tests build dist/ under a lock while this file may run; build (or
    // wait for their build) under the same lock, so npm start finds it fresh and skips its own.
    await ensureDashboardBuilt();
  }, 180_000);

  afterAll(async () => {
    // A run a failed test left behind is stopped too.
    for (const run of runs.filter(
      (candidate) => candidate.child.exitCode === null && candidate.child.signalCode === null,
    )) {
      process.kill(-run.child.pid!, 'SIGINT');
      await run.exited;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 120_000);

  it(
    'starts everything, serves what it prints, and stops cleanly on Ctrl-C',
    async () => {
      const { code, run, printed } = await withStart(
        ['--port', '0', '--proxy-port', '0', '--data-dir', dataDir],
        async (printed, started) => {
          expect(printed.dashboard.hash).toContain('project=demo');
          expect(started.output()).toContain('lists POST /posts as undocumented (4 to review)');
          // Addresses, never template placeholders such as {proxy_url}.
          expect(started.output()).not.toMatch(/\{[a-z]+_[a-z_]+\}/);

          // The dashboard is served, with the built app.
          const page = await fetch(new URL('/', printed.dashboard));
          expect(page.status).toBe(200);
          expect(page.headers.get('content-type')).toContain('text/html');
          expect(await page.text()).toContain('<div id="root"');

          // The spec's walkthrough in the newest (local) capture: landing traffic ignored, two POST
          // /posts with bodies both ways = 4 to review, GET /posts documented by the story.
          const captures = await getJson<Capture[]>(`${printed.api}/projects/demo/captures`, printed.token);
          const [newest] = captures;
          expect(newest!.environment.kind).toBe('local');
          expect(newest!.interactions).toBe(3);
          expect(
            await getJson(`${printed.api}/projects/demo/captures/${newest!.id}/undocumented`, printed.token),
          ).toEqual([{ method: 'POST', path: '/posts', interactions: 2, count: 4 }]);

          // The story: CI runs of two pull requests, staging and production builds.
          const tags = captures.map(
            (capture) => `${capture.environment.kind}:${capture.pullRequest ?? capture.build ?? ''}`,
          );
          expect(tags).toEqual(
            expect.arrayContaining(['ci:1', 'ci:2', 'staging:s-101', 'staging:s-102', 'production:p-101']),
          );
          const endpoints = await getJson<{ method: string; path: string; version: string }[]>(
            `${printed.api}/projects/demo/endpoints`,
            printed.token,
          );
          expect(endpoints.map((endpoint) => `${endpoint.method} ${endpoint.path} ${endpoint.version}`).sort()).toEqual(
            ['GET /posts 1.1', 'GET /posts/{postId} 1.1'],
          );

          // The versions table the story promises: 1.0 where v1 ran, 1.1 where v2 ran.
          const matrix = await getJson<{
            endpoints: { path: string }[];
            rows: { kind: string; pullRequest?: string | null; build?: string | null }[];
            cells: { version: string }[][];
          }>(`${printed.api}/projects/demo/versions`, printed.token);
          const table = Object.fromEntries(
            matrix.rows.map((row, index) => [
              `${row.kind}:${row.pullRequest ?? row.build}`,
              matrix.cells[index]!.map((cell) => cell.version),
            ]),
          );
          expect(table).toEqual({
            'ci:1': ['1.0', '1.0'],
            'ci:2': ['1.1', '1.1'],
            'staging:s-101': ['1.0', '1.0'],
            'staging:s-102': ['1.1', '1.1'],
            'production:p-101': ['1.0', '1.0'],
          });

          // Both proposals moved on evidence alone: the first all the way, the second up to staging.
          const proposals = await getJson<{ title: string; steps: { step: string }[] }[]>(
            `${printed.api}/projects/demo/proposals`,
            printed.token,
          );
          expect(
            Object.fromEntries(proposals.map((proposal) => [proposal.title, proposal.steps.map((step) => step.step)])),
          ).toEqual({
            'Document the posts API': ['Approved', 'Implemented', 'Appeared in Staging', 'Appeared in Production'],
            'Posts show their likes': ['Approved', 'Implemented', 'Appeared in Staging'],
          });

          // The proxy is the demo API behind the agent: the created record comes back unchanged.
          const created = await fetch(`${printed.proxy}/posts`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ title: 'From the test', author: 'Jest' }),
          });
          expect(created.status).toBe(201);
          expect(await created.json()).toEqual({ id: 3, title: 'From the test', author: 'Jest' });
          firstCaptures = captures.length;
          firstToken = printed.token;

          // The tour's step 2 and 4 (docs/README.md): documenting POST /posts makes 1.0, shown N/A
          // where no evidence of it ran.
          const documented = await fetch(`${printed.api}/projects/demo/documentation`, {
            method: 'POST',
            headers: { authorization: `Bearer ${printed.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              captureId: newest!.id,
              endpoints: [
                {
                  method: 'POST',
                  path: '/posts',
                  description: 'Create a new post. Accepts author, title as JSON in request body',
                  documentBodies: true,
                },
              ],
            }),
          });
          expect(documented.status).toBe(201);
          const after = await getJson<{
            endpoints: { method: string; path: string }[];
            cells: { version: string }[][];
          }>(`${printed.api}/projects/demo/versions`, printed.token);
          const column = after.endpoints.findIndex(
            (endpoint) => endpoint.method === 'POST' && endpoint.path === '/posts',
          );
          expect(column).toBeGreaterThanOrEqual(0);
          expect(new Set(after.cells.map((row) => row[column]!.version))).toEqual(new Set(['N/A']));

          // The compose setup step (the same module) finds the project and hands out an agent token.
          const setupDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-setup-'));
          try {
            const setup = await runNode(
              ['deploy/start/project.js', path.join(setupDir, 'agent-token'), path.join(setupDir, 'state.json')],
              {
                SPECTATOR_URL: printed.api.replace(/\/api\/v1$/, ''),
                SPECTATOR_ADMIN_TOKEN: fs.readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim(),
              },
            );
            expect(setup).toEqual({
              code: 0,
              output: `demo project "demo" found; agent token written to ${path.join(setupDir, 'agent-token')}\n`,
            });
            const state = JSON.parse(fs.readFileSync(path.join(setupDir, 'state.json'), 'utf8')) as {
              agentToken: string;
            };
            expect(fs.readFileSync(path.join(setupDir, 'agent-token'), 'utf8')).toBe(state.agentToken);
          } finally {
            fs.rmSync(setupDir, { recursive: true, force: true });
          }
        },
      );
      expect(code).toBe(0);
      expect(run.output()).toContain('Spectator stopped.');
      // Nothing serves any more, and nothing was logged at error level while stopping.
      await expect(fetch(`${printed.api}/health`)).rejects.toThrow();
      expect(run.output()).not.toMatch(/"level":50|while stopping/);
    },
    START_TIMEOUT_MS + 60_000,
  );

  it(
    'starts again on the same data: the project, its tokens and captures are kept, the story is not replayed',
    async () => {
      const { code } = await withStart(
        ['--port', '0', '--proxy-port', '0', '--data-dir', dataDir],
        async (printed, run) => {
          expect(run.output()).toContain('found the demo project "demo" and its data');
          // The first test documented POST /posts; the hints say so instead of asking for it.
          expect(run.output()).toContain('POST /posts is documented already');
          expect(run.output()).not.toContain('playing the story');
          expect(printed.token).toBe(firstToken);
          expect(await getJson<Capture[]>(`${printed.api}/projects/demo/captures`, printed.token)).toHaveLength(
            firstCaptures + 1,
          );

          // A second npm start on the same data while this one runs says what is wrong.
          const second = runStart(['--port', '0', '--proxy-port', '0', '--data-dir', dataDir]);
          expect(await second.exited).toBe(1);
          expect(second.output()).toContain(`Is another npm start using ${dataDir}?`);
        },
      );
      expect(code).toBe(0);
    },
    START_TIMEOUT_MS + 60_000,
  );

  it(
    '--fresh starts over with an empty database',
    async () => {
      const { code } = await withStart(
        ['--fresh', '--port', '0', '--proxy-port', '0', '--data-dir', dataDir],
        async (printed, run) => {
          expect(run.output()).toContain('(--fresh)');
          expect(run.output()).toContain('created the demo project "demo"');
          expect(printed.token).not.toBe(firstToken);
          expect(await getJson<Capture[]>(`${printed.api}/projects/demo/captures`, printed.token)).toHaveLength(
            firstCaptures,
          );
        },
      );
      expect(code).toBe(0);
    },
    START_TIMEOUT_MS + 60_000,
  );

  it('says which port is taken and how to choose another', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      const run = runStart(['--port', String(port), '--proxy-port', '0', '--data-dir', dataDir]);
      expect(await run.exited).toBe(1);
      expect(run.output()).toContain(`port ${port} is in use`);
      expect(run.output()).toContain(`npm start -- --port ${port + 1}`);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('the compose setup step names what it is missing', async () => {
    const { code, output } = await runNode(['deploy/start/project.js'], {});
    expect(code).toBe(1);
    expect(output).toContain(
      'missing the agent token file argument, the state file argument, SPECTATOR_URL, SPECTATOR_ADMIN_TOKEN',
    );
  });

  it('refuses an unknown option with the usage', async () => {
    const run = runStart(['--colour']);
    expect(await run.exited).toBe(2);
    expect(run.output()).toContain('unknown option "--colour"');
    expect(run.output()).toContain('--fresh');
  });
});
