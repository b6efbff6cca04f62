import fc from 'fast-check';
import { parseIgnoreRules, pathDigest, queryNames, type IgnoreRule } from '@spectator/shared';
import { createRootLogger } from '../log';
import { Metrics } from '../metrics';
import { ObservationPipeline, type PipelineOptions } from './pipeline';
import { keyFingerprint } from './novelty';
import type { Exchange } from './exchange';

function pipeline(rules: IgnoreRule[] = []): ObservationPipeline {
  return new ObservationPipeline({
    bodyLimit: 1024,
    captureId: () => 'c1',
    rules: () => rules,
    metrics: new Metrics(),
    log: createRootLogger('silent'),
  });
}

/** A GET of `target` answered 200 in capture c1, with `fields` over these. */
function exchangeOf(target: string, fields: Partial<Exchange> = {}): Exchange {
  return {
    captureId: 'c1',
    method: 'GET',
    target,
    status: 200,
    requestHeaders: {},
    responseHeaders: {},
    request: null,
    response: null,
    at: 0,
    sampledBytes: 0,
    firstByte: 0,
    lastByte: 0,
    clientLeft: false,
    ...fields,
  };
}

/** The query names the pipeline reports for one request to `target`. */
function reported(observer: ObservationPipeline, target: string): readonly string[] {
  observer.record(exchangeOf(target));
  return observer.drain()[0]?.observations[0]?.query ?? [];
}

describe('ObservationPipeline query names', () => {
  it('reports the names queryNames finds, for any query, through its cache of raw names', () => {
    const observer = pipeline();
    const queryText = fc.stringMatching(/^[a-zA-Z0-9&=#%+?/[\]_.-]{0,40}$/);
    fc.assert(
      fc.property(queryText, (query) => {
        expect(reported(observer, `/p?${query}`)).toEqual([...queryNames(`?${query}`)].sort());
      }),
      { numRuns: 2_000 },
    );
  });

  it.each([
    ['/search?page=3&sort=asc', ['page', 'sort']],
    ['/search?page=4&sort=desc', ['page', 'sort']],
    ['/search?q=a=b&&tag[0]=x&tag[1]=y#frag=1', ['q', 'tag[]']],
    ['/search?', []],
  ])('%s → %j (values never change the names)', (target, names) => {
    expect(reported(pipeline(), target)).toEqual(names);
  });
});

describe('ObservationPipeline sampling', () => {
  const json = { 'content-type': 'application/json', 'content-length': '20' };

  it('spends no shape budget on ignored traffic: an ignored endpoint is never sampled, others still are', () => {
    const observer = pipeline(parseIgnoreRules(['GET POST /db']).rules);
    expect(observer.sample('GET', '/db?x=1', 200, json, 0)).toBe(0);
    expect(observer.sample('post', '/db', 201, json, 20)).toBe(0);
    expect(observer.sample('GET', '/posts', 200, json, 0)).toBeGreaterThan(0);
  });
});

describe('ObservationPipeline taps', () => {
  it('gives a body it cannot classify a tap that only counts, and says so, instead of throwing on the hot path', () => {
    const lines: string[] = [];
    const observer = new ObservationPipeline({
      bodyLimit: 1024,
      captureId: () => 'c1',
      rules: () => [],
      metrics: new Metrics(),
      log: createRootLogger('error', { write: (line: string) => lines.push(line) }),
    });
    // Not a header value node:http would give: the media type lookup throws on it.
    const tap = observer.tap({} as unknown as string, undefined, true);
    tap.write(Buffer.from('{"a":1}'));
    expect({ bytes: tap.bytes, copied: tap.copied, copying: tap.copying }).toEqual({
      bytes: 7,
      copied: 0,
      copying: false,
    });
    expect(lines.join('')).toContain('observing failed for one body');
  });
  it('fingerprints a kept JSON response as it comes only when it has no content coding', () => {
    const observer = pipeline([]);
    const [plain, identity, gzip] = [undefined, 'identity', 'gzip'].map((encoding) => {
      const tap = observer.tap('application/json', encoding, true, true);
      tap.write(Buffer.from('{"a":1}'));
      return tap.variantKeys();
    });
    expect(plain).toBe(keyFingerprint(Buffer.from('{"a":1}')));
    expect([identity, gzip]).toEqual([plain, null]);
  });
});

describe('ObservationPipeline stream taps', () => {
  const SSE = 'text/event-stream';
  const event = (text: string) => Buffer.from(`data: {"t":"${text}"}\n\n`);

  it('keeps all open streams’ bytes within streamBytesMax, each stream’s until its exchange releases them', () => {
    const metrics = new Metrics();
    const observer = new ObservationPipeline({
      bodyLimit: 1024 * 1024,
      streamBytesMax: 100,
      captureId: () => 'c1',
      rules: () => [],
      metrics,
      log: createRootLogger('silent'),
    });
    const held = () => Number(metrics.render().match(/spectator_agent_stream_bytes (\d+)/)?.[1]);
    const [big, small] = [event('a'.repeat(70)), event('b')];
    expect(big.length + small.length).toBeGreaterThan(100);
    const first = observer.tap(SSE, undefined, true);
    const second = observer.tap(SSE, undefined, true);
    first.write(big);
    second.write(small); // would pass 100 in all: not kept, and the stream keeps nothing from now on
    expect([first.copied, first.cut, second.copied, second.cut, held()]).toEqual([
      big.length,
      false,
      0,
      true,
      big.length,
    ]);
    second.write(small);
    expect([second.bytes, second.copied]).toEqual([2 * small.length, 0]);
    first.release();
    first.release(); // once only
    expect(held()).toBe(0);
    const third = observer.tap(SSE, undefined, true);
    third.write(small);
    expect([third.copied, held()]).toEqual([small.length, small.length]);
    // A JSON body is not a stream: the bound is not its.
    const json = observer.tap('application/json', undefined, true);
    json.write(Buffer.alloc(500, 0x20));
    expect([json.copied, held()]).toEqual([500, small.length]);
  });

  it('keeps at most 64 KiB of a stream, or the body limit when lower, and marks it cut', () => {
    const chunk = event('x'.repeat(1000));
    for (const [bodyLimit, kept] of [
      [1024, 1024],
      [1024 * 1024, 64 * 1024],
    ] as const) {
      const observer = new ObservationPipeline({
        bodyLimit,
        captureId: () => 'c1',
        rules: () => [],
        metrics: new Metrics(),
        log: createRootLogger('silent'),
      });
      const long = observer.tap(SSE, undefined, true);
      for (let i = 0; i < 100; i++) long.write(chunk);
      expect([long.prefix, long.copied, long.cut, long.bytes]).toEqual([true, kept, true, 100 * chunk.length]);
    }
  });
});

/** A pipeline with no shape budget on a clock `clock()` gives, and a GET answered 200 with a JSON body through it. */
function budgetless(clock: () => number, options: Partial<PipelineOptions> = {}) {
  const metrics = new Metrics();
  const observer = new ObservationPipeline({
    bodyLimit: 1024 * 1024,
    captureId: () => 'c1',
    rules: () => [],
    metrics,
    log: createRootLogger('silent'),
    sampler: { budgetShare: 0, burstMs: 0 },
    samplerClock: clock,
    ...options,
  });
  const send = (target: string, answer: object | Buffer): void => {
    const body = Buffer.isBuffer(answer) ? answer : Buffer.from(JSON.stringify(answer));
    const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
    const carrier = { sampleSlot: null };
    const sampledBytes = observer.sample('GET', target, 200, headers, 0, carrier);
    const response = observer.tap(headers['content-type'], undefined, sampledBytes !== 0, sampledBytes !== 0);
    response.write(body);
    observer.record(
      exchangeOf(target, { responseHeaders: headers, response, sampledBytes, sampleSlot: carrier.sampleSlot }),
    );
  };
  return { metrics, observer, send };
}

describe('ObservationPipeline interactions watched per key', () => {
  /** A list of 40 items; in `late` its 31st lacks `b`, past the 256 bytes the key fingerprint reads. */
  const list = (late: boolean) =>
    Buffer.from(JSON.stringify(Array.from({ length: 40 }, (_, i) => (late && i === 30 ? { a: i } : { a: i, b: 'x' }))));
  const [plain, late] = [list(false), list(true)];

  it('watches at most maxWatchedPerKeyPerSecond sampled-out interactions of one key a second, others apart', () => {
    expect(keyFingerprint(late)).toBe(keyFingerprint(plain));
    let clock = 0;
    // No shape budget: each key's guaranteed sample is its first; the rest are sampled out and watched.
    const { metrics, observer, send } = budgetless(() => clock, {
      sampler: { budgetShare: 0, burstMs: 0, maxWatchedPerKeyPerSecond: 10 },
    });
    // Exchanges are accepted when the event loop comes round, or by a drain.
    const noticed = () => {
      observer.drain();
      return metrics.get('novel_shaped_total');
    };
    // The first of /a is its guaranteed sample, the next 10 are watched, the rest not: its late variant is not noticed.
    for (let i = 0; i < 20; i++) send('/a', plain);
    send('/a', late);
    expect(noticed()).toBe(0);
    // Another key is watched on its own.
    send('/b', plain);
    send('/b', late);
    expect(noticed()).toBe(1);
    // A tenth of a second later one more of /a is watched.
    clock += 100;
    send('/a', late);
    expect(noticed()).toBe(2);
    send('/a', plain);
    send('/a', late);
    expect(noticed()).toBe(2);
  });
});

describe('ObservationPipeline evidence for the path learner', () => {
  it('shapes the first answer of each new name past the budget, at most 20 a second (100 saved up), and counts the rest', () => {
    let clock = 0;
    const { metrics, observer, send: sendAnswer } = budgetless(() => clock, { holdMs: 0 });
    const send = (target: string): void => sendAnswer(target, { login: 'x', id: 1, name: 'n' });
    const templates = new Set<string>();
    const drain = () => {
      for (const group of observer.drain()) for (const row of group.observations) templates.add(row.path);
    };
    // Four names teach `/users/{user}`. Each is its own key until then, an undecided one: no key's guaranteed
    // sample there, each is forced as the learner's evidence (4 of the 100 saved up).
    for (const name of ['alice', 'bob', 'carol', 'dave']) send(`/users/${name}`);
    drain();
    const forced = metrics.get('evidence_shaped_total');
    expect(forced).toBe(4);
    // A thousand new names (random slugs answered 200) on the learned key, no budget, a clock standing still.
    for (let i = 0; i < 1_000; i++) send(`/users/name-${i.toString(36)}x`);
    drain();
    // The first of them is the learned key's guaranteed sample of the window, the 96 left forced, the rest counted.
    expect(metrics.get('evidence_shaped_total') - forced).toBe(96);
    expect(metrics.get('evidence_skipped_total')).toBe(903);
    // A second later, 20 more; a name already shaped is not shaped again.
    clock += 1_000;
    for (let i = 0; i < 1_000; i++) send(`/users/name-${i.toString(36)}x`);
    drain();
    expect(metrics.get('evidence_shaped_total') - forced).toBe(116);
    expect(templates.has('/users/{user}')).toBe(true);
  });

  it('holds names before an identifier until pendingMs, then sends those in waiting as a parameter, one alone as it is', () => {
    let clock = 0;
    const { observer, send } = budgetless(() => clock, { now: () => clock, holdMs: 1_000, pendingMs: 5_000 });
    const sent = (): string[] =>
      [...new Set(observer.drain().flatMap((g) => g.observations.map((o) => o.path)))].sort();
    const quote = { bid: 1, ask: 2, at: 3 };
    send('/quotes/wonka/2020-01-10', quote);
    send('/quotes/erin/2020-01-11', quote);
    send('/trades/acme/2020-01-12', { price: 1, size: 2 });
    expect(sent()).toEqual([]);
    // The 1 s hold over: names before an identifier are held on, the two in waiting and the one alone.
    clock = 1_000;
    expect(sent()).toEqual([]);
    clock = 4_999;
    expect(sent()).toEqual([]);
    // 5 s after they came, still undecided (two of the four that decide): a parameter, never the names; the one
    // alone as it is, its identifier not named after it (`{acmeId}`).
    clock = 40_000;
    expect(sent()).toEqual(['/quotes/{quote}/{quoteId}', '/trades/acme/{id}']);
  });

  it("keeps a route's own 404 that came before its position was learned, held on past its hold beside a sibling", () => {
    let clock = 0;
    const { observer, send } = budgetless(() => clock, { now: () => clock, holdMs: 1_000, pendingMs: 5_000 });
    const rows: string[] = [];
    let unmatched = 0;
    const drain = (): void => {
      for (const group of observer.drain()) {
        for (const row of group.observations) rows.push(`${row.path} ${row.status}`);
        unmatched += group.unmatched?.requests ?? 0;
      }
    };
    const item = { id: 1, name: 'n', price: 2 };
    // owler.com (held-out 1): the first request of a route of names answered 404, one sibling another status.
    observer.record(exchangeOf('/items/canary-grace', { status: 404 }));
    observer.record(exchangeOf('/wp-admin/setup-config.php', { status: 404 }));
    send('/items/canary-alice', item);
    drain();
    // Their hold is over and nothing is learned yet: the scanner's path is noise, the item's 404 is held on.
    clock = 1_500;
    drain();
    expect(unmatched).toBe(1);
    expect(rows).toEqual(['/items/canary-alice 200']);
    // A second item answers alike: `/items/{item}`, and the 404 held on goes out as its own.
    clock = 2_000;
    send('/items/canary-bob', item);
    drain();
    clock = 3_500;
    drain();
    expect(rows.filter((row) => row.endsWith(' 404'))).toEqual(['/items/{item} 404']);
    expect(unmatched).toBe(1);
  });

  it('never sends names in a row (two or more positions) as they are, whatever is learned or not', () => {
    let clock = 0;
    const { observer, send } = budgetless(() => clock, { now: () => clock, holdMs: 1_000, pendingMs: 5_000 });
    const sent = new Set<string>();
    const drain = (): void => {
      for (const group of observer.drain()) for (const row of group.observations) sent.add(row.path);
    };
    // namsor.com (held-out 17): many routes, each followed by names (first and last names, countries), each request
    // its own, too few per route for four alike to decide; the routes' own words recur as routes do.
    const person = { script: 'LATIN', id: 'x', firstName: 'f', lastName: 'l', likelyGender: 'g' };
    const routes = ['genderGeo', 'origin', 'diaspora', 'subclassification'];
    const names = ['alice', 'Bob93', 'carol-infra', 'dave', 'erin-blue', 'Frank7', 'grace', 'heidi-cli', 'ivan'];
    let n = 0;
    const name = (): string => `canary-${names[n++ % names.length]}${Math.floor(n / names.length)}`;
    for (let round = 0; round < 3; round++) {
      for (const route of routes) {
        send(`/api2/json/${route}/${name()}/${name()}${route === 'origin' ? '' : `/${name()}`}`, person);
        send('/api2/json/apiStatus', { version: '2', status: 'ok' });
        clock += 200;
      }
      drain();
    }
    clock = 60_000;
    drain();
    expect([...sent].filter((path) => path.includes('canary'))).toEqual([]);
    // The routes' words stay: each request's names went out as parameters of its route.
    expect(sent.has('/api2/json/apiStatus')).toBe(true);
    expect([...sent].filter((path) => path.startsWith('/api2/json/origin/'))).toHaveLength(1);
  });

  it('names a position the cardinality limit made a parameter as the learner named the same route', () => {
    let clock = 0;
    const { observer, send } = budgetless(() => clock, { now: () => clock, holdMs: 1_000 });
    const sent = new Set<string>();
    const drain = (): void => {
      for (const group of observer.drain()) for (const row of group.observations) sent.add(row.path);
    };
    // Games answering alike teach `/games/{game}`; many more, each answering fields of its own (exceptions, as the
    // learner takes them), crowd the position until the limiter makes it a parameter.
    for (const game of ['alice', 'bob', 'carol']) send(`/games/${game}/regions`, { regions: [], total: 1 });
    for (let i = 0; i < 60; i++)
      send(`/games/game${String.fromCharCode(97 + (i % 26))}${i}/regions`, { [`own${i}`]: 1 });
    clock = 60_000;
    drain();
    expect([...sent].sort()).toEqual(['/games/{game}/regions']);
  });

  it("keeps an identifier's 404 that came just before its route answered, and counts a scanner's as noise", () => {
    let clock = 0;
    const { observer, send } = budgetless(() => clock, { now: () => clock, holdMs: 1_000 });
    const rows: string[] = [];
    let unmatched = 0;
    const drain = (): void => {
      for (const group of observer.drain()) {
        for (const row of group.observations) rows.push(`${row.path} ${row.status}`);
        unmatched += group.unmatched?.requests ?? 0;
      }
    };
    // avaza.com (held-out 19): `GET /api/Invoice/64502` answered 404 first, `GET /api/Invoice` 200 0.2 s later.
    observer.record(exchangeOf('/api/Invoice/64502', { status: 404 }));
    observer.record(exchangeOf('/wp-content/uploads/2024', { status: 404 }));
    drain();
    clock = 200;
    send('/api/Invoice', [{ id: 1, total: 2 }]);
    drain();
    clock = 1_500;
    drain();
    expect(rows.sort()).toEqual(['/api/Invoice 200', '/api/Invoice/{invoiceId} 404']);
    expect(unmatched).toBe(1);
  });

  it('holds at most a bounded number of 404s waiting for their route, the rest noise at once', () => {
    let clock = 0;
    const { observer } = budgetless(() => clock, { now: () => clock, holdMs: 1_000 });
    let unmatched = 0;
    for (let i = 0; i < 100; i++) observer.record(exchangeOf(`/api/users/${1000 + i}`, { status: 404 }));
    for (const group of observer.drain()) unmatched += group.unmatched?.requests ?? 0;
    // Past the bound (64 held), the scanner's paths are noise at once; the held ones when their hold ends.
    expect(unmatched).toBe(36);
    clock = 1_500;
    for (const group of observer.drain()) unmatched += group.unmatched?.requests ?? 0;
    expect(unmatched).toBe(100);
  });

  it('covers the template a name went out under when the value before it turned a route word meanwhile', () => {
    let clock = 0;
    const { observer, send } = budgetless(() => clock, { now: () => clock, holdMs: 1_000 });
    /** Rows left stored under each template, the backend's regroup applied (covered digests move their rows). */
    const stored = new Map<string, number>();
    const drain = (): void => {
      for (const group of observer.drain()) {
        for (const row of group.observations) stored.set(row.path, (stored.get(row.path) ?? 0) + 1);
        for (const [template, digests] of Object.entries(group.learned ?? {}))
          for (const [path, rows] of [...stored])
            if (digests.includes(pathDigest('c1', path))) {
              stored.delete(path);
              stored.set(template, (stored.get(template) ?? 0) + rows);
            }
      }
    };
    const shop = { id: 1, name: 'n', price: 2 };
    send('/shops/alice', shop);
    send('/shops/bob', shop);
    // `lists` answers first as a shop does: a value of `/shops/{shop}`, and the name after it goes out as the one value
    // there when its hold ends, under `/shops/{shop}/canary-wayne`.
    send('/shops/lists', { id: 1, name: 'n' });
    send('/shops/lists/canary-wayne', { title: 't', items: [] });
    // Taken in now, held 1 s from now.
    drain();
    clock = 1_000;
    drain();
    expect([...stored.keys()].filter((path) => path.includes('canary'))).toEqual(['/shops/{shop}/canary-wayne']);
    // Then it answers lists of its own: a route word (an exception), and the name resolves to a path without a
    // parameter for now. Four names after it, answering alike, then make `/shops/lists/{list}`.
    send('/shops/lists', { lists: [{ room: 'r' }], count: 1 });
    send('/shops/lists', { lists: [{ room: 'r', url: 'u' }], count: 2 });
    for (const name of ['canary-carol', 'canary-dave', 'canary-erin', 'canary-frank'])
      send(`/shops/lists/${name}`, { title: 't', items: [] });
    drain();
    clock = 2_000;
    drain();
    // No name is left stored: the template it went out under was covered, not the path it resolved to meanwhile.
    expect([...stored.keys()].filter((path) => path.includes('canary'))).toEqual([]);
    expect(stored.has('/shops/lists/{list}')).toBe(true);
  });

  it('regroups a template sent with several values only into one that takes them all, never into one of them', () => {
    const every = { sampler: { budgetShare: 1, burstMs: Infinity, maxPerKeyPerSecond: Infinity } };
    const { observer, send } = budgetless(() => 0, { now: () => 0, holdMs: 0, ...every });
    const moves: string[] = [];
    const rows = new Set<string>();
    const drain = (): void => {
      for (const group of observer.drain()) {
        for (const row of group.observations) rows.add(row.path);
        moves.push(...Object.keys(group.learned ?? {}));
      }
    };
    const member = { id: 1, name: 'n', plan: 'p', email: 'e', bio: 'b' };
    // Four alike after a shop: `/shops/{shopId}/items/{item}`, sent with each of them.
    for (const name of ['alice', 'bob', 'carol', 'dave']) send(`/shops/17/items/${name}`, member);
    drain();
    for (const name of ['alice', 'bob', 'carol', 'dave']) send(`/shops/17/items/${name}`, member);
    drain();
    expect(rows).toContain('/shops/{shopId}/items/{item}');
    // Then `alice` follows three shops: a route word. The template holds bob's rows too: they stay.
    send('/shops/18/items/alice', member);
    send('/shops/19/items/alice', member);
    send('/users/erin', { login: 'e', id: 1 });
    send('/users/frank', { login: 'f', id: 2 });
    drain();
    expect(moves).not.toContain('/shops/{shopId}/items/alice');
  });

  it('bounds a flood of random slugs at an undecided position: shaped within the forced cap, held within holdMax', () => {
    const { metrics, observer, send } = budgetless(() => 0, { now: () => 0, holdMax: 200 });
    let mostHeld = 0;
    for (let i = 0; i < 2_000; i++) {
      // Each slug answers fields of its own: no two alike, so its position is never learned.
      send(`/files/slug-${i.toString(36)}q`, { [`a${i}`]: 1, [`b${i}`]: 2, [`c${i}`]: 3 });
      if (i % 50 === 49) {
        observer.drain();
        mostHeld = Math.max(mostHeld, metrics.get('held_interactions'));
      }
    }
    // Each slug is a key of its own while undecided: no key's guaranteed sample there (each used to be shaped as its
    // key's first until the cardinality limit), only the learner's first answers within the forced cap (100 saved
    // up), and the limited key's one.
    expect(metrics.get('shaped_total')).toBeLessThanOrEqual(101);
    expect(mostHeld).toBeLessThanOrEqual(200);
    observer.releaseAll();
    expect(metrics.get('held_interactions')).toBe(0);
  });
});

describe('ObservationPipeline accepting exchanges', () => {
  it('accepts the exchanges of one turn of the event loop together, in order, or at the latest in drain', async () => {
    const observer = pipeline();
    const held = (target: string, status: number, at: number) => exchangeOf(target, { status, at, lastByte: at });
    observer.record(held('/a', 200, 1));
    observer.record(held('/a', 404, 2));
    observer.record(held('/a', 200, 3));
    // Nothing counted while the proxy's turn goes on.
    expect(observer.rows).toBe(0);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(observer.rows).toBe(2);
    // Handed over after that turn: in the drain, with the earlier ones, each counted once.
    observer.record(held('/b', 200, 4));
    const rows = observer.drain()[0]?.observations ?? [];
    expect(rows.map((row) => [row.path, row.status, row.count])).toEqual([
      ['/a', 200, 2],
      ['/a', 404, 1],
      ['/b', 200, 1],
    ]);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(observer.drain()).toEqual([]);
  });
});

describe('ObservationPipeline sampling when accepting', () => {
  it('decides on an exchange left to it (sampleOnRecord) as on one sampled when its response started', () => {
    const body = Buffer.from('{"id":1,"title":"a"}');
    const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };
    const rows = (leftToRecord: boolean) => {
      const observer = pipeline();
      for (let i = 0; i < 3; i++) {
        const carrier = { sampleSlot: null };
        const sampledBytes = leftToRecord ? 0 : observer.sample('GET', '/p', 200, headers, 0, carrier);
        // As forward does: a body in one chunk is kept until the decision.
        const response = observer.tap(headers['content-type'], undefined, leftToRecord || sampledBytes !== 0);
        response.write(body);
        const exchange = exchangeOf('/p', { responseHeaders: headers, response, sampledBytes, ...carrier });
        observer.record(leftToRecord ? { ...exchange, sampleOnRecord: true } : exchange);
      }
      return (observer.drain()[0]?.observations ?? []).map((row) => [row.count, row.response]);
    };
    // The key's first exchange is its guaranteed sample: shaped, the others counted with it.
    expect(rows(true)).toEqual(rows(false));
    expect(rows(true)).toEqual([[3, { contentType: 'application/json', shape: expect.any(String) }]]);
  });
});

describe('ObservationPipeline bodies kept whole', () => {
  it('shapes bodies handed over whole (requestBody, responseBody) as it shapes them tapped by the proxy', () => {
    const requestBody = Buffer.from('{"title":"a","author":"b"}');
    const responseBody = Buffer.from('{"id":1,"title":"a","author":"b"}');
    const requestHeaders = { 'content-type': 'application/json', 'content-length': String(requestBody.length) };
    const responseHeaders = { 'content-type': 'application/json', 'content-length': String(responseBody.length) };
    const rows = (whole: boolean) => {
      const observer = pipeline();
      for (let i = 0; i < 3; i++) {
        const fields: Partial<Exchange> = { method: 'POST', status: 201, requestHeaders, responseHeaders };
        if (whole)
          observer.record(exchangeOf('/posts', { ...fields, requestBody, responseBody, sampleOnRecord: true }));
        else {
          const request = observer.tap(requestHeaders['content-type'], undefined, true);
          request.write(requestBody);
          const response = observer.tap(responseHeaders['content-type'], undefined, true);
          response.write(responseBody);
          observer.record(exchangeOf('/posts', { ...fields, request, response, sampleOnRecord: true }));
        }
      }
      return (observer.drain()[0]?.observations ?? []).map((row) => [row.count, row.request, row.response]);
    };
    const shaped = { contentType: 'application/json', shape: expect.any(String) };
    expect(rows(true)).toEqual(rows(false));
    expect(rows(true)).toEqual([[3, shaped, shaped]]);
  });

  it.each([
    ['application/json', `{"items":[${'1,'.repeat(1_200)}1]}`],
    ['application/x-www-form-urlencoded', `a=${'b'.repeat(2_000)}`],
    ['application/x-www-form-urlencoded', 'a=b&c=d'],
    ['text/plain', 'hello'],
    [undefined, 'bytes'],
  ])('summarises a body kept whole (%s) as a tapped one, shaped or not', (type, text) => {
    const body = Buffer.from(text);
    const headers = type === undefined ? {} : { 'content-type': type };
    const rows = (whole: boolean) => {
      // No budget and nothing watched: the key's first exchange is its guaranteed sample, the others are counted unshaped.
      const observer = new ObservationPipeline({
        bodyLimit: 1024,
        captureId: () => 'c1',
        rules: () => [],
        metrics: new Metrics(),
        log: createRootLogger('silent'),
        sampler: { budgetShare: 0, burstMs: 0, maxWatchedPerKeyPerSecond: 0 },
      });
      for (let i = 0; i < 3; i++) {
        const fields: Partial<Exchange> = { method: 'PUT', requestHeaders: headers, responseHeaders: headers };
        if (whole)
          observer.record(
            exchangeOf('/doc', { ...fields, requestBody: body, responseBody: body, sampleOnRecord: true }),
          );
        else {
          const request = observer.tap(type, undefined, true);
          request.write(body);
          const response = observer.tap(type, undefined, true);
          response.write(body);
          observer.record(exchangeOf('/doc', { ...fields, request, response, sampleOnRecord: true }));
        }
      }
      return (observer.drain()[0]?.observations ?? []).map((row) => [row.count, row.request, row.response]);
    };
    expect(rows(true)).toEqual(rows(false));
    expect(rows(true).reduce((sum, [count]) => sum + (count as number), 0)).toBe(3);
  });

  it('lets go of whole bodies of an exchange it does not look at (ignored)', () => {
    const observer = pipeline(parseIgnoreRules(['GET /health']).rules);
    const exchange = exchangeOf('/health', { responseBody: Buffer.from('{}'), sampleOnRecord: true });
    observer.record(exchange);
    expect(observer.drain()).toEqual([]);
    expect(exchange.responseBody).toBeNull();
  });
});
