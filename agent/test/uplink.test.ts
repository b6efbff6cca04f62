import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { WireCapture } from '@spectator/shared';
import { parseBackend } from '../src/config';
import { createRootLogger } from '../src/log';
import { Metrics } from '../src/metrics';
import { Spool } from '../src/uplink/spool';
import { Uplink } from '../src/uplink/uplink';
import { startTestAgent } from './support/agent';
import { FakeBackend } from './support/fake-backend';
import { postsApi, sendJson, startUpstream, type TestUpstream } from './support/upstream';
import { waitFor } from './support/wait';

describe('uplink to the backend', () => {
  let upstream: TestUpstream;
  let backend: FakeBackend;
  beforeEach(async () => {
    upstream = await startUpstream(postsApi());
  });
  afterEach(async () => {
    await upstream.close();
    await backend.stop();
  });

  const post = (proxyUrl: string, i: number) =>
    fetch(`${proxyUrl}/posts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: `t${i}`, author: 'a' }),
    }).then((r) => {
      expect(r.status).toBe(201);
      return r.arrayBuffer();
    });

  it('delivers every observation exactly once (after dedupe by batch id) when the backend is killed and restarted mid-run', async () => {
    backend = await FakeBackend.start({ token: 'secret' });
    backend.ack = false; // batches stay unacknowledged: the agent must resend them after the restart
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'secret',
      tuning: { flushIntervalMs: 50 },
    });
    try {
      for (let i = 0; i < 40; i++) await post(agent.proxyUrl, i);
      await waitFor('unacknowledged batches', () => backend.batches().length >= 1);
      await backend.stop();
      for (let i = 40; i < 80; i++) await post(agent.proxyUrl, i); // proxying goes on while the backend is gone
      await waitFor('disconnect noticed', () => agent.metrics.get('backend_connected') === 0);
      backend.ack = true;
      await backend.restart();
      await waitFor(
        'spool drained',
        () => agent.metrics.get('backend_connected') === 1 && agent.metrics.get('batches_spooled') === 0,
        10_000,
      );
      for (let i = 80; i < 120; i++) await post(agent.proxyUrl, i);
    } finally {
      await agent.close();
    }
    const ids = backend.batches().map((b) => b.batchId);
    expect(new Set(ids).size).toBeLessThan(ids.length); // some batches really were sent twice
    expect(backend.count((o) => o.method === 'POST' && o.path === '/posts')).toBe(120);
    expect(agent.metrics.get('batches_spooled')).toBe(0);
    expect(backend.authorizations.every((a) => a === 'Bearer secret')).toBe(true);
  }, 120_000);

  it("sends a stopping agent's capture end after the capture's spooled batches (the backend answers it once they are folded)", async () => {
    backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      tuning: { flushIntervalMs: 50, ackWaitMs: 10_000 },
    });
    let closing: Promise<void> | null = null;
    try {
      await waitFor('connected', () => agent.metrics.get('backend_connected') === 1);
      await backend.stop();
      await waitFor('disconnect noticed', () => agent.metrics.get('backend_connected') === 0);
      for (let i = 0; i < 5; i++) await post(agent.proxyUrl, i);
      await waitFor('batches spooled', () => agent.metrics.get('batches_spooled') >= 1);
      // Stopping while disconnected: the end is spooled after the batches; both go out once connected again.
      closing = agent.close();
      await backend.restart();
      await closing;
    } finally {
      await (closing ?? agent.close());
    }
    const sent = backend.messages
      .filter((m) => m.type === 'batch' || m.type === 'capture-end')
      .map((m) => (m.type === 'batch' ? `batch ${m.captureId}` : `capture-end ${m.captureId}`));
    expect(sent.filter((m) => m.startsWith('batch')).length).toBeGreaterThan(0);
    expect(sent.at(-1)).toBe(`capture-end ${agent.captureId()}`);
    expect(backend.count((o) => o.method === 'POST' && o.path === '/posts')).toBe(5);
    expect(agent.metrics.get('batches_spooled')).toBe(0);
  }, 120_000);

  it("sends a capture's end after every spooled batch, an earlier capture's too (one batch in flight at a time)", async () => {
    backend = await FakeBackend.start();
    await backend.stop();
    const log = createRootLogger('silent');
    const metrics = new Metrics();
    const spool = new Spool({ dir: null, log, metrics });
    const capture = (reason: WireCapture['reason']): WireCapture => ({
      id: randomUUID(),
      startedAt: new Date().toISOString(),
      reason,
    });
    const [before, after] = [capture('agent-start'), capture('command-restart')];
    const uplink = new Uplink({
      url: parseBackend(backend.url),
      token: 'secret',
      agentId: 'restarting',
      agentVersion: '0.0.0-test',
      environment: { kind: 'ci', pullRequest: '1' },
      spool,
      log,
      metrics,
      helloState: () => ({ capture: after, rules: [] }),
      onTemplates: () => undefined,
      window: 1,
      backoffMinMs: 10,
      backoffMaxMs: 50,
    });
    try {
      // The restart's capture has no batch of its own; the one before it has three still spooled.
      const row = {
        method: 'GET',
        path: '/posts',
        status: 200,
        query: [],
        requestHeaders: [],
        responseHeaders: [],
        request: null,
        response: null,
        count: 1,
        firstSeen: new Date().toISOString(),
        lastSeen: new Date().toISOString(),
      };
      for (let i = 0; i < 3; i++) uplink.sendBatch(before, [row], new Map());
      uplink.endCapture(after, new Date().toISOString());
      uplink.start();
      await backend.restart();
      expect(await uplink.waitForAcks(10_000)).toBe(true);
    } finally {
      await uplink.close();
    }
    const sent = backend.messages
      .filter((m) => m.type === 'batch' || m.type === 'capture-end')
      .map((m) => `${m.type} ${m.captureId === before.id ? 'before' : 'after'}`);
    expect(sent).toEqual(['batch before', 'batch before', 'batch before', 'capture-end after']);
  }, 120_000);

  it('keeps a batch the backend cannot store now and resends it with backoff; drops, counts and logs a refusal', async () => {
    backend = await FakeBackend.start();
    // The database is away for the first three tries of every batch; one batch is refused for good.
    const tries = new Map<string, number>();
    let refusedForGood: string | null = null;
    backend.refuse = (batch) => {
      if (refusedForGood === null) refusedForGood = batch.batchId;
      if (batch.batchId === refusedForGood)
        return {
          type: 'error',
          code: 'invalid-message',
          message: 'observations[0].status must be an integer 100-599',
          retryable: false,
          batchId: batch.batchId,
        };
      const n = (tries.get(batch.batchId) ?? 0) + 1;
      tries.set(batch.batchId, n);
      return n <= 3
        ? {
            type: 'error',
            code: 'unavailable',
            message: 'the backend could not store this message now; resend later',
            retryable: true,
            batchId: batch.batchId,
          }
        : null;
    };
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    try {
      await waitFor('connected', () => agent.metrics.get('backend_connected') === 1);
      await post(agent.proxyUrl, 0);
      await waitFor(
        'the first batch refused',
        () => refusedForGood !== null && agent.metrics.get('batches_spooled') === 0,
      );
      for (let i = 1; i <= 20; i++) await post(agent.proxyUrl, i);
      await waitFor(
        'every other batch stored',
        () => backend.count((o) => o.method === 'POST') === 20 && agent.metrics.get('batches_spooled') === 0,
        10_000,
      );
    } finally {
      await agent.close();
    }
    expect(agent.metrics.get('batches_rejected_total')).toBe(1);
    expect(agent.metrics.get('batches_retried_total')).toBe(3 * tries.size);
    expect(agent.metrics.get('backend_connected')).toBe(0); // closed by agent.close(), never dropped by the errors
    expect(backend.authorizations).toHaveLength(1);
    expect(agent.logs.find('backend refused a batch; it is dropped')).toEqual([
      expect.objectContaining({ code: 'invalid-message', batchId: refusedForGood, observations: 1 }),
    ]);
    // One warning for the outage, not one per retry.
    expect(agent.logs.find('backend cannot store batches now').length).toBeLessThanOrEqual(tries.size);
  }, 120_000);

  it('keeps its agent id with --spool, so after a restart it may resume the captures it opened', async () => {
    // The backend binds a capture to the agent that opened it (issue 15): a restarted agent with a
    // new id would have its spooled batches of an announced capture refused.
    const spoolDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-spool-'));
    backend = await FakeBackend.start();
    backend.ack = false;
    try {
      const first = await startTestAgent({
        upstream: upstream.url,
        backend: backend.url,
        token: 'x',
        spoolDir,
        tuning: { ackWaitMs: 100, flushIntervalMs: 50 },
      });
      await post(first.proxyUrl, 0);
      await waitFor('a batch sent', () => backend.batches().length >= 1);
      await first.close();
      backend.ack = true;
      const second = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x', spoolDir });
      await waitFor(
        'spool drained',
        () => second.metrics.get('batches_spooled') === 0 && second.metrics.get('backend_connected') === 1,
        10_000,
      );
      await second.close();
      const ids = backend.messages.flatMap((m) => (m.type === 'hello' ? [m.agentId] : []));
      expect(ids.length).toBeGreaterThanOrEqual(2);
      expect(new Set(ids).size).toBe(1);
      // Without a spool each run is a new agent.
      const third = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
      await waitFor('hello', () => backend.messages.filter((m) => m.type === 'hello').length > ids.length);
      await third.close();
      const last = backend.messages.filter((m) => m.type === 'hello').at(-1);
      expect(last?.type === 'hello' && last.agentId).not.toBe(ids[0]);
    } finally {
      fs.rmSync(spoolDir, { recursive: true, force: true });
    }
  });

  it('keeps unacknowledged batches on disk with --spool and resends them after an agent restart', async () => {
    const spoolDir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-spool-'));
    backend = await FakeBackend.start();
    await backend.stop(); // the backend is down for the whole first run
    const first = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      spoolDir,
      tuning: { ackWaitMs: 100 },
    });
    const firstCapture = first.captureId();
    for (let i = 0; i < 5; i++) await post(first.proxyUrl, i);
    await first.close();
    expect(fs.readdirSync(spoolDir).filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);

    await backend.restart();
    const second = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x', spoolDir });
    try {
      await waitFor('spooled batches resent', () => backend.count((o) => o.method === 'POST') === 5);
      // The earlier run's capture is announced before its batches.
      const announced = backend.messages.findIndex((m) => m.type === 'capture' && m.capture.id === firstCapture);
      const firstBatch = backend.messages.findIndex((m) => m.type === 'batch' && m.captureId === firstCapture);
      expect(announced).toBeGreaterThan(-1);
      expect(announced).toBeLessThan(firstBatch);
      await waitFor(
        'spool files removed',
        () => fs.readdirSync(spoolDir).filter((f) => f.endsWith('.json')).length === 0,
      );
    } finally {
      await second.close();
      fs.rmSync(spoolDir, { recursive: true, force: true });
    }
  });

  it('keeps proxying when the backend refuses the token, and says so in its log and metrics', async () => {
    backend = await FakeBackend.start({ token: 'right' });
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'wrong-token-value' });
    try {
      for (let i = 0; i < 3; i++) await post(agent.proxyUrl, i);
      await waitFor('several refused attempts', () => agent.metrics.get('backend_connect_failures_total') >= 3);
      expect(agent.metrics.get('backend_connected')).toBe(0);
      expect(
        agent.logs.find('backend refused the connection with HTTP 401').filter((l) => l.level === 40),
      ).toHaveLength(1); // warned once, not per retry
      expect(agent.logs.text).not.toContain('wrong-token-value');
    } finally {
      await agent.close();
    }
  });

  it('detects a backend that stops answering by heartbeat, reconnects, and keeps proxying meanwhile', async () => {
    backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { heartbeatMs: 100 },
    });
    try {
      await waitFor('connected', () => agent.metrics.get('backend_connected') === 1);
      backend.freeze();
      await post(agent.proxyUrl, 1);
      await waitFor('heartbeat gives up', () => agent.logs.find('stopped answering heartbeats').length > 0);
      backend.ack = true;
      await waitFor(
        'reconnected',
        () => backend.authorizations.length >= 2 && agent.metrics.get('backend_connected') === 1,
      );
      await waitFor('observation delivered', () => backend.count((o) => o.method === 'POST') === 1);
    } finally {
      await agent.close();
    }
  });

  it('uses the documented templates sent in welcome and templates messages', async () => {
    await upstream.close();
    upstream = await startUpstream((_req, res) => sendJson(res, 200, {}));
    backend = await FakeBackend.start({ templates: ['/articles/{slug}'] });
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    try {
      await waitFor('connected', () => agent.metrics.get('backend_connected') === 1);
      await fetch(`${agent.proxyUrl}/articles/hello-world`).then((r) => r.text());
      await waitFor('templated', () => backend.count((o) => o.path === '/articles/{slug}') === 1);
      backend.broadcast({ type: 'templates', templates: ['/articles/{slug}', '/pages/{pageName}'] });
      await waitFor('pages template used', async () => {
        await fetch(`${agent.proxyUrl}/pages/about`).then((r) => r.text());
        return backend.count((o) => o.path === '/pages/{pageName}') > 0;
      });
    } finally {
      await agent.close();
    }
  });
});
