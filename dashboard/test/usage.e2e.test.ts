/**
 * The Usage screen (issue 19), in real headless Chromium against a real backend: a production
 * agent's batch calls GET /users; GET /reports is documented and never called. The screen lists
 * GET /reports as safe to remove (with its evidence) and as an orphan; a person marks a response
 * field of GET /users deprecated, which makes it a zombie, marks GET /reports deprecated, and
 * unmarks the field again.
 */
import type { DeprecationResponse, TokenResponse } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { batchMessage, connectTestAgent, helloMessage } from '../../backend/test/support/agent-client';
import { startTestBackend, type TestBackend } from '../../backend/test/support';
import { documentGet } from '../../backend/test/support/evidence-helpers';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, until, type TestBrowser } from './support/browser';

jest.setTimeout(240_000);

const P = 'shop';

let backend: TestBackend;
let browser: TestBrowser;
let page: Page;
let writeToken: string;

const marks = async (): Promise<Array<[string, string, string, string]>> =>
  (await backend.api<DeprecationResponse[]>('GET', `/projects/${P}/deprecations`, undefined, writeToken)).body.map(
    (m) => [`${m.method} ${m.path}`, m.location, m.name, m.source],
  );

beforeAll(async () => {
  await ensureDashboardBuilt();
  backend = await startTestBackend({ dashboardDir: DIST_DIR });
  expect((await backend.api('POST', '/projects', { slug: P, name: 'Shop' })).status).toBe(201);
  const token = async (name: string, scope: string) =>
    (await backend.api<TokenResponse>('POST', `/projects/${P}/tokens`, { name, scope })).body.token as string;
  const agentToken = await token('agents', 'agent');
  writeToken = await token('team', 'admin');
  const text = { type: 'string' };
  await documentGet(backend, P, '/users', { id: text, name: text, email: text });
  await documentGet(backend, P, '/reports', { id: text });
  const agent = await connectTestAgent(backend.url, agentToken);
  const hello = helloMessage({ agentId: 'prod-1', environment: { kind: 'production', build: 'p-1' } });
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  expect(
    await agent.request(
      batchMessage(hello.capture.id, [
        { method: 'GET', path: '/users', status: 200, response: { id: 'u1', name: 'Ann', email: 'e' }, count: 10 },
      ]),
    ),
  ).toMatchObject({ type: 'ack' });
  await agent.close();
  // The evidence is folded after the ack: wait until production's usage has it.
  await until('production usage of GET /users', async () => {
    const { body } = await backend.api<{ endpoints: Array<{ path: string; lastSeen: string | null }> }>(
      'GET',
      `/projects/${P}/usage?environment=production`,
      undefined,
      writeToken,
    );
    return body.endpoints.some((e) => e.path === '/users' && e.lastSeen !== null);
  });

  browser = await openBrowser();
  page = browser.page;
  await page.goto(`${backend.url}/#/signin?token=${writeToken}&project=${P}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/#\/p\/shop\//);
});
afterAll(async () => {
  await browser?.close();
  await backend?.close();
});

describe('usage in the dashboard', () => {
  it('lists what is safe to remove with its evidence, orphans, and last seen per part', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    const safe = page.getByTestId('usage-safe-to-remove');
    await safe.waitFor();
    const safeRows = safe.locator('tbody tr');
    expect(await safeRows.count()).toBe(1);
    expect(await safeRows.nth(0).textContent()).toMatch(
      /GET\s*\/reports.*1\.0.*never seen in production.*never seen in staging/,
    );
    // Orphans, safe to remove and last seen are three requests that render as each answers.
    const orphans = page.getByTestId('usage-orphans').locator('tbody tr');
    await orphans.first().waitFor();
    expect(await orphans.count()).toBe(1);
    expect(await orphans.nth(0).textContent()).toMatch(/GET\s*\/reports.*never/);
    await page.getByText('No zombies').waitFor();
    const users = page.getByTestId('usage-last-seen').locator('tbody tr', { hasText: '/users' });
    await users.getByText(/\d+ parts/).click();
    for (const name of ['200', 'content-type', '$.email', '$.id', '$.name'])
      await users.getByText(name, { exact: true }).first().waitFor();
  });

  it('marks a response field and an endpoint deprecated, shows the zombie, and unmarks', async () => {
    const users = page.getByTestId('usage-last-seen').locator('tbody tr', { hasText: '/users' });
    await users.getByRole('button', { name: 'Deprecate GET /users response field $.email' }).click();
    const zombies = page.getByTestId('usage-zombies').locator('tbody tr');
    await until('the zombie listed', async () => (await zombies.count()) === 1);
    expect(await zombies.nth(0).textContent()).toMatch(/GET\s*\/users.*response field\s*\$\.email.*marked deprecated/);
    expect(await marks()).toEqual([['GET /users', 'response', '$.email', 'dashboard']]);

    await page.getByTestId('usage-orphans').getByRole('button', { name: 'Deprecate GET /reports' }).click();
    await until('the orphan marked', async () => (await marks()).length === 2);
    await page.getByTestId('usage-safe-to-remove').getByText('marked deprecated').waitFor();
    const marked = page.getByTestId('usage-marks').locator('tbody tr');
    await until('both marks listed', async () => (await marked.count()) === 2);
    await screenshot(page, 'usage-01-marked');

    await page
      .getByTestId('usage-marks')
      .getByRole('button', { name: 'Undeprecate GET /users response field $.email' })
      .click();
    await page.getByText('No zombies').waitFor();
    expect(await marks()).toEqual([['GET /reports', 'endpoint', '', 'dashboard']]);
    await screenshot(page, 'usage-02-unmarked');
  });

  it('shows the evidence’s times as dates, and keeps the environment and window in the URL', async () => {
    await page.goto(`${backend.url}/#/p/${P}/usage`);
    const safe = page.getByTestId('usage-safe-to-remove').locator('tbody tr').nth(0);
    await safe.waitFor();
    // "production traffic of other endpoints seen until <a local date and time>", not an ISO 8601 string.
    expect(await safe.textContent()).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}/);
    const times = await safe.locator('time').evaluateAll((found) => found.map((t) => t.getAttribute('datetime')));
    expect(times).toHaveLength(1);
    expect(Date.now() - Date.parse(times[0] as string)).toBeLessThan(3_600_000);
    expect(await safe.locator('time').textContent()).toMatch(/\d/);

    const picker = page.getByRole('form', { name: 'Usage in' });
    await picker.getByLabel('Environment').selectOption('staging');
    await page.getByRole('heading', { name: 'Last seen in Staging' }).waitFor();
    await picker.getByLabel('Window').selectOption('7');
    await until(
      'the picks in the URL',
      () => new URL(page.url()).hash === `#/p/${P}/usage?environment=staging&window=7`,
    );
    await page.reload();
    await page.getByRole('heading', { name: 'Last seen in Staging' }).waitFor();
    await page.getByText('Documented endpoints production did not call in the last 7 days').waitFor();
    expect(await page.getByRole('form', { name: 'Usage in' }).getByLabel('Window').inputValue()).toBe('7');
    await screenshot(page, 'usage-03-staging-7-days');

    // One production build: its last seen and orphans, the build in the URL.
    await picker.getByLabel('Environment').selectOption('production');
    await until('p-1 offered', async () =>
      (await picker.getByLabel('Build').locator('option').allTextContents()).includes('p-1'),
    );
    await picker.getByLabel('Build').selectOption('p-1');
    await page.getByRole('heading', { name: 'Last seen in Production build p-1' }).waitFor();
    await page.getByText('Documented, and not seen in Production build p-1 in the last 7 days').waitFor();
    expect(new URL(page.url()).hash).toBe(`#/p/${P}/usage?environment=production&window=7&build=p-1`);
    const users = page.getByTestId('usage-last-seen').locator('tbody tr', { hasText: '/users' });
    expect(await users.textContent()).not.toContain('never');
    await screenshot(page, 'usage-04-one-build');
  });
});
