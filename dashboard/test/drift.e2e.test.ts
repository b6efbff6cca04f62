/**
 * Where drift began, on the Versions page in real headless Chromium: a field no version documents
 * appears in pull request 42's CI run (commit abc1234…), then in staging build s-102, then in
 * production build p-5 (real backend on embedded PostgreSQL, the agent protocol over a real
 * WebSocket). The page names, for the production build, where that drift began, in the panel
 * and in the matrix's drifting cells.
 */
import type { AgentEnvironment, TokenResponse } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { batchMessage, connectTestAgent, helloMessage } from '../../backend/test/support/agent-client';
import { startTestBackend, type TestBackend } from '../../backend/test/support';
import { documentGet, untilFolded } from '../../backend/test/support/evidence-helpers';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, type TestBrowser } from './support/browser';

jest.setTimeout(240_000);

let backend: TestBackend;
let browser: TestBrowser;
let page: Page;
let agentToken: string;
let readToken: string;

/** The production build's capture. */
let productionCapture: string;

/** One batch of GET /users/{userId} from an agent of `environment`, answered with an `email` no version documents. */
async function drifting(environment: AgentEnvironment): Promise<string> {
  const agent = await connectTestAgent(backend.url, agentToken);
  try {
    const hello = helloMessage({ agentId: `drift-${JSON.stringify(environment)}`, environment });
    expect(await agent.request(hello)).toMatchObject({ type: 'welcome' });
    const batch = batchMessage(hello.capture.id, [
      { method: 'GET', path: '/users/{userId}', status: 200, response: { id: 'u', name: 'n' }, count: 9 },
      { method: 'GET', path: '/users/{userId}', status: 200, response: { id: 'u', name: 'n', email: 'e' }, count: 1 },
    ]);
    expect(await agent.request(batch)).toMatchObject({ type: 'ack' });
    // A staging or production batch is acknowledged at its commit: wait for its fold.
    await untilFolded(backend.databaseUrl);
    return hello.capture.id;
  } finally {
    await agent.close();
  }
}

beforeAll(async () => {
  await ensureDashboardBuilt();
  backend = await startTestBackend({ dashboardDir: DIST_DIR });
  expect((await backend.api('POST', '/projects', { slug: 'drift', name: 'Users' })).status).toBe(201);
  const token = async (name: string, scope: string) =>
    (await backend.api<TokenResponse>('POST', '/projects/drift/tokens', { name, scope })).body.token as string;
  agentToken = await token('agents', 'agent');
  readToken = await token('viewer', 'read');
  await documentGet(backend, 'drift', '/users/{userId}', { id: { type: 'string' }, name: { type: 'string' } });
  await drifting({ kind: 'ci', pullRequest: '42', commit: 'abc1234def' });
  await drifting({ kind: 'staging', build: 's-102', commit: 'abc1234def' });
  productionCapture = await drifting({ kind: 'production', build: 'p-5', commit: 'abc1234def' });
  browser = await openBrowser();
  page = browser.page;
});

afterAll(async () => {
  await browser?.close();
  await backend?.close();
});

describe('where drift began, on the Versions page (real backend, Chromium)', () => {
  it('says since which pull request, commit and staging build production drifts', async () => {
    await page.goto(`${backend.url}/#/signin?token=${encodeURIComponent(readToken)}&project=drift`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/#\/p\/drift\//);
    await page.goto(`${backend.url}/#/p/drift/versions?kind=production`);
    const panel = page.getByRole('region', { name: 'Where drift began' });
    await panel.getByRole('listitem').first().waitFor();
    expect((await panel.getByRole('listitem').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim())).toEqual([
      'GET /users/{userId} ⚠ 1.0 in Production · build p-5, since PR #42 (abc1234), staging build s-102',
    ]);
    await screenshot(page, 'drift-origins');

    // All kinds: each row names what came before it; the pull request only itself.
    await page.goto(`${backend.url}/#/p/drift/versions`);
    await page.getByRole('region', { name: 'Where drift began' }).getByRole('listitem').nth(2).waitFor();
    const all = (await page.getByRole('region', { name: 'Where drift began' }).getByRole('listitem').allTextContents())
      .map((t) => t.replace(/\s+/g, ' ').trim())
      .sort();
    expect(all).toEqual([
      'GET /users/{userId} ⚠ 1.0 in CI · PR #42, since PR #42 (abc1234)',
      'GET /users/{userId} ⚠ 1.0 in Production · build p-5, since PR #42 (abc1234), staging build s-102',
      'GET /users/{userId} ⚠ 1.0 in Staging · build s-102, since PR #42 (abc1234)',
    ]);
  });

  it('says in each drifting cell of the matrix since where it drifts', async () => {
    await page.goto(`${backend.url}/#/p/drift/versions`);
    const matrix = page.getByRole('region', { name: 'Versions by environment and endpoint' });
    // A row by its header (a cell's words name other rows too).
    const row = (name: RegExp) => matrix.getByRole('row').filter({ has: page.getByRole('rowheader', { name }) });
    const since = (name: RegExp) => row(name).locator('td.cell-drift .cell-since').textContent({ timeout: 30_000 });
    expect(await since(/p-5/)).toBe('since PR #42 (abc1234), staging build s-102');
    expect(await since(/s-102/)).toBe('since PR #42 (abc1234)');
    expect(await since(/PR #42/)).toBe('since PR #42 (abc1234)');
    const title = await row(/p-5/).locator('td.cell-drift').getAttribute('title');
    expect(title).toBe(
      'Traffic here conforms to no documented version (nearest 1.0), since PR #42 (abc1234), staging build s-102',
    );
    await screenshot(page, 'drift-matrix-since');
  });

  it("says beside the production capture's diff since which pull request and staging build its traffic was seen", async () => {
    await page.goto(`${backend.url}/#/p/drift/captures/${productionCapture}`);
    const diffs = page.getByTestId('diffs');
    const row = diffs.getByRole('row', { name: /GET \/users\/\{userId\}/ });
    await row.getByText('since PR #42 (abc1234), staging build s-102').waitFor();
    expect(await diffs.getByRole('columnheader').allTextContents()).toContain('First seen');
    const title = await row.getByText('since PR #42').getAttribute('title');
    expect(title).toMatch(
      /^PR #42 \(abc1234\): first evidence .+\nstaging build s-102: first evidence .+\nproduction build p-5: first evidence /,
    );
    await screenshot(page, 'diff-origins');
  });
});
