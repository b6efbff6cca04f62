/** Webhooks: registration, signed deliveries, retries with backoff, a durable log shared by replicas. */
import type { ProposalResponse, TokenResponse, WebhookDeliveryResponse, WebhookResponse } from '@spectator/shared';
import type { WebhookBody } from '../src/webhooks/transition-events';
import { createTestDatabase, startTestBackend, startTestReplica, type TestBackend, type TestDatabase } from './support';
import { eventually, startHookReceiver } from './support/evidence-helpers';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const SECRET = 'webhook-test-secret-42';
let count = 0;

/** Makes one `proposal.step` event (an approval) in a project. */
async function approveOne(backend: TestBackend, project: string): Promise<string> {
  const path = `/things${count++}`;
  const made = await backend.api<ProposalResponse>('POST', `/projects/${project}/proposals`, {
    title: `Plan ${path}`,
    endpoints: [{ method: 'GET', path, responses: [{ status: 204, contentType: 'application/json' }] }],
  });
  expect((await backend.api('POST', `/projects/${project}/proposals/${made.body.id}/approve`)).status).toBe(200);
  return made.body.id;
}

async function deliveries(backend: TestBackend, project: string, hook: string): Promise<WebhookDeliveryResponse[]> {
  const { status, body } = await backend.api<WebhookDeliveryResponse[]>(
    'GET',
    `/projects/${project}/webhooks/${hook}/deliveries`,
  );
  expect(status).toBe(200);
  return body;
}

describe('webhook registration', () => {
  let backend: TestBackend;
  beforeAll(async () => {
    backend = await startTestBackend();
    await backend.api('POST', '/projects', { slug: 'hooks', name: 'Hooks' });
  });
  afterAll(async () => {
    await backend.close();
  });

  it('shows a generated secret once, lists without it, deletes with the log', async () => {
    const created = await backend.api<WebhookResponse>('POST', '/projects/hooks/webhooks', {
      url: 'http://127.0.0.1:9/hook',
    });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const listed = await backend.api<WebhookResponse[]>('GET', '/projects/hooks/webhooks');
    expect(listed.body).toEqual([
      {
        id: created.body.id,
        url: 'http://127.0.0.1:9/hook',
        format: 'json',
        createdAt: expect.any(String),
        createdBy: expect.any(String),
      },
    ]);
    expect((await backend.api('DELETE', `/projects/hooks/webhooks/${created.body.id}`)).status).toBe(204);
    expect((await backend.api('DELETE', `/projects/hooks/webhooks/${created.body.id}`)).status).toBe(404);
    expect((await backend.api('GET', `/projects/hooks/webhooks/${created.body.id}/deliveries`)).status).toBe(404);
  });

  it.each([
    [{ url: 'ftp://example.com/x' }, 'url must be an http:// or https:// URL'],
    [{ url: 'not a url' }, 'url must be an http:// or https:// URL'],
    [{ url: 'https://example.com/x', secret: 'short' }, 'secret must be longer than or equal to 16 characters'],
    [{ url: 'https://example.com/x', events: ['all'] }, 'events should not exist'],
  ])('refuses %j with 400 naming the field', async (body, message) => {
    const result = await backend.api<{ message: string }>('POST', '/projects/hooks/webhooks', body);
    expect(result.status).toBe(400);
    expect(result.body.message).toContain(message);
  });

  it("records why a delivery could not be made, not just fetch's 'fetch failed'", async () => {
    // Port 1 is one of the ports fetch refuses to call; the log said "fetch failed" and nothing more.
    const created = await backend.api<WebhookResponse>('POST', '/projects/hooks/webhooks', {
      url: 'http://127.0.0.1:1/hook',
    });
    await approveOne(backend, 'hooks');
    // `attempts` counts when a delivery is claimed; `lastError` is recorded when the attempt ends.
    const [pending] = await eventually(
      () => deliveries(backend, 'hooks', created.body.id),
      (l) => (l[0]?.lastError ?? null) !== null,
    );
    expect(pending).toMatchObject({ status: 'pending', lastStatus: null, lastError: 'fetch failed (bad port)' });
    expect((await backend.api('DELETE', `/projects/hooks/webhooks/${created.body.id}`)).status).toBe(204);
  });

  it('needs an admin token', async () => {
    const write = (await backend.api<TokenResponse>('POST', '/projects/hooks/tokens', { name: 'w', scope: 'write' }))
      .body.token as string;
    expect(
      (await backend.api('POST', '/projects/hooks/webhooks', { url: 'https://example.com/x' }, write)).status,
    ).toBe(403);
    expect((await backend.api('GET', '/projects/hooks/webhooks', undefined, write)).status).toBe(403);
  });
});

describe('webhook deliveries', () => {
  let database: TestDatabase;
  let first: TestBackend;
  let second: TestBackend | null = null;
  let receiver: Awaited<ReturnType<typeof startHookReceiver>>;
  let hook: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    first = await startTestBackend({ databaseUrl: database.url });
    await first.api('POST', '/projects', { slug: 'deliver', name: 'Deliver' });
    receiver = await startHookReceiver(SECRET);
    hook = (
      await first.api<WebhookResponse>('POST', '/projects/deliver/webhooks', {
        url: `${receiver.url}/in`,
        secret: SECRET,
      })
    ).body.id;
  });
  afterAll(async () => {
    await first.close();
    await second?.close();
    await receiver.close();
    await database.drop();
  });

  it('POSTs each event as signed JSON, and logs it as delivered', async () => {
    const proposalId = await approveOne(first, 'deliver');
    const [hit] = await eventually(
      () => receiver.received,
      (r) => r.length >= 1,
    );
    expect(hit?.valid).toBe(true);
    expect(hit?.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    const body = JSON.parse(hit?.body ?? '') as WebhookBody;
    expect(body).toEqual({
      id: expect.any(String),
      type: 'proposal.step',
      project: 'deliver',
      occurredAt: expect.any(String),
      data: {
        type: 'proposal.step',
        proposalId,
        title: expect.any(String),
        step: 'Approved',
        status: 'Approved',
        at: expect.any(String),
        actor: expect.any(String),
        pullRequest: null,
        build: null,
        commit: null,
      },
    });
    expect(hit?.event).toBe('proposal.step');
    const log = await eventually(
      () => deliveries(first, 'deliver', hook),
      (l) => l[0]?.status === 'delivered',
    );
    expect(log).toEqual([
      expect.objectContaining({
        id: hit?.delivery,
        eventId: body.id,
        type: 'proposal.step',
        status: 'delivered',
        attempts: 1,
        lastStatus: 204,
        lastError: null,
        nextAttemptAt: null,
      }),
    ]);
  });

  it('retries a failed delivery with backoff', async () => {
    receiver.failNext(1);
    const before = receiver.received.length;
    await approveOne(first, 'deliver');
    await eventually(
      () => deliveries(first, 'deliver', hook),
      (l) => l[0]?.status === 'pending' && l[0].attempts === 1 && l[0].lastStatus !== null,
    );
    const [pending] = await deliveries(first, 'deliver', hook);
    expect(pending).toMatchObject({
      lastStatus: 500,
      lastError: 'receiver answered 500',
      nextAttemptAt: expect.any(String),
    });
    const [done] = await eventually(
      () => deliveries(first, 'deliver', hook),
      (l) => l[0]?.status === 'delivered',
    );
    expect(done).toMatchObject({ attempts: 2, lastStatus: 204, lastError: null });
    expect(receiver.received.length).toBe(before + 1);
    expect(receiver.received.every((r) => r.valid)).toBe(true);
  });

  it('keeps pending deliveries across a restart, and two replicas never send one twice', async () => {
    receiver.failNext(1_000);
    await approveOne(first, 'deliver');
    await eventually(
      () => deliveries(first, 'deliver', hook),
      (l) => l[0]?.status === 'pending' && l[0].attempts >= 1,
    );
    await first.close();
    receiver.failNext(0);
    const delivered = receiver.received.length;
    // A new process on the same database delivers what the stopped one left pending.
    first = await startTestBackend({ databaseUrl: database.url });
    await eventually(
      () => deliveries(first, 'deliver', hook),
      (l) => l[0]?.status === 'delivered',
      30_000,
    );
    expect(receiver.received.length).toBe(delivered + 1);

    second = await startTestReplica(first);
    const events = 24;
    for (let i = 0; i < events; i++) await approveOne(i % 2 === 0 ? first : second, 'deliver');
    await eventually(
      () => receiver.received.length,
      (n) => n >= delivered + 1 + events,
      30_000,
    );
    // Give a duplicate, if any, time to show up.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const ids = receiver.received.map((r) => (JSON.parse(r.body) as WebhookBody).id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(delivered + 1 + events);
    expect((await deliveries(second, 'deliver', hook)).every((d) => d.status === 'delivered')).toBe(true);
  });
});

// Issue 15 item 6: `http://169.254.169.254/…`, `10.0.0.1`, `[::1]`, `localhost`, `0.0.0.0` were
// accepted, and the delivery log let a project admin probe internal ports.
describe('webhooks do not reach internal addresses', () => {
  let database: TestDatabase;
  let strict: TestBackend;
  beforeAll(async () => {
    database = await createTestDatabase();
    strict = await startTestBackend({ databaseUrl: database.url, webhookAllow: [] });
    await strict.api('POST', '/projects', { slug: 'inside', name: 'Inside' });
  });
  afterAll(async () => {
    await strict.close();
    await database.drop();
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'a link-local address (cloud metadata lives there) (169.254.169.254)'],
    ['http://10.0.0.1/hook', 'a private address (10.0.0.1)'],
    ['http://192.168.1.20:8080/hook', 'a private address (192.168.1.20)'],
    ['http://[::1]/hook', 'a loopback address (::1)'],
    ['http://127.0.0.1:5432/', 'a loopback address (127.0.0.1)'],
    ['http://[::ffff:127.0.0.1]/hook', 'a loopback address (127.0.0.1)'],
    ['http://0.0.0.0/hook', 'the unspecified address (0.0.0.0)'],
    ['http://[fd00:ec2::254]/latest', 'a unique-local address (fd00:ec2::254)'],
    ['http://100.100.100.200/latest', 'a shared (carrier-grade NAT) address (100.100.100.200)'],
    ['http://localhost:3000/hook', 'localhost resolves to a loopback address'],
    // Does not resolve here (outside Google Cloud): refused by name.
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is a cloud metadata name'],
  ])('refuses %s with 400 naming why', async (url, why) => {
    const result = await strict.api<{ message: string }>('POST', '/projects/inside/webhooks', { url });
    expect(result.status).toBe(400);
    expect(result.body.message).toContain(`url: ${why}`);
    expect(result.body.message).toContain('SPECTATOR_WEBHOOK_ALLOW');
  });

  it('refuses credentials in the URL without showing them back', async () => {
    const result = await strict.api<{ message: string }>('POST', '/projects/inside/webhooks', {
      url: 'https://ci-bot:s3cr3t-pass@hooks.example.com/x',
    });
    expect(result.status).toBe(400);
    expect(result.body.message).toContain('url must not contain credentials');
    expect(JSON.stringify(result.body)).not.toMatch(/s3cr3t|ci-bot/);
  });

  it('checks the address again when connecting (a name that resolves inside later, a literal registered when allowed)', async () => {
    const receiver = await startHookReceiver(SECRET);
    // Registered through a replica that allows loopback; delivered by one that does not.
    const lenient = await startTestReplica(strict, { webhookAllow: ['127.0.0.0/8', '::1'] });
    const port = new URL(receiver.url).port;
    const byName = (
      await lenient.api<WebhookResponse>('POST', '/projects/inside/webhooks', {
        url: `http://localhost:${port}/in`,
        secret: SECRET,
      })
    ).body.id;
    const byAddress = (
      await lenient.api<WebhookResponse>('POST', '/projects/inside/webhooks', {
        url: `http://127.0.0.1:${port}/in`,
        secret: SECRET,
      })
    ).body.id;
    await lenient.close();
    await approveOne(strict, 'inside');
    const [named] = await eventually(
      () => deliveries(strict, 'inside', byName),
      (l) => (l[0]?.lastError ?? null) !== null,
    );
    const [literal] = await eventually(
      () => deliveries(strict, 'inside', byAddress),
      (l) => (l[0]?.lastError ?? null) !== null,
    );
    expect(named).toMatchObject({
      status: 'pending',
      lastStatus: null,
      lastError: expect.stringMatching(
        /^fetch failed \(EADDRNOTALLOWED: localhost resolves to a loopback address \((127\.0\.0\.1|::1)\)/,
      ),
    });
    expect(literal).toMatchObject({
      status: 'pending',
      lastStatus: null,
      lastError: expect.stringContaining('EADDRNOTALLOWED: a loopback address (127.0.0.1)'),
    });
    expect(receiver.attempts()).toBe(0);
    await receiver.close();
  });
});

// Issue 15 item 7: with 20 receivers answering after 15 s in one project, another project's
// instant receiver got its delivery after 9.4 s (`deliverDue` waited for the whole round).
describe('a slow receiver delays only its own deliveries', () => {
  let backend: TestBackend;
  let fast: Awaited<ReturnType<typeof startHookReceiver>>;
  const held: ServerResponse[] = [];
  let abandoned = 0;
  let slow: Server;

  beforeAll(async () => {
    backend = await startTestBackend();
    await backend.api('POST', '/projects', { slug: 'slow', name: 'Slow' });
    await backend.api('POST', '/projects', { slug: 'fast', name: 'Fast' });
    fast = await startHookReceiver(SECRET);
    // Answers nothing until released; counts attempts the backend gave up on.
    slow = createServer((request, response) => {
      request.resume();
      request.socket.on('close', () => {
        if (!response.writableEnded) abandoned++;
      });
      held.push(response);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    for (let i = 0; i < 20; i++)
      expect((await backend.api('POST', '/projects/slow/webhooks', { url: `${slowUrl}/hook${i}` })).status).toBe(201);
    expect(
      (await backend.api('POST', '/projects/fast/webhooks', { url: `${fast.url}/in`, secret: SECRET })).status,
    ).toBe(201);
  });
  afterAll(async () => {
    for (const response of held) response.writeHead(204).end();
    await backend.close();
    await fast.close();
    await new Promise((resolve) => slow.close(resolve));
  });

  it('another project is delivered while all 20 slow receivers still hold their requests', async () => {
    await approveOne(backend, 'slow');
    await eventually(
      () => held.length,
      (n) => n >= 10,
    );
    await approveOne(backend, 'fast');
    await eventually(
      () => fast.received.length,
      (n) => n >= 1,
    );
    // No slow attempt ended (timed out) before the fast delivery: it did not wait for them.
    expect(abandoned).toBe(0);
    expect(held.filter((response) => !response.writableEnded).length).toBe(held.length);
    // And the slow project's own deliveries were all started, not left for later rounds.
    await eventually(
      () => held.length,
      (n) => n === 20,
    );
  });
});
