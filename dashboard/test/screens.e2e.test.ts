/**
 * The dashboard's screens in real headless Chromium against a fixture API (test/support/fixture-api):
 * states that are hard to make with a real backend (slow, failing, empty, a 100 × 100
 * matrix, proposal steps) and keyboard and narrow-window use. The 1,000-endpoint Review is timed
 * against the real backend in review-1000.e2e.test.ts. The spec's walkthrough against the real
 * backend and agent is walkthrough.e2e.test.ts. Screenshots go to artifacts/e2e/.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { ProposalResponse } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, until, type TestBrowser } from './support/browser';
import { startFixtureApi, type FixtureApi } from './support/fixture-api';
import { capture, documentedPost, matrix, observedPost, postDiff, proposal, undocumented } from './support/fixtures';

jest.setTimeout(120_000);

const TOKEN = 'fixture-token';
let api: FixtureApi;
let browser: TestBrowser;
let page: Page;

const P = '/projects/demo';
const captures = [
  capture('c2', '2026-01-01T10:05:00Z', { diffs: 1, unmatched: { requests: 1234, paths: 51 } }),
  capture('c1', '2026-01-01T10:00:00Z', { endedAt: '2026-01-01T10:05:00Z' }),
];

const ADMIN = { name: 'fixture admin', scope: 'admin', project: 'demo', environments: null };

function answerDefaults(): void {
  api.answer('GET /me', { body: ADMIN });
  api.answer(`GET ${P}`, {
    body: { id: 'p1', slug: 'demo', name: 'Demo', createdAt: '2026-01-01T00:00:00Z', fourEyes: false },
  });
  api.answer(`GET ${P}/members`, { body: { members: [], groupRoles: [] } });
  api.answer(`GET ${P}/captures`, { body: captures });
  api.answer(`GET ${P}/captures/c2/undocumented`, {
    body: [{ method: 'POST', path: '/posts', interactions: 2, count: 4 }, ...undocumented(2)],
  });
  api.answer(`GET ${P}/captures/c2/diffs`, { body: [{ ...postDiff, path: '/posts/{postId}', method: 'PUT' }] });
  api.answer(`GET ${P}/captures/c2/observed`, ({ path }) => ({
    body: path.includes('PUT') ? { ...observedPost, method: 'PUT', path: '/posts/{postId}' } : observedPost,
  }));
  api.answer(`GET ${P}/endpoints`, {
    body: [documentedPost, { ...documentedPost, id: 'ep-put', method: 'PUT', path: '/posts/{postId}' }],
  });
  api.answer(`GET ${P}/endpoints/ep-post/versions`, {
    body: [
      {
        id: 'v1',
        version: '1.0',
        description: documentedPost.description,
        createdAt: '2026-01-01T10:00:00Z',
        request: null,
        responses: [],
        changes: [],
        proposal: {
          id: 'pr-0',
          title: 'Document POST /posts',
          status: 'Approved',
          createdBy: 'ana',
          approvedBy: 'ana',
          approvedAt: '2026-01-01T10:00:00Z',
        },
      },
    ],
  });
  api.answer(`POST ${P}/documentation`, {
    status: 201,
    body: {
      proposalId: 'pr-0',
      versions: [{ endpointId: 'ep-post', method: 'POST', path: '/posts', version: '1.0', previous: null }],
    },
  });
  // Two pages: 100 rows, then 10 more after the cursor.
  api.answer(`GET ${P}/versions`, ({ path }) =>
    path.includes('cursor=page-2')
      ? { body: { ...matrix(10, 100), nextCursor: null } }
      : { body: { ...matrix(100, 100), nextCursor: 'page-2' } },
  );
}

const rows = (testId: string) => page.locator(`[data-testid=${testId}] tbody tr`);

beforeAll(async () => {
  await ensureDashboardBuilt();
  api = await startFixtureApi(DIST_DIR, TOKEN);
  answerDefaults();
  browser = await openBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe('dashboard screens (fixture API)', () => {
  it("serves a bundle with React's production build (a NODE_ENV of test once gave the development one)", async () => {
    const assets = path.join(DIST_DIR, 'assets');
    const map = (await readdir(assets)).find((name) => name.endsWith('.js.map'));
    const sources = (
      JSON.parse(await readFile(path.join(assets, map!), 'utf8')) as { sources: string[] }
    ).sources.filter((source) => /react/.test(source));
    expect(sources.some((source) => source.endsWith('react-dom-client.production.js'))).toBe(true);
    expect(sources.filter((source) => source.includes('development'))).toEqual([]);
  });

  it('refuses a wrong token with a clear message', async () => {
    await page.goto(`${api.url}/#/signin`);
    await page.getByLabel('Token').fill('not-the-token');
    await page.getByLabel(/Project/).fill('demo');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That token was not accepted for this project.').waitFor();
    await screenshot(page, 'screens-01-signin-refused');

    // A known token the project refuses (403) says why: here an agent token, which said the same "not accepted".
    api.answer(`GET ${P}/captures`, {
      status: 403,
      body: {
        statusCode: 403,
        error: 'Forbidden',
        message: 'this needs a token with scope read; this token has scope agent',
      },
    });
    await page.getByLabel('Token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .getByText(
        'That token cannot open this project: this needs a token with scope read; this token has scope agent. An agent token only streams traffic: sign in with a read, write or admin token of the project.',
      )
      .waitFor();
    answerDefaults();
  });

  it('signs in with a link only once asked, drops the token from the address, and opens the newest capture', async () => {
    await page.goto(`${api.url}/#/signin?token=${TOKEN}&project=demo`);
    // A link fills the form and asks (issue 15: a link signed a browser into another project unasked).
    const asked = api.requests.length;
    await page.getByTestId('signin-link').getByText('to the project demo').waitFor();
    expect(api.requests.slice(asked)).toEqual([]);
    expect(await page.evaluate(() => sessionStorage.getItem('spectator.session'))).toBeNull();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/#\/p\/demo\/captures\/c2$/);
    expect(page.url()).not.toContain(TOKEN);
    expect(await page.evaluate(() => sessionStorage.getItem('spectator.session'))).toContain(TOKEN);
    const post = rows('undocumented').filter({ hasText: '/posts' });
    await expect(post.locator('td .count').textContent()).resolves.toBe('4');
    await rows('diffs').first().waitFor();
    expect(await rows('diffs').first().textContent()).toContain('breaking');
    // Noise is counted apart, under the endpoints.
    expect(await page.getByTestId('unmatched').textContent()).toBe('unmatched: 1,234 requests on 51 paths');
    await screenshot(page, 'screens-02-review');

    // Signed in, a link to another project says what it would replace, and staying changes nothing.
    await page.goto(`${api.url}/#/signin?token=spk_someone-else&project=elsewhere`);
    await page.getByTestId('signin-link').getByText('You are signed in to demo now').waitFor();
    await screenshot(page, 'screens-02b-signin-link-asks');
    await page.getByRole('button', { name: 'Stay in demo' }).click();
    await page.waitForURL(/#\/p\/demo\/captures/);
    expect(page.url()).not.toContain('spk_someone-else');
    expect(await page.evaluate(() => sessionStorage.getItem('spectator.session'))).toContain(TOKEN);
    await rows('diffs').first().waitFor();
  });

  it('reviews an undocumented endpoint: shapes with markers, Finish, choose bodies, Commit changes', async () => {
    await page.getByRole('link', { name: /POST\s*\/posts/ }).click();
    const response = page.getByRole('region', { name: '201 response' });
    await response.locator('tr[data-path="$.tags"]').waitFor();
    expect(await response.locator('tr[data-path="$.tags"]').textContent()).toMatch(
      /Array of String.*optional.*nullable/,
    );
    expect(await page.getByRole('region', { name: 'Request body' }).textContent()).toContain('author');
    // Names seen, never values; standard headers (content-type, user-agent) left out.
    await page.getByText('Request headers: x-tenant.').waitFor();
    await screenshot(page, 'screens-03-endpoint-review');

    await page.getByLabel('Description').fill('Create a new post. Accepts author, title as JSON in request body');
    await page.getByRole('button', { name: 'Finish' }).click();
    await page.waitForURL(/\/captures\/c2\/commit$/);
    const bodies = page.getByLabel('Document the request and response bodies');
    expect(await bodies.isChecked()).toBe(true);
    await screenshot(page, 'screens-04-commit');
    await page.getByRole('button', { name: 'Commit changes' }).click();
    await page.getByText('is documented as version').waitFor();
    const sent = api.requests.find((r) => r.method === 'POST' && r.path === `${P}/documentation`);
    expect(sent?.body).toEqual({
      captureId: 'c2',
      endpoints: [
        {
          method: 'POST',
          path: '/posts',
          description: 'Create a new post. Accepts author, title as JSON in request body',
          documentBodies: true,
        },
      ],
    });
    expect(await page.locator('.success').textContent()).toContain('version 1.0');
  });

  it('says that a stream body (server-sent events) is shaped as the list of its items', async () => {
    const event = {
      type: 'object',
      properties: { delta: { type: 'string' } },
      required: ['delta'],
      additionalProperties: false,
    } as const;
    api.answer(`GET ${P}/captures/c2/observed`, {
      body: {
        ...observedPost,
        method: 'GET',
        path: '/chat',
        request: null,
        responses: [{ status: 200, contentType: 'text/event-stream', shape: { type: 'array', items: event } }],
      },
    });
    try {
      await page.goto(`${api.url}/#/p/demo/captures/c2/undocumented?method=GET&path=%2Fchat`);
      const response = page.getByRole('region', { name: '200 response' });
      await response.locator('tr[data-path="$[].delta"]').waitFor();
      expect(await response.textContent()).toContain('A stream: shaped as the list of its items');
      expect(await page.getByRole('region', { name: 'Request body' }).textContent()).not.toContain('A stream');
    } finally {
      answerDefaults();
    }
  });

  it('shows a diff side by side with the breaking change marked and the next version on the accept button; after accepting, the version made stays (the reload said "No diff")', async () => {
    await page.goto(`${api.url}/#/p/demo/captures/c2/diff?method=PUT&path=%2Fposts%2F%7BpostId%7D`);
    const accept = page.getByRole('button', { name: /Accept changes/ });
    await accept.waitFor();
    expect(await accept.textContent()).toBe('Accept changes → 2.0');
    const breakingRow = page.locator('.changes-table tr.breaking');
    expect(await breakingRow.textContent()).toMatch(/201 response.*\$\.author.*removed.*String.*—.*breaking/);
    expect(await page.locator('.changes-table tr').filter({ hasText: 'page' }).textContent()).toMatch(
      /Query parameter.*page.*added.*non-breaking/i,
    );
    // Both sides of an optionality change have the same type; the optional side says so.
    expect(
      await page.locator('.changes-table tbody tr').filter({ hasText: '$.title' }).locator('td').allTextContents(),
    ).toEqual(['Request body', '$.title', 'now optional', 'String', 'String, optional', 'non-breaking']);
    // The removed field is highlighted on the documented side.
    await page.locator('.side-by-side tr.changed[data-path="$.author"]').first().waitFor();
    await screenshot(page, 'screens-05-diff');

    // Accepting answers with the version made, and keeps saying so when the commit's own event
    // reloads the view, which has no diff any more (it said "No diff for this endpoint").
    api.answer(`POST ${P}/documentation`, {
      status: 201,
      body: {
        proposalId: 'pr-2',
        versions: [{ endpointId: 'ep-put', method: 'PUT', path: '/posts/{postId}', version: '2.0', previous: '1.0' }],
      },
    });
    api.answer(`GET ${P}/captures/c2/diffs`, { body: [] });
    const diffsAsked = () => api.requests.filter((r) => r.path === `${P}/captures/c2/diffs`).length;
    await api.eventSockets(1);
    await accept.click();
    const accepted = page.getByRole('status').filter({ hasText: 'Changes accepted' });
    await accepted.waitFor();
    // The proposal it makes is titled as an acceptance, not "Document PUT /posts/{postId}" like a first commit.
    expect(
      api.requests.filter((r) => r.method === 'POST' && r.path === `${P}/documentation`).at(-1)?.body,
    ).toMatchObject({ message: 'Accept changes to PUT /posts/{postId} (was 1.0)' });
    const before = diffsAsked();
    api.emit({ type: 'documentation.committed', endpointIds: ['ep-put'] });
    await until('the diff view reloaded after the commit', () => diffsAsked() > before);
    await page.waitForTimeout(200);
    expect(await accepted.textContent()).toMatch(/PUT\s*\/posts\/\{postId\} is now version 2\.0 \(was 1\.0\)/);
    expect(await page.getByText('No diff for this endpoint').count()).toBe(0);
    answerDefaults();
  });

  it('under four eyes, accepting a diff proposes it for another approver: nothing documented yet', async () => {
    // The same address as the test before, whose page said "Changes accepted": load it afresh.
    await page.goto(`${api.url}/#/p/demo/captures/c2/diff?method=PUT&path=%2Fposts%2F%7BpostId%7D`);
    await page.reload();
    const accept = page.getByRole('button', { name: /Accept changes/ });
    await accept.waitFor();
    api.answer(`POST ${P}/documentation`, {
      status: 201,
      body: {
        proposalId: 'pr-3',
        awaitingApproval: true,
        versions: [{ endpointId: 'ep-put', method: 'PUT', path: '/posts/{postId}', version: '2.0', previous: '1.0' }],
      },
    });
    try {
      await accept.click();
      const proposed = page.getByRole('status').filter({ hasText: 'Proposed for approval' });
      await proposed.waitFor();
      expect(await proposed.textContent()).toMatch(
        /another approver approves\. Once approved:\s*PUT\s*\/posts\/\{postId\} will be version 2\.0 \(now 1\.0\)/,
      );
      expect(await proposed.getByRole('link', { name: 'See the proposal' }).getAttribute('href')).toBe(
        '#/p/demo/proposals/pr-3',
      );
      await screenshot(page, 'screens-05b-four-eyes');
    } finally {
      answerDefaults();
    }
  });

  it('shows loading, then an error with Retry, then the empty state', async () => {
    api.answer(`GET ${P}/endpoints`, { delayMs: 1500, body: [] });
    await page.goto(`${api.url}/#/p/demo/docs`);
    await page.getByText('Loading the documentation…').waitFor();
    await screenshot(page, 'screens-06-loading');

    api.answer(`GET ${P}/endpoints`, {
      status: 500,
      body: { statusCode: 500, error: 'Internal Server Error', message: 'database is down' },
    });
    await page.reload();
    const alert = page.getByRole('alert').filter({ hasText: 'database is down' });
    await alert.waitFor();
    await screenshot(page, 'screens-07-error');
    api.answer(`GET ${P}/endpoints`, { body: [] });
    await alert.getByRole('button', { name: 'Retry' }).click();
    await page.getByText('Nothing documented yet').waitFor();
    await screenshot(page, 'screens-08-empty');
    // No captures: the command to start with names the token's scope and an upstream that is not this backend.
    api.answer(`GET ${P}/captures`, { body: [] });
    await page.goto(`${api.url}/#/p/demo/captures`);
    const start = page.getByRole('complementary', { name: 'Captures' }).locator('pre');
    await start.waitFor();
    expect(await start.textContent()).toBe(
      `SPECTATOR_TOKEN=<agent token> spectator-agent --upstream http://127.0.0.1:8080 --backend ${api.url}`,
    );
    // The list is loaded once per page: load it again with the captures of the tests that follow.
    answerDefaults();
    await page.reload();
    await rows('undocumented').first().waitFor();
    answerDefaults();
  });

  it('raises the new-capture modal from a live event; Review (keyboard) moves to the newest capture', async () => {
    await page.goto(`${api.url}/#/p/demo/captures/c2`);
    await rows('undocumented').first().waitFor();
    await api.eventSockets(1);
    api.answer(`GET ${P}/captures`, {
      body: [capture('c3', '2026-01-01T11:00:00Z', { undocumented: 0 }), ...captures],
    });
    api.answer(`GET ${P}/captures/c3/undocumented`, { body: [] });
    api.answer(`GET ${P}/captures/c3/diffs`, { body: [] });
    // A CI run elsewhere does not interrupt the review of a local capture.
    const capturesAsked = () => api.requests.filter((r) => r.path === `${P}/captures`).length;
    const before = capturesAsked();
    api.emit({
      type: 'capture.started',
      captureId: 'ci-9',
      environment: { kind: 'ci', name: 'ci' },
      startedAt: '2026-01-01T11:00:00Z',
    });
    await until('the captures lookup for the CI event', () => capturesAsked() > before);
    await page.waitForTimeout(200);
    expect(await page.getByRole('dialog').count()).toBe(0);
    expect(
      api.emit({
        type: 'capture.started',
        captureId: 'c3',
        environment: { kind: 'local', name: 'local' },
        startedAt: '2026-01-01T11:00:00Z',
      }),
    ).toBeGreaterThan(0);
    const dialog = page.getByRole('dialog', { name: 'New capture' });
    await dialog.waitFor();
    await screenshot(page, 'screens-09-new-capture-modal');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Review');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/captures\/c3$/);
    await page.getByText('No diffs').waitFor();
    expect(await dialog.count()).toBe(0);
    answerDefaults();
  });

  it('raises the new-capture modal for a capture that started while the events socket was away (a restarted npm start showed none)', async () => {
    const capturesAsked = () => api.requests.filter((r) => r.path === `${P}/captures`).length;
    await page.goto(`${api.url}/#/p/demo/captures/c2`);
    const before = capturesAsked();
    await page.reload();
    await rows('undocumented').first().waitFor();
    // The page's list and the notice's record of the captures known before the socket went away.
    await until('both captures lookups after the reload', () => capturesAsked() >= before + 2);
    await api.eventSockets(1);

    // A reconnect with nothing new in between raises nothing.
    const beforeQuiet = capturesAsked();
    await api.dropEventSockets();
    await api.eventSockets(1);
    await until('the captures lookups after the quiet reconnect', () => capturesAsked() >= beforeQuiet + 2);
    await page.waitForTimeout(200);
    expect(await page.getByRole('dialog').count()).toBe(0);

    // The backend restarts: while the tab is away a CI run and a new local capture begin.
    await api.dropEventSockets();
    const ciRun = capture('ci-10', '2026-01-01T11:05:00Z', {
      environment: { kind: 'ci', name: 'ci' },
      pullRequest: '7',
    });
    api.answer(`GET ${P}/captures`, {
      body: [ciRun, capture('c3', '2026-01-01T11:00:00Z', { undocumented: 0 }), ...captures],
    });
    api.answer(`GET ${P}/captures/c3/undocumented`, { body: [] });
    api.answer(`GET ${P}/captures/c3/diffs`, { body: [] });
    const dialog = page.getByRole('dialog', { name: 'New capture' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toMatch(/a new capture started in Local at/);
    await screenshot(page, 'screens-09b-new-capture-after-reconnect');
    await dialog.getByRole('button', { name: 'Review' }).click();
    await page.waitForURL(/\/captures\/c3$/);
    await page.getByText('No diffs').waitFor();
    answerDefaults();
  });

  it('keeps a move made as the Review first shows its captures: the newest capture opens only if the address is still the Review', async () => {
    // drift.e2e once signed in (landing on the Review), went to the Versions page, and was taken back
    // to the newest capture: the Review's list was on screen and its effect (open the newest capture)
    // had not run yet. Here the address moves at that very moment: as the list is added to the page.
    await page.goto(`${api.url}/#/p/demo/docs`);
    await page.getByRole('heading', { name: 'Documentation' }).waitFor();
    await page.evaluate(() => {
      const observer = new MutationObserver(() => {
        if (document.querySelector('[aria-label="Captures"] .capture-list li') === null) return;
        observer.disconnect();
        window.location.hash = '#/p/demo/versions';
      });
      observer.observe(document.body, { childList: true, subtree: true });
    });
    await page.goto(`${api.url}/#/p/demo/captures`);
    await page.getByRole('heading', { name: 'Versions' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/p/demo/versions');
  });

  it('shows a 100 × 100 versions matrix with N/A and drift, headers kept in view, filtered by kind', async () => {
    await page.goto(`${api.url}/#/p/demo/versions`);
    const table = page.locator('table.matrix');
    await table.waitFor();
    expect(await table.locator('tbody tr').count()).toBe(100);
    expect(await table.locator('thead th.endpoint-col').count()).toBe(100);
    expect(await table.locator('td.cell-na').count()).toBeGreaterThan(0);
    expect(await table.locator('td.cell-drift').count()).toBeGreaterThan(0);
    // Runtime beside the version: p95 and error rate (fixtures: column 3 of PR #100 saw 103 requests, p95 23 ms, 3 %).
    expect(
      await table.locator('tbody tr').first().locator('td').nth(3).locator('.cell-runtime span').allTextContents(),
    ).toEqual(['23 ms', '3%']);
    // The legend names each kind of cell, the amber 'behind the latest' one too.
    expect(await page.locator('.legend').textContent()).toBe(
      '1.1 latest documented · 1.0 behind the latest · N/A never seen there · ⚠ drift traffic matches no version · ' +
        'under a version: p95 time to last byte · server error rate',
    );
    expect(await table.locator('tbody tr').first().locator('th').textContent()).toContain('CI · PR #100');

    const scroller = page.locator('.matrix-scroll');
    await scroller.evaluate((el) => el.scrollTo(el.scrollWidth, el.scrollHeight));
    const box = (await scroller.boundingBox())!;
    const header = (await table.locator('thead th.endpoint-col').last().boundingBox())!;
    const rowHead = (await table.locator('tbody tr').last().locator('th').boundingBox())!;
    expect(Math.abs(header.y - box.y)).toBeLessThan(3); // column headers stuck to the top
    expect(Math.abs(rowHead.x - box.x)).toBeLessThan(3); // row headers stuck to the left
    await screenshot(page, 'screens-11-versions-scrolled');
    expect(api.requests.some((r) => r.path === `${P}/versions?limit=100`)).toBe(true);

    await page.getByRole('button', { name: 'Load more rows' }).click();
    await until('the second page of rows', async () => (await table.locator('tbody tr').count()) === 110);
    expect(api.requests.some((r) => r.path === `${P}/versions?limit=100&cursor=page-2`)).toBe(true);
    expect(await page.getByRole('button', { name: 'Load more rows' }).count()).toBe(0);

    await page.getByRole('navigation', { name: 'Environment kind' }).getByRole('link', { name: 'Staging' }).click();
    await page.waitForURL(/kind=staging/);
    await until('the staging rows', () => api.requests.some((r) => r.path === `${P}/versions?kind=staging&limit=100`));
    await until('the 33 staging rows', async () => (await table.locator('tbody tr').count()) === 33);
    expect(await table.locator('tbody th').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('Staging · build s-1')]),
    );
    await screenshot(page, 'screens-12-versions-staging');
  });

  it('regression: a live reload with the same rows and columns replaces the versions table (it stayed stale)', async () => {
    await page.goto(`${api.url}/#/p/demo/versions`);
    const firstCell = page.locator('table.matrix tbody tr').first().locator('td').nth(1);
    await firstCell.waitFor();
    expect(await firstCell.textContent()).toBe('1.1');
    const changed = { ...matrix(100, 100), nextCursor: 'page-2' }; // same rows, columns and cursor as before
    changed.cells[0]![1] = { version: '2.0' };
    api.answer(`GET ${P}/versions`, { body: changed });
    await api.eventSockets(1);
    api.emit({ type: 'version.changed', endpointId: 'e1', environment: { kind: 'ci', name: 'ci' }, version: '2.0' });
    await until('the changed cell', async () => (await firstCell.textContent()) === '2.0');
    answerDefaults();
  });

  it('approves a proposal and advances its timeline as evidence events arrive', async () => {
    let current: ProposalResponse = proposal([]);
    api.answer(`GET ${P}/proposals`, () => ({ body: [current] }));
    api.answer(`GET ${P}/proposals/pr-1`, () => ({ body: current }));
    api.answer(`POST ${P}/proposals/pr-1/approve`, () => {
      current = proposal([{ step: 'Approved', actor: 'ana', at: '2026-01-01T12:00:00Z' }]);
      return { body: current };
    });
    await page.goto(`${api.url}/#/p/demo/proposals/pr-1`);
    const timeline = page.locator('ol.timeline > li');
    await timeline.first().waitFor();
    expect(await timeline.evaluateAll((items) => items.map((li) => li.className))).toEqual([
      'pending',
      'pending',
      'pending',
      'pending',
    ]);
    expect(await page.locator('.proposal').textContent()).toContain('1.0 → 1.1');
    // Its changes are between two versions: the columns say which (they said Documented and Observed).
    expect(await page.locator('.proposal .changes-table thead th').allTextContents()).toEqual([
      'Where',
      'Field',
      'Change',
      'Version 1.0',
      'Version 1.1',
      'Impact',
    ]);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.locator('ol.timeline > li.done').getByText('by ana').waitFor();

    await api.eventSockets(1);
    current = proposal([
      { step: 'Approved', actor: 'ana', at: '2026-01-01T12:00:00Z' },
      { step: 'Implemented', at: '2026-01-01T12:10:00Z', pullRequest: '2', commit: 'abcdef123456' },
    ]);
    api.emit({ type: 'proposal.step', proposalId: 'pr-1', step: 'Implemented', at: '2026-01-01T12:10:00Z' });
    await page.locator('ol.timeline > li.done').nth(1).getByText('PR #2 · commit abcdef1').waitFor();
    expect(await timeline.evaluateAll((items) => items.map((li) => li.className))).toEqual([
      'done',
      'done',
      'pending',
      'pending',
    ]);
    await screenshot(page, 'screens-13-proposal-timeline');
  });

  it('settings: shows a new token once, asks before revoking, lists the ignore rules in effect', async () => {
    const tokens = [
      {
        id: 't1',
        name: 'admin',
        scope: 'admin',
        environments: null,
        createdAt: '2026-01-01T09:00:00Z',
        lastUsedAt: '2026-01-01T12:00:00Z',
        revokedAt: null,
        expiresAt: null,
      },
      {
        id: 't0',
        name: 'old ci',
        scope: 'agent',
        environments: ['ci'],
        createdAt: '2025-01-01T09:00:00Z',
        lastUsedAt: null,
        revokedAt: null,
        expiresAt: '2025-02-01T09:00:00Z',
      },
    ];
    api.answer(`GET ${P}/tokens`, () => ({ body: tokens }));
    api.answer(`POST ${P}/tokens`, ({ body }) => ({
      status: 201,
      body: {
        ...(body as object),
        id: 't2',
        token: 'sp_once_only_secret',
        createdAt: '2026-01-01T12:00:00Z',
        lastUsedAt: null,
        revokedAt: null,
      },
    }));
    api.answer(`DELETE ${P}/tokens/t1`, { status: 204 });
    const agentSeen = {
      id: 'a1',
      agentKey: 'pod-a1',
      version: '0.1.0',
      environment: { kind: 'staging', name: 's-7' },
      pullRequest: null,
      build: 's-7',
      commit: '0123456789',
      currentCaptureId: null,
      firstSeen: '2026-01-01T11:00:00Z',
      lastSeen: '2026-01-01T12:00:00Z',
      connected: true,
    };
    api.answer(`GET ${P}/agents`, { body: [agentSeen] });
    api.answer(`GET ${P}/webhooks`, {
      body: [
        {
          id: 'w1',
          url: 'https://hooks.example/spectator',
          format: 'slack',
          createdAt: '2026-01-01T09:00:00Z',
          createdBy: 'ana',
        },
        {
          id: 'w0',
          url: 'http://127.0.0.1:1/hook',
          format: 'json',
          createdAt: '2026-01-01T08:00:00Z',
          createdBy: 'ana',
        },
      ],
    });
    api.answer(`GET ${P}/webhooks/w1/deliveries`, {
      body: [
        {
          id: 'd1',
          eventId: 'ev1',
          type: 'proposal.step',
          status: 'failed',
          attempts: 5,
          lastStatus: 500,
          lastError: null,
          createdAt: '2026-01-01T10:00:00Z',
          nextAttemptAt: null,
          deliveredAt: null,
        },
      ],
    });
    api.answer(`GET ${P}/webhooks/w0/deliveries`, {
      body: [
        {
          id: 'd0',
          eventId: 'ev0',
          type: 'version.changed',
          status: 'pending',
          attempts: 3,
          lastStatus: null,
          lastError: 'fetch failed (bad port)',
          createdAt: '2026-01-01T10:00:00Z',
          nextAttemptAt: '2026-01-01T10:05:00Z',
          deliveredAt: null,
        },
      ],
    });
    api.answer(`POST ${P}/webhooks`, ({ body }) => ({
      status: 201,
      body: {
        ...(body as object),
        id: 'w2',
        createdAt: '2026-01-01T12:00:00Z',
        createdBy: 'ana',
        secret: 'whsec_once_only',
      },
    }));
    await page.goto(`${api.url}/#/p/demo/settings`);
    await page.getByRole('region', { name: 'Agents seen' }).getByText('Staging · build s-7').waitFor();
    // An agent disconnecting anywhere reloads the list (agent.connection).
    const agentLists = () => api.requests.filter((r) => r.path === `${P}/agents`).length;
    const listed = agentLists();
    api.answer(`GET ${P}/agents`, { body: [{ ...agentSeen, connected: false }] });
    await api.eventSockets(1);
    api.emit({ type: 'agent.connection', agentId: 'a1', connected: false });
    await page.getByRole('region', { name: 'Agents seen' }).getByText('not connected').waitFor();
    expect(agentLists()).toBe(listed + 1);
    // The rules come with the captures, a request apart from the agents list waited for above.
    await page.getByRole('region', { name: 'Ignore rules in effect' }).getByText('GET POST PUT /db').waitFor();
    const webhooks = page.getByRole('region', { name: 'Webhooks' });
    await webhooks.getByText('failed after 5 attempts (500)').waitFor();
    // A pending delivery says why it is retrying.
    await webhooks.getByText(/pending, 3 attempts \(last: fetch failed \(bad port\)\), next /).waitFor();
    expect(api.requests.some((r) => r.path === `${P}/webhooks/w1/deliveries?limit=1`)).toBe(true);
    await webhooks.locator('li', { hasText: 'hooks.example/spectator' }).getByText('Slack (Block Kit)').waitFor();
    await webhooks.getByLabel('URL').fill('https://hooks.example/second');
    await webhooks.getByLabel('Format').selectOption('teams');
    await webhooks.getByRole('button', { name: 'Add webhook' }).click();
    expect(await webhooks.getByLabel('Signing secret').inputValue()).toBe('whsec_once_only');
    expect(api.requests.find((r) => r.method === 'POST' && r.path === `${P}/webhooks`)?.body).toEqual({
      url: 'https://hooks.example/second',
      format: 'teams',
    });

    await page.getByLabel('Name').fill('ci agent');
    await page.getByLabel('Scope').selectOption('agent');
    await page.getByLabel('ci', { exact: true }).check();
    const tokensRegion = page.getByRole('region', { name: 'Tokens' });
    expect(await tokensRegion.getByRole('row', { name: /old ci/ }).textContent()).toContain('expired');
    expect(await tokensRegion.getByRole('row', { name: /admin/ }).textContent()).toContain('never');
    await page.getByLabel('Expires').selectOption('in 30 days');
    await page.getByRole('button', { name: 'Create token' }).click();
    expect(await page.getByLabel('New token').inputValue()).toBe('sp_once_only_secret');
    const { expiresAt, ...createdWith } = api.requests.find((r) => r.method === 'POST' && r.path === `${P}/tokens`)
      ?.body as { expiresAt: string };
    expect(createdWith).toEqual({ name: 'ci agent', scope: 'agent', environments: ['ci'] });
    expect(Math.abs(Date.parse(expiresAt) - Date.now() - 30 * 86_400_000)).toBeLessThan(60_000);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke' }).click();
    await until('the revoke request', () =>
      api.requests.some((r) => r.method === 'DELETE' && r.path === `${P}/tokens/t1`),
    );
    await screenshot(page, 'screens-14-settings');
  });

  it('imports an OpenAPI file (YAML sent as application/yaml), approved at once, and shows the proposal and its simplifications', async () => {
    api.answer(`POST ${P}/openapi/import`, ({ path }) => ({
      status: 201,
      body: {
        proposal: {
          ...proposal([{ step: 'Approved', actor: 'ana', at: '2026-01-01T12:00:00Z' }]),
          title: 'Import Pets 1.0 from OpenAPI',
        },
        warnings: [
          'GET /pets: response "default" skipped (Spectator documents exact status codes)',
          `DELETE /pets/{petId}: response "4XX" skipped (asked as ${path})`,
        ],
      },
    }));
    await page.goto(`${api.url}/#/p/demo/docs`);
    const yaml = 'openapi: 3.1.0\ninfo: { title: Pets, version: "1.0" }\npaths: {}\n';
    await page
      .getByLabel('OpenAPI file')
      .setInputFiles({ name: 'pets.yaml', mimeType: 'application/yaml', buffer: Buffer.from(yaml) });
    await page.getByLabel('Approve at once').check();
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    await page.getByRole('link', { name: 'Import Pets 1.0 from OpenAPI' }).waitFor();
    const sent = api.requests.find((r) => r.method === 'POST' && r.path.startsWith(`${P}/openapi/import`));
    expect(sent?.path).toBe(`${P}/openapi/import?approve=true`);
    expect(sent?.contentType).toBe('application/yaml');
    expect(sent?.body).toBe(yaml);
    await page.getByText('2 simplifications').click();
    await page.getByText('GET /pets: response "default" skipped').waitFor();
    await screenshot(page, 'screens-15-openapi-import');
  });

  it('exports the OpenAPI of the versions running in an environment', async () => {
    api.answer(`GET ${P}/openapi.json`, ({ path }) => ({
      body: { openapi: '3.1.0', info: { title: 'demo', version: path }, paths: {} },
    }));
    await page.goto(`${api.url}/#/p/demo/docs`);
    const parameters = page.getByRole('article', { name: 'POST /posts' }).getByRole('region', { name: 'Parameters' });
    expect(await parameters.textContent()).toMatch(/limit.*query.*optional.*x-tenant.*header.*required/);
    await page.getByLabel('Export which versions').selectOption('production');
    await page
      .locator('.openapi code')
      .filter({ hasText: `GET /api/v1${P}/openapi.json?environment=production` })
      .waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'OpenAPI 3.1 export' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('demo-production-openapi.json');
    expect(api.requests.filter((r) => r.path.startsWith(`${P}/openapi.json`)).map((r) => r.path)).toEqual([
      `${P}/openapi.json?environment=production`,
    ]);
  });

  it('shows the changelog on the documentation page and downloads it as Markdown', async () => {
    api.answer(`GET ${P}/changelog`, {
      body: {
        project: 'demo',
        projectName: 'Demo',
        entries: [
          {
            versionId: 'v2',
            endpointId: 'e1',
            method: 'GET',
            path: '/posts',
            version: '2.0',
            previous: '1.0',
            breaking: true,
            changes: [],
            createdAt: '2026-01-02T10:00:00Z',
            proposal: {
              id: 'pr-9',
              title: 'Posts lose their author',
              createdBy: 'ana',
              approvedBy: 'bo',
              approvedAt: null,
            },
            runsIn: [
              {
                kind: 'production',
                name: 'p-7',
                pullRequest: null,
                build: 'p-7',
                commit: 'c7',
                lastSeen: '2026-01-02T11:00:00Z',
              },
            ],
          },
        ],
      },
    });
    api.answer(`GET ${P}/changelog.md`, { body: '# Changelog of Demo' });
    await page.goto(`${api.url}/#/p/demo/docs`);
    // The page may already show the documentation (a test before): load it afresh with the fixture's changelog.
    await page.reload();
    const changelog = page.getByRole('region', { name: 'Changelog' });
    const row = changelog.locator('tbody tr', { hasText: '/posts' });
    await row.waitFor();
    expect(await row.textContent()).toMatch(
      /1\.0 → 2\.0 breaking.*Posts lose their author \(approved by bo\).*Production · build p-7/,
    );
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      changelog.getByRole('button', { name: 'Markdown' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('demo-changelog.md');
    expect(api.requests.some((r) => r.path === `${P}/changelog.md`)).toBe(true);
  });

  it('offers a read token no action it cannot take: no Approve or Accept, no token or webhook admin (says which scope each needs)', async () => {
    api.answer('GET /me', { body: { ...ADMIN, name: 'viewer', scope: 'read' } });
    api.answer(`GET ${P}/proposals/pr-1`, { body: proposal([]) });
    const before = api.requests.length;
    try {
      await page.goto(`${api.url}/#/p/demo/proposals/pr-1`);
      await page.reload(); // a new session of the app: it asks who the token is again
      await page.getByTestId('whoami').getByText('read token').waitFor();
      await page.getByText('Approving needs a token with scope write; you signed in with a read token.').waitFor();
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);

      await page.goto(`${api.url}/#/p/demo/captures/c2/diff?method=PUT&path=%2Fposts%2F%7BpostId%7D`);
      await page.getByText('Accepting changes needs a token with scope write').waitFor();
      expect(await page.getByRole('button', { name: /Accept changes/ }).count()).toBe(0);

      await page.goto(`${api.url}/#/p/demo/docs`);
      await page.getByText('Importing OpenAPI needs a token with scope write').waitFor();
      await page.goto(`${api.url}/#/p/demo/settings`);
      await page
        .getByRole('region', { name: 'Tokens' })
        .getByText('Managing tokens needs a token with scope admin')
        .waitFor();
      await page
        .getByRole('region', { name: 'Webhooks' })
        .getByText('Managing webhooks needs a token with scope admin')
        .waitFor();
      await page.getByRole('region', { name: 'Agents seen' }).waitFor();
      // Nothing the token may not read was even asked for.
      expect(api.requests.slice(before).filter((r) => /\/(tokens|webhooks)/.test(r.path))).toEqual([]);
      expect(await page.getByLabel('OpenAPI file').count()).toBe(0);
      await screenshot(page, 'screens-16-read-token');
    } finally {
      api.answer('GET /me', { body: ADMIN });
      await page.reload();
    }
  });

  it('works with the keyboard alone: skip link, section tabs, focusable links', async () => {
    await page.goto('about:blank'); // a fresh document, so focus starts at the top
    await page.goto(`${api.url}/#/p/demo/captures/c2`);
    await rows('undocumented').first().waitFor();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    let reached = false;
    for (let i = 0; i < 10 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate(() => document.activeElement?.textContent)) === 'Documentation';
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForURL(/#\/p\/demo\/docs$/);
  });

  it('reads well on a narrow window: one column, nothing wider than the screen', async () => {
    await page.setViewportSize({ width: 390, height: 800 });
    for (const [name, hash] of [
      ['screens-15-narrow-review', '#/p/demo/captures/c2'],
      ['screens-16-narrow-docs', '#/p/demo/docs/ep-post'],
    ] as const) {
      await page.goto(`${api.url}/${hash}`);
      await page.locator('main .card, main table').first().waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await screenshot(page, name);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
