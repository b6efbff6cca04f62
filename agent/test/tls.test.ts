import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import WebSocket, { WebSocketServer } from 'ws';
// The certificate helper alone: mockttp's main module pulls in ESM-only packages jest cannot require.
import { generateCACertificate } from 'mockttp/dist/util/certificates';
import { ConfigError } from '../src/config';
import { startTestAgent } from './support/agent';
import { sendJson, startUpstream, type TestUpstream } from './support/upstream';
import { waitFor } from './support/wait';

type Pair = { cert: string; key: string };

/** A GET over HTTPS to the agent on 127.0.0.1, trusting `ca`, on a fresh connection; with the certificate it presented. */
function get(url: string, ca: string): Promise<{ status: number; body: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const request = https.get(url, { ca, servername: 'localhost', agent: false }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint }));
    });
    request.on('error', reject);
  });
}

const fingerprintOf = (pair: Pair): string => new X509Certificate(pair.cert).fingerprint256;

describe('TLS: the proxy over HTTPS (--tls-cert, --tls-key) and https:// upstreams (--upstream-ca)', () => {
  let dir: string;
  let first: Pair;
  let second: Pair;
  let upstream: TestUpstream;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-tls-'));
    [first, second] = (await Promise.all(
      [0, 1].map(() => generateCACertificate({ subject: { commonName: 'localhost' }, bits: 2048 })),
    )) as [Pair, Pair];
    upstream = await startUpstream((req, res) => sendJson(res, 200, { proto: req.headers['x-forwarded-proto'] }));
  }, 120_000);
  afterAll(async () => {
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  async function files(name: string, pair: Pair): Promise<{ certPath: string; keyPath: string }> {
    const certPath = path.join(dir, `${name}.crt`);
    const keyPath = path.join(dir, `${name}.key`);
    await writeFile(certPath, pair.cert);
    await writeFile(keyPath, pair.key);
    return { certPath, keyPath };
  }

  it('serves HTTPS with the certificate, forwards to a plain HTTP upstream with x-forwarded-proto https, and captures', async () => {
    const agent = await startTestAgent({ upstream: upstream.url, tls: await files('serve', first) });
    try {
      expect(agent.proxyUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const answer = await get(`${agent.proxyUrl}/orders`, first.cert);
      expect(answer).toEqual({
        status: 200,
        body: JSON.stringify({ proto: 'https' }),
        fingerprint: fingerprintOf(first),
      });
      await waitFor('the exchange counted', () => agent.metrics.get('requests_total') === 1);
    } finally {
      await agent.close();
    }
  });

  it('picks up a rotated certificate for new connections, and keeps the last good one when the files are broken', async () => {
    const tls = await files('rotate', first);
    const agent = await startTestAgent({ upstream: upstream.url, tls });
    try {
      expect((await get(`${agent.proxyUrl}/`, first.cert)).fingerprint).toBe(fingerprintOf(first));
      await writeFile(tls.keyPath, second.key);
      await writeFile(tls.certPath, second.cert);
      await waitFor(
        'the new certificate served',
        async () =>
          (await get(`${agent.proxyUrl}/`, second.cert).catch(() => null))?.fingerprint === fingerprintOf(second),
        10_000,
        100,
      );

      // (A reload between the two writes above may have logged a mismatched pair already.)
      const reported = agent.logs.find('TLS certificate not reloaded').length;
      await writeFile(tls.certPath, 'not a certificate');
      await waitFor(
        'the broken file reported',
        () => agent.logs.find('TLS certificate not reloaded').length > reported,
        10_000,
        100,
      );
      expect((await get(`${agent.proxyUrl}/`, second.cert)).fingerprint).toBe(fingerprintOf(second));
      expect(agent.logs.text).not.toContain(second.key.split('\n')[1]);
    } finally {
      await agent.close();
    }
  });

  it('forwards to an https:// upstream signed by the CA of --upstream-ca (requests and WebSocket upgrades); without it the upstream is refused with 502', async () => {
    const secureUpstream = https.createServer({ cert: first.cert, key: first.key }, (req, res) =>
      sendJson(res, 200, { secure: true, path: req.url }),
    );
    const sockets = new WebSocketServer({ server: secureUpstream });
    sockets.on('connection', (socket) => socket.on('message', (data) => socket.send(`echo ${String(data)}`)));
    await new Promise<void>((resolve) => secureUpstream.listen(0, '127.0.0.1', resolve));
    const origin = `https://localhost:${(secureUpstream.address() as AddressInfo).port}`;
    const caPath = (await files('upstream-ca', first)).certPath;
    const trusting = await startTestAgent({ upstream: origin, upstreamCaPath: caPath });
    const untrusting = await startTestAgent({ upstream: origin });
    try {
      const answer = await fetch(`${trusting.proxyUrl}/items?x=1`);
      expect({ status: answer.status, body: await answer.json() }).toEqual({
        status: 200,
        body: { secure: true, path: '/items?x=1' },
      });
      const socket = new WebSocket(`${trusting.proxyUrl.replace('http', 'ws')}/live`);
      const echoed = await new Promise<string>((resolve, reject) => {
        socket.once('open', () => socket.send('hi'));
        socket.once('message', (data) => resolve(String(data)));
        socket.once('error', reject);
      });
      socket.close();
      expect(echoed).toBe('echo hi');

      const refused = await fetch(`${untrusting.proxyUrl}/items`);
      expect(refused.status).toBe(502);
    } finally {
      await trusting.close();
      await untrusting.close();
      sockets.close();
      secureUpstream.closeAllConnections();
      await new Promise((resolve) => secureUpstream.close(resolve));
    }
  });

  it('refuses to start with a file it cannot read or a certificate and key that do not match, naming the option', async () => {
    const good = await files('good', first);
    await expect(
      startTestAgent({ upstream: upstream.url, tls: { ...good, certPath: path.join(dir, 'missing.crt') } }),
    ).rejects.toThrow(
      new ConfigError([`--tls-cert (SPECTATOR_TLS_CERT): cannot read ${path.join(dir, 'missing.crt')}: ENOENT`]),
    );
    await expect(startTestAgent({ upstream: upstream.url, upstreamCaPath: good.keyPath })).rejects.toThrow(
      /^invalid agent configuration:\n {2}- --upstream-ca \(SPECTATOR_UPSTREAM_CA\): .*good\.key is not a PEM certificate/,
    );
    const mismatched = { certPath: good.certPath, keyPath: (await files('other', second)).keyPath };
    const error = await startTestAgent({ upstream: upstream.url, tls: mismatched }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems[0]).toMatch(
      /^--tls-cert\/--tls-key: .*good\.crt and .*other\.key are not a PEM certificate and its private key/,
    );
  });
});
