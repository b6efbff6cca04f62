/**
 * Usage (docs/api.md, Usage): last seen per endpoint, status, field, query parameter and header in
 * an environment; orphans (documented, not seen for N days), zombies (deprecated, still called);
 * what is safe to remove and a removal proposal drafted from it; Deprecation and Sunset headers seen
 * in traffic, whose values never leave the agent.
 */
import type {
  DeprecationResponse,
  OrphansResponse,
  SafeToRemoveResponse,
  TokenResponse,
  UsageResponse,
} from '@spectator/shared';
import { sqlOn, startTestBackend, type TestBackend } from './support';
import {
  call,
  documentGet,
  eventually,
  report,
  reportQueued,
  startJsonApp,
  untilFolded,
  withAgent,
} from './support/evidence-helpers';
import { tablesContaining } from './support/privacy';

/** Header values that must never leave the agent (RFC 9745 and RFC 8594 forms). */
const DEPRECATION_VALUE = '@1688169599';
const SUNSET_VALUE = 'Wed, 11 Nov 2099 23:59:59 GMT';
/** A Sunset date already past: the agent tells only that it passed. */
const PAST_SUNSET_VALUE = 'Sun, 06 Nov 1994 08:49:37 GMT';
/** The mark of /daily's query parameter `page`. */
const PAGE_MARK = { method: 'GET', path: '/daily', location: 'query', name: 'page' };

let backend: TestBackend;
let agentToken: string;

/**
 * Moves production evidence back in time: of each environment row `name`, the endpoint `path`'s
 * evidence and the row itself `days` days. One statement per table (not a connection per row).
 */
async function seenDaysAgo(moves: ReadonlyArray<{ name: string; path: string; days: number }>): Promise<void> {
  const values = [moves.map((m) => m.name), moves.map((m) => m.path), moves.map((m) => m.days)];
  await sqlOn(
    backend.databaseUrl,
    `UPDATE evidence_observations o SET last_seen = now() - make_interval(days => m.days)
       FROM environment_rows r, unnest($1::text[], $2::text[], $3::int[]) AS m(name, path, days)
      WHERE r.id = o.row_id AND r.name = m.name AND o.path = m.path`,
    values,
  );
  await sqlOn(
    backend.databaseUrl,
    `UPDATE environment_rows r SET last_seen = now() - make_interval(days => m.days)
       FROM unnest($1::text[], $2::int[]) AS m(name, days) WHERE r.name = m.name`,
    [values[0], values[2]],
  );
}

beforeAll(async () => {
  backend = await startTestBackend();
  await backend.api('POST', '/projects', { slug: 'use', name: 'Use' });
  agentToken = (await backend.api<TokenResponse>('POST', '/projects/use/tokens', { name: 'agent', scope: 'agent' }))
    .body.token as string;
  for (const path of ['/daily', '/stale', '/never', '/legacy', '/retired'])
    await documentGet(backend, 'use', path, { id: { type: 'number' } });
  // /daily is called every day of the last 30 (one production build a day), /stale 40 days ago only.
  // Each build is its own environment row, folded on its own: all are reported at once, then their
  // folds awaited once (not a fold, GATHER_MS and more, per report in turn); then their dates are moved.
  await Promise.all([
    ...Array.from({ length: 30 }, (_, day) =>
      reportQueued(backend.url, agentToken, { kind: 'production', build: `d-${day}` }, [
        { method: 'GET', path: '/daily', status: 200, response: { id: 1 } },
      ]),
    ),
    reportQueued(backend.url, agentToken, { kind: 'production', build: 'old' }, [
      { method: 'GET', path: '/stale', status: 200, response: { id: 1 } },
    ]),
  ]);
  await untilFolded(backend.databaseUrl);
  await seenDaysAgo([
    ...Array.from({ length: 30 }, (_, day) => ({ name: `d-${day}`, path: '/daily', days: day })),
    { name: 'old', path: '/stale', days: 40 },
  ]);
  // Through a real agent: a query parameter, and an API that says /legacy is deprecated and sunsets.
  const app = await startJsonApp({
    'GET /daily': () => ({ status: 200, body: { id: 1, name: 'n' } }),
    'GET /legacy': () => ({
      status: 200,
      body: { id: 1 },
      headers: { deprecation: DEPRECATION_VALUE, sunset: SUNSET_VALUE },
    }),
    'GET /retired': () => ({ status: 200, body: { id: 1 }, headers: { sunset: PAST_SUNSET_VALUE } }),
  });
  try {
    await withAgent(backend.url, agentToken, app.url, { kind: 'production', build: 'live' }, async (proxy) => {
      await call(proxy, 'GET', '/daily?page=2');
      await call(proxy, 'GET', '/legacy');
      await call(proxy, 'GET', '/retired');
    });
  } finally {
    await app.close();
  }
  // The project's 60 s is a quiet machine's: this hook took 58-60 s at load 22 (passing) and ran
  // past 60 s at load 24-27 (at the real date and in January 2027 alike, ci30), 31 reports at once.
}, 180_000);

afterAll(async () => {
  await backend.close();
});

describe('usage', () => {
  it('says when each endpoint, status, field, query parameter and header was last seen in production', async () => {
    const { status, body } = await backend.api<UsageResponse>('GET', '/projects/use/usage?environment=production');
    expect(status).toBe(200);
    expect(body.endpoints.map((e) => `${e.method} ${e.path}`)).toEqual([
      'GET /daily',
      'GET /legacy',
      'GET /never',
      'GET /retired',
      'GET /stale',
    ]);
    const daily = body.endpoints.find((e) => e.path === '/daily');
    expect(daily).toMatchObject({
      version: '1.0',
      deprecated: false,
      deprecationHeaders: { deprecation: null, sunset: null, sunsetPast: null },
    });
    expect(daily?.statuses.map((s) => s.status)).toEqual([200]);
    expect(daily?.query.map((q) => q.name)).toEqual(['page']);
    expect(daily?.responseFields.map((f) => f.name)).toEqual(['$.id', '$.name']);
    expect(Date.now() - Date.parse(daily?.lastSeen ?? '')).toBeLessThan(24 * 3600_000);
    const legacy = body.endpoints.find((e) => e.path === '/legacy');
    expect(legacy?.deprecationHeaders).toEqual({
      deprecation: expect.any(String),
      sunset: expect.any(String),
      sunsetPast: null,
    });
    expect(legacy?.responseHeaders.map((h) => h.name)).toEqual(expect.arrayContaining(['deprecation', 'sunset']));
    // Its Sunset date had passed when the answer was seen: only that is known, listed apart from the header names.
    const retired = body.endpoints.find((e) => e.path === '/retired');
    expect(retired?.deprecationHeaders).toEqual({
      deprecation: null,
      sunset: expect.any(String),
      sunsetPast: expect.any(String),
    });
    expect(retired?.responseHeaders.map((h) => h.name)).toContain('sunset');
    expect(retired?.responseHeaders.map((h) => h.name)).not.toContain('sunset:past');
    expect(body.endpoints.find((e) => e.path === '/never')?.lastSeen).toBeNull();
  });

  it('answers for one build of the environment, its response headers from its own captures', async () => {
    const usage = async (build: string) =>
      (await backend.api<UsageResponse>('GET', `/projects/use/usage?environment=production&build=${build}`)).body;
    const seen = (answer: UsageResponse) =>
      answer.endpoints.filter((e) => e.lastSeen !== null).map((e) => `${e.method} ${e.path}`);
    const live = await usage('live');
    expect(live.build).toBe('live');
    expect(seen(live)).toEqual(['GET /daily', 'GET /legacy', 'GET /retired']);
    expect(live.endpoints.find((e) => e.path === '/daily')?.query.map((q) => q.name)).toEqual(['page']);
    expect(live.endpoints.find((e) => e.path === '/legacy')?.deprecationHeaders.deprecation).toEqual(
      expect.any(String),
    );
    // Build d-3 called /daily alone, with no query; /legacy's headers belong to build live's captures.
    const d3 = await usage('d-3');
    expect(seen(d3)).toEqual(['GET /daily']);
    expect(d3.endpoints.find((e) => e.path === '/daily')?.query).toEqual([]);
    const legacy = d3.endpoints.find((e) => e.path === '/legacy');
    expect({ lastSeen: legacy?.lastSeen, headers: legacy?.responseHeaders }).toEqual({ lastSeen: null, headers: [] });
    expect(legacy?.deprecationHeaders).toEqual({ deprecation: null, sunset: null, sunsetPast: null });

    // Orphans of one build: build old called only /stale, 40 days ago.
    const old = (await backend.api<OrphansResponse>('GET', '/projects/use/usage/orphans?build=old&days=30')).body;
    expect({ environment: old.environment, build: old.build }).toEqual({ environment: 'production', build: 'old' });
    expect(old.orphans.map((o) => [o.path, o.lastSeen === null])).toEqual([
      ['/daily', true],
      ['/legacy', true],
      ['/never', true],
      ['/retired', true],
      ['/stale', false],
    ]);
    expect(old.zombies).toEqual([]);

    for (const route of ['/usage?environment=production&build=p-9', '/usage/orphans?build=p-9']) {
      const { status, body } = await backend.api<{ message: string }>('GET', `/projects/use${route}`);
      expect({ route, status, message: body.message }).toEqual({
        route,
        status: 404,
        message: 'environment production has no build p-9 in project use',
      });
    }
    const long = await backend.api<{ message: string }>('GET', `/projects/use/usage/orphans?build=${'b'.repeat(201)}`);
    expect({ status: long.status, message: long.body.message }).toEqual({
      status: 400,
      message: 'build must be at most 200 characters',
    });
  });

  it('pages the usage view by path then method: the pages put together are the whole view', async () => {
    const whole = (await backend.api<UsageResponse>('GET', '/projects/use/usage?environment=production')).body;
    const paged: UsageResponse['endpoints'] = [];
    let after: string | undefined;
    for (;;) {
      const { status, body } = await backend.api<UsageResponse>(
        'GET',
        `/projects/use/usage?environment=production&limit=2${after === undefined ? '' : `&after=${encodeURIComponent(after)}`}`,
      );
      expect(status).toBe(200);
      expect(body.endpoints.length).toBeLessThanOrEqual(2);
      if (body.endpoints.length === 0) break;
      paged.push(...body.endpoints);
      const last = body.endpoints[body.endpoints.length - 1] as UsageResponse['endpoints'][number];
      after = `${last.method} ${last.path}`;
    }
    expect(paged.map((e) => e.path)).toEqual(['/daily', '/legacy', '/never', '/retired', '/stale']);
    // A page holds the same as the whole view for its endpoints.
    expect(paged).toEqual(whole.endpoints);
    // A key no longer listed still pages from the next one.
    const next = await backend.api<UsageResponse>(
      'GET',
      `/projects/use/usage?environment=production&limit=1&after=${encodeURIComponent('GET /m')}`,
    );
    expect(next.body.endpoints.map((e) => e.path)).toEqual(['/never']);
  });

  it('never counts an endpoint exercised daily as an orphan, whatever the window', async () => {
    for (const days of [1, 2, 7, 30, 39, 41, 365]) {
      const { body } = await backend.api<OrphansResponse>('GET', `/projects/use/usage/orphans?days=${days}`);
      const orphans = body.orphans.map((o) => o.path);
      expect(orphans).not.toContain('/daily');
      expect(orphans).toContain('/never');
      // Seen 40 days ago: an orphan in a window shorter than that, not in a longer one.
      expect(orphans.includes('/stale')).toBe(days < 40);
    }
  });

  it('lists zombies: deprecated (marked, or by Deprecation and Sunset headers) and still called', async () => {
    expect((await backend.api('POST', '/projects/use/deprecations', PAGE_MARK)).status).toBe(204);
    expect(
      (await backend.api('POST', '/projects/use/deprecations', { method: 'GET', path: '/stale', location: 'endpoint' }))
        .status,
    ).toBe(204);
    const marks = await backend.api<DeprecationResponse[]>('GET', '/projects/use/deprecations');
    expect(marks.body.map((m) => [m.path, m.location, m.name, m.source])).toEqual([
      ['/daily', 'query', 'page', 'dashboard'],
      ['/stale', 'endpoint', '', 'dashboard'],
    ]);
    const { body } = await backend.api<OrphansResponse>('GET', '/projects/use/usage/orphans?days=30');
    expect(body.zombies.map((z) => [z.path, z.location, z.name, z.why])).toEqual([
      ['/daily', 'query', 'page', 'marked deprecated'],
      ['/legacy', 'endpoint', '', 'answered with a Deprecation or Sunset header'],
      ['/retired', 'endpoint', '', 'answered past its Sunset date'],
    ]);
    // Not called in the window: /stale is an orphan, not a zombie.
    expect(body.orphans.find((o) => o.path === '/stale')?.deprecated).toBe(true);
    expect((await backend.api('DELETE', '/projects/use/deprecations', PAGE_MARK)).status).toBe(204);
    expect((await backend.api<DeprecationResponse[]>('GET', '/projects/use/deprecations')).body).toHaveLength(1);
  });

  it('lists what is safe to remove with its evidence, and drafts a removal proposal', async () => {
    const { body } = await backend.api<SafeToRemoveResponse>('GET', '/projects/use/usage/safe-to-remove?days=30');
    expect(body.endpoints.map((e) => e.path)).toEqual(['/never', '/stale']);
    expect(body.endpoints[0]?.evidence).toEqual([
      'never seen in production',
      expect.stringMatching(/^production traffic of other endpoints seen until /),
      'never seen in staging',
    ]);
    expect(body.endpoints[1]?.evidence).toContain('marked deprecated');
    expect(body.draft?.title).toBe('Remove 2 endpoints unused in production for 30 days');
    expect(body.draft?.description).toContain('- `GET /never` 1.0: never seen in production');
  });

  it('keeps `deprecated` of an OpenAPI import as marks: operations, query and header parameters', async () => {
    await backend.api('POST', '/projects', { slug: 'imported', name: 'Imported' });
    const imported = await backend.api('POST', '/projects/imported/openapi/import', {
      openapi: '3.1.0',
      info: { title: 'old', version: '1' },
      paths: {
        '/old': {
          get: {
            deprecated: true,
            parameters: [
              { name: 'page', in: 'query', deprecated: true, schema: { type: 'string' } },
              { name: 'X-Tenant', in: 'header', deprecated: true, schema: { type: 'string' } },
              { name: 'limit', in: 'query', schema: { type: 'string' } },
            ],
            responses: { '204': { description: 'none' } },
          },
        },
      },
    });
    expect(imported.status).toBe(201);
    const marks = await backend.api<DeprecationResponse[]>('GET', '/projects/imported/deprecations');
    expect(marks.body.map((m) => [m.method, m.path, m.location, m.name, m.source])).toEqual([
      ['GET', '/old', 'endpoint', '', 'openapi'],
      ['GET', '/old', 'header', 'x-tenant', 'openapi'],
      ['GET', '/old', 'query', 'page', 'openapi'],
    ]);
  });

  it('keeps `deprecated` properties of imported bodies as marks, and counts them as zombies when still sent', async () => {
    await backend.api('POST', '/projects', { slug: 'props', name: 'Props' });
    const imported = await backend.api('POST', '/projects/props/openapi/import?approve=true', {
      openapi: '3.1.0',
      info: { title: 'props', version: '1' },
      components: {
        schemas: {
          Item: {
            type: 'object',
            properties: { id: { type: 'number' }, old: { type: 'string', deprecated: true } },
          },
        },
      },
      paths: {
        '/orders': {
          post: {
            requestBody: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      title: { type: 'string' },
                      legacyName: { type: 'string', deprecated: true },
                      'legacy code': { type: 'string', deprecated: true },
                    },
                  },
                },
              },
            },
            responses: {
              '201': {
                description: 'made',
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      properties: { items: { type: 'array', items: { $ref: '#/components/schemas/Item' } } },
                    },
                  },
                },
              },
              '200': {
                description: 'the same again',
                content: {
                  'application/json': {
                    schema: {
                      type: 'object',
                      properties: { items: { type: 'array', items: { $ref: '#/components/schemas/Item' } } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    });
    expect(imported.status).toBe(201);
    const marks = await backend.api<DeprecationResponse[]>('GET', '/projects/props/deprecations');
    // Each once, though two responses use the same schema; the order of names is the database's collation's.
    expect(marks.body.map((m) => [m.method, m.path, m.location, m.name, m.source].join(' ')).sort()).toEqual([
      'POST /orders request $.legacyName openapi',
      'POST /orders request $["legacy code"] openapi',
      'POST /orders response $.items[].old openapi',
    ]);
    const token = (await backend.api<TokenResponse>('POST', '/projects/props/tokens', { name: 'a', scope: 'agent' }))
      .body.token as string;
    await report(backend.url, token, { kind: 'production', build: 'p-1' }, [
      {
        method: 'POST',
        path: '/orders',
        status: 201,
        request: { title: 't', legacyName: 'n' },
        response: { items: [{ id: 1, old: 'o' }] },
      },
    ]);
    const found = await eventually(
      async () => (await backend.api<OrphansResponse>('GET', '/projects/props/usage/orphans?days=30')).body,
      (answer) => answer.zombies.length >= 2,
    );
    expect(found.zombies.map((z) => [z.location, z.name, z.why])).toEqual([
      ['request', '$.legacyName', 'marked deprecated'],
      ['response', '$.items[].old', 'marked deprecated'],
    ]);
  });

  it('answers bad input with 400 naming it', async () => {
    for (const [method, route, payload, message] of [
      ['GET', '/projects/use/usage', undefined, 'environment must be one of the following values'],
      ['GET', '/projects/use/usage/orphans?days=0', undefined, 'days must not be less than 1'],
      ['GET', '/projects/use/usage?environment=production&limit=0', undefined, 'limit must not be less than 1'],
      ['GET', '/projects/use/usage?environment=production&after=daily', undefined, 'after must be the method and path'],
      [
        'POST',
        '/projects/use/deprecations',
        { method: 'GET', path: '/daily', location: 'query' },
        'name is required for a query',
      ],
      [
        'POST',
        '/projects/use/deprecations',
        { method: 'get', path: '/daily', location: 'endpoint' },
        'method must be an HTTP method',
      ],
    ] as const) {
      const answer = await backend.api<{ message: string }>(method, route, payload);
      expect(answer.status).toBe(400);
      expect(answer.body.message).toContain(message);
    }
  });

  it('keeps the values of Deprecation and Sunset headers out of every table (only their presence leaves the agent)', async () => {
    expect(await tablesContaining(backend.databaseUrl, DEPRECATION_VALUE.slice(1))).toEqual([]);
    expect(await tablesContaining(backend.databaseUrl, SUNSET_VALUE)).toEqual([]);
    expect(await tablesContaining(backend.databaseUrl, PAST_SUNSET_VALUE)).toEqual([]);
  });
});
