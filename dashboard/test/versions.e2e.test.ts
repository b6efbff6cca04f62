/**
 * The versions story (issue 5, seen in the dashboard) in real headless Chromium: real agents for
 * pull-request CI runs, staging and production builds in front of a small users API, the real
 * backend on embedded PostgreSQL. The Versions table shows versions and `N/A`; approving a
 * proposal in the dashboard starts its timeline, which then advances live as evidence arrives.
 */
import type { AgentEnvironment, ProposalResponse, TokenResponse } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { runUsersTraffic } from '../../backend/test/support/evidence-helpers';
import { startTestBackend, type TestBackend } from '../../backend/test/support';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, until, type TestBrowser } from './support/browser';

jest.setTimeout(240_000);

let backend: TestBackend;
let agentToken: string;
let aliceToken: string;
let browser: TestBrowser;
let page: Page;

/** Runs an agent for an environment in front of the users API (v2 adds an optional `email`) and sends the usual traffic. */
function run(environment: AgentEnvironment, variant: 'v1' | 'v2', withUserById: boolean): Promise<string> {
  return runUsersTraffic(backend.url, agentToken, environment, variant, withUserById);
}

/** A proposal as a team member opens it through the API, from a CI capture's changes. */
async function propose(
  captureId: string,
  title: string,
  endpoints: Array<{ method: string; path: string }>,
): Promise<ProposalResponse> {
  const created = await backend.api<ProposalResponse>(
    'POST',
    '/projects/story/proposals',
    { title, description: `${title}, from the CI run`, captureId, endpoints },
    aliceToken,
  );
  expect(created.status).toBe(201);
  return created.body;
}

/** The matrix as the page shows it: `{row title: [cell versions]}` in column order (without the runtime beside them). */
async function shownMatrix(): Promise<Record<string, string[]>> {
  const rows = page.locator('table.matrix tbody tr');
  const result: Record<string, string[]> = {};
  for (const row of await rows.all())
    result[(await row.locator('.row-title').textContent()) ?? ''] = await row
      .locator('td')
      .evaluateAll((cells) => cells.map((td) => (td.querySelector('.cell-version') ?? td).textContent?.trim() ?? ''));
  return result;
}

const timelineStates = () =>
  page
    .locator('ol.timeline > li')
    .evaluateAll((items) => items.map((li) => `${li.querySelector('strong')?.textContent}:${li.className}`));

beforeAll(async () => {
  await ensureDashboardBuilt();
  backend = await startTestBackend({ dashboardDir: DIST_DIR });
  expect((await backend.api('POST', '/projects', { slug: 'story', name: 'Users API' })).status).toBe(201);
  const token = async (name: string, scope: string, environments?: string[]) =>
    (await backend.api<TokenResponse>('POST', '/projects/story/tokens', { name, scope, environments })).body
      .token as string;
  agentToken = await token('agents', 'agent', ['ci', 'staging', 'production']);
  aliceToken = await token('alice', 'write');
  browser = await openBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await backend?.close();
});

describe('the versions story in the dashboard (real backend and agents)', () => {
  it('approving a proposal in the dashboard makes 1.0, Implemented by the PR #1 evidence already there', async () => {
    const capture = await run({ kind: 'ci', pullRequest: '1', commit: 'c1' }, 'v1', true);
    await propose(capture, 'Users', [
      { method: 'GET', path: '/users' },
      { method: 'POST', path: '/users' },
    ]);
    // The third endpoint is documented the dashboard's way (a proposal approved at once).
    const byId = await backend.api(
      'POST',
      '/projects/story/documentation',
      {
        captureId: capture,
        endpoints: [{ method: 'GET', path: '/users/{userId}', description: 'One user', documentBodies: true }],
      },
      aliceToken,
    );
    expect(byId.status).toBe(201);

    await page.goto(`${backend.url}/#/signin?token=${encodeURIComponent(aliceToken)}&project=story`);

    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/#\/p\/story\/captures\//);
    await page.getByRole('link', { name: 'Proposals' }).click();
    await page.getByRole('link', { name: /^Users/ }).click();
    await page.getByRole('button', { name: 'Approve' }).waitFor();
    expect(await timelineStates()).toEqual([
      'Approved:pending',
      'Implemented:pending',
      'Appeared in Staging:pending',
      'Appeared in Production:pending',
    ]);
    expect(await page.locator('.proposal').textContent()).toContain('new → 1.0');
    await screenshot(page, 'versions-1-proposal-open');

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.locator('ol.timeline > li.done').nth(1).getByText('PR #1').waitFor();
    expect(await page.locator('ol.timeline > li.done').first().textContent()).toContain('by alice');
    expect(await timelineStates()).toEqual([
      'Approved:done',
      'Implemented:done',
      'Appeared in Staging:pending',
      'Appeared in Production:pending',
    ]);
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await screenshot(page, 'versions-2-approved-implemented');
  });

  it('advances the timeline live as staging s-1 and production p-1 show the new versions', async () => {
    await run({ kind: 'staging', build: 's-1', commit: 'c1' }, 'v1', true);
    await page.locator('ol.timeline > li.done').nth(2).getByText('build s-1').waitFor({ timeout: 20_000 });
    await run({ kind: 'production', build: 'p-1', commit: 'c1' }, 'v1', false);
    await page.locator('ol.timeline > li.done').nth(3).getByText('build p-1').waitFor({ timeout: 20_000 });
    expect(await timelineStates()).toEqual([
      'Approved:done',
      'Implemented:done',
      'Appeared in Staging:done',
      'Appeared in Production:done',
    ]);
    await screenshot(page, 'versions-3-appeared-in-production');
  });

  it('shows the matrix: 1.0 where seen, N/A where an endpoint never ran', async () => {
    await page.getByRole('link', { name: 'Versions' }).click();
    await page.locator('table.matrix').waitFor();
    const columns = (await page.locator('table.matrix thead th.endpoint-col').allTextContents()).map((t) =>
      t.replace(/\s+/g, ' ').trim(),
    );
    expect(columns).toEqual(['GET /users', 'POST /users', 'GET /users/{userId}']);
    expect(await shownMatrix()).toEqual({
      'Production · build p-1': ['1.0', '1.0', 'N/A'],
      'Staging · build s-1': ['1.0', '1.0', '1.0'],
      'CI · PR #1': ['1.0', '1.0', '1.0'],
    });
    await screenshot(page, 'versions-4-matrix');
  });

  it('PR #2 adds an optional field → 1.1 there while staging and production stay at 1.0 until they show it', async () => {
    const capture = await run({ kind: 'ci', pullRequest: '2', commit: 'c2' }, 'v2', false);
    const email = await propose(capture, 'Users have an email', [{ method: 'GET', path: '/users' }]);
    expect(
      (
        await backend.api<ProposalResponse>(
          'POST',
          `/projects/story/proposals/${email.id}/approve`,
          undefined,
          aliceToken,
        )
      ).status,
    ).toBe(200);
    // The table follows the version.changed and proposal.step events; no reload.
    await until('PR #2 in the table', async () => (await shownMatrix())['CI · PR #2']?.[0] === '1.1', 20_000);
    const shown = await shownMatrix();
    expect(shown['CI · PR #2']).toEqual(['1.1', '1.0', 'N/A']);
    expect([shown['Staging · build s-1']?.[0], shown['Production · build p-1']?.[0]]).toEqual(['1.0', '1.0']);
    expect(
      await page
        .locator('table.matrix tbody tr')
        .filter({ hasText: 'PR #2' })
        .locator('td.cell-latest .cell-version')
        .first()
        .textContent(),
    ).toBe('1.1');
    await screenshot(page, 'versions-5-pr2-ahead');

    await run({ kind: 'staging', build: 's-2', commit: 'c2' }, 'v2', true);
    await until('s-2 in the table', async () => (await shownMatrix())['Staging · build s-2']?.[0] === '1.1', 20_000);
    await page.getByRole('navigation', { name: 'Environment kind' }).getByRole('link', { name: 'Staging' }).click();
    await until(
      'only staging rows',
      async () => Object.keys(await shownMatrix()).join() === 'Staging · build s-2,Staging · build s-1',
      20_000,
    );
    await screenshot(page, 'versions-6-staging-only');
  });
});
