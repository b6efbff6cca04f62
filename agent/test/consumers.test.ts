/**
 * Consumers (issue 19): the agent names each request's consumer by pseudonym from a bearer JWT claim,
 * an API-key header or the client certificate's subject; the values themselves (planted canaries)
 * never reach a frame or a log line. Pseudonyms are stable across restarts with one key, differ
 * between projects, and a row names 64 consumers at most (the rest counted as overflow).
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { MAX_CONSUMERS_PER_ROW, type WireObservation } from '@spectator/shared';
// The certificate helper alone: mockttp's main module pulls in ESM-only packages jest cannot require.
import { generateCACertificate } from 'mockttp/dist/util/certificates';
import { consumerId, parseConsumerSources, subjectLine } from '../src/observe/consumers';
import { runConsumerId } from '../src/consumer-id';
import { startTestAgent } from './support/agent';
import { FakeBackend } from './support/fake-backend';
import { sendJson, startUpstream, type TestUpstream } from './support/upstream';

const KEY = 'consumer-test-key-7d1f0c9a2b';
const PROJECT = 'shop';
const CANARY = {
  sub: 'canary-jwt-sub-4f2a',
  clientId: 'canary-client-id-8b3c',
  signature: 'canary-jwt-signature-2b8d',
  apiKey: 'canary-api-key-1d9e',
  certName: 'canary-cert-cn-6a7f',
  key: KEY,
};

const base64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A JWT as a client sends it (unsigned here: the agent decodes, it never verifies). */
const JWT = `${base64url({ alg: 'RS256', typ: 'JWT' })}.${base64url({ sub: CANARY.sub, client_id: CANARY.clientId, iat: 1 })}.${CANARY.signature}`;

let upstream: TestUpstream;
let backend: FakeBackend;

beforeAll(async () => {
  upstream = await startUpstream((_req, res) => sendJson(res, 200, { id: 1 }));
  backend = await FakeBackend.start();
});
afterAll(async () => {
  await upstream.close();
  await backend.stop();
});

/** Runs an agent with these consumer sources, sends `requests` (headers each), and returns what it sent and logged. */
async function observe(
  sources: string,
  requests: Array<Record<string, string>>,
  project = PROJECT,
): Promise<{ rows: WireObservation[]; sent: string; logged: string; overflowMetric: number }> {
  const before = backend.frames.length;
  const seen = backend.observations().length;
  const agent = await startTestAgent({
    upstream: upstream.url,
    backend: backend.url,
    token: 't',
    consumers: { sources: parseConsumerSources(sources), key: KEY, project },
  });
  try {
    for (const headers of requests) await fetch(`${agent.proxyUrl}/orders`, { headers }).then((r) => r.text());
  } finally {
    // Closing flushes the rows and waits for the backend's acknowledgement.
    await agent.close();
  }
  return {
    rows: backend.observations().slice(seen),
    sent: backend.frames.slice(before).join('\n'),
    logged: agent.logs.text,
    overflowMetric: agent.metrics.get('consumers_overflow_total'),
  };
}

/** Calls per pseudonym over rows. */
function callsOf(rows: readonly WireObservation[]): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const row of rows) for (const c of row.consumers ?? []) calls[c.id] = (calls[c.id] ?? 0) + c.count;
  return calls;
}

function expectNoCanary(sent: string, logged: string): void {
  const planted = { ...CANARY, jwt: JWT, payload: JWT.split('.')[1] as string };
  for (const [where, value] of Object.entries(planted)) {
    expect({ where, inFrames: sent.includes(value) }).toEqual({ where, inFrames: false });
    expect({ where, inLogs: logged.includes(value) }).toEqual({ where, inLogs: false });
  }
}

describe('consumers', () => {
  it('names consumers by a JWT claim, else an API-key header, and sends pseudonyms only', async () => {
    const { rows, sent, logged } = await observe('jwt:client_id,header:x-api-key', [
      { authorization: `Bearer ${JWT}` },
      { authorization: `Bearer ${JWT}`, 'x-api-key': CANARY.apiKey },
      { authorization: `Bearer ${JWT}` },
      { 'x-api-key': CANARY.apiKey },
      { 'x-api-key': CANARY.apiKey },
      {},
    ]);
    expect(rows.reduce((sum, row) => sum + row.count, 0)).toBe(6);
    // The claim wins where both are sent; the request without either is counted, unnamed.
    expect(callsOf(rows)).toEqual({
      [consumerId(KEY, PROJECT, CANARY.clientId)]: 3,
      [consumerId(KEY, PROJECT, CANARY.apiKey)]: 2,
    });
    for (const row of rows) for (const c of row.consumers ?? []) expect(c.id).toMatch(/^[0-9a-f]{16}$/);
    expect(logged).toContain('agent started');
    expectNoCanary(sent, logged);
  });

  it('keeps pseudonyms across restarts with one key, and gives another project other ones', async () => {
    const requests = [{ authorization: `Bearer ${JWT}` }];
    const first = callsOf((await observe('jwt:sub', requests)).rows);
    const again = callsOf((await observe('jwt:sub', requests)).rows);
    const other = await observe('jwt:sub', requests, 'another-project');
    expect(first).toEqual({ [consumerId(KEY, PROJECT, CANARY.sub)]: 1 });
    expect(again).toEqual(first);
    expect(Object.keys(callsOf(other.rows))).toEqual([consumerId(KEY, 'another-project', CANARY.sub)]);
    expect(Object.keys(callsOf(other.rows))).not.toEqual(Object.keys(first));
    expectNoCanary(other.sent, other.logged);
  });

  it('names 64 consumers of a row at most and counts the calls of the rest as overflow', async () => {
    const keys = Array.from({ length: MAX_CONSUMERS_PER_ROW + 6 }, (_, i) => ({
      'x-api-key': `${CANARY.apiKey}-${i}`,
    }));
    const { rows, sent, overflowMetric } = await observe('header:x-api-key', [
      ...keys,
      keys[0] as Record<string, string>,
    ]);
    const named = rows.reduce((sum, row) => sum + (row.consumers?.length ?? 0), 0);
    const overflow = rows.reduce((sum, row) => sum + (row.consumersOverflow ?? 0), 0);
    const calls = Object.values(callsOf(rows)).reduce((sum, n) => sum + n, 0);
    // Rows may be split over batches; each names at most 64, and nothing is lost.
    for (const row of rows) expect(row.consumers?.length ?? 0).toBeLessThanOrEqual(MAX_CONSUMERS_PER_ROW);
    expect(calls + overflow).toBe(keys.length + 1);
    expect(named).toBeGreaterThanOrEqual(MAX_CONSUMERS_PER_ROW);
    // The metric counts the calls the rows send as overflow.
    expect(overflowMetric).toBe(overflow);
    expect(sent).not.toContain(CANARY.apiKey);
  });

  it('computes the same pseudonym locally with consumer-id, the value given or read from standard input', async () => {
    let out = '';
    const sink = { write: (text: string) => (out += text) };
    const env = { SPECTATOR_CONSUMER_KEY: KEY, SPECTATOR_PROJECT: PROJECT };
    expect(await runConsumerId([CANARY.apiKey], env, sink, sink)).toBe(0);
    const { Readable } = await import('node:stream');
    expect(await runConsumerId(['-'], env, sink, sink, Readable.from([`${CANARY.clientId}\n`]))).toBe(0);
    expect(out).toBe(`${consumerId(KEY, PROJECT, CANARY.apiKey)}\n${consumerId(KEY, PROJECT, CANARY.clientId)}\n`);
    let problems = '';
    expect(await runConsumerId([], {}, sink, { write: (text: string) => (problems += text) })).toBe(2);
    expect(problems).toContain('SPECTATOR_CONSUMER_KEY');
    expect(problems).toContain('--project');
  });
});

describe('consumers by client certificate (cert:subject)', () => {
  let dir: string;
  let server: { cert: string; key: string };
  let client: { cert: string; key: string };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-consumers-'));
    [server, client] = (await Promise.all([
      generateCACertificate({ subject: { commonName: 'localhost' }, bits: 2048 }),
      generateCACertificate({ subject: { commonName: CANARY.certName, organizationName: 'Canary Org' }, bits: 2048 }),
    ])) as [{ cert: string; key: string }, { cert: string; key: string }];
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('asks for a client certificate when it terminates TLS and names the consumer by its subject', async () => {
    const certPath = path.join(dir, 'server.crt');
    const keyPath = path.join(dir, 'server.key');
    await writeFile(certPath, server.cert);
    await writeFile(keyPath, server.key);
    const seen = backend.observations().length;
    const before = backend.frames.length;
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 't',
      tls: { certPath, keyPath },
      consumers: { sources: parseConsumerSources('cert:subject'), key: KEY, project: PROJECT },
    });
    const get = (withCertificate: boolean): Promise<number> =>
      new Promise((resolve, reject) => {
        https
          .get(
            `${agent.proxyUrl}/orders`,
            {
              ca: server.cert,
              servername: 'localhost',
              agent: false,
              ...(withCertificate ? { cert: client.cert, key: client.key } : {}),
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode ?? 0));
            },
          )
          .on('error', reject);
      });
    try {
      expect(await get(true)).toBe(200);
      expect(await get(true)).toBe(200);
      expect(await get(false)).toBe(200); // without a certificate: served, counted, unnamed
    } finally {
      await agent.close();
    }
    expect(
      backend
        .observations()
        .slice(seen)
        .reduce((sum, o) => sum + o.count, 0),
    ).toBe(3);
    const subject = subjectLine(new X509Certificate(client.cert).subject);
    expect(subject).toContain(`CN=${CANARY.certName}`);
    expect(callsOf(backend.observations().slice(seen))).toEqual({ [consumerId(KEY, PROJECT, subject)]: 2 });
    expectNoCanary(backend.frames.slice(before).join('\n'), agent.logs.text);
  });
});
