/**
 * Names and slugs in paths, end to end: the real agent in front of a real upstream, the real
 * backend and its database. No name may reach any table, also when one was sent literal first
 * (a single value) and its template was learned later: the backend regroups it away.
 */
import { createServer } from 'node:http';
import { startAgent, type RunningAgent } from '@spectator/agent';
import type { CaptureResponse, TokenResponse, UndocumentedEndpointResponse } from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { eventually, type LocalServer } from './support/evidence-helpers';
import { tablesContaining } from './support/privacy';

const USERS = ['canaryalice', 'canarybob', 'canarycarol'];
const ORGS = ['canaryacme', 'canaryinitech'];

let backend: TestBackend;
let upstream: LocalServer;
let agent: RunningAgent;

function send(res: import('node:http').ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

beforeAll(async () => {
  backend = await startTestBackend();
  await backend.api('POST', '/projects', { slug: 'names', name: 'names' });
  const token = (await backend.api<TokenResponse>('POST', '/projects/names/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  const server = createServer((req, res) => {
    const parts = (req.url ?? '/').split('?')[0]!.split('/').filter(Boolean);
    if (parts[0] === 'users' && parts.length === 2) return send(res, 200, { login: 'x', id: 1, name: 'n' });
    // The caller's own team answers other fields than a team by name: the agent keeps `me` literal.
    if (parts[0] === 'teams' && parts[1] === 'me') return send(res, 200, { plan: 'x', seats: 1, billing: 'y' });
    if (parts[0] === 'teams' && parts.length === 2) return send(res, 200, { slug: 'x', id: 1, name: 'n' });
    if (parts[0] === 'snapshots' && parts.length === 3) return send(res, 200, { id: 1, language: 'l', size: 2 });
    if (parts[0] === 'orgs' && parts.length === 3 && parts[2] === 'members')
      return send(res, 200, [{ login: 'x', id: 1 }]);
    return send(res, 404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as import('node:net').AddressInfo;
  upstream = {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  agent = await startAgent({
    listen: '127.0.0.1:0',
    upstream: upstream.url,
    backend: backend.url,
    token,
    environment: { kind: 'ci', pullRequest: '7' },
    logLevel: 'silent',
    tuning: { flushIntervalMs: 100, pathHoldMs: 200 },
  });
});
afterAll(async () => {
  await agent?.close();
  await upstream?.close();
  await backend?.close();
});

/** The capture's undocumented endpoints as `METHOD path interactions`; none before the agent's hello arrived. */
async function undocumented(): Promise<string[]> {
  const { status, body } = await backend.api<UndocumentedEndpointResponse[]>(
    'GET',
    `/projects/names/captures/${agent.captureId()}/undocumented`,
  );
  return status === 200 ? body.map((u) => `${u.method} ${u.path} ${u.interactions}`).sort() : [];
}

describe('names in paths', () => {
  it('stores a single value literal, regroups it when a second value teaches the template, and no name stays in any table', async () => {
    const get = (path: string) => fetch(`${agent.proxyUrl}${path}`).then((r) => r.arrayBuffer());
    await get(`/users/${USERS[0]}`);
    // One value and its hold over: it is stored as it is.
    expect(await eventually(undocumented, (list) => list.length === 1)).toEqual([`GET /users/${USERS[0]} 1`]);
    for (const user of USERS.slice(1)) await get(`/users/${user}`);
    for (const org of ORGS) await get(`/orgs/${org}/members`);
    // Scanner noise: counted apart, no endpoint.
    for (const probe of ['/.env', '/wp-login.php', '/.env']) await get(probe);
    const expected = ['GET /orgs/{org}/members 2', 'GET /users/{user} 3'];
    expect(await eventually(undocumented, (list) => JSON.stringify(list) === JSON.stringify(expected))).toEqual(
      expected,
    );
    const capture = await eventually(
      async () => (await backend.api<CaptureResponse>('GET', `/projects/names/captures/${agent.captureId()}`)).body,
      (c) => c.unmatched.requests === 3,
    );
    expect(capture.unmatched).toEqual({ requests: 3, paths: 2 });
    for (const name of [...USERS, ...ORGS, 'wp-login', '.env'])
      expect({ name, tables: await tablesContaining(backend.databaseUrl, name) }).toEqual({ name, tables: [] });
  });

  it('regroups names sent literal right after an identifier once four alike values teach the template: none stays in any table', async () => {
    const get = (path: string) => fetch(`${agent.proxyUrl}${path}`).then((r) => r.arrayBuffer());
    const snapshots = (): Promise<string[]> =>
      undocumented().then((list) => list.filter((line) => line.includes('/snapshots/')));
    const names = ['canaryjava', 'canarygo', 'canaryrust', 'canaryruby'];
    // The first value, alone past its hold: stored as it is (nothing decides it yet).
    await get(`/snapshots/17/${names[0]}`);
    await eventually(snapshots, (list) => list.length === 1);
    // The next two answer alike it, each after an identifier value no other name was seen after: values
    // in waiting, held up to the agent's pendingMs, never sent literal (docs/paths.md).
    for (const [i, name] of names.slice(1, 3).entries()) await get(`/snapshots/${18 + i}/${name}`);
    // The fourth alike value teaches `/snapshots/{snapshotId}/{snapshot}`: the agent names the path it
    // sent literal (by digest) and the backend regroups it, a literal after a parameter too.
    await get(`/snapshots/20/${names[3]}`);
    const expected = ['GET /snapshots/{snapshotId}/{snapshot} 4'];
    expect(await eventually(snapshots, (list) => JSON.stringify(list) === JSON.stringify(expected))).toEqual(expected);
    for (const name of names)
      expect({ name, tables: await tablesContaining(backend.databaseUrl, name) }).toEqual({ name, tables: [] });
  });

  it('regroups only the literal paths the agent says a learned template covers: a sibling it keeps literal stays apart', async () => {
    const get = (path: string) => fetch(`${agent.proxyUrl}${path}`).then((r) => r.arrayBuffer());
    const teams = async (): Promise<string[]> => (await undocumented()).filter((line) => line.includes('/teams/'));
    // `me` alone, then one team by name: neither tells the other a value (their answers differ), so
    // both go out literal once their hold is over.
    await get('/teams/me');
    expect(await eventually(teams, (list) => list.length === 1)).toEqual(['GET /teams/me 1']);
    await get('/teams/canarydave');
    expect(await eventually(teams, (list) => list.length === 2)).toEqual([
      'GET /teams/canarydave 1',
      'GET /teams/me 1',
    ]);
    // A second team answers like the first: `/teams/{team}` is learned, `me` stays literal in the agent,
    // and the backend regroups the stored team by name but not `me`.
    await get('/teams/canaryerin');
    const expected = ['GET /teams/me 1', 'GET /teams/{team} 2'];
    expect(await eventually(teams, (list) => JSON.stringify(list) === JSON.stringify(expected))).toEqual(expected);
    // Later traffic of `me`, sent literal, is stored literal too (not under the learned template).
    await get('/teams/me');
    const later = ['GET /teams/me 2', 'GET /teams/{team} 2'];
    expect(await eventually(teams, (list) => JSON.stringify(list) === JSON.stringify(later))).toEqual(later);
    for (const name of ['canarydave', 'canaryerin'])
      expect({ name, tables: await tablesContaining(backend.databaseUrl, name) }).toEqual({ name, tables: [] });
  });
});
