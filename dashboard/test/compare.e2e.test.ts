/** The Versions page's comparison of two environments (a release review), in real headless Chromium against the fixture API. */
import type { CompareResponse } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, until, type TestBrowser } from './support/browser';
import { startFixtureApi, type FixtureApi } from './support/fixture-api';
import { matrix } from './support/fixtures';

jest.setTimeout(120_000);

const TOKEN = 'fixture-token';
const P = '/projects/demo';
let api: FixtureApi;
let browser: TestBrowser;
let page: Page;

const side = (version: string, extra: Partial<CompareResponse['endpoints'][number]['from']> = {}) => ({
  version,
  drift: false,
  build: null,
  pullRequest: null,
  commit: null,
  ...extra,
});

const comparison: CompareResponse = {
  from: { environment: 'production', pullRequest: null },
  to: { environment: 'ci', pullRequest: '42' },
  breaking: true,
  endpoints: [
    {
      endpointId: 'e1',
      method: 'GET',
      path: '/users',
      from: side('1.1', { build: 'p-9', commit: 'abcdef1234' }),
      to: side('2.0', { pullRequest: '42', commit: '123456789a' }),
      status: 'changed',
      breaking: true,
      changes: [
        {
          change: 'removed',
          in: 'response',
          status: 200,
          at: '$[].name',
          documented: { type: 'string' },
          breaking: true,
        },
      ],
    },
    {
      endpointId: 'e2',
      method: 'POST',
      path: '/users',
      from: side('1.0'),
      to: side('1.0'),
      status: 'same',
      breaking: false,
      changes: [],
    },
    {
      endpointId: 'e3',
      method: 'GET',
      path: '/orders',
      from: side('N/A'),
      to: side('1.0', { pullRequest: '42' }),
      status: 'only in to',
      breaking: false,
      changes: [],
    },
  ],
};

beforeAll(async () => {
  await ensureDashboardBuilt();
  api = await startFixtureApi(DIST_DIR, TOKEN);
  api.answer('GET /me', { body: { name: 'reader', scope: 'read', project: 'demo', environments: null } });
  api.answer(`GET ${P}/captures`, { body: [] });
  api.answer(`GET ${P}/versions`, { body: { ...matrix(3, 3), nextCursor: null } });
  api.answer(`GET ${P}/compare`, ({ path }) =>
    path.includes('to=staging')
      ? { status: 400, body: { statusCode: 400, error: 'Bad Request', message: 'from and to are the same (staging)' } }
      : { body: comparison },
  );
  browser = await openBrowser();
  page = browser.page;
  await page.goto(`${api.url}/#/signin?token=${TOKEN}&project=demo`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/#\/p\/demo\//);
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe('compare environments (Versions page)', () => {
  it('asks for production against a pull request and lists what differs, breaking changes marked, with the changes on demand', async () => {
    await page.goto(`${api.url}/#/p/demo/versions`);
    const panel = page.getByRole('region', { name: 'Compare environments' });
    await panel.waitFor();
    await panel.getByRole('group', { name: 'Replaced by' }).getByLabel('Environment').selectOption('ci');
    await panel.getByLabel('Pull request').fill('42');
    await panel.getByRole('button', { name: 'Compare' }).click();
    await panel.getByRole('status').getByText('2 endpoints differ').waitFor();
    const asked = api.requests.find((r) => r.path.startsWith(`${P}/compare`));
    expect(asked?.path).toBe(`${P}/compare?from=production&to=ci&toPullRequest=42`);

    const rows = panel.locator('[data-testid=compare] > tbody > tr');
    expect(await rows.count()).toBe(2);
    const users = rows.filter({ hasText: '/users' });
    expect(await users.textContent()).toMatch(
      /GET\s*\/users.*1\.1.*p-9 · abcdef1.*2\.0.*PR #42 · 1234567.*changes.*breaking/s,
    );
    expect(await rows.filter({ hasText: '/orders' }).textContent()).toContain('not seen in Production');
    await users.getByText('1 change').click();
    await users.getByRole('cell', { name: '$[].name' }).waitFor();
    // The two sides of a change are the two versions, named as such.
    expect(await users.locator('.changes-table thead').textContent()).toMatch(/Production 1\.1.*PR #42 2\.0/);
    await screenshot(page, 'compare-01-production-vs-pr');
  });

  it('shows why a comparison was refused', async () => {
    const panel = page.getByRole('region', { name: 'Compare environments' });
    await panel.getByRole('group', { name: 'Clients run' }).getByLabel('Environment').selectOption('staging');
    await panel.getByRole('group', { name: 'Replaced by' }).getByLabel('Environment').selectOption('staging');
    await panel.getByRole('button', { name: 'Compare' }).click();
    await until('the error', async () => (await panel.getByRole('alert').count()) > 0);
    expect(await panel.getByRole('alert').textContent()).toContain('from and to are the same (staging)');
  });
});
