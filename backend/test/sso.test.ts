import { createHash } from 'node:crypto';
import type { AuthConfigResponse, ProjectResponse, WhoAmIResponse } from '@spectator/shared';
import WebSocket from 'ws';
import { type CookieJar, formOf, jarFetch, passProvider, startSsoBackend, TestBrowser } from './support/oidc';
import { sqlOn, type TestBackend } from './support';
import { MAX_SIGN_INS_UNDER_WAY } from '../src/auth/oidc.service';

let sso: Awaited<ReturnType<typeof startSsoBackend>>;
let backend: TestBackend;
const callbackPrefix = (): string => `${backend.url}/api/v1/auth/callback`;

beforeAll(async () => {
  // Open WebSockets are checked every second (their session may end without a request).
  sso = await startSsoBackend({ tokenCheckSeconds: 1 });
  backend = sso.backend;
  expect((await backend.api<ProjectResponse>('POST', '/projects', { slug: 'shop', name: 'Shop' })).status).toBe(201);
});
afterAll(() => sso.close());

function sql<T>(text: string, values: unknown[] = []): Promise<T[]> {
  return sqlOn<T>(backend.databaseUrl, text, values);
}

function sessionCookieOf(jar: CookieJar): string | undefined {
  return jar.get(backend.url, 'spectator_session');
}

describe('single sign-on (OpenID Connect, code flow with PKCE)', () => {
  it('says how people sign in', async () => {
    const config = await backend.api<AuthConfigResponse>('GET', '/auth/config', undefined, '');
    expect(config).toEqual({ status: 200, body: { sso: true, providerName: 'Test IdP' } });
  });

  it('sends the browser to the provider with PKCE S256, state and nonce, and binds the state to the browser', async () => {
    const browser = new TestBrowser(backend.url);
    const location = new URL(await browser.startSignIn('/#/p/shop/captures'));
    expect(location.origin).toBe(sso.provider.issuer);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: 'spectator',
      redirect_uri: callbackPrefix(),
      scope: 'openid email profile groups',
      code_challenge_method: 'S256',
    });
    expect(location.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(location.searchParams.get('nonce')).toMatch(/^[\w-]{20,}$/);
    expect(browser.jar.get(backend.url, 'spectator_signin')).toBe(location.searchParams.get('state'));
  });

  it('signs a person in: a session cookie (HttpOnly, SameSite=Lax), the person recorded, back where they started', async () => {
    const browser = new TestBrowser(backend.url);
    const location = await browser.startSignIn('/#/p/shop/versions');
    const callback = await passProvider(browser.jar, location, 'alice', callbackPrefix());
    const answer = await browser.callback(callback);
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/#/p/shop/versions');
    const cookies = answer.headers.getSetCookie();
    const session = cookies.find((cookie) => cookie.startsWith('spectator_session='));
    expect(session).toMatch(/; Path=\/; Max-Age=43200; HttpOnly; SameSite=Lax$/);
    // Over plain http (this test) the cookie cannot be Secure; over https it is, and named __Host-.
    expect(session).not.toContain('Secure');
    const me = await browser.api<WhoAmIResponse>('GET', '/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      kind: 'person',
      name: 'Alice Admin <alice@example.test>',
      person: { name: 'Alice Admin', email: 'alice@example.test', subject: 'alice', instanceAdmin: true },
    });
    expect(me.body.csrfToken).toMatch(/^[\w-]{32}$/);
    // The table holds the session id's hash, never the id the cookie carries.
    const stored = await sql<{ id_hash: string }>('SELECT id_hash FROM sessions');
    expect(stored.length).toBeGreaterThan(0);
    expect(JSON.stringify(stored)).not.toContain(sessionCookieOf(browser.jar));
    const [user] = await sql<{ issuer: string; groups: string[] }>(
      'SELECT issuer, groups FROM users WHERE subject = $1',
      ['alice'],
    );
    expect(user).toEqual({ issuer: sso.provider.issuer, groups: ['spectator-admins'] });
  });

  it('refuses a callback whose state was never issued (forged)', async () => {
    const browser = new TestBrowser(backend.url);
    const location = new URL(await browser.startSignIn());
    const callback = new URL(await passProvider(browser.jar, location.href, 'alice', callbackPrefix()));
    callback.searchParams.set('state', 'forged-state-0123456789abcdef');
    browser.jar.set(backend.url, 'spectator_signin', 'forged-state-0123456789abcdef');
    const answer = await browser.callback(callback.href);
    expect(answer.status).toBe(401);
    expect(((await answer.json()) as { message: string }).message).toBe(
      'sign-in refused: the state is unknown, already used or expired (start the sign-in again)',
    );
    expect(sessionCookieOf(browser.jar)).toBeUndefined();
  });

  it('refuses a callback replayed after it signed someone in', async () => {
    const browser = new TestBrowser(backend.url);
    const callback = await passProvider(browser.jar, await browser.startSignIn(), 'bob', callbackPrefix());
    const signInCookie = browser.jar.get(backend.url, 'spectator_signin') as string;
    expect((await browser.callback(callback)).status).toBe(302);
    // The attacker (or a back button) replays the same callback, with the same sign-in cookie.
    const replayer = new TestBrowser(backend.url);
    replayer.jar.set(backend.url, 'spectator_signin', signInCookie);
    const replayed = await replayer.callback(callback);
    expect(replayed.status).toBe(401);
    expect(((await replayed.json()) as { message: string }).message).toMatch(
      /state is unknown, already used or expired/,
    );
    expect(sessionCookieOf(replayer.jar)).toBeUndefined();
  });

  it('refuses a callback that another browser started (login CSRF: the state is not bound to this one)', async () => {
    const attacker = new TestBrowser(backend.url);
    const callback = await passProvider(attacker.jar, await attacker.startSignIn(), 'erin', callbackPrefix());
    const victim = new TestBrowser(backend.url);
    const answer = await victim.callback(callback);
    expect(answer.status).toBe(401);
    expect(((await answer.json()) as { message: string }).message).toBe(
      'sign-in refused: the state is not the one this browser started (start the sign-in again)',
    );
    expect(sessionCookieOf(victim.jar)).toBeUndefined();
  });

  it('refuses an ID token whose nonce is not the one this sign-in issued (forged nonce)', async () => {
    const browser = new TestBrowser(backend.url);
    const location = new URL(await browser.startSignIn());
    // The authorization request is tampered with on its way: the provider signs the forged nonce.
    location.searchParams.set('nonce', 'forged-nonce-0123456789abcdef');
    const callback = await passProvider(browser.jar, location.href, 'alice', callbackPrefix());
    const answer = await browser.callback(callback);
    expect(answer.status).toBe(401);
    expect(((await answer.json()) as { message: string }).message).toBe(
      'sign-in refused: unexpected ID Token "nonce" claim value',
    );
    expect(sessionCookieOf(browser.jar)).toBeUndefined();
  });

  it('refuses a code exchanged without this sign-in’s PKCE verifier (a stolen code)', async () => {
    const thief = new TestBrowser(backend.url);
    const theirs = await passProvider(thief.jar, await thief.startSignIn(), 'alice', callbackPrefix());
    const victim = new TestBrowser(backend.url);
    const mine = new URL(await passProvider(victim.jar, await victim.startSignIn(), 'bob', callbackPrefix()));
    // The victim's state and cookie with the thief's code: the verifier of the victim's sign-in does not match it.
    const forged = new URL(callbackPrefix());
    forged.searchParams.set('code', new URL(theirs).searchParams.get('code') as string);
    forged.searchParams.set('state', mine.searchParams.get('state') as string);
    forged.searchParams.set('iss', mine.searchParams.get('iss') as string);
    const answer = await victim.callback(forged.href);
    expect(answer.status).toBe(401);
    expect(sessionCookieOf(victim.jar)).toBeUndefined();
  });

  it('refuses changes from a cookie session without the CSRF header, accepts them with it', async () => {
    const browser = new TestBrowser(backend.url);
    expect((await browser.signIn('alice')).status).toBe(302);
    const refused = await browser.api<{ message: string }>(
      'POST',
      '/projects',
      { slug: 'csrf', name: 'x' },
      { csrf: false },
    );
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/x-csrf-token header/);
    // A wrong value is refused too.
    const wrong = await jarFetch(browser.jar, `${backend.url}/api/v1/projects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': 'not-the-token' },
      body: JSON.stringify({ slug: 'csrf', name: 'x' }),
    });
    expect(wrong.status).toBe(403);
    const made = await browser.api<ProjectResponse>('POST', '/projects', { slug: 'csrf', name: 'made by alice' });
    expect(made.status).toBe(201);
  });

  it('keeps bearer tokens working beside sessions (automation)', async () => {
    const listed = await backend.api<ProjectResponse[]>('GET', '/projects');
    expect(listed.status).toBe(200);
    expect(listed.body.map((p) => p.slug)).toEqual(expect.arrayContaining(['shop']));
    expect((await backend.api('GET', '/projects', undefined, '')).status).toBe(401);
  });

  it('ends a session at sign-out and at expiry', async () => {
    const browser = new TestBrowser(backend.url);
    expect((await browser.signIn('alice')).status).toBe(302);
    const cookie = sessionCookieOf(browser.jar) as string;
    expect((await browser.api('GET', '/projects')).status).toBe(200);
    const out = await browser.api('POST', '/auth/logout');
    expect(out.status).toBe(200);
    expect(sessionCookieOf(browser.jar)).toBeUndefined();
    // The old cookie, kept by someone, no longer works: the session ended on the server.
    browser.jar.set(backend.url, 'spectator_session', cookie);
    const after = await browser.api<{ message: string }>('GET', '/projects');
    expect(after).toEqual({
      status: 401,
      body: expect.objectContaining({ message: 'your session ended: sign in again' }),
    });

    const other = new TestBrowser(backend.url);
    expect((await other.signIn('alice')).status).toBe(302);
    expect((await other.api('GET', '/projects')).status).toBe(200);
    // Age the session past its expiry, by the database's clock (the one the check reads).
    await sql(`UPDATE sessions SET expires_at = now() - interval '1 second'`);
    expect((await other.api('GET', '/projects')).status).toBe(401);
  });

  it('shows a person without a role no project, and answers their project routes as unknown', async () => {
    const browser = new TestBrowser(backend.url);
    expect((await browser.signIn('erin')).status).toBe(302);
    expect(await browser.api('GET', '/projects')).toEqual({ status: 200, body: [] });
    expect((await browser.api('GET', '/projects/shop/captures')).status).toBe(404);
    expect((await browser.api('POST', '/projects', { slug: 'nope', name: 'x' })).status).toBe(403);
  });

  it('bounds the sign-ins under way: anyone may start one, so their rows are capped', async () => {
    // Fill the table to the cap with fresh rows (as 10,000 unfinished sign-ins would), then one more.
    await sql(
      `INSERT INTO sign_in_requests (state, nonce, code_verifier, return_to)
       SELECT 'filler-' || n, 'n', 'v', '/' FROM generate_series(1, $1::int - (SELECT count(*)::int FROM sign_in_requests)) AS n`,
      [MAX_SIGN_INS_UNDER_WAY],
    );
    const refused = await fetch(`${backend.url}/api/v1/auth/login`, { redirect: 'manual' });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { message: string }).message).toBe(
      '10000 sign-ins are under way: try again in a few minutes',
    );
    // Once they are older than the sign-in window they no longer count.
    await sql(`UPDATE sign_in_requests SET created_at = now() - interval '11 minutes' WHERE state LIKE 'filler-%'`);
    expect((await fetch(`${backend.url}/api/v1/auth/login`, { redirect: 'manual' })).status).toBe(302);
    await sql(`DELETE FROM sign_in_requests WHERE state LIKE 'filler-%'`);
  });

  it('opens live events with the session cookie from this site only, and closes them at sign-out', async () => {
    const browser = new TestBrowser(backend.url);
    expect((await browser.signIn('alice')).status).toBe(302);
    const cookie = `spectator_session=${sessionCookieOf(browser.jar)}`;
    const url = `${backend.url.replace(/^http/, 'ws')}/api/v1/projects/shop/events`;
    const open = (origin: string): Promise<WebSocket> =>
      new Promise((resolve, reject) => {
        const socket = new WebSocket(url, ['spectator.v1'], { headers: { cookie, origin } });
        socket.once('open', () => resolve(socket));
        socket.once('unexpected-response', (_request, response) =>
          reject(Object.assign(new Error(`refused ${response.statusCode}`), { status: response.statusCode })),
        );
        socket.once('error', reject);
      });
    // Another site's page could make the browser send the cookie (cross-site WebSocket hijacking).
    await expect(open('http://evil.example')).rejects.toMatchObject({ status: 403 });
    const socket = await open(backend.url);
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    expect((await browser.api('POST', '/auth/logout')).status).toBe(200);
    expect(await closed).toEqual({ code: 1008, reason: 'session ended' });
  });

  it('closes live events of a session once its groups are due to be re-read', async () => {
    const browser = new TestBrowser(backend.url);
    expect((await browser.signIn('alice')).status).toBe(302);
    const cookie = sessionCookieOf(browser.jar) as string;
    const socket = new WebSocket(
      `${backend.url.replace(/^http/, 'ws')}/api/v1/projects/shop/events`,
      ['spectator.v1'],
      {
        headers: { cookie: `spectator_session=${cookie}`, origin: backend.url },
      },
    );
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    await sql(`UPDATE sessions SET created_at = now() - interval '61 minutes' WHERE id_hash = $1`, [
      createHash('sha256').update(cookie).digest('hex'),
    ]);
    expect(await closed).toEqual({ code: 1008, reason: 'session ended' });
    expect((await browser.api('GET', '/projects')).status).toBe(401);
  });

  it('signs out of the provider too (RP-initiated logout), which sends the browser back to the site', async () => {
    const browser = new TestBrowser(backend.url);
    expect((await browser.signIn('carol')).status).toBe(302);
    // While the provider's session lasts, signing in again passes it without a login form.
    expect(await providerAsks(browser.jar, await browser.startSignIn())).toBe('nothing');
    const out = await browser.api<{ endSessionUrl: string | null }>('POST', '/auth/logout');
    expect(out.status).toBe(200);
    const end = new URL(out.body.endSessionUrl as string);
    expect(end.origin).toBe(sso.provider.issuer);
    expect(Object.fromEntries(end.searchParams)).toEqual({
      client_id: 'spectator',
      post_logout_redirect_uri: `${backend.url}/`,
      id_token_hint: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    });
    expect(sessionCookieOf(browser.jar)).toBeUndefined();
    // The provider asks to confirm, ends its session and sends the browser back to the site.
    const confirm = await jarFetch(browser.jar, end.href);
    expect(confirm.status).toBe(200);
    const form = formOf(await confirm.text(), end.href);
    expect(form).not.toBeNull();
    form?.fields.set('logout', 'yes');
    const back = await followUntil(browser.jar, form as NonNullable<typeof form>, `${backend.url}/`);
    expect(back).toBe(`${backend.url}/`);
    // The provider's session is gone: the next sign-in asks for a login.
    expect(await providerAsks(browser.jar, await browser.startSignIn())).toBe('login');
  });
});

/**
 * What the provider does with an authorization URL in this browser: `nothing` when it sends the
 * browser straight back to the callback (its session and consent are there), else the prompt its
 * first page asks (`login`, `consent`).
 */
async function providerAsks(jar: CookieJar, url: string): Promise<string> {
  let next = url;
  for (let step = 0; step < 10; step += 1) {
    const response = await jarFetch(jar, next);
    const location = response.headers.get('location');
    if (location) {
      next = new URL(location, next).href;
      if (next.startsWith(callbackPrefix())) return 'nothing';
      continue;
    }
    return formOf(await response.text(), next)?.fields.get('prompt') ?? `a page (${response.status})`;
  }
  throw new Error('the provider redirected more than 10 times');
}

/** Posts a form and follows redirects until one goes to `stopAt`; returns that URL. */
async function followUntil(
  jar: CookieJar,
  form: { action: string; fields: URLSearchParams },
  stopAt: string,
): Promise<string> {
  let response = await jarFetch(jar, form.action, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.fields.toString(),
  });
  let url = form.action;
  for (let step = 0; step < 10; step += 1) {
    const location = response.headers.get('location');
    if (!location)
      throw new Error(`the provider answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
    url = new URL(location, url).href;
    if (url.startsWith(stopAt)) return url;
    response = await jarFetch(jar, url);
  }
  throw new Error('the provider redirected more than 10 times');
}
