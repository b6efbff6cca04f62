/**
 * Issue 18's gate story: `spectator-agent check --fail-on latency-regression,error-rate` with a
 * real backend, real agents (a production build and three pull requests' CI runs) and real
 * upstreams on port 0 whose delays are set on purpose. Pull request 42's version adds 50 ms to
 * GET /orders/{orderId}, pull request 41's changes nothing, pull request 43's answers a fifth of
 * its orders with 500. The traffic of all four runs at once, spread evenly over the same time, in
 * a process of its own, so a busy machine slows each alike; the assertions are the gate's
 * verdicts, never a time.
 */
import { runCheck } from '@spectator/agent';
import type { CiRuntimeResponse, ProposalResponse, TokenResponse } from '@spectator/shared';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestBackend, type TestBackend } from './support';
import { runTs } from './support/backend-process';
import type { GateRun } from './support/gate-traffic';

let backend: TestBackend;
let readToken: string;
let dir: string;

/** Production's requests per endpoint: enough to bound its p95 at the gate's significance. */
const PRODUCTION_REQUESTS = 400;
const PULL_REQUEST_REQUESTS = 100;

/**
 * Runs every app behind its agent at once, in a child process (support/gate-traffic.ts), and calls
 * them in turn, one request in flight at a time, so whatever slows the machine slows each run
 * alike; resolves once the agents are closed, which flushes them.
 */
async function runAll(agentToken: string, runs: readonly GateRun[]): Promise<void> {
  const { child, lines, output } = runTs(
    'backend/test/support/gate-traffic.ts',
    [backend.url, agentToken, JSON.stringify(runs)],
    {},
  );
  if (child.pid !== undefined) keepTimingsTheAppsOwn(child.pid);
  const line = await lines.next();
  if (line.done || line.value !== 'done') throw new Error(`gate traffic failed: ${output.join('')}`);
  if (child.exitCode === null) await once(child, 'exit');
}

/**
 * The agents time each exchange, so CPU taken by the rest of a busy machine (jest's other workers,
 * other jobs) shows up as latency in every run alike. At a load of about 20, and again at 30 with
 * nice −10, it lifted production's p95 bound (49 ms for an app answering in 5 ms) above the +50 ms
 * pull request's requests. The traffic process, mostly asleep on timers and sockets, runs under
 * the real-time FIFO policy where that is allowed (root, as in CI; the kernel's real-time throttling
 * still leaves others 5 % of each second), so it wakes when its timers and sockets are due, not when
 * the scheduler gets round to it; otherwise it asks for nice −10; otherwise it runs as it is.
 */
function keepTimingsTheAppsOwn(pid: number): void {
  try {
    execFileSync('chrt', ['--all-tasks', '--fifo', '--pid', '10', String(pid)], { stdio: 'ignore' });
    return;
  } catch {
    // No chrt, or not permitted: a higher nice priority is the next best.
  }
  try {
    os.setPriority(pid, -10);
  } catch {
    // Not permitted: the runs still share whatever the machine gives them alike.
  }
}

/** Proposes and approves one endpoint answering 200 with `schema`. */
async function document(route: string, schema: unknown): Promise<void> {
  const proposal = await backend.api<ProposalResponse>('POST', '/projects/gate/proposals', {
    title: `document ${route}`,
    endpoints: [{ method: 'GET', path: route, responses: [{ status: 200, contentType: 'application/json', schema }] }],
  });
  expect(proposal.status).toBe(201);
  expect((await backend.api('POST', `/projects/gate/proposals/${proposal.body.id}/approve`)).status).toBe(200);
}

async function gate(pr: string, failOn: string): Promise<{ code: number; output: string; markdown: string }> {
  let output = '';
  const sink = { write: (text: string) => (output += text) };
  const markdown = path.join(dir, `pr-${pr}.md`);
  const code = await runCheck(
    ['--backend', backend.url, '--token', readToken, '--project', 'gate', '--pr', pr, '--fail-on', failOn],
    { SPECTATOR_CHECK_MARKDOWN: markdown },
    sink,
    sink,
  );
  return { code, output, markdown: await readFile(markdown, 'utf8').catch(() => '') };
}

beforeAll(async () => {
  backend = await startTestBackend();
  dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-gate-'));
  expect((await backend.api('POST', '/projects', { slug: 'gate', name: 'Shop' })).status).toBe(201);
  const token = async (name: string, scope: string): Promise<string> =>
    (await backend.api<TokenResponse>('POST', '/projects/gate/tokens', { name, scope })).body.token as string;
  const agentToken = await token('agents', 'agent');
  readToken = await token('ci gate', 'read');
  await document('/orders/{orderId}', {
    type: 'object',
    properties: { id: { type: 'string' }, total: { type: 'number' } },
    required: ['id', 'total'],
  });
  await document('/items', {
    type: 'array',
    items: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  });
  await runAll(agentToken, [
    {
      environment: { kind: 'production', build: 'p-7', commit: 'c-main' },
      ordersDelayMs: 5,
      requests: PRODUCTION_REQUESTS,
    },
    {
      environment: { kind: 'ci', pullRequest: '41', commit: 'c41' },
      ordersDelayMs: 5,
      requests: PULL_REQUEST_REQUESTS,
    },
    {
      environment: { kind: 'ci', pullRequest: '42', commit: 'c42' },
      ordersDelayMs: 55,
      requests: PULL_REQUEST_REQUESTS,
    },
    {
      environment: { kind: 'ci', pullRequest: '43', commit: 'c43' },
      ordersDelayMs: 5,
      failEvery: 5,
      requests: PULL_REQUEST_REQUESTS,
    },
  ]);
}, 180_000);
afterAll(async () => {
  await backend?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the runtime gate', () => {
  it('answers each side’s counts for the same endpoint and version', async () => {
    const { status, body } = await backend.api<CiRuntimeResponse>(
      'GET',
      '/projects/gate/ci/42/runtime',
      undefined,
      readToken,
    );
    expect(status).toBe(200);
    expect(body).toMatchObject({ pullRequest: '42', commit: 'c42' });
    expect(
      body.endpoints.map((e) => [e.method, e.path, e.version, e.pullRequest.requests, e.production?.requests]),
    ).toEqual([
      ['GET', '/items', '1.0', PULL_REQUEST_REQUESTS, PRODUCTION_REQUESTS],
      ['GET', '/orders/{orderId}', '1.0', PULL_REQUEST_REQUESTS, PRODUCTION_REQUESTS],
    ]);
  });

  it('fails a pull request whose version adds 50 ms to one endpoint, naming it with the figures', async () => {
    const { code, output, markdown } = await gate('42', 'latency-regression,error-rate');
    expect({ code, output }).toMatchObject({ code: 1 });
    expect(output).toContain('FAILED: 1 endpoint(s) slower than production (p95)');
    expect(output).toMatch(/GET \/orders\/\{orderId\} {2}1\.0 {2}p95 [\d.]+ ms vs [\d.]+ ms/);
    expect(output).toMatch(new RegExp(`latency REGRESSED: \\d+ of ${PULL_REQUEST_REQUESTS} above`));
    expect(output).toMatch(/GET \/items {2}1\.0 .*\n {6}- latency ok:/);
    expect(markdown).toContain('#### Runtime against production, same endpoint and version (2)');
    expect(markdown).toMatch(
      /\| `GET \/orders\/\{orderId\}` \| 1\.0 \| 100 \/ 400 \| [\d.]+ ms \/ [\d.]+ ms \|.*\*\*regressed\*\*/,
    );
  });

  it('passes a pull request that does not change latency or errors', async () => {
    const { code, output } = await gate('41', 'latency-regression,error-rate');
    expect({ code, output }).toMatchObject({ code: 0 });
    expect(output).toContain('PASSED');
    expect(output.match(/- latency ok:/g)).toHaveLength(2);
  });

  it('fails a pull request whose endpoint answers a fifth with 500 on error-rate, not on latency', async () => {
    const errors = await gate('43', 'error-rate');
    expect({ code: errors.code, output: errors.output }).toMatchObject({ code: 1 });
    expect(errors.output).toContain('FAILED: 1 endpoint(s) with a higher error rate than production');
    expect(errors.output).toMatch(/- error rate REGRESSED: 20\.0% against at most [\d.]+% allowed/);
    expect((await gate('43', 'latency-regression')).code).toBe(0);
  });

  it('refuses a bad pull request or one without CI evidence, never with a 500', async () => {
    const ask = (pr: string) => backend.api('GET', `/projects/gate/ci/${pr}/runtime`, undefined, readToken);
    expect(await ask('4%202')).toMatchObject({ status: 400 });
    expect(await ask('99')).toMatchObject({ status: 404 });
    const { code, output } = await gate('99', 'latency-regression');
    expect(code).toBe(2);
    expect(output).toContain('pull request 99 has no CI capture in project gate');
  });
});
