/**
 * The spec's walkthrough (seed-spec §1, §3; issue 6) in real headless Chromium against a real backend
 * (NestJS + embedded PostgreSQL, serving the built dashboard) and a real agent in front of the demo
 * posts API. Screenshots of every step go to artifacts/e2e/walkthrough-*.png.
 */
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startAgent, type RunningAgent } from '@spectator/agent';
import type { Page } from 'playwright-core';
import { startDemoApi } from '../../deploy/demo-api/server';
import { startTestBackend, type TestBackend } from '../../backend/test/support';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, until, type TestBrowser } from './support/browser';

jest.setTimeout(180_000);

const DESCRIPTION = 'Create a new post. Accepts author, title as JSON in request body';
/** The landing page's traffic, which service.yml ignores (seed-spec §4). */
const LANDING: Array<[string, string]> = [
  ['GET', '/'],
  ['GET', '/script.js'],
  ['GET', '/style.css'],
  ['GET', '/favicon.ico'],
  ['GET', '/db'],
  ['POST', '/db'],
  ['PUT', '/db'],
];

let backend: TestBackend;
let demo: Awaited<ReturnType<typeof startDemoApi>>;
let agent: RunningAgent;
let browser: TestBrowser;
let page: Page;
let workDir: string;
let token: string;

async function send(method: string, route: string, body?: unknown): Promise<number> {
  const response = await fetch(`${agent.proxyUrl}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  await response.arrayBuffer();
  return response.status;
}

async function api<T>(route: string): Promise<T> {
  const { status, body } = await backend.api<T>('GET', route, undefined, token);
  if (status !== 200) throw new Error(`GET ${route} answered ${status}: ${JSON.stringify(body)}`);
  return body;
}

const undocumentedRows = () => page.locator('[data-testid=undocumented] tbody tr');

beforeAll(async () => {
  await ensureDashboardBuilt();
  // PostgreSQL comes from the root jest globalSetup (backend/test/support/global-setup.ts).
  backend = await startTestBackend({ dashboardDir: DIST_DIR });
  expect((await backend.api('POST', '/projects', { slug: 'demo', name: 'Demo posts API' })).status).toBe(201);
  const write = await backend.api<{ token: string }>('POST', '/projects/demo/tokens', {
    name: 'dashboard',
    scope: 'write',
  });
  const agentToken = await backend.api<{ token: string }>('POST', '/projects/demo/tokens', {
    name: 'agent',
    scope: 'agent',
    environments: ['local'],
  });
  token = write.body.token;

  workDir = await mkdtemp(path.join(os.tmpdir(), 'spectator-walkthrough-'));
  await copyFile(path.resolve(__dirname, '../../deploy/service.yml'), path.join(workDir, 'service.yml'));
  demo = await startDemoApi();
  agent = await startAgent({
    listen: '127.0.0.1:0',
    upstream: demo.url,
    backend: backend.url,
    token: agentToken.body.token,
    environment: { kind: 'local' },
    configPath: path.join(workDir, 'service.yml'),
    admin: null,
    spoolDir: null,
    logLevel: 'silent',
    tuning: { flushIntervalMs: 100, probeIntervalMs: 100, commandStdio: 'ignore' },
  });
  browser = await openBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await agent?.close();
  await demo?.close();
  await backend?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('the spec walkthrough in the dashboard (real backend, agent and demo API)', () => {
  let firstCapture: string;

  it('lists POST /posts as undocumented with 4 to review, and no landing-page traffic', async () => {
    for (const [method, route] of LANDING) await send(method, route, method === 'GET' ? undefined : { any: 'thing' });
    expect(await send('POST', '/posts', { title: 'Hello', author: 'Ana' })).toBe(201);
    expect(await send('POST', '/posts', { title: 'Again', author: 'Bo' })).toBe(201);
    firstCapture = agent.captureId();
    await until('the backend to count both POSTs', async () =>
      (await api<Array<{ path: string; count: number }>>(`/projects/demo/captures/${firstCapture}/undocumented`)).some(
        (e) => e.path === '/posts' && e.count === 4,
      ),
    );

    await page.goto(`${backend.url}/#/signin?token=${encodeURIComponent(token)}&project=demo`);

    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(new RegExp(`#/p/demo/captures/${firstCapture}$`));
    const post = undocumentedRows().filter({ hasText: '/posts' });
    await post.waitFor();
    expect((await post.locator('.count').textContent())?.trim()).toBe('4');
    const listed = await undocumentedRows().allTextContents();
    expect(listed).toHaveLength(1);
    for (const [, route] of LANDING)
      expect(listed.join('\n')).not.toMatch(new RegExp(`\\s${route.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\s|$)`));
    await screenshot(page, 'walkthrough-1-undocumented');
  });

  it('documents it: description, Finish, document the bodies, Commit changes', async () => {
    await page.getByRole('link', { name: /POST\s*\/posts/ }).click();
    const request = page.getByRole('region', { name: 'Request body' });
    await request.locator('tr[data-path="$.title"]').waitFor();
    expect(await request.locator('tr[data-path="$.title"]').textContent()).toBe('titleString');
    expect(await request.locator('tr[data-path="$.author"]').textContent()).toBe('authorString');
    const created = page.getByRole('region', { name: '201 response' });
    expect(await created.locator('tr[data-path="$.id"]').textContent()).toBe('idNumber');
    await screenshot(page, 'walkthrough-2-review-endpoint');

    await page.getByLabel('Description').fill(DESCRIPTION);
    await page.getByRole('button', { name: 'Finish' }).click();
    const bodies = page.getByLabel('Document the request and response bodies');
    await bodies.waitFor();
    expect(await bodies.isChecked()).toBe(true);
    await screenshot(page, 'walkthrough-3-choose-bodies');
    await page.getByRole('button', { name: 'Commit changes' }).click();
    await page.getByText('is documented as version').waitFor();
    expect(await page.locator('.success').textContent()).toContain('version 1.0');
    await screenshot(page, 'walkthrough-4-committed');
  });

  it('shows the documentation: description, shapes and the 201 response', async () => {
    await page.getByRole('link', { name: 'See the documentation' }).click();
    const doc = page.getByRole('article', { name: 'POST /posts' });
    await doc.waitFor();
    const text = await doc.textContent();
    expect(text).toContain(DESCRIPTION);
    expect(text).toContain('version 1.0');
    expect(await doc.getByRole('region', { name: 'Request body' }).locator('tbody tr').allTextContents()).toEqual([
      'authorString',
      'titleString',
    ]);
    expect(await doc.getByRole('region', { name: '201 response' }).locator('tbody tr').allTextContents()).toEqual([
      'authorString',
      'idNumber',
      'titleString',
    ]);
    await screenshot(page, 'walkthrough-5-documentation');

    // The OpenAPI export downloads with the session's token (a plain link could not send it).
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'OpenAPI 3.1 export' }).click(),
    ]);
    const openapi = JSON.parse(await readFile((await download.path())!, 'utf8')) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(download.suggestedFilename()).toBe('demo-openapi.json');
    expect(openapi.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(openapi.paths['/posts'] ?? {})).toEqual(['post']);

    await doc.getByRole('link', { name: /POST\s*\/posts/ }).click();
    const history = page.getByRole('region', { name: 'Version history' });
    await history.locator('li').first().waitFor();
    expect(await history.locator('li').allTextContents()).toEqual([expect.stringMatching(/^1\.0/)]);

    await page.getByRole('link', { name: 'Review' }).first().click();
    await page.getByText('Nothing undocumented').waitFor();
  });

  it('turns a different body into a diff for review', async () => {
    expect(await send('POST', '/posts', { title: 'Tagged', author: 'Cy', tags: ['news'] })).toBe(201);
    const diffRow = page.locator('[data-testid=diffs] tbody tr').filter({ hasText: '/posts' });
    // The capture.updated event reloads the Review; no polling in the page.
    await diffRow.waitFor({ timeout: 15_000 });
    await diffRow.getByRole('link').click();
    const change = page.locator('.changes-table tbody tr').filter({ hasText: '$.tags' });
    await change.waitFor();
    expect(await change.textContent()).toMatch(/Request body.*\$\.tags.*added/);
    await screenshot(page, 'walkthrough-6-diff');
    await page.getByRole('link', { name: 'Leave it' }).click();
  });

  it('on a restart of the app shows the new-capture notice; Review moves to it and the diff is gone', async () => {
    await page.locator('[data-testid=diffs] tbody tr').first().waitFor();
    const port = demo.port;
    await demo.close();
    // A rebuild takes a while: the agent sees the app gone (the proxy answers 502/503), then back.
    await until('the agent to see the app down', async () => (await send('GET', '/posts')) >= 502);
    demo = await startDemoApi({ port });
    await until('the agent to start a new capture', () => agent.captureId() !== firstCapture, 15_000);
    const dialog = page.getByRole('dialog', { name: 'New capture' });
    await dialog.waitFor({ timeout: 15_000 });
    await screenshot(page, 'walkthrough-7-new-capture-notice');

    expect(await send('POST', '/posts', { title: 'After restart', author: 'Di' })).toBe(201);
    await dialog.getByRole('button', { name: 'Review' }).click();
    await page.waitForURL(new RegExp(`/captures/${agent.captureId()}$`));
    // The new capture has seen the matching POST (so "No diffs" is about real traffic).
    await page.locator('.review .page-header').getByText('1 interaction').waitFor({ timeout: 15_000 });
    await page.getByText('No diffs').waitFor();
    await page.getByText('Nothing undocumented').waitFor();
    expect(await page.locator('.capture-list li').count()).toBeGreaterThanOrEqual(2);
    await screenshot(page, 'walkthrough-8-new-capture-clean');
  });

  it('lists the agent, the ignore rules it reported in Settings, and says tokens need an admin token', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    const agents = page.getByRole('region', { name: 'Agents seen' });
    await agents.locator('tbody tr').first().waitFor();
    expect(await agents.locator('tbody tr').allTextContents()).toEqual([
      expect.stringMatching(/^Local.*(running|connected)$/),
    ]);
    const rules = page.getByRole('region', { name: 'Ignore rules in effect' });
    await rules.locator('li').first().waitFor();
    expect(await rules.locator('li').allTextContents()).toEqual(
      expect.arrayContaining(['GET /', 'GET POST PUT /db', 'OPTIONS (.*)']),
    );
    // The dashboard signed in with a write token; managing tokens takes an admin token, and it says so without asking.
    await page
      .getByRole('region', { name: 'Tokens' })
      .getByText('Managing tokens needs a token with scope admin; you signed in with a write token.')
      .waitFor();
    await screenshot(page, 'walkthrough-9-settings');
  });
});
