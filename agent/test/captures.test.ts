import type { CaptureMessage } from '@spectator/shared';
import { startTestAgent } from './support/agent';
import { FakeBackend } from './support/fake-backend';
import { postsApi, startUpstream } from './support/upstream';
import { waitFor } from './support/wait';

const captureMessages = (backend: FakeBackend) =>
  backend.messages.filter((m): m is CaptureMessage => m.type === 'capture');

describe('captures', () => {
  let backend: FakeBackend;
  beforeEach(async () => {
    backend = await FakeBackend.start();
  });
  afterEach(async () => {
    await backend.stop();
  });

  it('starts a new capture when the upstream goes away and comes back, seen by the probe without any request', async () => {
    const upstream = await startUpstream(postsApi());
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    let restarted = upstream;
    try {
      const first = agent.captureId();
      await waitFor('upstream seen up', () => agent.metrics.get('upstream_up') === 1);
      await fetch(`${agent.proxyUrl}/posts`).then((r) => r.text());
      await upstream.close();
      await waitFor('upstream seen down', () => agent.metrics.get('upstream_up') === 0);
      restarted = await startUpstream(postsApi(), { port: upstream.port });
      await waitFor('new capture', () => agent.captureId() !== first);
      await waitFor('capture message', () => captureMessages(backend).length === 1);
      expect(captureMessages(backend)[0]).toMatchObject({
        capture: { id: agent.captureId(), reason: 'upstream-restart' },
        previous: { id: first },
      });
      await fetch(`${agent.proxyUrl}/posts`).then((r) => r.text());
      await waitFor(
        'traffic in both captures',
        () => backend.observations().filter((o) => o.path === '/posts').length === 2,
      );
      expect(new Set(backend.observations().map((o) => o.captureId))).toEqual(new Set([first, agent.captureId()]));
    } finally {
      await agent.close();
      await restarted.close();
    }
  });

  it('does not start a capture when the upstream comes up for the first time after the agent', async () => {
    const later = await startUpstream(postsApi());
    await later.close();
    const agent = await startTestAgent({ upstream: later.url, backend: backend.url, token: 'x' });
    // Before the app ever answered, the agent is waiting for it; nothing "stopped".
    await waitFor('waiting logged', () => agent.logs.find('waiting for the app to answer').length === 1);
    const upstream = await startUpstream(postsApi(), { port: later.port });
    try {
      const first = agent.captureId();
      await waitFor('upstream seen up', () => agent.metrics.get('upstream_up') === 1);
      expect(agent.captureId()).toBe(first);
      expect(agent.logs.find('upstream stopped answering')).toEqual([]);
      await upstream.close();
      await waitFor('stop logged', () => agent.logs.find('upstream stopped answering').length === 1);
    } finally {
      await agent.close();
      await upstream.close();
    }
  });

  it('runs the wrapped command with PORT, restarts it when it exits, and starts a new capture each time', async () => {
    // A tiny app: serves JSON on $PORT; GET /exit makes it exit.
    const app = `
      const http = require('node:http');
      http.createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ pid: process.pid, arg: process.argv[1] }));
        if (req.url === '/exit') setTimeout(() => process.exit(3), 10);
      }).listen(Number(process.env.PORT), '127.0.0.1');`;
    const agent = await startTestAgent({
      backend: backend.url,
      token: 'x',
      command: [process.execPath, '-e', app, 'port={PORT}'],
    });
    const get = (p: string) =>
      fetch(`${agent.proxyUrl}${p}`).then((r) =>
        r.status === 200 ? (r.json() as Promise<{ pid: number; arg: string }>) : null,
      );
    try {
      const first = await waitFor('app up', () => get('/hello').catch(() => null));
      expect(first.arg).toBe(`port=${new URL(agent.upstreamUrl).port}`);
      const firstCapture = agent.captureId();

      await get('/exit');
      const second = await waitFor('app restarted', async () => {
        const answer = await get('/hello').catch(() => null);
        return answer && answer.pid !== first.pid ? answer : null;
      });
      expect(agent.captureId()).not.toBe(firstCapture);

      await agent.restartCommand(); // what SIGHUP does
      await waitFor('app restarted again', async () => {
        const answer = await get('/hello').catch(() => null);
        return answer && answer.pid !== second.pid;
      });
      await waitFor('two capture messages', () => captureMessages(backend).length === 2);
      expect(captureMessages(backend).map((m) => m.capture.reason)).toEqual(['command-restart', 'command-restart']);
      expect(captureMessages(backend)[0]!.previous?.id).toBe(firstCapture);
    } finally {
      await agent.close();
    }
    // Closing stops the app too.
    await expect(fetch(`${agent.upstreamUrl}/hello`)).rejects.toThrow();
    // Four waits of up to 5 s each and three app processes started: 20 s, the sum of the waits, ran
    // out in a fresh-clone CI run beside the other projects' suites; each wait still bounds its step.
  }, 120_000);
});
