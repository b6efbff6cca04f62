/**
 * The runtime gate's windows (issue 18), against a real backend and PostgreSQL with hand-driven
 * agents: how far back production's counts go (`?productionDays=`, `--production-days`), and where
 * a pull request's counts start when an older commit's CI run shared the minute its newest
 * commit's run began (runtime evidence is kept per pull request and minute, not per commit).
 */
import { runCheck } from '@spectator/agent';
import { type CiRuntimeResponse, LatencyHistogram, type TokenResponse } from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { batchMessage, connectTestAgent, helloMessage } from './support/agent-client';
import { documentGet, untilFolded } from './support/evidence-helpers';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
let backend: TestBackend;
let agentToken: string;
let readToken: string;

/** `count` durations of `ms` each, as a wire histogram. */
function timings(count: number, ms: number) {
  const histogram = new LatencyHistogram();
  for (let i = 0; i < count; i++) histogram.record(ms);
  return histogram.toWire();
}

/**
 * One agent run (a capture started at `startedAt`) sending GET /orders batches: each `[at, count,
 * ms]` is `count` requests last seen at `at`, each taking `ms`. The agent closes without ending
 * its capture, as a killed CI job's would.
 */
async function run(
  environment: { kind: 'ci'; pullRequest: string; commit: string } | { kind: 'production'; build: string },
  startedAt: Date,
  batches: ReadonlyArray<[Date, number, number]>,
): Promise<void> {
  const agent = await connectTestAgent(backend.url, agentToken);
  try {
    const hello = helloMessage({
      agentId: `window-${JSON.stringify(environment)}-${startedAt.getTime()}`,
      environment,
      capture: { id: crypto.randomUUID(), startedAt: startedAt.toISOString(), reason: 'agent-start' },
    });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    for (const [at, count, ms] of batches) {
      const batch = batchMessage(hello.capture.id, [
        { method: 'GET', path: '/orders', status: 200, response: { id: 'o-1' }, count },
      ]);
      Object.assign(batch.observations[0]!, {
        firstSeen: at.toISOString(),
        lastSeen: at.toISOString(),
        runtime: { ttfb: timings(count, ms), ttlb: timings(count, ms) },
      });
      expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
    }
  } finally {
    await agent.close();
  }
  // A production batch is acknowledged at its commit: what the gate reads next has it folded.
  await untilFolded(backend.databaseUrl);
}

const runtimeOf = (pr: string, query = '') =>
  backend.api<CiRuntimeResponse & { message?: string }>(
    'GET',
    `/projects/window/ci/${pr}/runtime${query}`,
    undefined,
    readToken,
  );

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api('POST', '/projects', { slug: 'window', name: 'Window' })).status).toBe(201);
  const token = async (name: string, scope: string): Promise<string> =>
    (await backend.api<TokenResponse>('POST', '/projects/window/tokens', { name, scope })).body.token as string;
  agentToken = await token('agents', 'agent');
  readToken = await token('ci gate', 'read');
  await documentGet(backend, 'window', '/orders', { id: { type: 'string' } });
});
afterAll(async () => {
  await backend?.close();
});

describe('the runtime gate’s windows', () => {
  it('compares with as many days of production as asked, and refuses a bad window naming it', async () => {
    const now = Date.now();
    // Production ran GET /orders three days ago, and not since.
    const threeDaysAgo = new Date(now - 3 * DAY);
    await run({ kind: 'production', build: 'p-1' }, threeDaysAgo, [[threeDaysAgo, 200, 10]]);
    const started = new Date(now - 2 * MINUTE);
    await run({ kind: 'ci', pullRequest: '5', commit: 'c5' }, started, [[new Date(now - MINUTE), 50, 10]]);

    // The default week reaches the production run; one day does not.
    const week = await runtimeOf('5');
    expect(week.status).toBe(200);
    expect(week.body.endpoints.map((e) => [e.path, e.pullRequest.requests, e.production?.requests])).toEqual([
      ['/orders', 50, 200],
    ]);
    expect(Date.parse(week.body.productionSince)).toBeLessThanOrEqual(now - 7 * DAY + MINUTE);
    const day = await runtimeOf('5', '?productionDays=1');
    expect(day.status).toBe(200);
    expect(day.body.endpoints.map((e) => [e.path, e.pullRequest.requests, e.production])).toEqual([
      ['/orders', 50, null],
    ]);
    expect(Date.parse(day.body.productionSince)).toBeGreaterThanOrEqual(now - DAY);
    for (const bad of ['0', '401', '1.5', 'week'])
      expect(await runtimeOf('5', `?productionDays=${bad}`)).toMatchObject({
        status: 400,
        body: { message: expect.stringContaining('productionDays must be a whole number of days from 1 to 400') },
      });

    // The check asks the backend for its --production-days, and says the endpoint is not judged.
    let output = '';
    const sink = { write: (text: string) => (output += text) };
    const check = (days: string[]) =>
      runCheck(
        [
          ...['--backend', backend.url, '--token', readToken, '--project', 'window', '--pr', '5'],
          ...['--fail-on', 'latency-regression,error-rate', ...days],
        ],
        {},
        sink,
        sink,
      );
    expect(await check(['--production-days', '1'])).toBe(0);
    expect(output).toContain('GET /orders  1.0  50 request(s); not judged: production has no requests at 1.0');
    output = '';
    expect(await check([])).toBe(0);
    expect(output).toContain('GET /orders  1.0  p95');
    expect(output).toContain('(50 vs 200 requests)');
    output = '';
    expect(await check(['--production-days', '0'])).toBe(2);
    expect(output).toContain('--production-days "0" must be a whole number of days from 1 to 400');
  });

  it('starts a pull request’s counts after the minute an older commit’s run last saw traffic', async () => {
    const now = Date.now();
    const minute = now - (now % MINUTE) - 5 * MINUTE;
    // Commit c1's run: 40 slow requests 10 s into the minute; its agent never ends the capture.
    await run({ kind: 'ci', pullRequest: '7', commit: 'c1' }, new Date(minute + 5_000), [
      [new Date(minute + 10_000), 40, 90],
    ]);
    // Commit c2's run starts in the same minute: 10 fast requests there, 40 in the next minute.
    await run({ kind: 'ci', pullRequest: '7', commit: 'c2' }, new Date(minute + 20_000), [
      [new Date(minute + 30_000), 10, 5],
      [new Date(minute + MINUTE + 30_000), 40, 5],
    ]);
    const { status, body } = await runtimeOf('7');
    expect(status).toBe(200);
    expect(body.commit).toBe('c2');
    // The shared minute is left out: none of c1's slow requests are counted as c2's.
    expect(body.since).toBe(new Date(minute + MINUTE).toISOString());
    expect(body.endpoints.map((e) => [e.path, e.pullRequest.requests])).toEqual([['/orders', 40]]);
    const p95 = LatencyHistogram.fromWire(body.endpoints[0]!.pullRequest.ttlb).quantile(0.95) as number;
    expect(p95).toBeLessThan(10);

    // A pull request whose older commit's run ended before the newest began counts from the newest's minute.
    const later = minute + 2 * MINUTE;
    await run({ kind: 'ci', pullRequest: '8', commit: 'd1' }, new Date(minute + 5_000), [
      [new Date(minute + 10_000), 20, 90],
    ]);
    await run({ kind: 'ci', pullRequest: '8', commit: 'd2' }, new Date(later + 20_000), [
      [new Date(later + 30_000), 30, 5],
    ]);
    const separate = await runtimeOf('8');
    expect(separate.body.since).toBe(new Date(later).toISOString());
    expect(separate.body.endpoints.map((e) => [e.path, e.pullRequest.requests])).toEqual([['/orders', 30]]);
  });

  it('counts none of an older commit’s run that goes on beside the newest, leaving the shared minutes out', async () => {
    const now = Date.now();
    const minute = now - (now % MINUTE) - 12 * MINUTE;
    // Commit e1's run starts first and goes on after e2's began: slow requests in its first and third minutes.
    await run({ kind: 'ci', pullRequest: '9', commit: 'e1' }, new Date(minute + 5_000), [
      [new Date(minute + 10_000), 40, 90],
      [new Date(minute + 2 * MINUTE + 10_000), 40, 90],
    ]);
    // Commit e2's run, the newest, starts in e1's second minute: fast requests there and two minutes on.
    await run({ kind: 'ci', pullRequest: '9', commit: 'e2' }, new Date(minute + MINUTE + 20_000), [
      [new Date(minute + MINUTE + 30_000), 10, 5],
      [new Date(minute + 2 * MINUTE + 30_000), 10, 5],
      [new Date(minute + 3 * MINUTE + 30_000), 35, 5],
    ]);
    const { body } = await runtimeOf('9');
    expect(body.commit).toBe('e2');
    // Counted from the minute after e1's last traffic: e2's own requests only (its first 20 are left out).
    expect(body.since).toBe(new Date(minute + 3 * MINUTE).toISOString());
    expect(body.endpoints.map((e) => [e.path, e.pullRequest.requests])).toEqual([['/orders', 35]]);
    const p95 = LatencyHistogram.fromWire(body.endpoints[0]!.pullRequest.ttlb).quantile(0.95) as number;
    expect(p95).toBeLessThan(10);
  });
});
