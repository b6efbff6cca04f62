import type { ProjectResponse, TokenResponse } from '@spectator/shared';
import type WebSocket from 'ws';
import { apiCall, sqlOn, startTestBackend, startTestReplica, type TestBackend } from './support';
import { connectTestAgent, helloMessage } from './support/agent-client';
import { listenToEvents } from './support/events-client';

// `first` checks open connections' tokens at the default interval (30 s, so within a test only
// its own revocations close its sockets, at once); `second` checks every second.
let first: TestBackend;
let second: TestBackend;

beforeAll(async () => {
  first = await startTestBackend();
  second = await startTestReplica(first, { tokenCheckSeconds: 1 });
  expect((await first.api<ProjectResponse>('POST', '/projects', { slug: 'keys', name: 'keys' })).status).toBe(201);
});
afterAll(async () => {
  await second.close();
  await first.close();
});

async function issue(input: Record<string, unknown>): Promise<TokenResponse> {
  const created = await first.api<TokenResponse>('POST', '/projects/keys/tokens', input);
  expect(created.status).toBe(201);
  return created.body;
}

/** Moves a token's expiry to a second ago, as time passing would; resolves with it (ISO 8601). */
async function expireNow(tokenId: string): Promise<string> {
  const at = new Date(Date.now() - 1000);
  await sqlOn(first.databaseUrl, 'UPDATE tokens SET expires_at = $1 WHERE id = $2', [at, tokenId]);
  return at.toISOString();
}

/** The close code and reason of a socket, once the server closes it. */
function closeOf(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

describe('token expiry', () => {
  it('refuses an expiry that is not an ISO date, in the past, or too far ahead, naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      ['tomorrow', 'expiresAt must be an ISO 8601 date and time, e.g. 2027-01-31T00:00:00Z'],
      ['2020-01-01T00:00:00Z', 'expiresAt must be in the future (it is 2020-01-01T00:00:00.000Z)'],
      ['2999-01-01T00:00:00Z', 'expiresAt must be at most 3650 days ahead'],
    ];
    for (const [expiresAt, message] of cases) {
      const refused = await first.api<{ message: string }>('POST', '/projects/keys/tokens', {
        name: 'x',
        scope: 'read',
        expiresAt,
      });
      expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 400, message });
    }
  });

  it('lists the expiry, and a token past it is refused with when it expired', async () => {
    // An hour ahead, so the token is surely used before it expires however loaded the machine (a
    // 1.5 s expiry could pass before the first request); then its expiry is moved to a moment just
    // past, as the clock would move it, and the replica refuses the token naming that moment.
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const token = await issue({ name: 'short-lived reader', scope: 'read', expiresAt });
    expect(token.expiresAt).toBe(expiresAt);
    const listed = await first.api<TokenResponse[]>('GET', '/projects/keys/tokens');
    expect(listed.body.find((t) => t.id === token.id)).toMatchObject({ expiresAt, revokedAt: null });
    expect((await apiCall(second.url, token.token as string, 'GET', '/projects/keys/captures')).status).toBe(200);
    const expired = await expireNow(token.id);
    const refused = await apiCall<{ message: string }>(
      second.url,
      token.token as string,
      'GET',
      '/projects/keys/captures',
    );
    expect(refused).toEqual({
      status: 401,
      body: { statusCode: 401, error: 'Unauthorized', message: `token short-lived reader expired at ${expired}` },
    });
  });
});

describe('open connections of a token that stops working', () => {
  it('closes an agent stream when its token expires, and refuses its reconnection', async () => {
    // Welcomed before it expires (an hour ahead), then expired while connected: `second` finds out
    // at its next check, within a second.
    const token = await issue({
      name: 'ci agent',
      scope: 'agent',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const agent = await connectTestAgent(second.url, token.token as string);
    const closed = closeOf(agent.socket);
    expect(await agent.request(helloMessage({ agentId: 'expiring' }))).toMatchObject({ type: 'welcome' });
    await expireNow(token.id);
    expect(await closed).toEqual({ code: 1008, reason: 'token expired' });
    await expect(connectTestAgent(second.url, token.token as string)).rejects.toMatchObject({ status: 401 });
  });

  it('closes the agent streams and dashboards of a revoked token on the revoking replica at once and on another within its check interval', async () => {
    const agentToken = await issue({ name: 'staging agent', scope: 'agent' });
    const readToken = await issue({ name: 'dashboard', scope: 'read' });
    const bystander = await issue({ name: 'other dashboard', scope: 'read' });
    const agent = await connectTestAgent(first.url, agentToken.token as string);
    expect(await agent.request(helloMessage({ agentId: 'revoked' }))).toMatchObject({ type: 'welcome' });
    const dashboardHere = await listenToEvents(first.url, 'keys', readToken.token as string, 'protocol');
    const dashboardThere = await listenToEvents(second.url, 'keys', readToken.token as string, 'header');
    const untouched = await listenToEvents(second.url, 'keys', bystander.token as string, 'header');
    const closes = [closeOf(agent.socket), closeOf(dashboardHere.socket), closeOf(dashboardThere.socket)];

    expect((await first.api('DELETE', `/projects/keys/tokens/${agentToken.id}`)).status).toBe(204);
    expect(await closes[0]).toEqual({ code: 1008, reason: 'token revoked' });
    expect((await first.api('DELETE', `/projects/keys/tokens/${readToken.id}`)).status).toBe(204);
    expect(await closes[1]).toEqual({ code: 1008, reason: 'token revoked' });
    // The other replica has not been told; it finds out at its next check (every second here).
    expect(await closes[2]).toEqual({ code: 1008, reason: 'token revoked' });
    expect(untouched.socket.readyState).toBe(untouched.socket.OPEN);
    untouched.close();
  });
});
