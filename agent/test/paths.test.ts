import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathDigest, type BatchMessage, type LearnedMessage } from '@spectator/shared';
import { startTestAgent } from './support/agent';
import { FakeBackend } from './support/fake-backend';
import { sendJson, startUpstream, type TestUpstream } from './support/upstream';
import { waitFor } from './support/wait';

/** Names and slugs in path positions, at least two distinct values per position. */
const NAMES = {
  users: ['canary-alice', 'canary-bob', 'canary-carol'],
  orgs: ['canary-acme', 'canary-initech'],
  owners: ['canary-dave', 'canary-erin'],
  repos: ['canary-web', 'canary-cli'],
  categories: ['canary-dinner', 'canary-lunch'],
};
const ALL_NAMES = Object.values(NAMES).flat();

/** A small API whose answers share fields per route, as real ones do; anything else is 404. */
function namedApi(): Parameters<typeof startUpstream>[0] {
  return (req, res) => {
    const url = (req.url ?? '/').split('?')[0]!;
    const parts = url.split('/').filter(Boolean);
    const known = (list: string[], value: string | undefined) => value !== undefined && list.includes(value);
    if (parts[0] === 'users' && parts.length === 2 && known(NAMES.users, parts[1]))
      return sendJson(res, 200, { login: 'x', id: 1, name: 'n', bio: null });
    if (parts[0] === 'users' && parts.length === 2) return sendJson(res, 404, { message: 'Not Found' });
    if (parts[0] === 'orgs' && parts.length === 5 && parts.slice(2).join('/') === 'actions/cache/usage')
      return sendJson(res, 200, { total_active_caches_count: 1, total_active_caches_size_in_bytes: 2 });
    if (parts[0] === 'repos' && parts.length === 4 && (parts[3] === 'issues' || parts[3] === 'pulls'))
      return sendJson(res, 200, [{ number: 1, title: 't', state: 'open' }]);
    if (parts[0] === 'browse' && parts[1] === 'categories' && parts.length === 3)
      return sendJson(res, 200, { id: 'x', name: 'n', icons: [] });
    if (url === '/posts') return sendJson(res, 200, [{ id: 1, title: 't' }]);
    if (parts[0] === 'posts' && parts.length === 2 && /^\d+$/.test(parts[1]!))
      return sendJson(res, 200, { id: 1, title: 't' });
    if (parts[0] === 'api' && parts[1] === 'v2' && parts[2] === 'status') return sendJson(res, 200, { ok: true });
    return sendJson(res, 404, { message: 'Not Found' });
  };
}

/** The traffic of a CI run: a few requests per operation, names varied. */
function realTraffic(): string[] {
  return [
    ...NAMES.users.map((u) => `/users/${u}`),
    ...NAMES.orgs.map((o) => `/orgs/${o}/actions/cache/usage`),
    `/repos/${NAMES.owners[0]}/${NAMES.repos[0]}/issues`,
    `/repos/${NAMES.owners[1]}/${NAMES.repos[1]}/pulls`,
    `/repos/${NAMES.owners[1]}/${NAMES.repos[1]}/issues`,
    ...NAMES.categories.map((c) => `/browse/categories/${c}`),
    '/posts',
    '/posts/17',
    '/posts/18',
    '/api/v2/status',
    `/users/canary-nobody`, // an unknown user: the endpoint's own 404
  ];
}

const EXPECTED_TEMPLATES = [
  '/api/v2/status',
  '/browse/categories/{category}',
  '/orgs/{org}/actions/cache/usage',
  '/posts',
  '/posts/{postId}',
  '/repos/{owner}/{repo}/issues',
  '/repos/{owner}/{repo}/pulls',
  '/users/{user}',
];

/** Send `paths` through the agent, `concurrency` at a time (bounded). */
async function sendAll(proxyUrl: string, paths: readonly string[], concurrency = 16): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < paths.length) {
      const p = paths[next++]!;
      await fetch(`${proxyUrl}${p}`).then((r) => r.arrayBuffer());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Stop the agent (what it holds goes out) and list the templates the backend received, sorted. */
async function sentTemplates(agent: { close(): Promise<void> }): Promise<string[]> {
  await agent.close();
  return [...new Set(backend.observations().map((o) => o.path))].sort();
}

// Each test sends its traffic and waits for what the agent holds: more than jest's default 5 s on a loaded machine.
jest.setTimeout(120_000);

let upstream: TestUpstream;
let backend: FakeBackend;
afterEach(async () => {
  await upstream?.close();
  await backend?.stop();
});

/**
 * An upstream answering 200 with what `answer` gives a method and path segments (404 when nothing), the fake backend,
 * and an agent holding undecided paths longer than the test takes, whatever the load: what is held goes out when it
 * stops.
 */
async function holdingAgent(
  answer: (method: string, parts: string[]) => object | undefined,
): ReturnType<typeof startTestAgent> {
  return holdingAgentOf((req, res) => {
    const found = answer(req.method ?? 'GET', (req.url ?? '/').split('/').filter(Boolean));
    return found === undefined ? sendJson(res, 404, { message: 'Not Found' }) : sendJson(res, 200, found);
  });
}

/** `holdingAgent` in front of an upstream answering with `handler`. */
async function holdingAgentOf(handler: Parameters<typeof startUpstream>[0]): ReturnType<typeof startTestAgent> {
  upstream = await startUpstream(handler);
  backend = await FakeBackend.start();
  return startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x', tuning: { pathHoldMs: 60_000 } });
}

describe('path templates from structure', () => {
  it('learns names and slugs as parameters and sends none of them: not in a batch, not in a learned message, not in the log', async () => {
    upstream = await startUpstream(namedApi());
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    // First the endpoints, then the unknown user: a 404 on a path of a learned template is its own.
    const traffic = realTraffic();
    await sendAll(agent.proxyUrl, traffic.slice(0, -1), 1);
    await sendAll(agent.proxyUrl, traffic.slice(-1), 1);
    await agent.close();
    const templates = [...new Set(backend.observations().map((o) => o.path))].sort();
    expect(templates).toEqual(EXPECTED_TEMPLATES);
    expect(backend.count((o) => o.path === '/users/{user}' && o.status === 404)).toBe(1);
    const leaked = ALL_NAMES.filter((name) => backend.frames.some((frame) => frame.includes(name)));
    expect(leaked).toEqual([]);
    expect(backend.frames.some((frame) => frame.includes('canary-'))).toBe(false);
    expect(agent.logs.lines.some((line) => line.includes('canary-'))).toBe(false);
  });

  it("keeps an endpoint's own 404 that came before its position was learned, and sends no name of it", async () => {
    upstream = await startUpstream(namedApi());
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    // The unknown user first: nothing is learned yet, so it looks like noise until alice and bob answer alike.
    await sendAll(agent.proxyUrl, ['/users/canary-nobody', `/users/${NAMES.users[0]}`, `/users/${NAMES.users[1]}`], 1);
    await agent.close();
    expect(backend.count((o) => o.path === '/users/{user}' && o.status === 404)).toBe(1);
    expect(backend.count((o) => o.path === '/users/{user}' && o.status === 200)).toBe(2);
    const batches = backend.messages.filter((m): m is BatchMessage => m.type === 'batch');
    expect(batches.reduce((sum, b) => sum + (b.unmatched?.requests ?? 0), 0)).toBe(0);
    expect(backend.frames.some((frame) => frame.includes('canary-'))).toBe(false);
  });

  it('sends a single value as it is once its hold is over, and says so when a later value teaches the template', async () => {
    upstream = await startUpstream(namedApi());
    backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { pathHoldMs: 100 },
    });
    try {
      await sendAll(agent.proxyUrl, [`/users/${NAMES.users[0]}`], 1);
      // One value: nothing to compare it with. After the hold it goes out literal.
      await waitFor('the single value sent', () => backend.count((o) => o.path === `/users/${NAMES.users[0]}`) === 1);
      await sendAll(agent.proxyUrl, [`/users/${NAMES.users[1]}`], 1);
      const learned = await waitFor('learned', () =>
        backend.messages.find((m): m is LearnedMessage => m.type === 'learned'),
      );
      // The literal path it covers is named by its digest only (the backend regroups that one path).
      expect(learned).toEqual({
        type: 'learned',
        captureId: agent.captureId(),
        templates: ['/users/{user}'],
        covers: { '/users/{user}': [pathDigest(agent.captureId(), `/users/${NAMES.users[0]}`)] },
      });
      await waitFor(
        'the second value sent under the template',
        () => backend.count((o) => o.path === '/users/{user}') === 1,
      );
      // The second value never left the agent.
      expect(backend.frames.some((frame) => frame.includes(NAMES.users[1]!))).toBe(false);
    } finally {
      await agent.close();
    }
  });

  it('regroups a name sent after a learned value once its own position is learned (/repos/{repo}/r-web)', async () => {
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[0] === 'repos' && parts.length === 2) return sendJson(res, 200, { login: 'l', id: 1, name: 'n' });
      if (parts[0] === 'repos' && parts.length === 3) return sendJson(res, 200, { full_name: 'f', private: false });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { pathHoldMs: 100 },
    });
    try {
      await sendAll(agent.proxyUrl, ['/repos/canary-alice', '/repos/canary-bob'], 1);
      await sendAll(agent.proxyUrl, ['/repos/canary-carol/canary-web'], 1);
      // One repository: after its hold it goes out with its owner a parameter and its own name as it is.
      const sent = '/repos/{repo}/canary-web';
      await waitFor('the single repository sent', () => backend.count((o) => o.path === sent) === 1, 15_000);
      await sendAll(agent.proxyUrl, ['/repos/canary-dave/canary-cli'], 1);
      // A second repository alike: the agent names the path it sent, resolved from its own path (not from
      // the template, where `{repo}` reads as a detected identifier and what follows as a route word).
      const covers = await waitFor(
        'the sent path covered',
        () =>
          backend.messages.find(
            (m): m is LearnedMessage => m.type === 'learned' && (m.covers?.['/repos/{owner}/{repo}'] ?? []).length > 0,
          ),
        15_000,
      );
      expect(covers.covers?.['/repos/{owner}/{repo}']).toEqual([pathDigest(agent.captureId(), sent)]);
      expect(backend.frames.some((frame) => frame.includes('canary-cli'))).toBe(false);
    } finally {
      await agent.close();
    }
  });

  it('holds names after an identifier until four alike values decide them, and keeps actions after many identifiers literal', async () => {
    const snapshots = ['canary-java', 'canary-go', 'canary-rust', 'canary-ruby', 'canary-perl'];
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[0] === 'snapshots' && parts.length === 3) return sendJson(res, 200, { id: 1, language: 'l', size: 2 });
      if (parts[0] === 'reservations' && parts.length === 3) return sendJson(res, 200, { status: 's', at: 't' });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    const actions = ['check_in', 'check_out', 'assign_room', 'pre_authorize'];
    await sendAll(
      agent.proxyUrl,
      [
        ...snapshots.map((name, i) => `/snapshots/${17 + i}/${name}`),
        // Each round calls every action once: after the first, four alike values after an identifier.
        ...[101, 202, 303].flatMap((id) => actions.map((action, i) => `/reservations/${id + i}/${action}`)),
      ],
      1,
    );
    await agent.close();
    const templates = [...new Set(backend.observations().map((o) => o.path))].sort();
    expect(templates).toEqual([
      ...actions.map((action) => `/reservations/{reservationId}/${action}`).sort(),
      '/snapshots/{snapshotId}/{snapshot}',
    ]);
    // Held until decided: no name after the identifier reached the wire, not even the first ones.
    expect(backend.frames.some((frame) => frame.includes('canary-'))).toBe(false);
  });

  it('learns names before an identifier from four values and numbers at the first segment; sends no later one', async () => {
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[0] === 'sales_tax' && parts.length === 3)
        return sendJson(res, 200, { countryCode: 'US', jurisdictionId: 'CA', salesTaxPercentage: '7.5' });
      if (parts.length === 2) return sendJson(res, 200, { id: '1', title: 't', fetch: { targetUrl: 'u' } });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    // A literal before an identifier may be a collection (`/self/calls/17`): the first three names are held (since
    // session 21; they used to be sent as they are) and the fourth shows them names. Numbers at the first segment
    // are not held: the first three go out as they are, and what was sent is named in `learned`.
    const first = ['canary-acme', 'canary-erin', 'canary-ivan'];
    const later = ['canary-judy', 'canary-oscar', 'canary-peggy-web'];
    await sendAll(
      agent.proxyUrl,
      [
        ...[...first, ...later].map((name, i) => `/sales_tax/${name}/${101 + i}`),
        ...[97531, 97532, 97533, 97534, 97535, 97536].map((app, i) => `/${app}/${339515 + i}`),
      ],
      1,
    );
    await agent.close();
    const templates = [...new Set(backend.observations().map((o) => o.path))];
    expect(templates).toContain('/sales_tax/{salesTax}/{salesTaxId}');
    expect(templates).toContain('/{name}/{id}');
    expect(backend.count((o) => o.path === '/sales_tax/{salesTax}/{salesTaxId}')).toBe(first.length + later.length);
    expect(backend.count((o) => o.path === '/{name}/{id}')).toBe(3);
    const learned = backend.messages.filter((m): m is LearnedMessage => m.type === 'learned');
    const covered = learned.flatMap((m) => Object.values(m.covers ?? {}).flat());
    expect(covered).toHaveLength(3);
    // No name sent: not in a batch, not in a learned message; no number once its position was learned.
    expect(backend.frames.filter((frame) => /canary/i.test(frame))).toEqual([]);
    expect([97534, 97535, 97536].filter((app) => backend.frames.some((frame) => frame.includes(`/${app}`)))).toEqual(
      [],
    );
  });

  it('sends no name of positions with nothing to compare: two names in a row, names after ids or after a route word', async () => {
    // Other names per route: a name seen at one depth under two routes reads as a route word (docs/paths.md).
    const origins = ['canary-alice', 'canary-bob-infra', 'canary-Carol74', 'canary-dave-cli'];
    const destinations = ['canary-erin', 'canary-frank-web', 'canary-Grace7', 'canary-heidi'];
    const owners = ['canary-ivan', 'canary-judy-api', 'canary-Mallory2', 'canary-oscar'];
    const scheduled = ['canary-peggy', 'canary-trent-cli', 'canary-Victor43', 'canary-walter'];
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      // Answers without fields to compare (a JSON string), as an API documented with `type: string` gives.
      if (parts[0] === 'route' && parts.length === 3) return sendJson(res, 200, 'ok');
      if (parts[0] === 'orders' && parts.length === 3) return sendJson(res, 200, 'ok');
      if (parts[0] === 'messages' && parts.length === 2 && parts[1] === 'schedule')
        return sendJson(res, 200, { batch: true, id: 'i', message: { content: 'c' } });
      if (parts[0] === 'messages' && parts.length === 2) return sendJson(res, 200, { batchid: 'b', content: 'c' });
      if (parts[0] === 'messages' && parts.length === 3) return sendJson(res, 200, { messageid: 'm', status: 's' });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    await sendAll(
      agent.proxyUrl,
      [
        ...origins.map((origin, i) => `/route/${origin}/${destinations[i]!}`),
        ...owners.map((owner, i) => `/orders/${1001 + i}/${owner}`),
        '/messages/canary-yvonne',
        '/messages/canary-zed-data',
        '/messages/schedule',
        ...scheduled.map((name) => `/messages/schedule/${name}`),
      ],
      1,
    );
    expect(await sentTemplates(agent)).toEqual([
      '/messages/schedule',
      '/messages/schedule/{schedule}',
      '/messages/{message}',
      '/orders/{orderId}/{order}',
      '/route/{owner}/{route}',
    ]);
    expect(backend.frames.some((frame) => frame.includes('canary-'))).toBe(false);
  });

  it('sends no version name beside a sibling word, nor a name drawn again after other words (held-out 21)', async () => {
    // rudder.example.local: `/techniques/{techniqueId}/{techniqueVersion}/directives` beside
    // `/techniques/{techniqueId}/directives`; anchore.io: `initech` drawn for `/images/{image}/metadata/{mtype}` and
    // `/images/{image}/content/{ctype}` of other images.
    const envelope = (data: object) => ({ action: 'a', result: 'r', data });
    const agent = await holdingAgent((_method, parts) => {
      if (parts[0] === 'techniques' && parts.at(-1) === 'directives') return envelope({ directives: [] });
      if (parts[0] !== 'images') return undefined;
      if (parts.length === 2) return [{ imageDigest: 'd', analysis_status: 's', image_status: 's' }];
      if (parts[2] === 'metadata') return { imageDigest: 'd', metadata_type: 't', metadata: {} };
      return { imageDigest: 'd', content_type: 't', content: [{ package: 'p' }] };
    });
    const versions = ['canary-alice', 'canary-bob-infra', 'canary-Carol74', 'canary-dave-cli', 'canary-erin'];
    await sendAll(
      agent.proxyUrl,
      [
        // Names first: after the sibling's word, the first three are qualifiers at first sight and leave at once (the
        // `learned` message regroups them when the fourth comes; docs/paths.md).
        ...versions.map((version, i) => `/techniques/${103 + i}/${version}/directives`),
        '/techniques/101/directives',
        '/techniques/102/directives',
        '/images/canary-acme',
        '/images/canary-bob',
        '/images/canary-carol/metadata/canary-initech',
        '/images/canary-dave/content/canary-initech',
        '/images/canary-erin/content/canary-initech',
        '/images/canary-frank/metadata/canary-wonka',
        '/images/canary-grace/metadata/canary-globex',
        '/images/canary-heidi/metadata/canary-hooli',
        '/images/canary-ivan/content/canary-oscar',
        '/images/canary-judy/content/canary-tyrell',
      ],
      1,
    );
    await agent.close();
    const templates = [...new Set(backend.observations().map((o) => o.path))].sort();
    expect(templates).toEqual([
      '/images/{image}',
      '/images/{image}/content/{content}',
      '/images/{image}/metadata/{metadata}',
      '/techniques/{techniqueId}/directives',
      '/techniques/{techniqueId}/{technique}/directives',
    ]);
    expect(backend.frames.filter((frame) => frame.includes('canary-'))).toEqual([]);
  });

  it('sends no name held after identifiers when it stops: three names, each once after an order of its own', async () => {
    // billbee's `/orders/find/{id}/{partner}`: fewer names than the four that learn a position after an identifier,
    // all still held when the agent stops.
    const partners = ['canary-stark-core', 'canary-stark-billing', 'canary-Oscar12'];
    const agent = await holdingAgent((_method, parts) =>
      parts[0] === 'orders' && parts.length === 3 ? {} : undefined,
    );
    await sendAll(
      agent.proxyUrl,
      partners.map((partner, i) => `/orders/${209427 + i * 1000}/${partner}`),
      1,
    );
    expect(await sentTemplates(agent)).toEqual(['/orders/{orderId}/{order}']);
    expect(backend.frames.some((frame) => frame.includes('canary-'))).toBe(false);
  });

  it('sends no name read twice beside siblings that go out as names in a row (/avatars/flags/{code})', async () => {
    // appwrite's avatars (held-out 17): images without fields, three flags, one read twice with other query names.
    // The names as the bench drew them: a `canary-` prefix would make `Mallory91` a detected identifier's look-alike.
    const cards = ['frank-infra', 'Mallory91', 'Judy52', 'Carol48', 'peggy', 'wayne', 'umbrella-data'];
    const flags = ['Carol13', 'umbrella-search', 'Judy25'];
    const browsers = ['Heidi14', 'wayne-data', 'walter'];
    const names = [...cards, ...flags, ...browsers];
    const agent = await holdingAgentOf((req, res) => {
      if (!(req.url ?? '/').startsWith('/avatars/')) return sendJson(res, 404, { message: 'Not Found' });
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': 0 });
      res.end();
    });
    await sendAll(
      agent.proxyUrl,
      [
        '/avatars/qr?text=n',
        ...cards.map((card) => `/avatars/credit-cards/${card}`),
        `/avatars/flags/${flags[0]!}?height=1&quality=2`,
        `/avatars/flags/${flags[1]!}?width=1`,
        '/avatars/initials?name=te',
        `/avatars/flags/${flags[2]!}`,
        ...browsers.map((browser) => `/avatars/browsers/${browser}?width=1&quality=2`),
        `/avatars/flags/${flags[1]!}?height=2`,
        '/avatars/qr?text=m&size=3',
      ],
      1,
    );
    // The flags with the browsers as names in a row (two positions with nothing to compare): no name out, not a route.
    expect(await sentTemplates(agent)).toEqual([
      '/avatars/credit-cards/{creditCard}',
      '/avatars/initials',
      '/avatars/qr',
      '/avatars/{owner}/{avatar}',
    ]);
    expect(names.filter((name) => backend.frames.some((frame) => frame.includes(name)))).toEqual([]);
  });

  it('sends a version number in a route as it is from its first request, and a short id as a parameter', async () => {
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[0] === 'oauth2' || parts[0] === 'account') return sendJson(res, 200, { ok: true, at: parts.length });
      if (parts[0] === 'posts' && parts.length === 2) return sendJson(res, 200, { id: 5, title: 't' });
      // Each route of a post answers fields of its own, as real ones do.
      if (parts[0] === 'posts') return sendJson(res, 200, { [`${parts[2]}Count`]: 1, [`${parts[2]}List`]: [] });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    await sendAll(
      agent.proxyUrl,
      [
        '/oauth2/1/authorize',
        '/oauth2/1/token',
        '/oauth2/1/revoke',
        '/oauth2/1/user',
        '/account/1/pushuri',
        // A post and its routes: `GET /posts/5` answers on its own, so 5 is an id.
        '/posts/5/comments',
        '/posts/5',
        '/posts/5/likes',
        '/posts/5/tags',
        '/posts/5/shares',
      ],
      1,
    );
    expect(await sentTemplates(agent)).toEqual([
      '/account/1/pushuri',
      '/oauth2/1/authorize',
      '/oauth2/1/revoke',
      '/oauth2/1/token',
      '/oauth2/1/user',
      '/posts/{postId}',
      '/posts/{postId}/comments',
      '/posts/{postId}/likes',
      '/posts/{postId}/shares',
      '/posts/{postId}/tags',
    ]);
  });

  it('keeps words with nothing to compare whose query names differ literal (/offers/fares/fares)', async () => {
    // Answers without fields to compare (a JSON string), as an API documented with `type: string` gives.
    upstream = await startUpstream((_req, res) => sendJson(res, 200, 'ok'));
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    // Each route takes its own query parameters, requested again and again as a CI run does.
    const routes = [
      '/offers/fares/allfares?origin=FRA&destination=JFK&travel-date=2026-12-01',
      '/offers/fares/fares?carriers=LH&segments=2&fare-types=Y',
      '/offers/fares/deeplink?partnerid=p&lang=de&fare=100',
      '/offers/fares/subscriptions?email=e&trip-duration=7&cabin-class=M',
    ];
    await sendAll(agent.proxyUrl, [...routes, ...routes], 1);
    expect(await sentTemplates(agent)).toEqual(routes.map((route) => route.split('?')[0]!).sort());
  });

  it('sends no name requested again and again with bare answers: four make a parameter, repeated or not', async () => {
    // A CI run's fixtures: each user requested three times, answered 204 with no body (nothing to compare).
    upstream = await startUpstream((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    const names = ['canary-alice', 'canary-bob-infra', 'canary-Carol74', 'canary-dave-cli'];
    const paths = names.map((name) => `/users/${name}`);
    await sendAll(agent.proxyUrl, [...paths, ...paths, ...paths], 1);
    expect(await sentTemplates(agent)).toEqual(['/users/{user}']);
    expect(backend.count((o) => o.path === '/users/{user}')).toBeGreaterThan(0);
    expect(backend.frames.some((frame) => frame.includes('canary-'))).toBe(false);
    expect(agent.logs.lines.some((line) => line.includes('canary-'))).toBe(false);
  });

  it('holds what follows a value until its siblings show it a value or a route word, and sends no name of it', async () => {
    const scheduled = ['canary-peggy', 'canary-trent-cli', 'canary-Victor43', 'canary-walter'];
    const ships = ['canary-alice', 'canary-bob-infra', 'canary-Carol74'];
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[0] === 'messages' && parts.length === 2 && parts[1] === 'schedule')
        return sendJson(res, 200, { batch: true, id: 'i', message: { content: 'c' } });
      if (parts[0] === 'messages' && parts.length === 2) return sendJson(res, 200, { batchid: 'b', content: 'c' });
      if (parts[0] === 'messages' && parts.length === 3) return sendJson(res, 200, { messageid: 'm', status: 's' });
      if (parts[0] === 'ships' && parts.length === 3) return sendJson(res, 200, { data: { symbol: 's', fuel: 1 } });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    await sendAll(
      agent.proxyUrl,
      [
        '/messages/canary-yvonne',
        '/messages/canary-zed-data',
        // Two alike values after `schedule`, taken for a value of `/messages/{message}` until it answers
        // other fields: held, not sent under `/messages/{owner}/{message}`.
        ...scheduled.slice(0, 2).map((name) => `/messages/schedule/${name}`),
        '/messages/schedule',
        ...scheduled.slice(2).map((name) => `/messages/schedule/${name}`),
        // Words after a learned value: held until they recur after three ships (route words), not sent as values.
        ...ships.flatMap((ship) => [`/ships/${ship}/nav`, `/ships/${ship}/cargo`]),
      ],
      1,
    );
    expect(await sentTemplates(agent)).toEqual([
      '/messages/schedule',
      '/messages/schedule/{schedule}',
      '/messages/{message}',
      '/ships/{ship}/cargo',
      '/ships/{ship}/nav',
    ]);
    expect(backend.frames.some((frame) => frame.includes('canary-'))).toBe(false);
  });

  it('keeps a 404 on a name under a learned first segment with its route (/{name}/components/paint), before or after', async () => {
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts.length === 3 && parts[0] !== 'canary-nobody' && parts[0] !== 'canary-nemo' && parts[1] === 'components')
        return sendJson(res, 200, { [parts[2]!]: { code: 'x', name: 'n' }, vin: 'v' });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    // An unknown vehicle before the first segment is learned (held, then decided), and one after it.
    await sendAll(agent.proxyUrl, ['/canary-nobody/components/paint'], 1);
    const names = ['canary-alice', 'canary-bob', 'canary-carol'];
    await sendAll(
      agent.proxyUrl,
      names.flatMap((name) => [`/${name}/components/paint`, `/${name}/components/trim`]),
      1,
    );
    await sendAll(agent.proxyUrl, ['/canary-nemo/components/trim'], 1);
    const templates = await sentTemplates(agent);
    expect(templates).toEqual(['/{name}/components/paint', '/{name}/components/trim']);
    expect(backend.count((o) => o.path === '/{name}/components/paint' && o.status === 404)).toBe(1);
    expect(backend.count((o) => o.path === '/{name}/components/trim' && o.status === 404)).toBe(1);
    const batches = backend.messages.filter((m): m is BatchMessage => m.type === 'batch');
    expect(batches.reduce((sum, b) => sum + (b.unmatched?.requests ?? 0), 0)).toBe(0);
    expect(backend.frames.some((frame) => frame.includes('canary-'))).toBe(false);
  });

  it('regroups a template sent under a first segment that is learned later (/xml/Teams/{team} → /{name}/Teams/{team})', async () => {
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts.length === 3 && parts[1] === 'Teams') return sendJson(res, 200, { login: 'x', id: 1, name: 'n' });
      if (parts.length === 2 && parts[1] === 'Teams') return sendJson(res, 200, [{ TeamId: 1, Name: 'n' }]);
      if (parts.length === 2 && parts[1] === 'Players') return sendJson(res, 200, [{ PlayerId: 1, Team: 't' }]);
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { pathHoldMs: 100 },
    });
    try {
      await sendAll(agent.proxyUrl, ['/xml/Teams/canary-alice', '/xml/Teams/canary-bob'], 1);
      await waitFor('sent under /xml/Teams/{team}', () => backend.count((o) => o.path === '/xml/Teams/{team}') === 2);
      await sendAll(agent.proxyUrl, ['/json/Teams', '/xml/Teams', '/json/Players', '/xml/Players'], 1);
      const learned = await waitFor('the first segment learned', () =>
        backend.messages.find(
          (m): m is LearnedMessage => m.type === 'learned' && m.templates.includes('/{name}/Teams/{team}'),
        ),
      );
      expect(learned.covers?.['/{name}/Teams/{team}']).toEqual([pathDigest(agent.captureId(), '/xml/Teams/{team}')]);
    } finally {
      await agent.close();
    }
    expect(backend.frames.some((frame) => frame.includes('canary-'))).toBe(false);
  });

  /**
   * Names right after a version: fifteen teach `/v3/{name}/brands`, a sixteenth is sent after them, then two
   * accounts and `/v3/status` (other fields). `flood` requests of 300 KB lists go first (under load).
   */
  async function namesAfterVersion(tuning: Parameters<typeof startTestAgent>[0]['tuning'], flood: number) {
    const feed = JSON.stringify(
      Array.from({ length: 3_000 }, (_, i) => ({ id: i, title: `t${i}`, body: 'b'.repeat(80) })),
    );
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('?')[0]!.split('/').filter(Boolean);
      if (parts[0] === 'feed') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(feed) });
        return res.end(feed);
      }
      if (parts[0] === 'v3' && parts.length === 3 && parts[2] === 'brands')
        return sendJson(res, 200, [{ name: 'n', displayName: 'd', state: 's' }]);
      if (parts[0] === 'v3' && parts[1] === 'status')
        return sendJson(res, 200, { healthy: true, uptime: 1, region: 'r' });
      if (parts[0] === 'v3' && parts.length === 2)
        return sendJson(res, 200, { name: 'n', accountId: 'a', created: 'c' });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x', tuning });
    const first = Array.from({ length: 15 }, (_, i) => `canary-${String.fromCharCode(97 + i)}`);
    let learned: LearnedMessage;
    try {
      await sendAll(
        agent.proxyUrl,
        Array.from({ length: flood }, (_, i) => `/feed/${i + 1}`),
        4,
      );
      // Fifteen names alike: an API's resources may answer alike too (`/open-banking/v2.2/…`), but they are few. Not
      // held (resources live after a version as at the first segment): they go out as they are.
      await sendAll(
        agent.proxyUrl,
        first.map((name) => `/v3/${name}/brands`),
        1,
      );
      await waitFor('the first names sent', () => backend.count((o) => o.path.endsWith('/brands')) === 15);
      await sendAll(agent.proxyUrl, ['/v3/canary-dave/brands'], 1);
      learned = await waitFor('learned', () =>
        backend.messages.find(
          (m): m is LearnedMessage => m.type === 'learned' && m.templates.includes('/v3/{name}/brands'),
        ),
      );
      // Two accounts answer alike, `status` other fields: it stays literal beside them (an exception).
      await sendAll(
        agent.proxyUrl,
        ['/v3/canary-erin/brands', '/v3/canary-frank', '/v3/canary-grace', '/v3/status'],
        1,
      );
    } finally {
      await agent.close();
    }
    expect([...new Set(backend.observations().map((o) => o.path))].sort()).toEqual([
      ...(flood > 0 ? ['/feed/{feedId}'] : []),
      ...first.map((name) => `/v3/${name}/brands`),
      '/v3/status',
      '/v3/{name}',
      '/v3/{name}/brands',
    ]);
    // Only the fifteen sent before the sixteenth taught the template ever left, and the backend regroups them.
    for (const name of ['canary-dave', 'canary-erin', 'canary-frank', 'canary-grace'])
      expect(backend.frames.some((frame) => frame.includes(name))).toBe(false);
    return { agent, first, learned };
  }

  it('learns names right after a version from alike values among sixteen, regroups those sent before, sends no later one', async () => {
    // Every answer shaped (the same under load: see the next test).
    const { agent, first, learned } = await namesAfterVersion(
      { sampler: { budgetShare: 1, burstMs: Infinity, maxPerKeyPerSecond: Infinity } },
      0,
    );
    expect([...(learned.covers?.['/v3/{name}/brands'] ?? [])].sort()).toEqual(
      first.map((name) => pathDigest(agent.captureId(), `/v3/${name}/brands`)).sort(),
    );
  });

  it('sends no name after a version under load, with the default shape budget spent', async () => {
    // The default sampler on a clock that stands still: a loaded agent's. Once a flood of 300 KB lists has spent
    // the budget, each endpoint and status gets its one sample per window only. frank's answer takes its
    // endpoint's; grace's is shaped all the same, as the first of its path: the learner's evidence. Without it
    // frank could be compared with `status` alone, and went out literal.
    const { agent } = await namesAfterVersion({ samplerClock: () => 0 }, 30);
    expect(agent.metrics.get('unshaped_total')).toBeGreaterThan(15);
    expect(agent.metrics.get('evidence_shaped_total')).toBeGreaterThan(0);
  });

  it('holds names before an identifier until decided: none on the wire, none in a parameter name (two or three a position)', async () => {
    // Names before a date, as a market data API takes a symbol (`/v1/historic/quotes/{symbol}/{date}`): fewer than the
    // four that decide such a position, which used to go out as they are, naming the date after them (`{wonkaId}`).
    const quotes = ['canary-wonka', 'canary-Oscar75', 'canary-erin'];
    const trades = ['canary-judy-payments', 'canary-Grace39'];
    const accounts = ['canary-stark', 'canary-tyrell-cli'];
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[1] === 'historic' && parts[2] === 'quotes' && parts.length === 5)
        return sendJson(res, 200, { ticker: 't', status: 'ok', results: [{ bid: 1, ask: 2, at: 3 }] });
      if (parts[1] === 'historic' && parts[2] === 'trades' && parts.length === 5)
        return sendJson(res, 200, { symbol: 's', map: { price: 'p' }, ticks: [{ price: 1, size: 2 }] });
      if (parts[0] === 'ledger' && parts.length === 3)
        return sendJson(res, 200, { balance: 1, currency: 'c', owner: 'o' });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    await sendAll(
      agent.proxyUrl,
      [
        ...quotes.map((name, i) => `/v1/historic/quotes/${name}/2020-01-1${i}`),
        ...trades.map((name, i) => `/v1/historic/trades/${name}/2021-02-1${i}`),
        ...accounts.map((name, i) => `/ledger/${name}/${4_000_001 + i}`),
      ],
      1,
    );
    expect(await sentTemplates(agent)).toEqual([
      '/ledger/{ledger}/{ledgerId}',
      '/v1/historic/quotes/{quote}/{quoteId}',
      '/v1/historic/trades/{trade}/{tradeId}',
    ]);
    // No name: not in a row, not in a learned message, not camel-cased into a parameter's name.
    expect(backend.frames.filter((frame) => /canary/i.test(frame))).toEqual([]);
  });

  it('sends no name before an identifier among names that answer other fields, nor one named into a parameter', async () => {
    // circleci's builds (held-out 5): a name whose build answered other optional fields than its siblings' was kept
    // an exception of `/project/{owner}/{project}`, so it went out as it is, the build number named after it
    // (`/project/{project}/canary-erin-dinner/{canaryErinDinnerId}`). A single name before an identifier goes out as
    // it is once its hold is over, but its identifier is not named after it (`{canaryAcmeId}`).
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[0] === 'project' && parts[3] === 'envvar') return sendJson(res, 200, [{ name: 'n', value: 'v' }]);
      if (parts[0] === 'project' && parts[4] === 'cancel')
        return sendJson(
          res,
          200,
          parts[2] === 'canary-walter'
            ? { branch: 'b', dont_build: 'd', queued_at: 'q' }
            : { build_url: 'u', outcome: 'o', previous: { build_num: 1 } },
        );
      if (parts[0] === 'project' && parts.length === 4)
        return sendJson(
          res,
          200,
          parts[2] === 'canary-erin-dinner'
            ? { all_commit_details: [], compare: 'c', job_name: 'j', timedout: false }
            : { build_num: 1, status: 's', subject: 's', vcs_url: 'u', branch: 'b' },
        );
      if (parts[0] === 'trades') return sendJson(res, 200, { price: 1, size: 2 });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    await sendAll(
      agent.proxyUrl,
      [
        '/project/canary-alice/canary-web/envvar',
        '/project/canary-bob/canary-cli/envvar',
        '/project/canary-carol/canary-api/envvar',
        '/project/canary-dave/canary-docs/1017',
        '/project/canary-erin/canary-site/1018',
        '/project/canary-frank/canary-erin-dinner/1019',
        '/project/canary-grace/canary-ops/1020/cancel',
        '/project/canary-heidi/canary-mobile/1021/cancel',
        '/project/canary-ivan/canary-walter/1022/cancel',
        '/trades/canary-acme/2021-02-10',
      ],
      1,
    );
    expect(await sentTemplates(agent)).toEqual([
      '/project/{owner}/{project}/envvar',
      '/project/{owner}/{project}/{projectId}',
      '/project/{owner}/{project}/{projectId}/cancel',
      '/trades/canary-acme/{id}',
    ]);
    // The one name alone is the only one on the wire, and never camel-cased into a parameter's name.
    expect(backend.frames.filter((frame) => /canary/i.test(frame.replaceAll('/trades/canary-acme/', '')))).toEqual([]);
  });

  it('sends no name of many values each requested once after a route word, whatever they answer', async () => {
    // aviationdata's autocomplete (held-out 5): names each requested once, answering `{}`, `{disclaimer}`, a list.
    const names = ['canary-alice', 'canary-bob-search', 'canary-Carol48', 'canary-dave-mobile', 'canary-erin'];
    const answers = [{}, { disclaimer: 'd' }, { airport_list: [{ value: 'v' }] }, { message: 'm', status_code: 's' }];
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[0] === 'stations' && parts.length === 3)
        return sendJson(res, 200, answers[names.indexOf(parts[2]!) % answers.length] ?? {});
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    await sendAll(
      agent.proxyUrl,
      names.map((name, i) => `/stations/${17 + i}/${name}`),
      1,
    );
    expect(await sentTemplates(agent)).toEqual(['/stations/{stationId}/{station}']);
    expect(backend.frames.filter((frame) => /canary/i.test(frame))).toEqual([]);
  });

  it('holds an exception of a learned position like a new literal, so a misread one does not leave', async () => {
    // A name answering other fields than the values so far is an exception (a route word such as `/users/me`) until a
    // second one answers as it does: held, it goes out as a value; `/users/me` alone stays literal.
    const answers: Record<string, object> = {
      alice: { login: 'a', id: 1, name: 'n' },
      bob: { login: 'b', id: 2, name: 'n' },
      'canary-carol': { handle: 'h', karma: 1 },
      'canary-dave-infra': { handle: 'h', karma: 2 },
      me: { settings: { theme: 't' }, plan: 'p' },
    };
    const agent = await holdingAgent((_method, parts) =>
      parts[0] === 'users' && parts.length === 2 ? answers[parts[1]!] : undefined,
    );
    await sendAll(
      agent.proxyUrl,
      Object.keys(answers).map((name) => `/users/${name}`),
      1,
    );
    expect(await sentTemplates(agent)).toEqual(['/users/me', '/users/{user}']);
    expect(backend.frames.filter((frame) => /canary/i.test(frame))).toEqual([]);
  });

  it('sends no name whose answers left optional fields out, neither of two that contradict each other', async () => {
    // getsandbox.com-like (held-out 14): sandboxes read alike, and the only two updates answered 200 take and answer
    // other optional fields each, so they contradict each other and agree with no sibling. Every field they show a
    // read shows: values, not route words. A third name answers fewer fields than any other.
    const sandbox = { id: 'x', name: 'n', description: 'd', gitUrl: 'g', stackType: 's', proxyStatus: 'p' };
    const pick = (...names: Array<keyof typeof sandbox | 'sandboxUrl'>) =>
      Object.fromEntries(names.map((name) => [name, 'v']));
    const reads: Record<string, object> = {
      'canary-alice': sandbox,
      'canary-bob': pick('id', 'name', 'description', 'gitUrl', 'sandboxUrl'),
      'canary-erin': pick('sandboxUrl', 'proxyStatus'),
    };
    const updates: Record<string, object> = {
      'canary-carol': pick('id', 'gitUrl', 'proxyStatus'),
      'canary-dave': pick('name', 'description', 'stackType'),
    };
    const agent = await holdingAgent((method, parts) => {
      const name = parts[0] === 'sandboxes' && parts.length === 2 ? parts[1]! : '';
      return method === 'PUT' ? updates[name] : reads[name];
    });
    for (const name of Object.keys(reads))
      await fetch(`${agent.proxyUrl}/sandboxes/${name}`).then((r) => r.arrayBuffer());
    const bodies: Record<string, object> = { 'canary-carol': pick('name'), 'canary-dave': pick('gitUrl', 'stackType') };
    for (const [name, body] of Object.entries(bodies))
      await fetch(`${agent.proxyUrl}/sandboxes/${name}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.arrayBuffer());
    expect(await sentTemplates(agent)).toEqual(['/sandboxes/{sandbox}']);
    expect(backend.frames.filter((frame) => /canary/i.test(frame))).toEqual([]);
  });

  it('sends no BBC-like pid (a comma, or no vowel) beside detected identifiers; a route word there stays literal', async () => {
    // bbci.co.uk (held-out 13): pids are drawn from digits and consonants, some lists (`wtcazm,g3`); those that
    // switched letters and digits less than three times were route words beside `/episodes/46z92y5a8/…` and left.
    const pids = ['gr6gjcxskbvv', 'fxtnjzqqh', 'wtcazm,g3', 'lw3yddjt'];
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[0] === 'episodes' && parts[1] === 'latest') return sendJson(res, 200, { latest: [{ id: 'x' }] });
      if (parts[0] === 'episodes' && parts.length === 2) return sendJson(res, 200, { id: 'x', title: 't' });
      if (parts[0] === 'episodes' && parts.length === 3) return sendJson(res, 200, [{ id: 'x', kind: 'k' }]);
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    await sendAll(
      agent.proxyUrl,
      [
        '/episodes/46z92y5a8/prerolls',
        '/episodes/7ycrkjry1g',
        '/episodes/latest',
        ...pids.map((pid, i) => `/episodes/${pid}${i % 2 === 0 ? '/prerolls' : ''}`),
      ],
      1,
    );
    expect(await sentTemplates(agent)).toEqual([
      '/episodes/latest',
      '/episodes/{episodeId}',
      '/episodes/{episodeId}/prerolls',
    ]);
    const leaked = pids.filter((pid) =>
      backend.frames.some((frame) => frame.includes(pid) || frame.includes(encodeURIComponent(pid))),
    );
    expect(leaked).toEqual([]);
  });

  it('sends no name before an identifier at a position learned from values (/sets/{set}/{setId})', async () => {
    // tcgdex.net (held-out 13): the sets read alone made `/sets/{set}`; a set's cards went out `/sets/canary-x/{id}`.
    upstream = await startUpstream((req, res) => {
      const parts = (req.url ?? '/').split('/').filter(Boolean);
      if (parts[0] === 'sets' && parts.length === 2) return sendJson(res, 200, { id: 's', name: 'n', cards: [] });
      if (parts[0] === 'sets' && parts.length === 3)
        return sendJson(res, 200, { id: 'c', localId: 'l', name: 'n', set: { id: 's' } });
      return sendJson(res, 404, { message: 'Not Found' });
    });
    backend = await FakeBackend.start();
    // Held longer than the test takes, whatever the load: what is held goes out when the agent stops.
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { pathHoldMs: 60_000 },
    });
    const names = ['canary-globex', 'canary-hooli', 'canary-stark-web', 'canary-tyrell', 'canary-wonka'];
    await sendAll(
      agent.proxyUrl,
      ['/sets/canary-bob', '/sets/canary-acme-docs', ...names.map((name, i) => `/sets/${name}/${654124 + i}`)],
      1,
    );
    expect(await sentTemplates(agent)).toEqual(['/sets/{set}', '/sets/{set}/{setId}']);
    expect(backend.frames.filter((frame) => /canary/i.test(frame))).toEqual([]);
  });

  it('counts 1,000 scanner requests apart and leaves every real template intact', async () => {
    upstream = await startUpstream(namedApi());
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x' });
    const scanner: string[] = [];
    const probes = [
      '/.env',
      '/wp-admin/setup-config.php',
      '/wp-login.php',
      '/.git/config',
      '/phpmyadmin/index.php',
      '/admin/config.php',
      '/api/.env',
      '/server-status',
      '/actuator/health',
      '/cgi-bin/luci',
    ];
    for (let i = 0; i < 1_000; i++)
      scanner.push(i % 2 === 0 ? probes[i % probes.length]! : `/scan-${(i * 7919) % 61}/x${i % 3}/index.php`);
    const distinct = new Set(scanner).size;
    // Real traffic first, then the scanner mixed with more real traffic.
    const real = realTraffic().slice(0, -1);
    await sendAll(agent.proxyUrl, real, 1);
    const mixed: string[] = [];
    scanner.forEach((p, i) => {
      mixed.push(p);
      if (i % 50 === 0) mixed.push(real[(i / 50) % real.length]!);
    });
    await sendAll(agent.proxyUrl, mixed);
    await agent.close();
    const templates = [...new Set(backend.observations().map((o) => o.path))].sort();
    expect(templates).toEqual(EXPECTED_TEMPLATES);
    // Each batch once: under load a batch not acknowledged in time is sent again with its id (1,059 counted so).
    const batches = backend.uniqueBatches();
    const requests = batches.reduce((sum, b) => sum + (b.unmatched?.requests ?? 0), 0);
    const paths = Math.max(...batches.map((b) => b.unmatched?.paths ?? 0));
    expect({ requests, paths }).toEqual({ requests: 1_000, paths: distinct });
    expect(agent.metrics.get('unmatched_total')).toBe(1_000);
    expect(
      backend.frames.some((frame) => frame.includes('wp-admin') || frame.includes('scan-') || frame.includes('.env')),
    ).toBe(false);
    // A thousand exchanges through a real proxy: a bound for a loaded machine, not a speed check.
  }, 120_000);

  it('matches service.yml paths like documented templates and tells the backend to regroup them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-paths-'));
    const configPath = path.join(dir, 'service.yml');
    fs.writeFileSync(configPath, 'ignoreRequests: []\npaths:\n  - /users/{username}\n  - 42\n  - /users/me\n');
    upstream = await startUpstream(namedApi());
    backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x', configPath });
    try {
      await sendAll(agent.proxyUrl, [`/users/${NAMES.users[0]}`], 1);
      const hint = await waitFor('hint', () => backend.messages.find((m): m is LearnedMessage => m.type === 'learned'));
      // The literal entry goes along, so the backend keeps its rows apart from the template's.
      expect(hint).toMatchObject({ templates: ['/users/{username}'], hint: true, literals: ['/users/me'] });
      expect(agent.logs.find('bad paths entry skipped')[0]).toMatchObject({ index: 1 });
      // One value, yet no hold: a stated template is decided.
      await waitFor('sent under the hint', () => backend.count((o) => o.path === '/users/{username}') === 1);
      expect(backend.frames.some((frame) => frame.includes(NAMES.users[0]!))).toBe(false);
    } finally {
      await agent.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
