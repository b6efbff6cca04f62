/**
 * Runtime charts (issue 18) in real headless Chromium against the real backend: production build
 * p-1 runs GET /carts 1.0 for twenty minutes; for the last ten a canary p-2 on 2.0 takes 30 % of the
 * requests, slower and with upstream failures. The Versions page shows p95 and error rate in the
 * matrix cells, and the runtime panel draws latency, error rate and version share with uPlot: each
 * chart's canvas is read back for both versions' colours.
 */
import { LatencyHistogram, type TokenResponse, type WireFailure } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { batchMessage, connectTestAgent, helloMessage } from '../../backend/test/support/agent-client';
import { startTestBackend, type TestBackend } from '../../backend/test/support';
import { documentGet, untilFolded } from '../../backend/test/support/evidence-helpers';
import { VERSION_COLORS, versionColor } from '../src/lib/runtime-series';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, until, type TestBrowser } from './support/browser';

jest.setTimeout(240_000);

const MINUTE = 60_000;
let backend: TestBackend;
let browser: TestBrowser;
let page: Page;

/** `count` durations spread over [ms, 1.5·ms], as a wire histogram. */
function timings(count: number, ms: number) {
  const histogram = new LatencyHistogram();
  for (let i = 0; i < count; i++) histogram.record(ms * (1 + (0.5 * i) / count));
  return histogram.toWire();
}

/** One build's minutes: `counts[i]` answered requests in minute `i` (from `start`), each `ms` slow, `failed` 503s by the agent. */
async function report(build: string, body: unknown, start: number, counts: number[], ms: number, failed: number) {
  const agent = await connectTestAgent(backend.url, agentToken);
  try {
    const hello = helloMessage({ agentId: `charts-${build}`, environment: { kind: 'production', build } });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    for (const [i, count] of counts.entries()) {
      if (count === 0) continue;
      const at = new Date(start + i * MINUTE + 1_000).toISOString();
      const batch = batchMessage(hello.capture.id, [
        { method: 'GET', path: '/carts', status: 200, response: body, count },
      ]);
      Object.assign(batch.observations[0]!, {
        firstSeen: at,
        lastSeen: at,
        runtime: { ttfb: timings(count, ms / 2), ttlb: timings(count, ms) },
      });
      const failure: WireFailure = {
        method: 'GET',
        path: '/carts',
        status: 503,
        count: failed,
        firstSeen: at,
        lastSeen: at,
        elapsed: timings(failed, 1),
      };
      expect(await agent.request(failed > 0 ? { ...batch, failures: [failure] } : batch)).toMatchObject({
        type: 'ack',
      });
    }
    // A production batch is acknowledged at its commit: wait for its fold.
    await untilFolded(backend.databaseUrl);
  } finally {
    await agent.close();
  }
}

let agentToken: string;
let readToken: string;

beforeAll(async () => {
  await ensureDashboardBuilt();
  backend = await startTestBackend({ dashboardDir: DIST_DIR });
  expect((await backend.api('POST', '/projects', { slug: 'charts', name: 'Charts' })).status).toBe(201);
  const token = async (name: string, scope: string) =>
    (await backend.api<TokenResponse>('POST', '/projects/charts/tokens', { name, scope })).body.token as string;
  agentToken = await token('agents', 'agent');
  readToken = await token('viewer', 'read');
  await documentGet(backend, 'charts', '/carts', { id: { type: 'string' } }); // 1.0
  await documentGet(backend, 'charts', '/carts', { id: { type: 'integer' } }); // a breaking change: 2.0
  // Twenty minutes ending a few minutes ago: p-1 alone for ten, then p-2 beside it on 30 %.
  const now = Date.now();
  const start = now - (now % MINUTE) - 25 * MINUTE;
  await report('p-1', { id: 'c-1' }, start, [...Array<number>(10).fill(100), ...Array<number>(10).fill(70)], 20, 0);
  await report('p-2', { id: 1 }, start, [...Array<number>(10).fill(0), ...Array<number>(10).fill(27)], 70, 3);
  browser = await openBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await backend?.close();
});

/**
 * Pixels of a chart's canvas within a small distance of `hex` (uPlot strokes each line in its
 * series colour): how many, and where across the canvas on average (0 left to 1 right; -1: none).
 */
function colourOf(chart: string, hex: string): Promise<{ pixels: number; meanX: number }> {
  return page.locator(`figure.time-chart:has(figcaption:text-is("${chart}")) canvas`).evaluate((canvas, color) => {
    const [r, g, b] = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16)) as [number, number, number];
    const { width, height } = canvas as HTMLCanvasElement;
    const data = (canvas as HTMLCanvasElement).getContext('2d')!.getImageData(0, 0, width, height).data;
    let sum = 0;
    let found = 0;
    for (let i = 0; i < data.length; i += 4)
      if (Math.abs(data[i]! - r) + Math.abs(data[i + 1]! - g) + Math.abs(data[i + 2]! - b) < 60 && data[i + 3]! > 200) {
        sum += (i / 4) % width;
        found++;
      }
    return { pixels: found, meanX: found === 0 ? -1 : sum / found / width };
  }, hex);
}

const pixelsOf = async (chart: string, hex: string): Promise<number> => (await colourOf(chart, hex)).pixels;

describe('runtime charts on the Versions page (real backend, Chromium)', () => {
  it('shows p95 and error rate in the cells, and draws latency, errors and the rollout per version', async () => {
    await page.goto(`${backend.url}/#/signin?token=${encodeURIComponent(readToken)}&project=charts`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/#\/p\/charts\//);
    await page.goto(`${backend.url}/#/p/charts/versions?kind=production`);

    // The cells: p-2 (the canary, newest first) at 2.0, slower and failing 10 %; p-1 at 1.0.
    const cells = page.locator('table.matrix tbody tr');
    await cells.first().waitFor();
    const cell = async (row: number) =>
      (await cells.nth(row).locator('td').first().locator('.cell-version, .cell-runtime span').allTextContents()).map(
        (t) => t.trim(),
      );
    const [canary, stable] = [await cell(0), await cell(1)];
    expect(canary[0]).toBe('2.0');
    expect(canary[2]).toBe('10%');
    expect(Number.parseFloat(canary[1]!)).toBeGreaterThan(70 * 0.9);
    expect(stable[0]).toBe('1.0');
    expect(stable[2]).toBe('0%');
    expect(Number.parseFloat(stable[1]!)).toBeLessThan(35);

    // The panel: totals per version over the last 24 hours (2,000 requests on p-1, 300 on p-2).
    const totals = page.getByTestId('runtime-totals').locator('tbody tr');
    await totals.nth(1).waitFor();
    const rows = await totals.evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())),
    );
    expect(rows.map((r) => [r[0], r[1], r[2], r[6]])).toEqual(
      expect.arrayContaining([
        ['1.0', '1,700', '85%', '0%'],
        ['2.0', '300', '15%', '10%'],
      ]),
    );
    for (const chart of [
      'Latency per version (ms)',
      'Server error rate per version',
      'Share of the requests per version',
    ])
      for (const color of VERSION_COLORS.slice(0, 2))
        expect({ chart, color, drawn: (await pixelsOf(chart, color)) > 50 }).toEqual({ chart, color, drawn: true });
    // The legend names each line.
    expect(await page.locator('figure.time-chart .u-legend').first().textContent()).toContain('2.0 p95');
    await page.locator('.runtime-panel').scrollIntoViewIfNeeded();
    await screenshot(page, 'runtime-1-versions-charts');
  });

  it('draws every endpoint’s version share over time, and each endpoint’s split', async () => {
    await page.goto(`${backend.url}/#/p/charts/versions?kind=production`);
    const totals = page.getByTestId('share-totals').locator('tbody tr');
    await totals.nth(1).waitFor();
    const cellsOf = (rows: typeof totals) =>
      rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())));
    // Over the last 24 hours: p-1's 1,700 requests on 1.0, the canary's 300 on 2.0.
    expect(await cellsOf(totals)).toEqual([
      ['1.0', '1,700', '85%'],
      ['2.0', '300', '15%'],
    ]);
    expect(await cellsOf(page.getByTestId('share-endpoints').locator('tbody tr'))).toEqual([
      ['GET/carts', '2,000', '1.0 85% 2.0 15%'],
    ]);
    // The chart draws both versions' lines: 100 % then 70 % for 1.0, 0 % then 30 % for 2.0.
    for (const color of VERSION_COLORS.slice(0, 2))
      expect({ color, drawn: (await pixelsOf('Share of all requests per version', color)) > 50 }).toEqual({
        color,
        drawn: true,
      });
    await page.locator('.share-panel').scrollIntoViewIfNeeded();
    await screenshot(page, 'runtime-2-version-share');
  });

  it('shows one build’s runtime and version share, each panel’s pick kept in the URL', async () => {
    await page.goto(`${backend.url}/#/p/charts/versions?kind=production`);
    const runtime = page.getByRole('form', { name: 'Runtime of' });
    const share = page.getByRole('form', { name: 'Version share of' });
    const cellsOf = (table: string) =>
      page
        .getByTestId(table)
        .locator('tbody tr')
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())));
    await page.getByTestId('runtime-totals').locator('tbody tr').nth(1).waitFor();
    await until('both builds offered', async () => (await runtime.getByLabel('Build').locator('option').count()) === 3);
    expect(await runtime.getByLabel('Build').locator('option').allTextContents()).toEqual(['All builds', 'p-2', 'p-1']);

    // The canary alone: 2.0 on all of its 300 requests, 10 % failing.
    await runtime.getByLabel('Build').selectOption('p-2');
    await until('p-2 alone in the runtime', async () => (await cellsOf('runtime-totals')).length === 1);
    expect((await cellsOf('runtime-totals')).map((r) => [r[0], r[1], r[2], r[6]])).toEqual([
      ['2.0', '300', '100%', '10%'],
    ]);
    // The stable build alone in the version share panel, picked apart from the runtime panel's.
    await share.getByLabel('Build').selectOption('p-1');
    await until('p-1 alone in the share', async () => (await cellsOf('share-totals')).length === 1);
    expect(await cellsOf('share-totals')).toEqual([['1.0', '1,700', '100%']]);
    expect(new URL(page.url()).hash).toBe('#/p/charts/versions?kind=production&runtime.build=p-2&share.build=p-1');
    // One version drawn, in the first version's colour.
    expect(await pixelsOf('Share of all requests per version', versionColor(0))).toBeGreaterThan(50);
    await page.locator('.runtime-panel').scrollIntoViewIfNeeded();
    await screenshot(page, 'runtime-5-one-build');

    // A reload keeps both picks; a window with no traffic of the build says so, naming it.
    await page.reload();
    await until(
      'p-2 alone after the reload',
      async () => (await cellsOf('runtime-totals').catch(() => [])).length === 1,
    );
    expect(await page.getByRole('form', { name: 'Runtime of' }).getByLabel('Build').inputValue()).toBe('p-2');
    expect(await page.getByRole('form', { name: 'Version share of' }).getByLabel('Build').inputValue()).toBe('p-1');
    await page.getByRole('form', { name: 'Runtime of' }).getByLabel('Environment').selectOption('staging');
    await page.getByText('had no traffic from agents in Staging in this window.').waitFor();
    expect(new URL(page.url()).hash).toBe(
      '#/p/charts/versions?kind=production&share.build=p-1&runtime.environment=staging',
    );
  });

  it('shows an undocumented endpoint’s p95 and errors in the Review, and its runtime on its screen', async () => {
    // Production build p-3 also answers GET /health, documented nowhere: 45 in about 40 ms, 5 with 500.
    const agent = await connectTestAgent(backend.url, agentToken);
    const hello = helloMessage({ agentId: 'charts-p-3', environment: { kind: 'production', build: 'p-3' } });
    try {
      expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
      const at = new Date(Date.now() - MINUTE).toISOString();
      const batch = batchMessage(hello.capture.id, [
        { method: 'GET', path: '/health', status: 200, response: { ok: true }, count: 45 },
        { method: 'GET', path: '/health', status: 500, response: { ok: false }, count: 5 },
      ]);
      for (const observation of batch.observations)
        Object.assign(observation, {
          firstSeen: at,
          lastSeen: at,
          runtime: { ttfb: timings(observation.count, 20), ttlb: timings(observation.count, 40) },
        });
      expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
      await untilFolded(backend.databaseUrl);
    } finally {
      await agent.close();
    }
    await page.goto(`${backend.url}/#/p/charts/captures/${hello.capture.id}`);
    const row = page.getByTestId('undocumented').locator('tbody tr', { hasText: '/health' });
    await row.waitFor();
    // The row comes with the capture's endpoints; its p95 and errors with the capture's runtime, a
    // request of its own that may answer later (dashes until then).
    const cellsOf = async (): Promise<string[]> => (await row.locator('td').allTextContents()).map((t) => t.trim());
    await until('the row’s runtime figures', async () => (await cellsOf())[5] !== '–');
    const cells = await cellsOf();
    // Selection box, endpoint, interactions, to review, p95, server errors.
    expect(cells[5]).toBe('10%');
    expect(Number.parseFloat(cells[4]!)).toBeGreaterThan(40 * 0.9);
    expect(Number.parseFloat(cells[4]!)).toBeLessThan(60 * 1.1);
    await screenshot(page, 'runtime-3-undocumented-list');

    await row.getByRole('link').click();
    await page.getByTestId('endpoint-runtime').waitFor();
    expect(await page.getByTestId('endpoint-runtime').textContent()).toMatch(
      /^In p-3: 50 requests, p95 [\d.]+ ms \(time to last byte\), 10% server errors\.$/,
    );
    // The charts of its runtime in production: one series, of no version.
    const totals = page.getByTestId('runtime-totals').locator('tbody tr');
    await totals.first().waitFor();
    expect((await totals.first().locator('td').allTextContents()).map((t) => t.trim()).slice(0, 3)).toEqual([
      'no version',
      '50',
      '100%',
    ]);
    expect(await pixelsOf('Latency per version (ms)', VERSION_COLORS[0]!)).toBeGreaterThan(10);
    // One step: its point in the middle of the time axis (a step either side), not at the left end
    // of an axis of 1,000 days (uPlot's own range for a lone time in seconds).
    const middle = (await colourOf('Share of the requests per version', VERSION_COLORS[0]!)).meanX;
    expect({ middle, centred: middle > 0.4 && middle < 0.75 }).toMatchObject({ centred: true });
    await page.locator('.runtime-panel').scrollIntoViewIfNeeded();
    await screenshot(page, 'runtime-4-undocumented-endpoint');
  });
});
