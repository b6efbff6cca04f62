import { fingerprint, inferShape } from '@spectator/shared';
import { startTestAgent } from './support/agent';
import { FakeBackend } from './support/fake-backend';
import { sendJson, startUpstream, type TestUpstream } from './support/upstream';

// A load of a few thousand requests through the proxy: more than jest's default 5 s on a loaded machine.
jest.setTimeout(120_000);

/** About 12 KB of items: shape work the default budget cannot do for every request. */
const items = (extra: boolean) => ({
  items: Array.from({ length: 80 }, (_, i) => ({
    id: i,
    name: `item ${i}`,
    price: i * 1.5,
    tags: ['a', 'b'],
    ...(extra ? { discount: 0.1 } : {}),
  })),
});
const VARIANT_A = items(false);
const VARIANT_B = items(true);
/** VARIANT_A but for its 41st item, which lacks `price`: the two differ only some 4 KB into the body. */
const VARIANT_LATE = {
  items: VARIANT_A.items.map((item, i) => {
    if (i !== 40) return item;
    const { price: _price, ...rest } = item;
    return rest;
  }),
};

let upstream: TestUpstream;
let backend: FakeBackend;
afterEach(async () => {
  await upstream?.close();
  await backend?.stop();
});

/** Send `count` requests to `path`, `concurrency` at a time (bounded). */
async function load(proxyUrl: string, path: string, count: number, concurrency = 32): Promise<void> {
  let sent = 0;
  const worker = async (): Promise<void> => {
    while (sent < count) {
      sent++;
      await fetch(`${proxyUrl}${path}`).then((r) => r.arrayBuffer());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

describe('novel variants under load', () => {
  it('shapes a second body variant of one endpoint that comes once, right after a flood of the first, with the default --shape-budget', async () => {
    upstream = await startUpstream((req, res) =>
      sendJson(res, 200, req.url === '/items?variant=b' ? VARIANT_B : VARIANT_A),
    );
    backend = await FakeBackend.start();
    // The default budget, with the sampler's clock stopped: the flood comes all at once, however
    // slow the machine, so no budget refills and no key's window comes round again. Only noticing
    // the new variant can shape the second one.
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { flushIntervalMs: 60_000, samplerClock: () => 0 },
    });
    try {
      await load(agent.proxyUrl, '/items', 800);
      await load(agent.proxyUrl, '/items?variant=b', 1, 1);
      await load(agent.proxyUrl, '/items', 200);
      // Under that load most of the first variant was sampled out.
      expect(agent.metrics.get('unshaped_total')).toBeGreaterThan(500);
    } finally {
      await agent.close();
    }
    const shapes = new Set(
      backend.observations().flatMap((o) => (o.path === '/items' && o.response?.shape ? [o.response.shape] : [])),
    );
    expect(shapes).toEqual(new Set([fingerprint(inferShape(VARIANT_A)), fingerprint(inferShape(VARIANT_B))]));
    // Shaped because it was noticed as new, once: the first variant, shaped by the budget first, never was.
    expect(agent.metrics.get('novel_shaped_total')).toBe(1);
    // One capture throughout: a new one (a busy agent's probe reading the upstream as gone and back)
    // would forget the variants seen and shape the first one again as new.
    expect(agent.metrics.get('captures_total')).toBe(1);
  });

  it('shapes a second variant that differs only far into the body (one item of a list lacks a field)', async () => {
    upstream = await startUpstream((req, res) =>
      sendJson(res, 200, req.url === '/items?variant=late' ? VARIANT_LATE : VARIANT_A),
    );
    backend = await FakeBackend.start();
    // As above, the sampler's clock stopped: neither the shape budget nor the scan budget refills,
    // so the flood is kept within the bytes the scan budget saves up (8 MiB: 500 bodies of 12 KB).
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { flushIntervalMs: 60_000, samplerClock: () => 0 },
    });
    try {
      await load(agent.proxyUrl, '/items', 400);
      await load(agent.proxyUrl, '/items?variant=late', 1, 1);
      await load(agent.proxyUrl, '/items', 100);
      expect(agent.metrics.get('unshaped_total')).toBeGreaterThan(250);
    } finally {
      await agent.close();
    }
    const shapes = new Set(
      backend.observations().flatMap((o) => (o.path === '/items' && o.response?.shape ? [o.response.shape] : [])),
    );
    expect(shapes).toEqual(new Set([fingerprint(inferShape(VARIANT_A)), fingerprint(inferShape(VARIANT_LATE))]));
    expect(agent.metrics.get('novel_shaped_total')).toBe(1);
    expect(agent.metrics.get('captures_total')).toBe(1);
  });

  it('shapes a second request body variant whose answer has no body and no length (204)', async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { flushIntervalMs: 60_000, samplerClock: () => 0 },
    });
    /** PUT `body` to /items/1, `count` times, `concurrency` at a time. */
    const put = async (body: unknown, count: number, concurrency = 32): Promise<void> => {
      let sent = 0;
      const text = JSON.stringify(body);
      const worker = async (): Promise<void> => {
        while (sent < count) {
          sent++;
          await fetch(`${agent.proxyUrl}/items/1`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: text,
          }).then((r) => r.arrayBuffer());
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    };
    try {
      await put(VARIANT_A, 400);
      await put(VARIANT_B, 1, 1);
      await put(VARIANT_A, 100);
      expect(agent.metrics.get('unshaped_total')).toBeGreaterThan(250);
    } finally {
      await agent.close();
    }
    const shapes = new Set(
      backend.observations().flatMap((o) => (o.method === 'PUT' && o.request?.shape ? [o.request.shape] : [])),
    );
    expect(shapes).toEqual(new Set([fingerprint(inferShape(VARIANT_A)), fingerprint(inferShape(VARIANT_B))]));
    expect(agent.metrics.get('novel_shaped_total')).toBe(1);
  });

  it('shapes a variant of an answer past 64 KiB that the budget sampled out, while the scan budget pays for it', async () => {
    /** About 200 KB: 1,500 records, the 1,201st without `price` in the late variant. */
    const big = (late: boolean) => ({
      items: Array.from({ length: 1_500 }, (_, i) => ({
        id: i,
        name: `item ${i}`,
        tags: ['a', 'b'],
        ...(late && i === 1_200 ? {} : { price: i * 1.5 }),
      })),
    });
    const [plain, late] = [big(false), big(true)];
    upstream = await startUpstream((req, res) => sendJson(res, 200, req.url === '/big?variant=late' ? late : plain));
    backend = await FakeBackend.start();
    // Only the guaranteed sample is shaped (`--shape-budget 0`, the sampler's clock stopped): the
    // late variant can only be shaped as noticed new, from the bytes the scan budget saved up (8 MiB).
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      shapeBudget: 0,
      tuning: { flushIntervalMs: 60_000, samplerClock: () => 0 },
    });
    try {
      await load(agent.proxyUrl, '/big', 5, 1);
      await load(agent.proxyUrl, '/big?variant=late', 1, 1);
      await load(agent.proxyUrl, '/big', 5, 1);
      expect(agent.metrics.get('unshaped_total')).toBe(9);
    } finally {
      await agent.close();
    }
    const shapes = new Set(
      backend.observations().flatMap((o) => (o.path === '/big' && o.response?.shape ? [o.response.shape] : [])),
    );
    expect(shapes).toEqual(new Set([fingerprint(inferShape(plain)), fingerprint(inferShape(late))]));
    expect(agent.metrics.get('novel_shaped_total')).toBe(1);
  });
});
