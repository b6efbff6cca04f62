import { ROUTES, type BackendMessage, type ProjectResponse, type TokenResponse } from '@spectator/shared';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { startTestAgent } from '../../agent/test/support/agent';
import { connectTestAgent, helloMessage, type TestAgent } from './support/agent-client';
import { eventually } from './support/evidence-helpers';
import { startTestBackend, type TestBackend } from './support';

// Issue 15 (second review): the agent stream took any number of connections. Each replica keeps at
// most SPECTATOR_MAX_AGENT_CONNECTIONS, and SPECTATOR_MAX_AGENT_CONNECTIONS_PER_PROJECT per project;
// a connection past either is closed at once (1013, try again later) with a reason naming the cap.
let backend: TestBackend;
const tokens: Record<string, string> = {};
const open: TestAgent[] = [];

beforeAll(async () => {
  backend = await startTestBackend({ maxAgentConnections: 3, maxAgentConnectionsPerProject: 2 });
  for (const slug of ['alpha', 'beta']) {
    expect((await backend.api<ProjectResponse>('POST', '/projects', { slug, name: slug })).status).toBe(201);
    tokens[slug] = (
      await backend.api<TokenResponse>('POST', `/projects/${slug}/tokens`, { name: 'agent', scope: 'agent' })
    ).body.token as string;
  }
});
afterAll(async () => {
  await Promise.all(open.map((agent) => agent.close()));
  await backend.close();
});

/** Connect and say hello: the welcomed connection (kept open), or how the backend closed it. */
async function attempt(slug: string, agentId: string): Promise<TestAgent | { code: number; reason: string }> {
  const agent = await connectTestAgent(backend.url, tokens[slug] as string);
  const first = await new Promise<BackendMessage | { code: number; reason: string }>((resolve) => {
    agent.socket.once('message', (data) => resolve(JSON.parse(data.toString()) as BackendMessage));
    agent.socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
    agent.send(helloMessage({ agentId }));
  });
  if ('type' in first) {
    expect(first).toMatchObject({ type: 'welcome' });
    open.push(agent);
    return agent;
  }
  return first;
}

/**
 * Upgrades by hand and, once upgraded, sends `frame` as raw bytes (before any close frame of the
 * backend can have come); resolves when the backend ends the connection.
 */
function upgradeAndSend(slug: string, frame: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${backend.url}${ROUTES.agentStream}`, {
      headers: {
        authorization: `Bearer ${tokens[slug] as string}`,
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
      },
    });
    request.on('error', reject);
    request.on('response', (response) => reject(new Error(`upgrade refused: ${response.statusCode}`)));
    request.on('upgrade', (_response, socket) => {
      socket.on('error', () => undefined); // the backend may reset it: its end is what is awaited
      socket.on('close', () => resolve());
      socket.resume();
      socket.write(frame);
    });
    request.end();
  });
}

const perProject = { code: 1013, reason: 'too many agent connections for this project (at most 2); retry later' };
const perReplica = { code: 1013, reason: 'too many agent connections on this backend (at most 3); retry later' };

describe('agent connections', () => {
  let alpha: TestAgent[];

  it('are capped per project and per replica, the extra ones closed with a reason naming the cap', async () => {
    alpha = [(await attempt('alpha', 'a1')) as TestAgent, (await attempt('alpha', 'a2')) as TestAgent];
    expect(alpha.every((agent) => 'socket' in agent)).toBe(true);
    expect(await attempt('alpha', 'a3')).toEqual(perProject);
    expect(await attempt('beta', 'b1')).toHaveProperty('socket');
    expect(await attempt('beta', 'b2')).toEqual(perReplica);
    // A connection that ends makes room again (once the backend has seen it close).
    await alpha[0]!.close();
    const again = await eventually(
      () => attempt('alpha', 'a3'),
      (result) => 'socket' in result,
    );
    alpha = [alpha[1]!, again as TestAgent];
  });

  it('past the cap (three open), a connection that sends a malformed frame before its close is ended, the backend up', async () => {
    // A masked frame of opcode 3 (reserved): ws reports it as an 'error' of the server's socket,
    // which a connection closed for the cap had no listener for, so the backend process threw.
    const reservedOpcode = Buffer.from([0x83, 0x80, 1, 2, 3, 4]);
    await upgradeAndSend('alpha', reservedOpcode);
    await upgradeAndSend('beta', reservedOpcode);
    expect(await attempt('alpha', 'a4')).toEqual(perReplica);
    expect((await backend.api('GET', '/health')).status).toBe(200);
  });

  it('are refused to a real agent, which logs the reason once, backs off, and connects once there is room', async () => {
    const agent = await startTestAgent({ upstream: 'http://127.0.0.1:9', backend: backend.url, token: tokens.beta });
    try {
      await eventually(
        () => agent.metrics.get('backend_connect_failures_total'),
        (failures) => failures >= 3,
      );
      expect(agent.metrics.get('backend_connected')).toBe(0);
      const warned = agent.logs.find(`backend closed the connection: ${perReplica.reason}`);
      expect(warned.filter((line) => line.level === 40)).toHaveLength(1); // once, not per retry
      expect(warned[0]).toMatchObject({ code: 1013, retryingWithBackoff: true });
      await alpha[0]!.close();
      await eventually(
        () => agent.metrics.get('backend_connected'),
        (connected) => connected === 1,
      );
    } finally {
      await agent.close();
    }
  });
});
