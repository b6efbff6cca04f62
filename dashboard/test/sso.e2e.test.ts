/**
 * People sign in to the dashboard through a real OpenID provider (`oidc-provider` on loopback, its
 * development login form) in headless Chromium, against the real backend: the sign-in button, the
 * provider's login, the session cookie, what each role is offered, the approval's actor in the
 * timeline (and the CI run, build, commit and time of an evidence step) and the audit log, and
 * sign-out, at the provider too. Screenshots go to artifacts/e2e/sso-*.png.
 */
import type { ProposalResponse, TokenResponse } from '@spectator/shared';
import type { Page } from 'playwright-core';
import { report } from '../../backend/test/support/evidence-helpers';
import { startSsoBackend } from '../../backend/test/support/oidc';
import { DIST_DIR, ensureDashboardBuilt, openBrowser, screenshot, until, type TestBrowser } from './support/browser';

jest.setTimeout(180_000);

let sso: Awaited<ReturnType<typeof startSsoBackend>>;
let proposal: ProposalResponse;
const browsers: TestBrowser[] = [];

beforeAll(async () => {
  await ensureDashboardBuilt();
  sso = await startSsoBackend({ dashboardDir: DIST_DIR });
  const { backend } = sso;
  expect((await backend.api('POST', '/projects', { slug: 'shop', name: 'Shop' })).status).toBe(201);
  const mapped = await backend.api('PUT', '/projects/shop/group-roles', {
    groupRoles: [
      { group: 'api-team', role: 'editor' },
      { group: 'api-leads', role: 'approver' },
    ],
  });
  expect(mapped.status).toBe(200);
  const made = await backend.api<ProposalResponse>('POST', '/projects/shop/proposals', {
    title: 'Plan GET /orders',
    endpoints: [
      {
        method: 'GET',
        path: '/orders',
        responses: [{ status: 200, contentType: 'application/json', schema: { type: 'object', properties: {} } }],
      },
    ],
  });
  expect(made.status).toBe(201);
  proposal = made.body;
});
afterAll(async () => {
  for (const browser of browsers) await browser.close();
  await sso?.close();
});

/** A fresh Chromium (its own cookies, at the provider too) signed in as `login` through the provider's form. */
async function signIn(login: string): Promise<Page> {
  const browser = await openBrowser();
  browsers.push(browser);
  const { page } = browser;
  await page.goto(sso.backend.url);
  const button = page.getByTestId('signin-sso');
  await button.waitFor();
  expect(await button.textContent()).toBe('Sign in with Test IdP');
  await screenshot(page, `sso-signin-${login}`);
  await button.click();
  // The provider's development login form, then its consent form.
  await page.waitForURL((url) => url.origin === sso.provider.issuer);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((url) => url.origin === sso.backend.url && url.hash.startsWith('#/p/shop'));
  return page;
}

describe('single sign-on in the dashboard', () => {
  it('signs an approver in through the provider, who approves; the timeline and the audit name them', async () => {
    const page = await signIn('carol');
    const cookies = await page.context().cookies(sso.backend.url);
    expect(cookies.find((c) => c.name === 'spectator_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });
    // The page's scripts cannot read the session: it is HttpOnly.
    expect(await page.evaluate(() => document.cookie)).not.toContain('spectator_session');
    await until('who is signed in', async () =>
      ((await page.getByTestId('whoami').textContent()) ?? '').includes('Carol Checker · approver'),
    );
    await page.goto(`${sso.backend.url}/#/p/shop/proposals/${proposal.id}`);
    await page.getByRole('button', { name: 'Approve' }).click();
    await until('the approval in the timeline', async () =>
      ((await page.locator('.proposal').textContent()) ?? '').includes('by Carol Checker <carol@example.test>'),
    );
    await screenshot(page, 'sso-approved');
    await page.getByRole('link', { name: 'Audit' }).click();
    const audit = page.getByTestId('audit');
    await audit.waitFor();
    const first = audit.locator('tbody tr').first();
    expect(await first.locator('td').nth(1).textContent()).toBe('Carol Checker <carol@example.test>');
    expect(await first.locator('td').nth(2).textContent()).toBe('proposal.approved');
    await screenshot(page, 'sso-audit');
    // CI runs the approved version: the Implemented step shows the CI run (pull request), build,
    // commit and time of its evidence.
    const agentToken = (
      await sso.backend.api<TokenResponse>('POST', '/projects/shop/tokens', { name: 'ci agent', scope: 'agent' })
    ).body.token as string;
    await report(
      sso.backend.url,
      agentToken,
      { kind: 'ci', pullRequest: '42', build: '1337', commit: 'abcdef0123456789' },
      [{ method: 'GET', path: '/orders', status: 200, response: {} }],
    );
    await page.goto(`${sso.backend.url}/#/p/shop/proposals/${proposal.id}`);
    const implemented = page.getByRole('listitem', { name: 'Implemented: done' });
    await implemented.waitFor();
    // Its time (hours and minutes), then where the evidence came from.
    expect(await implemented.textContent()).toMatch(/Implemented.*\d:\d\d.* · PR #42 · build 1337 · commit abcdef0$/);
    await screenshot(page, 'sso-evidence');

    // Signing out ends the provider's session too: it asks to confirm, then sends the browser back.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.origin === sso.provider.issuer);
    await screenshot(page, 'sso-provider-signout');
    await page.getByRole('button', { name: /sign me out/i }).click();
    await page.getByTestId('signin-sso').waitFor();
    expect(new URL(page.url()).origin).toBe(sso.backend.url);
    expect((await page.context().cookies(sso.backend.url)).some((c) => c.name === 'spectator_session')).toBe(false);
    const after = await page.evaluate(async () => (await fetch('/api/v1/me')).status);
    expect(after).toBe(401);
    // Signing in again asks the provider's login form again: its session ended as well.
    await page.getByTestId('signin-sso').click();
    await page.waitForURL((url) => url.origin === sso.provider.issuer);
    await page.locator('input[name="login"]').waitFor();
  });

  it('offers an editor no approval: it says the approver role is needed', async () => {
    const made = await sso.backend.api<ProposalResponse>('POST', '/projects/shop/proposals', {
      title: 'Plan GET /refunds',
      endpoints: [
        {
          method: 'GET',
          path: '/refunds',
          responses: [{ status: 200, contentType: 'application/json', schema: { type: 'object', properties: {} } }],
        },
      ],
    });
    expect(made.status).toBe(201);
    const page = await signIn('bob');
    await page.goto(`${sso.backend.url}/#/p/shop/proposals/${made.body.id}`);
    const note = page.getByTestId('needs-scope');
    await note.waitFor();
    expect(await note.textContent()).toBe('Approving needs the approver role in this project; you are editor.');
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await screenshot(page, 'sso-editor');
  });
});
