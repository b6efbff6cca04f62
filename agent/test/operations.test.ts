import http from 'node:http';
import { startTestAgent } from './support/agent';
import { proxyUrlOf, runCli } from './support/cli';
import { FakeBackend } from './support/fake-backend';
import { sendJson, startUpstream } from './support/upstream';
import { waitFor } from './support/wait';

describe('admin port', () => {
  it('serves /healthz, /readyz (with reasons) and Prometheus /metrics', async () => {
    const upstream = await startUpstream((_req, res) => sendJson(res, 200, { ok: true }));
    const agent = await startTestAgent({ upstream: upstream.url, admin: '127.0.0.1:0' });
    try {
      expect(agent.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await fetch(`${agent.adminUrl}/healthz`).then((r) => r.json())).toEqual({ status: 'ok' });
      await waitFor('ready', async () => (await fetch(`${agent.adminUrl}/readyz`)).status === 200);
      await fetch(`${agent.proxyUrl}/x`).then((r) => r.text());
      await waitFor('observed', () => agent.metrics.get('observed_total') === 1);
      const metrics = await fetch(`${agent.adminUrl}/metrics`);
      expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await metrics.text();
      for (const name of [
        'requests_total 1',
        'observed_total 1',
        'captured_total 1', // its earlier name, still served
        'dropped_total 0',
        'queue_depth 0',
        'batches_sent_total',
        'batches_acked_total',
        'batches_spooled',
        'backend_connected 0',
      ]) {
        expect(text).toContain(`spectator_agent_${name}`);
      }
      expect(text).toMatch(/# TYPE spectator_agent_requests_total counter/);

      await upstream.close();
      await waitFor('not ready', async () => (await fetch(`${agent.adminUrl}/readyz`)).status === 503);
      expect(await fetch(`${agent.adminUrl}/readyz`).then((r) => r.json())).toEqual({
        status: 'not ready',
        reasons: ['upstream down'],
      });
      expect((await fetch(`${agent.adminUrl}/nope`)).status).toBe(404);
    } finally {
      await agent.close();
    }
  });
});

describe('graceful close', () => {
  it('stops accepting, finishes the in-flight request, flushes and waits for the last ack', async () => {
    let release: () => void = () => undefined;
    const upstream = await startUpstream((_req, res) => {
      release = () => sendJson(res, 200, { late: true });
    });
    const backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { flushIntervalMs: 60_000 },
    });
    try {
      await waitFor('connected', () => agent.metrics.get('backend_connected') === 1);
      const inFlight = fetch(`${agent.proxyUrl}/slow`).then((r) => r.json());
      await waitFor('request at the upstream', () => upstream.received.length === 1);
      const closing = agent.close();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await expect(fetch(`${agent.proxyUrl}/another`)).rejects.toThrow(); // no longer accepting
      release();
      expect(await inFlight).toEqual({ late: true });
      await closing;
      expect(backend.count((o) => o.path === '/slow')).toBe(1); // flushed and acknowledged before close resolved
      expect(agent.metrics.get('batches_acked_total')).toBe(1);
      expect(backend.messages.at(-1)).toMatchObject({ type: 'capture-end', captureId: agent.captureId() });
    } finally {
      await upstream.close();
      await backend.stop();
    }
  });
});

describe('spectator-agent CLI', () => {
  it('--help documents every option and its environment variable', async () => {
    const { code, stdout } = await runCli(['--help']);
    expect(code).toBe(0);
    for (const text of [
      '--listen',
      'SPECTATOR_LISTEN',
      '--upstream',
      '--backend',
      'SPECTATOR_BACKEND_URL',
      '--token',
      '--env',
      '--pr',
      '--commit',
      '--build',
      '--config',
      '--admin',
      '--spool',
      '--body-limit',
      '--capture-limit',
      '-- <command>',
    ]) {
      expect(stdout).toContain(text);
    }
  }, 120_000);

  it('--version prints the package version', async () => {
    const { code, stdout } = await runCli(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 120_000);

  it('stops at start naming every bad option', async () => {
    const { code, stderr } = await runCli(['--listen', 'nowhere', '--env', 'prod', '--backend', 'ftp://x', '--bogus'], {
      SPECTATOR_CAPTURE_LIMIT: 'lots',
    });
    expect(code).toBe(2);
    for (const text of [
      '--listen (SPECTATOR_LISTEN): "nowhere"',
      '--env (SPECTATOR_ENV): "prod" must be one of local, ci, staging, production',
      '--backend (SPECTATOR_BACKEND_URL)',
      '--bogus: unknown option',
      // Read under its earlier name too (SPECTATOR_CAPTURE_LIMIT), and named with both.
      '--body-limit (SPECTATOR_BODY_LIMIT; formerly --capture-limit, SPECTATOR_CAPTURE_LIMIT): "lots"',
      '--upstream (SPECTATOR_UPSTREAM): required',
    ]) {
      expect(stderr).toContain(text);
    }
  }, 120_000);

  it('writes readable lines with --log-format pretty (JSON lines when stdout is not a terminal, by default)', async () => {
    const upstream = await startUpstream((_req, res) => sendJson(res, 200, { ok: true }));
    try {
      const { code, stdout } = await runCli(
        [
          '--upstream',
          upstream.url,
          '--listen',
          '127.0.0.1:0',
          '--config',
          '/nonexistent.yml',
          '--log-format',
          'pretty',
        ],
        {},
        async (child, out) => {
          await waitFor('agent started', () => out().includes('INFO: agent: agent started'), 15_000);
          child.kill('SIGTERM');
        },
      );
      expect(code).toBe(0);
      expect(stdout).toMatch(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: agent: agent started \{"proxy":"http:\/\/127\.0\.0\.1:\d+"/m,
      );
      expect(stdout.split('\n').filter((line) => line.startsWith('{'))).toEqual([]);
    } finally {
      await upstream.close();
    }
  }, 120_000);

  it('runs from environment variables and exits 0 on SIGTERM after a graceful stop', async () => {
    const upstream = await startUpstream((_req, res) => sendJson(res, 200, { ok: true }));
    try {
      const { code, stdout } = await runCli(
        [],
        { SPECTATOR_UPSTREAM: upstream.url, SPECTATOR_LISTEN: '127.0.0.1:0', SPECTATOR_CONFIG: '/nonexistent.yml' },
        async (child, out) => {
          const proxy = await proxyUrlOf(out);
          const answer = await new Promise<number>((resolve) =>
            http.get(`${proxy}/x`, (res) => resolve(res.statusCode ?? 0)).on('error', () => resolve(0)),
          );
          expect(answer).toBe(200);
          child.kill('SIGTERM');
        },
      );
      expect(code).toBe(0);
      expect(stdout).toContain('agent stopped');
    } finally {
      await upstream.close();
    }
  }, 120_000);
});
