import http from 'node:http';
import {
  HISTOGRAM_RELATIVE_ERROR,
  LatencyHistogram,
  type BatchMessage,
  type WireFailure,
  type WireHistogram,
} from '@spectator/shared';
import { startTestAgent } from './support/agent';
import { FakeBackend } from './support/fake-backend';
import { startUpstream, type TestUpstream } from './support/upstream';
import { waitFor } from './support/wait';

// Runtime evidence (issue 18): per row, time to first and last byte as histograms and the exchanges
// the client left; per batch, the requests the upstream never answered. Timings and counts only.

const total = (wire: WireHistogram): number => LatencyHistogram.fromWire(wire).total;
/** At least `ms`, as a histogram can tell it (its value may sit below the duration by the relative error). */
const atLeast = (ms: number): number => ms * (1 - HISTOGRAM_RELATIVE_ERROR) - 0.01;

function failures(backend: FakeBackend): WireFailure[] {
  return backend.batches().flatMap((batch: BatchMessage) => batch.failures ?? []);
}

/** A GET that the client may give up on (`req.destroy()`); `closed` settles once it is over. */
function open(url: string): { req: http.ClientRequest; closed: Promise<void> } {
  const req = http.get(url, (res) => res.on('error', () => undefined));
  req.on('error', () => undefined);
  return { req, closed: new Promise((resolve) => req.on('close', () => resolve())) };
}

describe('runtime evidence', () => {
  let upstream: TestUpstream | undefined;
  let backend: FakeBackend;
  beforeEach(async () => {
    backend = await FakeBackend.start({ token: 't0k' });
  });
  afterEach(async () => {
    await upstream?.close();
    upstream = undefined;
    await backend.stop();
  });
  /** An agent in front of `upstreamUrl` whose rows all go out in one batch, when it is closed. */
  const agentFor = (upstreamUrl: string) =>
    startTestAgent({ upstream: upstreamUrl, backend: backend.url, token: 't0k', tuning: { flushIntervalMs: 60_000 } });

  it('times each row to its first and last byte, as the upstream answered', async () => {
    // Headers after 60 ms, the body's end 80 ms later: the agent cannot see either sooner.
    upstream = await startUpstream((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        setTimeout(() => res.end('{"ok":true}'), 80);
      }, 60);
    });
    const agent = await agentFor(upstream.url);
    try {
      for (let i = 0; i < 3; i++) expect((await fetch(`${agent.proxyUrl}/slow/${1000 + i}`)).status).toBe(200);
      await agent.close();
      // One row, or two when the sampler shaped the first response and not the others.
      const rows = backend.observations();
      expect(rows.map((row) => [row.path, row.status])).toEqual(rows.map(() => ['/slow/{slowId}', 200]));
      expect(rows.reduce((sum, row) => sum + row.count, 0)).toBe(3);
      for (const row of rows) expect(Object.keys(row.runtime ?? {}).sort()).toEqual(['ttfb', 'ttlb']);
      const ttfb = new LatencyHistogram();
      const ttlb = new LatencyHistogram();
      for (const row of rows) {
        ttfb.addWire(row.runtime!.ttfb);
        ttlb.addWire(row.runtime!.ttlb);
      }
      expect([ttfb.total, ttlb.total]).toEqual([3, 3]);
      expect(ttfb.quantile(0)).toBeGreaterThanOrEqual(atLeast(60));
      expect(ttlb.quantile(0)).toBeGreaterThanOrEqual(atLeast(140));
      expect(failures(backend)).toEqual([]);
    } finally {
      await agent.close();
    }
  });

  it('counts what the agent answered for a failed upstream apart from the rows, under the template', async () => {
    const closed = await startUpstream(() => undefined);
    await closed.close();
    const agent = await agentFor(closed.url);
    try {
      const id = '3f2a9c1e-7b4d-4e8a-9c0f-1d2e3f4a5b6c';
      for (let i = 0; i < 2; i++) expect((await fetch(`${agent.proxyUrl}/orders/${id}?token=secret`)).status).toBe(503);
      await agent.close();
      expect(backend.observations()).toEqual([]);
      expect(failures(backend)).toEqual([
        {
          method: 'GET',
          path: '/orders/{orderId}',
          status: 503,
          count: 2,
          firstSeen: expect.any(String),
          lastSeen: expect.any(String),
          elapsed: expect.any(Object),
        },
      ]);
      expect(total(failures(backend)[0]!.elapsed)).toBe(2);
      // Counts and timings only: neither the identifier nor the query value left the agent.
      const sent = backend.frames.join('\n');
      expect(sent).not.toContain(id);
      expect(sent).not.toContain('secret');
    } finally {
      await agent.close();
    }
  });

  it('counts the exchanges the client left: on the row once the response began, as a failure before', async () => {
    const held: http.ServerResponse[] = [];
    let aborted = 0;
    upstream = await startUpstream((req, res) => {
      held.push(res);
      // The agent aborts the upstream request right after it counted the exchange the client left.
      res.on('close', () => aborted++);
      // `/started` answers its headers at once and never ends; `/never` answers nothing.
      if (req.url === '/started') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.flushHeaders();
      }
    });
    const agent = await agentFor(upstream.url);
    try {
      // Left once its headers came.
      const started = open(`${agent.proxyUrl}/started`);
      started.req.on('response', () => started.req.destroy());
      await started.closed;
      // Left while the upstream holds it, before any answer.
      const never = open(`${agent.proxyUrl}/never`);
      await waitFor('the upstream to hold both requests', () => held.length >= 2);
      never.req.destroy();
      await never.closed;
      await waitFor('the agent to abort both upstream requests', () => aborted >= 2);
      await agent.close();
      const [row] = backend.observations();
      expect(row).toMatchObject({ path: '/started', status: 200, count: 1 });
      expect(row?.runtime?.clientLeft).toBe(1);
      expect(total(row!.runtime!.ttfb)).toBe(1);
      expect(row?.runtime?.ttlb).toEqual({});
      expect(failures(backend)).toEqual([expect.objectContaining({ path: '/never', status: 0, count: 1 })]);
    } finally {
      for (const res of held) res.destroy();
      await agent.close();
    }
  });
});
