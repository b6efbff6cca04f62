/**
 * Removal from the evidence (issue 19), in real headless Chromium against a real backend: a
 * production agent's batch calls GET /users; GET /reports is documented and never called, so the
 * Usage screen lists it as safe to remove. One click proposes its removal and opens the proposal
 * (1.0 → 2.0, endpoint removed); an approver approves it there, and the timeline says what each
 * evidence step waits for. The removed endpoint leaves the safe-to-remove list and the
 * documentation, and the versions table marks its column removed.
 */
import type { ProposalResponse, TokenResponse } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { startTestBackend, type TestBackend } from '../../backend/test/support';
import { documentGet, report } from '../../backend/test/support/evidence-helpers';
import {
  DIST_DIR,
  ensureDashboardBuilt,
  openBrowser,
  screenshot,
  signIn,
  until,
  type TestBrowser,
} from './support/browser';

jest.setTimeout(240_000);

const P = 'shop';

let backend: TestBackend;
let browser: TestBrowser;
let page: Page;
let adminToken: string;

beforeAll(async () => {
  await ensureDashboardBuilt();
  backend = await startTestBackend({ dashboardDir: DIST_DIR });
  expect((await backend.api('POST', '/projects', { slug: P, name: 'Shop' })).status).toBe(201);
  const token = async (name: string, scope: string) =>
    (await backend.api<TokenResponse>('POST', `/projects/${P}/tokens`, { name, scope })).body.token as string;
  const agentToken = await token('agents', 'agent');
  adminToken = await token('team', 'admin');
  await documentGet(backend, P, '/users', { id: { type: 'string' } });
  await documentGet(backend, P, '/reports', { id: { type: 'string' } });
  await report(backend.url, agentToken, { kind: 'production', build: 'p-1' }, [
    { method: 'GET', path: '/users', status: 200, response: { id: 'u1' }, count: 10 },
  ]);
  // The evidence is folded after the ack: production traffic is seen once /users has a last call.
  await until('production traffic of GET /users', async () => {
    const { body } = await backend.api<{ endpoints: Array<{ path: string; lastSeen: string | null }> }>(
      'GET',
      `/projects/${P}/usage?environment=production`,
    );
    return body.endpoints.some((e) => e.path === '/users' && e.lastSeen !== null);
  });

  browser = await openBrowser();
  page = browser.page;
  await signIn(page, backend.url, adminToken, P);
});
afterAll(async () => {
  await browser?.close();
  await backend?.close();
});

describe('removing an endpoint from the Usage screen', () => {
  it('proposes the removal in one click, approves it, and shows what each step waits for', async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    const safe = page.getByTestId('usage-safe-to-remove');
    await safe.waitFor();
    await screenshot(page, 'removal-01-safe-to-remove');
    await safe.getByRole('button', { name: 'Propose removing GET /reports' }).click();
    await page.waitForURL(/#\/p\/shop\/proposals\/[0-9a-f-]{36}$/);
    const id = /proposals\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;
    await page.getByRole('heading', { name: 'Remove GET /reports' }).waitFor();
    await page.getByText('endpoint removed', { exact: true }).first().waitFor();
    await page.getByText(/1\.0\s*→\s*2\.0/).waitFor();
    await screenshot(page, 'removal-02-proposed');

    await page.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('no staging build first seen since the approval').first().waitFor();
    const stored = (await backend.api<ProposalResponse>('GET', `/projects/${P}/proposals/${id}`)).body;
    expect(stored).toMatchObject({ status: 'Approved', removal: true });
    expect(stored.endpoints.map((e) => [e.path, e.fromVersion, e.toVersion])).toEqual([['/reports', '1.0', '2.0']]);
    await screenshot(page, 'removal-03-approved');

    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByText('Nothing is safe to remove').waitFor();
    await page.getByRole('link', { name: 'Versions' }).click();
    await page.getByRole('columnheader', { name: /GET\s*\/reports.*removed/ }).waitFor();
    await screenshot(page, 'removal-04-versions');
  });
});
