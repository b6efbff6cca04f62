/**
 * The rollout story of issue 18: production runs build p-1 (version 1.0 of GET /carts) while a
 * canary build p-2 (version 2.0) takes 30 % of the requests. Real agents in front of each build,
 * real traffic split by a seeded draw: the runtime API's version share says 30 % ± 2 points, and
 * exactly the share routed.
 */
import type { RuntimeResponse, TokenResponse } from '@spectator/shared';
import { startTestBackend, type TestBackend } from './support';
import { documentGet, eventually, startJsonApp, withAgent, type LocalServer } from './support/evidence-helpers';

// 1,000 requests through two real agents: seconds alone, over a minute on a loaded shared machine.
jest.setTimeout(240_000);

let backend: TestBackend;
let agentToken: string;

/** A seeded uniform draw in [0, 1) (mulberry32): the same split every run. */
function draw(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

beforeAll(async () => {
  backend = await startTestBackend();
  expect((await backend.api('POST', '/projects', { slug: 'rollout', name: 'Rollout' })).status).toBe(201);
  agentToken = (
    await backend.api<TokenResponse>('POST', '/projects/rollout/tokens', { name: 'agents', scope: 'agent' })
  ).body.token as string;
  await documentGet(backend, 'rollout', '/carts', { id: { type: 'string' } }); // 1.0
  await documentGet(backend, 'rollout', '/carts', { id: { type: 'integer' } }); // a breaking change: 2.0
});
afterAll(async () => {
  await backend?.close();
});

describe('a rollout in production', () => {
  it('shows a canary on 30 % of the requests as 30 % ± 2 points of version 2.0', async () => {
    const servers: LocalServer[] = [
      await startJsonApp({ 'GET /carts': () => ({ status: 200, body: { id: 'c-1' } }) }),
      await startJsonApp({ 'GET /carts': () => ({ status: 200, body: { id: 1 } }) }),
    ];
    const requests = 1_000;
    const random = draw(18);
    let canary = 0;
    try {
      await withAgent(backend.url, agentToken, servers[0]!.url, { kind: 'production', build: 'p-1' }, (stable) =>
        withAgent(backend.url, agentToken, servers[1]!.url, { kind: 'production', build: 'p-2' }, async (next) => {
          // Ten clients at a time, each request to the canary with probability 0.3.
          const targets = Array.from({ length: requests }, () => (random() < 0.3 ? next : stable));
          canary = targets.filter((target) => target === next).length;
          for (let i = 0; i < requests; i += 10)
            await Promise.all(
              targets.slice(i, i + 10).map(async (target) => {
                const response = await fetch(`${target}/carts`);
                expect(response.status).toBe(200);
                await response.arrayBuffer();
              }),
            );
        }).then(() => undefined),
      );
    } finally {
      for (const server of servers) await server.close();
    }
    // The split drawn is the one the story needs: 287 of 1,000 to the canary.
    expect(canary).toBe(287);

    const endpoints = await backend.api<Array<{ id: string; path: string; version: string }>>(
      'GET',
      '/projects/rollout/endpoints',
    );
    const carts = endpoints.body.find((e) => e.path === '/carts')!;
    expect(carts.version).toBe('2.0');
    const runtime = await eventually(
      async () =>
        (
          await backend.api<RuntimeResponse>(
            'GET',
            `/projects/rollout/endpoints/${carts.id}/runtime?environment=production`,
          )
        ).body,
      (body) => body.versions.reduce((sum, v) => sum + v.total.requests, 0) === requests,
    );
    const share = Object.fromEntries(runtime.versions.map((v) => [v.version, v.total.share]));
    expect(Object.keys(share).sort()).toEqual(['1.0', '2.0']);
    expect(share['2.0']).toBeCloseTo(canary / requests, 10);
    expect(Math.abs(share['2.0']! - 0.3)).toBeLessThanOrEqual(0.02);
    expect(share['1.0']).toBeCloseTo(1 - canary / requests, 10);
    // Per step, the shares of the versions add up to the whole.
    const steps = new Map<string, number>();
    for (const version of runtime.versions)
      for (const point of version.points) steps.set(point.at, (steps.get(point.at) ?? 0) + point.share);
    for (const sum of steps.values()) expect(sum).toBeCloseTo(1, 10);
  });
});
