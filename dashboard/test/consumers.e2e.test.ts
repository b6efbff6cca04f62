/**
 * Consumers in the dashboard (issue 19), in real headless Chromium against a real backend: a
 * production agent's batch names two consumers of GET /users by pseudonym; a person labels one on
 * the Consumers page ("mobile app 5.x"), labels a pseudonym not seen yet, and a proposal that
 * removes a field GET /users answers shows who it breaks, by label or pseudonym; the endpoint's
 * own screen shows who calls it by status, and a CI capture's review who its breaking diff breaks.
 */
import type { ConsumersResponse, EndpointResponse, ProposalResponse, TokenResponse } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { batchMessage, connectTestAgent, helloMessage } from '../../backend/test/support/agent-client';
import { startTestBackend, type TestBackend } from '../../backend/test/support';
import { untilFolded } from '../../backend/test/support/evidence-helpers';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, until, type TestBrowser } from './support/browser';

jest.setTimeout(240_000);

const P = 'shop';
const MOBILE = '3f9c0a1b7d2e4c55';
const WEB = '9d0c3e51a7b2f468';
const LATER = '0000aaaabbbbcccc';

let backend: TestBackend;
let browser: TestBrowser;
let page: Page;
let writeToken: string;
let proposalId: string;
let agentToken: string;

/** Proposes (and approves, unless `open`) GET /users answering 200 with objects of these string fields. */
async function proposeUsers(fields: string[], open = false): Promise<string> {
  const created = await backend.api<ProposalResponse>(
    'POST',
    `/projects/${P}/proposals`,
    {
      title: `GET /users with ${fields.join(', ')}`,
      endpoints: [
        {
          method: 'GET',
          path: '/users',
          responses: [
            {
              status: 200,
              contentType: 'application/json',
              schema: {
                type: 'object',
                properties: Object.fromEntries(fields.map((field) => [field, { type: 'string' }])),
                required: fields,
              },
            },
          ],
        },
      ],
    },
    writeToken,
  );
  expect(created.status).toBe(201);
  if (!open)
    expect(
      (await backend.api('POST', `/projects/${P}/proposals/${created.body.id}/approve`, undefined, writeToken)).status,
    ).toBe(200);
  return created.body.id;
}

beforeAll(async () => {
  await ensureDashboardBuilt();
  backend = await startTestBackend({ dashboardDir: DIST_DIR });
  expect((await backend.api('POST', '/projects', { slug: P, name: 'Shop' })).status).toBe(201);
  const token = async (name: string, scope: string) =>
    (await backend.api<TokenResponse>('POST', `/projects/${P}/tokens`, { name, scope })).body.token as string;
  agentToken = await token('agents', 'agent');
  writeToken = await token('team', 'admin');
  await proposeUsers(['id', 'name']);
  // A production agent's batch: GET /users 200 ten times, six by one consumer, three by another, one unnamed.
  const agent = await connectTestAgent(backend.url, agentToken);
  const hello = helloMessage({ agentId: 'prod-1', environment: { kind: 'production', build: 'p-1' } });
  expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
  const batch = batchMessage(hello.capture.id, [
    { method: 'GET', path: '/users', status: 200, response: { id: 'u1', name: 'Ann' }, count: 10 },
  ]);
  const at = new Date().toISOString();
  Object.assign(batch.observations[0] as object, {
    consumers: [
      { id: MOBILE, count: 6, lastSeen: at },
      { id: WEB, count: 3, lastSeen: at },
    ],
  });
  expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
  // A production batch is acknowledged at its commit: wait for its fold.
  await untilFolded(backend.databaseUrl);
  await agent.close();
  proposalId = await proposeUsers(['id'], true);

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

/** The page's blast radius: GET /users 200 broken for "mobile app 5.x" (6 calls, 60 %) and WEB. */
async function expectBreaksMobileAndWeb(): Promise<void> {
  const radius = page.getByTestId('blast-radius');
  await radius.waitFor();
  await page
    .getByRole('status')
    .getByText('2 consumers called a broken part in Production in the last 30 days.')
    .waitFor();
  const rows = radius.locator('tbody tr');
  expect(await rows.count()).toBe(2);
  expect(await rows.nth(0).textContent()).toMatch(/GET\s*\/users\s*200.*mobile app 5\.x.*6.*60%/);
  expect(await rows.nth(1).textContent()).toContain(WEB);
}

const consumersOf = async (): Promise<ConsumersResponse> =>
  (await backend.api<ConsumersResponse>('GET', `/projects/${P}/consumers`, undefined, writeToken)).body;

describe('consumers in the dashboard', () => {
  it('lists production consumers by pseudonym and lets a team label them', async () => {
    await page.getByRole('link', { name: 'Consumers' }).click();
    const table = page.getByTestId('consumers');
    await table.waitFor();
    const rows = table.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).textContent()).toMatch(new RegExp(`${MOBILE}.*6.*60%`));
    expect(await rows.nth(1).textContent()).toMatch(new RegExp(`${WEB}.*3.*30%`));
    await page.getByRole('status').getByText('10 calls since').waitFor();

    await rows.nth(0).getByLabel(`Label of ${MOBILE}`).fill('mobile app 5.x');
    await rows.nth(0).getByRole('button', { name: 'Save' }).click();
    await until('the label kept', async () => (await consumersOf()).consumers[0]?.label === 'mobile app 5.x');

    const form = page.getByRole('form', { name: 'Label a pseudonym' });
    await form.getByLabel('Pseudonym').fill(LATER);
    await form.getByLabel('Label', { exact: true }).fill('partner batch job');
    await form.getByRole('button', { name: 'Add label' }).click();
    await until('the new label listed', async () => (await rows.count()) === 3);
    expect(await rows.nth(2).textContent()).toContain('no call in the window');
    expect((await consumersOf()).unseen.map((c) => [c.consumer, c.label])).toEqual([[LATER, 'partner batch job']]);
    await screenshot(page, 'consumers-01-labelled');
  });

  it('shows who a proposal breaks, by label or pseudonym', async () => {
    await page.goto(`${backend.url}/#/p/${P}/proposals/${proposalId}`);
    await expectBreaksMobileAndWeb();
    await screenshot(page, 'consumers-02-who-this-breaks');
  });

  it("shows who calls an endpoint, by status, from the endpoint's documentation", async () => {
    const endpoints = (await backend.api<EndpointResponse[]>('GET', `/projects/${P}/endpoints`, undefined, writeToken))
      .body;
    const users = endpoints.find((e) => e.path === '/users') as EndpointResponse;
    await page.goto(`${backend.url}/#/p/${P}/docs/${users.id}`);
    await page.getByRole('link', { name: 'Who calls it' }).click();
    const table = page.getByTestId('endpoint-consumers-200');
    await table.waitFor();
    await page.getByRole('status').getByText('10 calls, 1 by clients no source named.').waitFor();
    const rows = table.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).textContent()).toMatch(/mobile app 5\.x.*6.*60%/);
    expect(await rows.nth(1).textContent()).toMatch(new RegExp(`${WEB}.*3.*30%`));
    await screenshot(page, 'consumers-03-who-calls-an-endpoint');
  });

  it("shows who a CI capture's breaking diff breaks in its review", async () => {
    // CI answers GET /users without the documented `name`: a breaking diff.
    const agent = await connectTestAgent(backend.url, agentToken);
    const hello = helloMessage({ agentId: 'ci-1', environment: { kind: 'ci', pullRequest: '7', commit: 'c7' } });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    const batch = batchMessage(hello.capture.id, [
      { method: 'GET', path: '/users', status: 200, response: { id: 'u1' } },
    ]);
    expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
    await agent.close();
    await page.goto(`${backend.url}/#/p/${P}/captures/${hello.capture.id}`);
    await expectBreaksMobileAndWeb();
    await screenshot(page, 'consumers-04-who-a-capture-breaks');
  });

  it('picks one production build, kept in the URL, and every environment on the endpoint screen', async () => {
    // A second production build p-2: WEB calls GET /users four times.
    const agent = await connectTestAgent(backend.url, agentToken);
    const hello = helloMessage({ agentId: 'prod-2', environment: { kind: 'production', build: 'p-2' } });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    const batch = batchMessage(hello.capture.id, [
      { method: 'GET', path: '/users', status: 200, response: { id: 'u1', name: 'Ann' }, count: 4 },
    ]);
    Object.assign(batch.observations[0] as object, {
      consumers: [{ id: WEB, count: 4, lastSeen: new Date().toISOString() }],
    });
    expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
    await agent.close();
    await until('the calls of p-2 counted', async () => (await consumersOf()).calls === 14);

    await page.goto(`${backend.url}/#/p/${P}/consumers`);
    const picker = page.getByRole('form', { name: 'Consumers of' });
    const rows = page.getByTestId('consumers').locator('tbody tr');
    await page.getByRole('status').getByText('14 calls since').waitFor();
    await until('p-2 offered', async () =>
      (await picker.getByLabel('Build').locator('option').allTextContents()).includes('p-2'),
    );
    expect(await picker.getByLabel('Build').locator('option').allTextContents()).toEqual(['All builds', 'p-2', 'p-1']);
    await picker.getByLabel('Build').selectOption('p-2');
    await page
      .getByRole('status')
      .getByText(/4 calls since \S+ in build p-2/)
      .waitFor();
    expect(page.url()).toContain('build=p-2');
    // WEB alone called in this build; the labelled pseudonyms are listed as not seen.
    expect(await rows.nth(0).textContent()).toMatch(new RegExp(`${WEB}.*4.*100%`));
    expect(await rows.filter({ hasText: MOBILE }).textContent()).toContain('no call in the window');
    await screenshot(page, 'consumers-05-one-build');

    // The URL keeps the pick: a reload shows the same build and window.
    await picker.getByLabel('Window').selectOption('7');
    await until('the window in the URL', () => page.url().includes('window=7'));
    await page.reload();
    await page
      .getByRole('status')
      .getByText(/4 calls since \S+ in build p-2/)
      .waitFor();
    expect(await page.getByRole('form', { name: 'Consumers of' }).getByLabel('Build').inputValue()).toBe('p-2');
    expect(await page.getByRole('form', { name: 'Consumers of' }).getByLabel('Window').inputValue()).toBe('7');
    // Another environment starts with all of its builds.
    await page.getByRole('form', { name: 'Consumers of' }).getByLabel('Environment').selectOption('staging');
    await until(
      'the build left the URL',
      () => page.url().includes('environment=staging') && !page.url().includes('build='),
    );
    await page
      .getByRole('status')
      .getByText(/^0 calls since/)
      .waitFor();

    // The endpoint screen: every environment together, each section named by its environment.
    const endpoints = (await backend.api<EndpointResponse[]>('GET', `/projects/${P}/endpoints`, undefined, writeToken))
      .body;
    const users = endpoints.find((e) => e.path === '/users') as EndpointResponse;
    await page.goto(`${backend.url}/#/p/${P}/consumers/${users.id}`);
    const calls = page.getByRole('form', { name: 'Calls of' });
    await page.getByTestId('endpoint-consumers-200').waitFor();
    await calls.getByLabel('Environment').selectOption('all');
    await page.getByTestId('endpoint-consumers-production-200').waitFor();
    expect(page.url()).toContain('environment=all');
    await page.getByRole('heading', { name: 'Production · status 200' }).waitFor();
    expect(await page.getByRole('form', { name: 'Calls of' }).getByLabel('Build').count()).toBe(0);
    await page.getByRole('status').getByText('14 calls, 1 by clients no source named.').waitFor();
    await screenshot(page, 'consumers-06-endpoint-all-environments');
    await page.getByRole('form', { name: 'Calls of' }).getByLabel('Environment').selectOption('production');
    await page.getByRole('form', { name: 'Calls of' }).getByLabel('Build').selectOption('p-2');
    await page.getByRole('status').getByText('4 calls.', { exact: true }).waitFor();
    expect(await page.getByTestId('endpoint-consumers-200').locator('tbody tr').allTextContents()).toEqual([
      expect.stringMatching(new RegExp(`${WEB}.*4.*100%`)),
    ]);
  });
});
