/**
 * Review at the scale of a real API, in headless Chromium against the real backend (embedded
 * PostgreSQL): select every endpoint a filter shows and document them in one commit; merge literal
 * siblings into one template; make a path segment a parameter; see rejected requests apart.
 */
import type { Page } from 'playwright-core';
import type { EndpointResponse, PathHintResponse, UndocumentedEndpointResponse } from '@spectator/shared';
import { batchMessage, connectTestAgent, helloMessage } from '../../backend/test/support/agent-client';
import { tablesContaining } from '../../backend/test/support/privacy';
import { startTestBackend, type TestBackend } from '../../backend/test/support';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, until, type TestBrowser } from './support/browser';

jest.setTimeout(240_000);

const AREAS = 120;
let backend: TestBackend;
let browser: TestBrowser;
let page: Page;
let captureId: string;

const undocumented = async (): Promise<UndocumentedEndpointResponse[]> =>
  (await backend.api<UndocumentedEndpointResponse[]>('GET', `/projects/scale/captures/${captureId}/undocumented`)).body;
const rows = (page: Page) => page.getByTestId('undocumented').locator('tbody tr');

beforeAll(async () => {
  await ensureDashboardBuilt();
  backend = await startTestBackend({ dashboardDir: DIST_DIR });
  expect((await backend.api('POST', '/projects', { slug: 'scale', name: 'A real API' })).status).toBe(201);
  const agentToken = (
    await backend.api<{ token: string }>('POST', '/projects/scale/tokens', { name: 'agent', scope: 'agent' })
  ).body.token;
  const agent = await connectTestAgent(backend.url, agentToken);
  const hello = helloMessage();
  captureId = hello.capture.id;
  expect((await agent.request(hello)).type).toBe('welcome');
  const areas = Array.from({ length: AREAS }, (_, i) => ({
    method: 'GET',
    path: `/area-${String(i).padStart(3, '0')}/items`,
    status: 200,
    response: { id: 1 },
  }));
  const named = ['alice-cli-z9', 'bob-web-z9', 'carol-db-z9'].map((name, i) => ({
    method: 'GET',
    path: `/images/${name}`,
    status: 200,
    response: { name: 'x' },
    count: i + 1,
  }));
  const posts = [
    { method: 'POST', path: '/posts', status: 201, request: { title: 't', author: 'a' }, response: { id: 1 } },
    {
      method: 'POST',
      path: '/posts',
      status: 400,
      request: { title: 't', author: { name: 'x' } },
      response: { error: 'bad author' },
    },
  ];
  const batch = batchMessage(captureId, [
    ...areas,
    ...named,
    { method: 'GET', path: '/users/dave-z9/repos', status: 200, response: [] },
    ...posts,
  ]);
  expect((await agent.request(batch, 30_000)).type).toBe('ack');
  await agent.close();
  const token = (
    await backend.api<{ token: string }>('POST', '/projects/scale/tokens', { name: 'reviewer', scope: 'write' })
  ).body.token;
  browser = await openBrowser();
  page = browser.page;
  await page.goto(`${backend.url}/#/signin?token=${encodeURIComponent(token)}&project=scale`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(new RegExp(`/captures/${captureId}$`));
});

afterAll(async () => {
  await browser?.close();
  await backend?.close();
});

it('documents every endpoint a filter shows in one commit', async () => {
  await until('the undocumented list', async () => (await rows(page).count()) === AREAS + 5);
  await page.getByRole('searchbox', { name: 'Filter endpoints' }).fill('/area-');
  await until('the filter', async () => (await rows(page).count()) === AREAS);
  await page.getByRole('checkbox', { name: `Select all shown (${AREAS})` }).check();
  expect(await page.getByRole('group', { name: 'Selected endpoints' }).textContent()).toContain(
    `${AREAS} endpoints selected`,
  );
  await page.getByRole('button', { name: 'Document selected' }).click();
  await page.waitForURL(/\/commit$/);
  // The page follows the address at its hashchange event, a task after the address changed.
  await until('the drafts listed', async () => (await page.locator('.draft').count()) === AREAS);
  await page.getByRole('button', { name: 'Commit changes' }).click();
  const done = page.getByRole('status').filter({ hasText: 'Changes committed' });
  await done.waitFor();
  expect(await done.locator('li').count()).toBe(AREAS);
  await screenshot(page, 'review-scale-committed');
  const { body } = await backend.api<EndpointResponse[]>('GET', '/projects/scale/endpoints');
  expect(body.map((e) => e.path).filter((p) => p.startsWith('/area-'))).toHaveLength(AREAS);
  expect((await undocumented()).map((e) => e.path)).toEqual([
    '/images/alice-cli-z9',
    '/images/bob-web-z9',
    '/images/carol-db-z9',
    '/posts',
    '/users/dave-z9/repos',
  ]);
});

it('merges literal siblings into one template, regrouping their traffic', async () => {
  await page.getByRole('link', { name: 'Back to review' }).click();
  await page.getByRole('searchbox', { name: 'Filter endpoints' }).fill('/images/');
  await until('the image rows', async () => (await rows(page).count()) === 3);
  await page.getByRole('checkbox', { name: 'Select all shown (3)' }).check();
  await page.getByRole('button', { name: 'Merge into one template…' }).click();
  const form = page.getByRole('form', { name: 'Merge 3 paths into one template' });
  expect(await form.getByRole('textbox').inputValue()).toBe('/images/{image}');
  await form.getByRole('button', { name: 'Merge' }).click();
  await page
    .getByRole('status')
    .filter({ hasText: 'Merged into /images/{image} (6 stored rows regrouped).' })
    .waitFor();
  await until(
    'the merged row',
    async () =>
      (await rows(page).count()) === 1 && /\/images\/\{image\}/.test((await rows(page).first().textContent()) ?? ''),
  );
  expect(await rows(page).first().locator('td.num').first().textContent()).toBe('6');
  await screenshot(page, 'review-scale-merged');
  expect(
    (await backend.api<PathHintResponse[]>('GET', '/projects/scale/path-hints')).body.map((h) => h.template),
  ).toEqual(['/images/{image}']);
});

it('makes a path segment a parameter from the endpoint review', async () => {
  await page.getByRole('searchbox', { name: 'Filter endpoints' }).fill('/users/');
  await page.getByRole('link', { name: /GET\s*\/users\/dave-z9\/repos/ }).click();
  const segments = page.getByRole('region', { name: 'Path segments' });
  await segments.getByRole('button', { name: '/dave-z9' }).click();
  const form = page.getByRole('form', { name: 'This segment is a parameter: the template' });
  expect(await form.getByRole('textbox').inputValue()).toBe('/users/{user}/repos');
  await form.getByRole('button', { name: 'Make it a parameter' }).click();
  await page.waitForURL(/path=%2Fusers%2F%7Buser%7D%2Frepos/);
  await page.getByText('Seen in 1 interaction').waitFor();
  await screenshot(page, 'review-scale-segment');
  expect((await undocumented()).map((e) => e.path)).toEqual(['/images/{image}', '/posts', '/users/{user}/repos']);
  expect(await tablesContaining(backend.databaseUrl, 'z9')).toEqual([]);
});

it('shows the request bodies the API rejected apart from the documented request', async () => {
  await page.goto(
    `${backend.url}/#/p/scale/captures/${captureId}/undocumented?method=POST&path=${encodeURIComponent('/posts')}`,
  );
  const rejected = page.getByRole('region', { name: 'Rejected requests' });
  await rejected.waitFor();
  expect(
    await rejected.getByRole('region', { name: 'Rejected request 400' }).locator('tbody tr').allTextContents(),
  ).toEqual(expect.arrayContaining([expect.stringMatching(/^author/)]));
  const request = page.getByRole('region', { name: 'Request body' });
  expect(await request.locator('tbody tr').allTextContents()).toEqual(['authorString', 'titleString']);
  await screenshot(page, 'review-scale-rejected');
});
