import { fingerprint, inferShape } from '@spectator/shared';
import { startTestAgent } from './support/agent';
import { FakeBackend } from './support/fake-backend';
import { postsApi, startUpstream, type TestUpstream } from './support/upstream';
import { waitFor } from './support/wait';

describe('capture', () => {
  let upstream: TestUpstream;
  let backend: FakeBackend;
  beforeEach(async () => {
    upstream = await startUpstream(postsApi());
    backend = await FakeBackend.start({ token: 't0k' });
  });
  afterEach(async () => {
    await upstream.close();
    await backend.stop();
  });

  it('aggregates the two POST /posts of the spec into one entry with count 2 and the right shapes', async () => {
    // One batch for the whole test: rows are aggregated per batch, and close() flushes.
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 't0k', tuning: { flushIntervalMs: 60_000 } });
    try {
      for (const post of [{ title: 'Hello', author: 'Ann' }, { title: 'Again', author: 'Bob' }]) {
        const res = await fetch(`${agent.proxyUrl}/posts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(post) });
        expect(res.status).toBe(201);
        expect(await res.json()).toEqual({ id: expect.any(Number), ...post });
      }
      await agent.close();
      const rows = backend.observations().filter((o) => o.method === 'POST');
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(row).toMatchObject({ path: '/posts', status: 201, count: 2, captureId: agent.captureId() });
      const requestShape = inferShape({ title: 'x', author: 'y' });
      const responseShape = inferShape({ id: 1, title: 'x', author: 'y' });
      expect(row.request).toEqual({ contentType: 'application/json', shape: fingerprint(requestShape) });
      expect(row.response).toEqual({ contentType: 'application/json', shape: fingerprint(responseShape) });
      expect(backend.shapes()[fingerprint(responseShape)]).toEqual(responseShape);
      expect(row.requestHeaders).toContain('content-type');
    } finally {
      await agent.close();
    }
  });
});
