/**
 * The changelog (docs/api.md, Changelog): per version of each endpoint, breaking or not, the
 * proposal and who approved it, where it runs now; as JSON, Markdown and an Atom feed; and per
 * release of production, build A → build B.
 */
import type { ChangelogResponse, ReleasesResponse, TokenResponse } from '@spectator/shared';
import { xml2js, type Element } from 'xml-js';
import { startTestBackend, type TestBackend } from './support';
import { approveUsersPlan, report } from './support/evidence-helpers';

const PUBLIC_URL = 'https://spectator.example.com';
let backend: TestBackend;
let agentToken: string;

/** Raw text of a route with the admin token. */
async function text(route: string): Promise<{ status: number; type: string | null; body: string }> {
  const response = await fetch(`${backend.url}/api/v1${route}`, {
    headers: { authorization: `Bearer ${backend.adminToken}` },
  });
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

function children(element: Element, name: string): Element[] {
  return (element.elements ?? []).filter((child) => child.name === name);
}

function textOf(element: Element | undefined): string {
  return (element?.elements ?? []).map((child) => child.text ?? child.cdata ?? '').join('');
}

let first: string;
let second: string;

beforeAll(async () => {
  backend = await startTestBackend({ publicUrl: PUBLIC_URL });
  await backend.api('POST', '/projects', { slug: 'log', name: 'Log & <Co>' });
  agentToken = (await backend.api<TokenResponse>('POST', '/projects/log/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  first = await approveUsersPlan(backend, 'log', 'Users', ['id', 'name']);
  await report(backend.url, agentToken, { kind: 'production', build: 'p-1', commit: 'c1' }, [
    { method: 'GET', path: '/users', status: 200, response: [{ id: 1, name: 'a' }] },
  ]);
  second = await approveUsersPlan(backend, 'log', 'Users lose their name', ['id']);
  await report(backend.url, agentToken, { kind: 'staging', build: 's-2', commit: 'c2' }, [
    { method: 'GET', path: '/users', status: 200, response: [{ id: 1 }] },
  ]);
  await report(backend.url, agentToken, { kind: 'production', build: 'p-2', commit: 'c2' }, [
    { method: 'GET', path: '/users', status: 200, response: [{ id: 1 }] },
  ]);
});

afterAll(async () => {
  await backend.close();
});

describe('changelog', () => {
  it('lists each version newest first: breaking or not, its proposal and approver, where it runs now', async () => {
    const { status, body } = await backend.api<ChangelogResponse>('GET', '/projects/log/changelog');
    expect(status).toBe(200);
    expect(body.project).toBe('log');
    expect(
      body.entries.map((entry) => [entry.method, entry.path, entry.version, entry.previous, entry.breaking]),
    ).toEqual([
      ['GET', '/users', '2.0', '1.0', true],
      ['GET', '/users', '1.0', null, false],
    ]);
    const [newest, oldest] = body.entries;
    expect(newest?.proposal).toMatchObject({
      id: second,
      title: 'Users lose their name',
      approvedBy: expect.any(String),
    });
    expect(newest?.proposal?.approvedAt).toEqual(expect.any(String));
    expect(newest?.changes).toContainEqual(
      expect.objectContaining({ change: 'removed', in: 'response', breaking: true }),
    );
    expect(newest?.runsIn.map((where) => [where.kind, where.name])).toEqual([
      ['production', 'p-2'],
      ['staging', 's-2'],
    ]);
    // 1.0 ran in production p-1; p-2 runs 2.0 now.
    expect(oldest?.proposal?.id).toBe(first);
    expect(oldest?.runsIn).toEqual([]);
    expect((await backend.api('GET', '/projects/log/changelog?limit=1')).body).toMatchObject({
      entries: [expect.objectContaining({ version: '2.0' })],
    });
  });

  it('writes it as Markdown', async () => {
    const { status, type, body } = await text('/projects/log/changelog.md');
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/markdown/);
    expect(body).toContain('# Changelog of Log & \\<Co\\>');
    expect(body).toContain('### `GET /users` 2.0 — breaking');
    expect(body).toMatch(
      /From 1\.0\. Proposal “Users lose their name” approved by .+ at .+\. Runs in: production \(build p-2\), staging \(build s-2\)\./,
    );
    expect(body).toMatch(/^- \*\*breaking\*\* response 200 `\$\[\]\.name` removed$/m);
    expect(body).toContain('### `GET /users` 1.0\n');
  });

  it('writes it as an Atom feed: an entry per version, linked to the dashboard', async () => {
    const { status, type, body } = await text('/projects/log/changelog.atom');
    expect(status).toBe(200);
    expect(type).toMatch(/^application\/atom\+xml/);
    const feed = children(xml2js(body) as Element, 'feed')[0] as Element;
    expect(feed.attributes?.xmlns).toBe('http://www.w3.org/2005/Atom');
    expect(textOf(children(feed, 'title')[0])).toBe('Log & <Co>: API changelog');
    const entries = children(feed, 'entry');
    expect(entries.map((entry) => textOf(children(entry, 'title')[0]))).toEqual([
      'GET /users 2.0 (breaking)',
      'GET /users 1.0',
    ]);
    for (const entry of entries) {
      expect(textOf(children(entry, 'id')[0])).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
      expect(children(entry, 'link')[0]?.attributes?.href).toMatch(
        new RegExp(`^${PUBLIC_URL.replace(/\./g, '\\.')}/#/p/log/docs/[0-9a-f-]{36}$`),
      );
      expect(textOf(children(entry, 'updated')[0])).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
    expect(children(entries[0] as Element, 'category')[0]?.attributes?.term).toBe('breaking');
  });

  it('lists the releases of production: build A → build B with what changed for clients', async () => {
    const { status, body } = await backend.api<ReleasesResponse>(
      'GET',
      '/projects/log/changelog/releases?environment=production',
    );
    expect(status).toBe(200);
    expect(body.releases.map((release) => [release.from?.name ?? null, release.to.name])).toEqual([
      ['p-1', 'p-2'],
      [null, 'p-1'],
    ]);
    expect(body.releases[0]?.endpoints).toEqual([
      expect.objectContaining({ method: 'GET', path: '/users', from: '1.0', to: '2.0', drift: false, breaking: true }),
    ]);
    expect(body.releases[0]?.endpoints[0]?.changes).toContainEqual(
      expect.objectContaining({ change: 'removed', breaking: true }),
    );
    expect(body.releases[1]?.endpoints).toEqual([
      expect.objectContaining({ from: null, to: '1.0', breaking: false, changes: [] }),
    ]);
  });

  it.each([
    ['/projects/log/changelog/releases', 'environment must be one of the following values'],
    ['/projects/log/changelog/releases?environment=local', 'environment must be one of the following values'],
    ['/projects/log/changelog?limit=0', 'limit must not be less than 1'],
    ['/projects/log/changelog.atom?limit=501', 'limit must not be greater than 500'],
  ])('answers %s with 400 naming the parameter', async (route, message) => {
    const { status, body } = await backend.api<{ message: string }>('GET', route);
    expect(status).toBe(400);
    expect(body.message).toContain(message);
  });
});
