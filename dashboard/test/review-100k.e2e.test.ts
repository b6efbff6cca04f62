/**
 * The Review of a capture with 10^5 undocumented endpoints, in real headless Chromium against the
 * fixture API (the backend caps a capture's endpoints; this is the table's own bound). Issue 15:
 * such a Review took 18.7 s to render. The table shows a page at a time; filtering searches all.
 */
import type { UndocumentedEndpointResponse } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, type TestBrowser } from './support/browser';
import { startFixtureApi, type FixtureApi } from './support/fixture-api';
import { capture } from './support/fixtures';

jest.setTimeout(180_000);

const TOKEN = 'fixture-token';
const P = '/projects/demo';
const ENDPOINTS = 100_000;
let api: FixtureApi;
let browser: TestBrowser;
let page: Page;

const rows = () => page.locator('[data-testid=undocumented] tbody tr');

beforeAll(async () => {
  await ensureDashboardBuilt();
  api = await startFixtureApi(DIST_DIR, TOKEN);
  const endpoints: UndocumentedEndpointResponse[] = Array.from({ length: ENDPOINTS }, (_, i) => ({
    method: 'GET',
    path: `/area-${String(i).padStart(6, '0')}/items`,
    interactions: 1,
    count: 1,
  }));
  api.answer('GET /me', { body: { name: 'reader', scope: 'read', project: 'demo', environments: null } });
  api.answer(`GET ${P}/captures`, {
    body: [capture('c1', new Date().toISOString(), { undocumented: ENDPOINTS, interactions: ENDPOINTS })],
  });
  api.answer(`GET ${P}/captures/c1`, {
    body: capture('c1', new Date().toISOString(), { undocumented: ENDPOINTS, interactions: ENDPOINTS }),
  });
  api.answer(`GET ${P}/captures/c1/undocumented`, { body: endpoints });
  api.answer(`GET ${P}/captures/c1/diffs`, { body: [] });
  browser = await openBrowser();
  page = browser.page;
  await page.goto(`${api.url}/#/signin?token=${TOKEN}&project=demo`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/captures\/c1$/);
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

it('shows a Review of 10^5 undocumented endpoints a page at a time, and filters all of them', async () => {
  const times: number[] = [];
  for (let run = 0; run < 3; run++) {
    await page.goto('about:blank');
    await page.goto(`${api.url}/#/p/demo/captures/c1`);
    // From navigation start to the frame where the first page of rows and the pager are there.
    const handle = await page.waitForFunction(
      () =>
        document.querySelectorAll('[data-testid=undocumented] tbody tr').length > 0 &&
        document.querySelector('[data-testid=undocumented-pager]')
          ? performance.now()
          : false,
      undefined,
      {
        polling: 'raf',
        timeout: 60_000,
      },
    );
    times.push((await handle.jsonValue()) as number);
  }
  times.sort((a, b) => a - b);
  console.log(
    `Review of ${ENDPOINTS} undocumented endpoints (fixture API): usable ${times[1]!.toFixed(0)} ms after navigation start, median of 3 (runs ${times.map((t) => t.toFixed(0)).join(', ')} ms)`,
  );
  expect(await rows().count()).toBe(250);
  expect(await page.getByTestId('undocumented-pager').textContent()).toContain('1–250 of 100,000');
  await screenshot(page, 'review-100k');
  // The figure is printed (0.6-0.8 s on a quiet machine), not asserted: what keeps it low whatever
  // the load is the page of 250 rows asserted above (a table rendered whole again would hold
  // 100,000). Timed assertions failed under load (near 1 s here; a 2 s CPU bound elsewhere).

  // The next page, then a filter that finds an endpoint far past the first page.
  await page.getByTestId('undocumented-pager').getByRole('button', { name: 'Next' }).click();
  await page.getByTestId('undocumented-pager').getByText('251–500 of 100,000').waitFor();
  expect(await rows().first().textContent()).toContain('/area-000250/items');
  await page.getByLabel('Filter endpoints').fill('area-099999');
  await page.getByTestId('undocumented').getByText('/area-099999/items').waitFor();
  expect(await rows().count()).toBe(1);
});
