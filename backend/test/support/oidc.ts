import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { BackendOptions } from '../../src/config/config';
import { onFreePort } from '../../src/database/embedded';
import { startTestBackend, type TestBackend } from './index';

/** A test account of the provider: its claims. */
export interface TestAccount {
  name: string;
  email: string;
  groups: string[];
}

/** A real OpenID provider (`oidc-provider`) on 127.0.0.1:0, in a child process. */
export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Registers the backend's callback (and where to return after sign-out); the provider serves requests from then on. */
  register(redirectUris: string[], postLogoutRedirectUris?: string[]): Promise<void>;
  /** Changes an account's groups at the provider (its next sign-in carries them). */
  setGroups(login: string, groups: string[]): Promise<void>;
  close(): Promise<void>;
}

/** Starts the provider with some accounts; resolves once it listens (its issuer known). */
export async function startTestProvider(accounts: Record<string, TestAccount>): Promise<TestProvider> {
  const clientId = 'spectator';
  const clientSecret = 'spectator-test-secret-0123456789';
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [path.join(__dirname, 'oidc-provider.mjs')], {
    env: {
      ...process.env,
      SPECTATOR_TEST_OIDC_ACCOUNTS: JSON.stringify(accounts),
      SPECTATOR_TEST_OIDC_CLIENT_ID: clientId,
      SPECTATOR_TEST_OIDC_CLIENT_SECRET: clientSecret,
    },
    stdio: 'pipe',
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.on('error', () => undefined); // a provider that ended is reported by nextLine
  const lines = readline.createInterface({ input: child.stdout });
  const nextLine = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`test provider exited (${code}): ${stderr}`));
      child.once('exit', onExit);
      lines.once('line', (line) => {
        child.off('exit', onExit);
        resolve(line);
      });
    });
  const first = await nextLine();
  const match = /^listening (\S+)$/.exec(first);
  if (!match) throw new Error(`test provider said ${first}`);
  return {
    issuer: match[1] as string,
    clientId,
    clientSecret,
    register: async (redirectUris, postLogoutRedirectUris = []) => {
      const ready = nextLine();
      child.stdin.write(`${JSON.stringify({ redirectUris, postLogoutRedirectUris })}\n`);
      if ((await ready) !== 'ready') throw new Error('test provider did not get ready');
    },
    setGroups: async (login, groups) => {
      const updated = nextLine();
      child.stdin.write(`${JSON.stringify({ account: login, groups })}\n`);
      if ((await updated) !== 'updated') throw new Error('test provider did not update the account');
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Cookies per origin, as a browser keeps them (name → value; attributes are not modelled beyond Max-Age=0). */
export class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();

  header(url: string): string {
    const jar = this.jars.get(new URL(url).origin);
    return jar ? [...jar].map(([name, value]) => `${name}=${value}`).join('; ') : '';
  }

  store(url: string, response: Response): void {
    const origin = new URL(url).origin;
    let jar = this.jars.get(origin);
    if (!jar) this.jars.set(origin, (jar = new Map()));
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ''] = cookie.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      if (/max-age=0\b/i.test(cookie) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  }

  get(url: string, name: string): string | undefined {
    return this.jars.get(new URL(url).origin)?.get(name);
  }

  set(url: string, name: string, value: string): void {
    const origin = new URL(url).origin;
    if (!this.jars.has(origin)) this.jars.set(origin, new Map());
    this.jars.get(origin)?.set(name, value);
  }
}

/** One request with the jar's cookies, never following redirects. */
export async function jarFetch(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const cookie = jar.header(url);
  const response = await fetch(url, {
    ...init,
    redirect: 'manual',
    headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) },
  });
  jar.store(url, response);
  return response;
}

/** The first form of an HTML page: its action (absolute) and its hidden inputs. */
export function formOf(html: string, pageUrl: string): { action: string; fields: URLSearchParams } | null {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return null;
  const fields = new URLSearchParams();
  for (const input of (form[2] as string).matchAll(/<input[^>]*type="hidden"[^>]*>/gi)) {
    const name = /name="([^"]*)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
    if (name) fields.set(name, value);
  }
  return { action: new URL((form[1] as string).replace(/&amp;/g, '&'), pageUrl).href, fields };
}

/**
 * Goes through the provider as a browser would from `url` (its authorization URL): follows
 * redirects, signs in as `login` on its login form, continues on its consent form, and stops at
 * the first redirect to `stopAt` (the backend's callback), whose URL it returns.
 */
export async function passProvider(jar: CookieJar, url: string, login: string, stopAt: string): Promise<string> {
  let next: { url: string; init?: RequestInit } = { url };
  for (let step = 0; step < 20; step += 1) {
    const response = await jarFetch(jar, next.url, next.init);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const target = new URL(location, next.url).href;
      if (target.startsWith(stopAt)) return target;
      next = { url: target };
      continue;
    }
    const html = await response.text();
    const form = formOf(html, next.url);
    if (response.status !== 200 || !form)
      throw new Error(`provider answered ${response.status}: ${html.slice(0, 300)}`);
    if (form.fields.get('prompt') === 'login') {
      form.fields.set('login', login);
      form.fields.set('password', 'any');
    }
    next = {
      url: form.action,
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.fields.toString(),
      },
    };
  }
  throw new Error('the provider did not send the browser back within 20 steps');
}

/** Test accounts: an instance admin, an API team member, a reader, and someone in no group we map. */
export const TEST_ACCOUNTS: Record<string, TestAccount> = {
  alice: { name: 'Alice Admin', email: 'alice@example.test', groups: ['spectator-admins'] },
  bob: { name: 'Bob Builder', email: 'bob@example.test', groups: ['api-team'] },
  carol: { name: 'Carol Checker', email: 'carol@example.test', groups: ['api-leads', 'api-team'] },
  dave: { name: 'Dave Doc', email: 'dave@example.test', groups: ['readers'] },
  erin: { name: 'Erin Else', email: 'erin@example.test', groups: [] },
};

/** A backend with single sign-on through a test provider, both on loopback. */
export async function startSsoBackend(
  options: Omit<BackendOptions, 'oidc' | 'port'> & {
    oidc?: Pick<NonNullable<BackendOptions['oidc']>, 'recheckMinutes'>;
  } = {},
): Promise<{ backend: TestBackend; provider: TestProvider; close(): Promise<void> }> {
  const provider = await startTestProvider(TEST_ACCOUNTS);
  try {
    // The callback URL is registered with the provider before the backend listens: its port is
    // chosen first, and chosen again when another process took it before the backend's listen.
    const { oidc: extra, ...rest } = options;
    const backend = await onFreePort(
      async (port) => {
        const redirectUrl = `http://127.0.0.1:${port}/api/v1/auth/callback`;
        await provider.register([redirectUrl], [`http://127.0.0.1:${port}/`]);
        return startTestBackend({
          ...rest,
          port,
          oidc: {
            ...extra,
            issuer: provider.issuer,
            clientId: provider.clientId,
            clientSecret: provider.clientSecret,
            redirectUrl,
            scopes: 'openid email profile groups',
            adminGroups: ['spectator-admins'],
            providerName: 'Test IdP',
          },
        });
      },
      (error) => (error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE',
    );
    return {
      backend,
      provider,
      close: async () => {
        await backend.close();
        await provider.close();
      },
    };
  } catch (error) {
    await provider.close();
    throw error;
  }
}

/** A person's browser: signs in through the provider and calls the API with the session cookie. */
export class TestBrowser {
  readonly jar = new CookieJar();
  private csrf: string | null = null;

  constructor(private readonly backendUrl: string) {}

  /** The authorization URL `GET /auth/login` redirects to (the sign-in cookie is kept). */
  async startSignIn(returnTo = '/'): Promise<string> {
    const response = await jarFetch(
      this.jar,
      `${this.backendUrl}/api/v1/auth/login?returnTo=${encodeURIComponent(returnTo)}`,
    );
    const location = response.headers.get('location');
    if (response.status !== 302 || !location) throw new Error(`login answered ${response.status}`);
    return location;
  }

  /** Signs in as `login`; resolves with the callback's answer (302 to the return path on success). */
  async signIn(login: string): Promise<Response> {
    const callback = await passProvider(
      this.jar,
      await this.startSignIn(),
      login,
      `${this.backendUrl}/api/v1/auth/callback`,
    );
    return this.callback(callback);
  }

  callback(url: string): Promise<Response> {
    return jarFetch(this.jar, url);
  }

  /** A JSON call with the session cookie; changes carry the CSRF header unless `csrf: false`. */
  async api<T = unknown>(
    method: string,
    route: string,
    body?: unknown,
    options: { csrf?: boolean } = {},
  ): Promise<{ status: number; body: T }> {
    if (method !== 'GET' && options.csrf !== false && this.csrf === null) {
      const me = await this.api<{ csrfToken?: string }>('GET', '/me');
      this.csrf = me.body.csrfToken ?? null;
    }
    const response = await jarFetch(this.jar, `${this.backendUrl}/api/v1${route}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(method !== 'GET' && options.csrf !== false && this.csrf ? { 'x-csrf-token': this.csrf } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    // A route that answers text (Markdown, a feed) gives its text, as `apiCall` does.
    const json = (response.headers.get('content-type') ?? '').includes('json');
    return { status: response.status, body: (text ? (json ? JSON.parse(text) : text) : null) as T };
  }
}
