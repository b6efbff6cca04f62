import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import {
  fingerprint,
  inferShape,
  instanceExtras,
  withoutInstances,
  type ArrayShape,
  type Shape,
} from '@spectator/shared';
import { startTestAgent } from './support/agent';
import { FakeBackend } from './support/fake-backend';
import { postsApi, sendJson, startUpstream, type TestUpstream } from './support/upstream';
import { sleep, waitFor } from './support/wait';

/**
 * The shape a row's body was sent with, without its instance counts: how many records a stream or
 * a cut body held depends on how far it got, which these tests do not pin.
 */
function sentShape(backend: FakeBackend, body: { shape?: string } | null | undefined): Shape | undefined {
  const shape = body?.shape === undefined ? undefined : (backend.shapes()[body.shape] as Shape | undefined);
  return shape && withoutInstances(shape);
}

describe('observing', () => {
  let upstream: TestUpstream;
  let backend: FakeBackend;
  beforeEach(async () => {
    upstream = await startUpstream(postsApi());
    backend = await FakeBackend.start({ token: 't0k' });
  });
  afterEach(async () => {
    await upstream.close();
    await backend.stop();
  });

  it('aggregates the two POST /posts of the spec into one entry with count 2 and the right shapes', async () => {
    // One batch for the whole test: rows are aggregated per batch, and close() flushes. Shape work
    // unbudgeted: this test is about aggregation, and a loaded CI machine once left the second
    // POST unshaped by the sampler (a row of its own, counted but without shapes).
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 't0k',
      tuning: { flushIntervalMs: 60_000, sampler: { budgetShare: 1, burstMs: 60_000 } },
    });
    try {
      for (const post of [
        { title: 'Hello', author: 'Ann' },
        { title: 'Again', author: 'Bob' },
      ]) {
        const res = await fetch(`${agent.proxyUrl}/posts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(post),
        });
        expect(res.status).toBe(201);
        expect(await res.json()).toEqual({ id: expect.any(Number), ...post });
      }
      await agent.close();
      const rows = backend.observations().filter((o) => o.method === 'POST');
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(row).toMatchObject({ path: '/posts', status: 201, count: 2, captureId: agent.captureId() });
      const requestShape = inferShape({ title: 'x', author: 'y' });
      const responseShape = inferShape({ id: 1, title: 'x', author: 'y' });
      expect(row.request).toEqual({ contentType: 'application/json', shape: fingerprint(requestShape) });
      expect(row.response).toEqual({ contentType: 'application/json', shape: fingerprint(responseShape) });
      expect(backend.shapes()[fingerprint(responseShape)]).toEqual(responseShape);
      expect(row.requestHeaders).toContain('content-type');
    } finally {
      await agent.close();
    }
  });
});

describe('pausing observing (setObserving; setCapturing, its earlier name)', () => {
  it('forwards every request while paused but counts only those that arrived while observing was on', async () => {
    const upstream = await startUpstream(postsApi());
    const backend = await FakeBackend.start({ token: 't0k' });
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 't0k',
      tuning: { flushIntervalMs: 60_000 },
    });
    try {
      const post = async () => {
        const res = await fetch(`${agent.proxyUrl}/posts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ title: 'T', author: 'A' }),
        });
        expect(res.status).toBe(201);
      };
      await post();
      agent.setObserving(false);
      await post();
      await post();
      // The earlier name does the same.
      agent.setCapturing(true);
      await post();
      await agent.close();
      expect(agent.metrics.get('requests_total')).toBe(4);
      expect(agent.metrics.get('observed_total')).toBe(2);
      expect(agent.metrics.get('captured_total')).toBe(2); // the earlier name of the same count
      const counted = backend
        .observations()
        .filter((o) => o.method === 'POST')
        .reduce((sum, o) => sum + o.count, 0);
      expect(counted).toBe(2);
    } finally {
      await agent.close();
      await upstream.close();
      await backend.stop();
    }
  });
});

describe('observing bodies', () => {
  let upstream: TestUpstream;
  let backend: FakeBackend;
  afterEach(async () => {
    await upstream.close();
    await backend.stop();
  });

  async function observe(
    handler: Parameters<typeof startUpstream>[0],
    requests: (proxyUrl: string) => Promise<unknown>,
    bodyLimit?: number,
  ) {
    upstream = await startUpstream(handler);
    backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      bodyLimit,
      tuning: { flushIntervalMs: 60_000 },
    });
    await requests(agent.proxyUrl);
    await agent.close();
    return backend.observations();
  }

  it.each([
    ['gzip', zlib.gzipSync],
    ['deflate', zlib.deflateSync],
    ['br', zlib.brotliCompressSync],
  ] as const)('forwards a %s body as is and shapes its decompressed copy', async (encoding, compress) => {
    const body = compress(Buffer.from(JSON.stringify({ ok: true, items: [1, 2] })));
    let received: Buffer | null = null;
    const rows = await observe(
      (_req, res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          'content-encoding': encoding,
          'content-length': body.length,
        });
        res.end(body);
      },
      async (proxyUrl) => {
        received = await rawGet(`${proxyUrl}/compressed`);
      },
    );
    expect(received).toEqual(body);
    expect(rows[0]!.response).toEqual({
      contentType: 'application/json',
      shape: fingerprint(inferShape({ ok: true, items: [1] })),
    });
  });

  it('shapes a JSON body above the body limit from its first bytes, counts a form above it as too large, and a broken JSON body as unparsable', async () => {
    const record = { id: 1, name: 'x'.repeat(100) };
    const rows = await observe(
      (req, res) =>
        sendJson(res, 200, req.url === '/big' ? { total: 20, items: Array.from({ length: 20 }, () => record) } : {}),
      async (proxyUrl) => {
        await fetch(`${proxyUrl}/big`).then((r) => r.arrayBuffer());
        await fetch(`${proxyUrl}/form`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `a=${'x'.repeat(2_000)}`,
        }).then((r) => r.arrayBuffer());
        await fetch(`${proxyUrl}/small`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"a":',
        }).then((r) => r.arrayBuffer());
      },
      1024,
    );
    // The records the first 1,024 bytes hold whole; the list and the object around it marked truncated.
    const items = inferShape([record]) as ArrayShape;
    const prefix: Shape = {
      kind: 'object',
      fields: [
        { name: 'items', required: true, shape: { ...items, truncated: true } },
        { name: 'total', required: true, shape: { kind: 'number' } },
      ],
      truncated: true,
    };
    const big = rows.find((o) => o.path === '/big')!.response;
    expect(big?.contentType).toBe('application/json');
    expect(sentShape(backend, big)).toEqual(prefix);
    expect(rows.find((o) => o.path === '/form')!.request).toEqual({
      contentType: 'application/x-www-form-urlencoded',
      tooLarge: true,
    });
    expect(rows.find((o) => o.path === '/small')!.request).toEqual({
      contentType: 'application/json',
      unparsable: true,
    });
  });

  it('records only the media type of a non-JSON body, and the fields of a form: urlencoded and multipart', async () => {
    const rows = await observe(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end('<p>secret page</p>');
      },
      async (proxyUrl) => {
        await fetch(`${proxyUrl}/form`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'user=ann&password=hunter2',
        }).then((r) => r.text());
        // An upload as a browser sends it: fetch writes the multipart body and its boundary.
        const form = new FormData();
        form.append('title', 'Holiday');
        form.append('contact', 'ann@example.com');
        form.append('photo', new Blob([Buffer.from([0x89, 0x50, 0x4e, 0x47])], { type: 'image/png' }), 'beach.png');
        form.append('meta', new Blob(['{"width":3}'], { type: 'application/json' }));
        await fetch(`${proxyUrl}/upload`, { method: 'POST', body: form }).then((r) => r.text());
      },
    );
    const row = (path: string) => rows.find((o) => o.path === path)!;
    expect(row('/form').response).toEqual({ contentType: 'text/html' });
    expect(row('/form').request).toEqual({
      contentType: 'application/x-www-form-urlencoded',
      shape: fingerprint(inferShape({ user: '', password: '' })),
    });
    // A Blob part is a file part to fetch (filename "blob"), whatever its type: `meta` is binary too.
    const binary: Shape = { kind: 'string', format: 'binary' };
    const upload: Shape = {
      kind: 'object',
      fields: [
        { name: 'contact', required: true, shape: { kind: 'string', format: 'email' } },
        { name: 'meta', required: true, shape: binary },
        { name: 'photo', required: true, shape: binary },
        { name: 'title', required: true, shape: { kind: 'string' } },
      ],
    };
    expect(row('/upload').request).toEqual({ contentType: 'multipart/form-data', shape: fingerprint(upload) });
  });

  it('shapes a stream by its items: server-sent events the client left, long and gzipped JSON lines; counts a JSON response the client left', async () => {
    const event = (i: number) => ({
      index: i,
      delta: { text: 'tok'.repeat(i % 3) },
      ...(i % 2 ? { done: false } : {}),
    });
    // 96 KB of JSON lines, and 250 KB that gzip to about 125 KB (hex does not compress much): both
    // are shaped from their first 64 KiB, the gzipped one decoded as far as those bytes go.
    const lines = (count: number, name: (i: number) => string) =>
      Array.from({ length: count }, (_, i) => JSON.stringify({ id: i, name: name(i) })).join('\n') + '\n';
    const plain = lines(300, () => 'n'.repeat(300));
    const gzipped = zlib.gzipSync(lines(600, () => crypto.randomBytes(200).toString('hex')));
    const rows = await observe(
      (req, res) => {
        if (req.url === '/events') {
          // Never ends on its own: the client leaves after three events, as an SSE client does.
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          let i = 0;
          const timer = setInterval(
            () => res.write(`event: delta\nid: ${i}\ndata: ${JSON.stringify(event(i++))}\n\n`),
            5,
          );
          res.on('close', () => clearInterval(timer));
        } else if (req.url === '/export') {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          res.end(plain);
        } else if (req.url === '/export.gz') {
          res.writeHead(200, { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' });
          res.end(gzipped);
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"items":[');
        }
      },
      async (proxyUrl) => {
        await readThenLeave(`${proxyUrl}/events`, (text) => text.split('\n\n').length > 3);
        expect((await rawGet(`${proxyUrl}/export`)).toString()).toBe(plain);
        expect(await rawGet(`${proxyUrl}/export.gz`)).toEqual(gzipped);
        await readThenLeave(`${proxyUrl}/slow.json`, (text) => text.length > 0);
      },
    );
    const row = (path: string) => rows.find((o) => o.path === path)!;
    expect(row('/events')).toMatchObject({ status: 200, count: 1, response: { contentType: 'text/event-stream' } });
    expect(sentShape(backend, row('/events').response)).toEqual(
      withoutInstances(inferShape([event(0), event(1), event(2)])),
    );
    const line = withoutInstances(inferShape([{ id: 0, name: '' }]));
    for (const path of ['/export', '/export.gz']) {
      expect(row(path)).toMatchObject({ count: 1, response: { contentType: 'application/x-ndjson' } });
      expect(sentShape(backend, row(path).response)).toEqual(line);
    }
    expect(row('/slow.json')).toMatchObject({
      status: 200,
      count: 1,
      response: { contentType: 'application/json', unshaped: true },
    });
  });

  it('gives back what each stream kept when its exchange ends: many streams in turn stay shaped under a small bound for all', async () => {
    const events = Array.from({ length: 40 }, (_, i) => `data: {"index":${i},"text":"${'t'.repeat(100)}"}\n\n`).join(
      '',
    );
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(events);
    });
    backend = await FakeBackend.start();
    // Each stream keeps about 5 KB: without the release, the third would keep nothing. Every exchange
    // is shaped (--shape-budget 100), so what is measured is the byte bound, not sampling under load.
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      shapeBudget: 100,
      tuning: { flushIntervalMs: 60_000, streamBytesMax: 12_000 },
    });
    for (let i = 0; i < 6; i++) expect((await rawGet(`${agent.proxyUrl}/events`)).toString()).toBe(events);
    await waitFor('every stream given back', () => agent.metrics.get('stream_bytes') === 0);
    await agent.close();
    const rows = backend.observations();
    expect(rows).toEqual([
      expect.objectContaining({
        path: '/events',
        count: 6,
        response: { contentType: 'text/event-stream', shape: expect.any(String) },
      }),
    ]);
    expect(sentShape(backend, rows[0]!.response)).toEqual(inferShape([{ index: 0, text: '' }]));
  });

  it('counts an event stream still open after streamRecordAfterMs then, shaped from its events so far, and not again at its end', async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const timer = setInterval(() => res.write(`data: {"seq":${i++}}\n\n`), 20);
      res.on('close', () => clearInterval(timer));
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { flushIntervalMs: 50, streamRecordAfterMs: 300 },
    });
    const client = http.get(`${agent.proxyUrl}/events`, (res) => res.resume());
    try {
      await waitFor('the open stream to be counted', () => backend.observations().some((o) => o.path === '/events'));
      expect(client.destroyed).toBe(false);
      await sleep(200); // more events, and a flush or more, while the stream stays open
    } finally {
      client.destroy();
    }
    await agent.close();
    const rows = backend.observations().filter((o) => o.path === '/events');
    expect(rows.reduce((sum, o) => sum + o.count, 0)).toBe(1);
    // Events are counted beside the fingerprint (`instances`), as many as came before it was shaped: not pinned here.
    expect(rows[0]!.response).toMatchObject({ contentType: 'text/event-stream', shape: expect.any(String) });
    expect(sentShape(backend, rows[0]!.response)).toEqual(inferShape([{ seq: 0 }]));
  });

  it('counts a JSON response slower than streamRecordAfterMs when it ends, whole and shaped, not early as cut', async () => {
    // Only streams are counted before they end: a slow JSON body counted early would be recorded
    // cut (unshaped, no time to last byte) though it ended whole.
    let finish: () => void = () => undefined;
    let started: () => void = () => undefined;
    const headSent = new Promise<void>((resolve) => (started = resolve));
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"items":[{"id":1,');
      finish = () => res.end('"name":"a"}]}');
      started();
    });
    backend = await FakeBackend.start();
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { flushIntervalMs: 50, streamRecordAfterMs: 100 },
    });
    try {
      const response = fetch(`${agent.proxyUrl}/slow`).then((res) => res.json());
      await headSent;
      await sleep(600); // several sweeps for streams open over 100 ms, while the body is still open
      expect(backend.observations().some((o) => o.path === '/slow')).toBe(false);
      finish();
      expect(await response).toEqual({ items: [{ id: 1, name: 'a' }] });
      await waitFor('the JSON response to be counted', () => backend.observations().some((o) => o.path === '/slow'));
    } finally {
      await agent.close();
    }
    const rows = backend.observations().filter((o) => o.path === '/slow');
    expect(rows.reduce((sum, o) => sum + o.count, 0)).toBe(1);
    expect(rows[0]!.response).toEqual({
      contentType: 'application/json',
      shape: fingerprint(inferShape({ items: [{ id: 1, name: 'a' }] })),
    });
    // Timed to its last byte: it ended whole.
    expect(Object.values(rows[0]!.runtime?.ttlb ?? {}).reduce((sum, count) => sum + count, 0)).toBe(1);
  });

  it('copies a JSON request body sent in pieces while it streams to the upstream unchanged', async () => {
    // The tap listens to the request's own 'data' events: every piece must reach both the upstream
    // and the copy, also when the first piece arrives before the upstream connection is ready.
    const value = { title: 'Hello', tags: ['a', 'b'], author: { name: 'Ann', id: 7 } };
    const text = JSON.stringify(value);
    const pieces = [text.slice(0, 5), text.slice(5, 20), text.slice(20)];
    let echoed = '';
    const rows = await observe(
      (_req, res, body) => sendJson(res, 201, { length: body.length, text: body.toString() }),
      async (proxyUrl) => {
        echoed = await new Promise<string>((resolve, reject) => {
          const req = http.request(
            `${proxyUrl}/posts`,
            { method: 'POST', headers: { 'content-type': 'application/json' } },
            (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (chunk: Buffer) => chunks.push(chunk));
              res.on('end', () => resolve(Buffer.concat(chunks).toString()));
            },
          );
          req.on('error', reject);
          req.write(pieces[0]);
          setTimeout(() => {
            req.write(pieces[1]);
            setTimeout(() => req.end(pieces[2]), 20);
          }, 20);
        });
      },
    );
    expect(JSON.parse(echoed)).toEqual({ length: Buffer.byteLength(text), text });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.request).toEqual({ contentType: 'application/json', shape: fingerprint(inferShape(value)) });
  });

  it('shapes each of many concurrent exchanges from its own bytes, small and multi-chunk bodies alike (chunks are kept, not copied)', async () => {
    // Bodies are kept by reference on the hot path; were any producer to reuse a chunk's memory for
    // a later read, a kept body would change under the capture and its shape would come out wrong.
    const count = 40;
    const requestValue = (i: number) => ({ [`q${i}`]: 'v'.repeat(i % 2 ? 50 : 150_000), n: i });
    const responseValue = (i: number) => ({
      [`r${i}`]: Array.from({ length: i % 3 ? 2 : 3_000 }, () => ({ id: i, name: 'x'.repeat(40) })),
    });
    upstream = await startUpstream((_req, res, body) => {
      const i = (JSON.parse(body.toString()) as { n: number }).n;
      sendJson(res, 200, responseValue(i));
    });
    backend = await FakeBackend.start();
    // Every exchange shaped: --shape-budget 100 lifts the time budget and the per-endpoint cap.
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      shapeBudget: 100,
      tuning: { flushIntervalMs: 60_000 },
    });
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        fetch(`${agent.proxyUrl}/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(requestValue(i)),
        }).then((r) => r.arrayBuffer()),
      ),
    );
    await agent.close();
    const rows = backend.observations();
    const pairs = (list: { request: unknown; response: unknown }[]) =>
      list.map((o) => JSON.stringify([o.request, o.response])).sort();
    const expected = Array.from({ length: count }, (_, i) => ({
      request: { contentType: 'application/json', shape: fingerprint(inferShape(requestValue(i))) },
      // The records of the list counted beside the fingerprint (its top object, then the records).
      response: {
        contentType: 'application/json',
        shape: fingerprint(inferShape(responseValue(i))),
        instances: instanceExtras(inferShape(responseValue(i))),
      },
    }));
    expect(pairs(rows)).toEqual(pairs(expected));
  });

  it('templates identifier-like path segments and keeps query parameter names only', async () => {
    const rows = await observe(
      (_req, res) => sendJson(res, 200, { id: 1 }),
      async (proxyUrl) => {
        for (const id of [17, 18, 19])
          await fetch(`${proxyUrl}/posts/${id}?include=author&page=${id}`).then((r) => r.text());
      },
    );
    // One row, or two when the sampler left the later answers unshaped under load (a row of their own).
    expect(rows.map((o) => [o.method, o.path, o.query])).toEqual(
      rows.map(() => ['GET', '/posts/{postId}', ['include', 'page']]),
    );
    expect(rows.reduce((sum, o) => sum + o.count, 0)).toBe(3);
  });
});

describe('ignore rules', () => {
  it('says once that there is no service.yml, however often the file watcher looks', async () => {
    const upstream = await startUpstream(postsApi());
    const configPath = path.join(os.tmpdir(), `spectator-missing-${process.pid}`, 'service.yml');
    const agent = await startTestAgent({ upstream: upstream.url, configPath, tuning: { configPollMs: 10 } });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(agent.logs.find('no service config')).toHaveLength(1);
    } finally {
      await agent.close();
      await upstream.close();
    }
  });

  it('applies service.yml, reloads it when it changes, and keeps the last good rules when it breaks', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-rules-'));
    const configPath = path.join(dir, 'service.yml');
    fs.writeFileSync(configPath, 'ignoreRequests:\n  - GET /\n  - OPTIONS (.*)\n');
    const upstream = await startUpstream(postsApi());
    const backend = await FakeBackend.start();
    const agent = await startTestAgent({ upstream: upstream.url, backend: backend.url, token: 'x', configPath });
    const get = (p: string) => fetch(`${agent.proxyUrl}${p}`).then((r) => r.text());
    try {
      await waitFor('welcome', () => agent.metrics.get('backend_connected') === 1);
      const hello = backend.messages.find((m) => m.type === 'hello');
      expect(hello).toMatchObject({ rules: ['GET /', 'OPTIONS (.*)'] });
      await get('/');
      await get('/posts');
      await waitFor('GET /posts counted', () => backend.count((o) => o.path === '/posts') === 1);
      expect(backend.count((o) => o.path === '/')).toBe(0);

      // Change the file: /posts is now ignored, and the backend is told the rules in effect.
      fs.writeFileSync(configPath, 'ignoreRequests:\n  - GET /\n  - GET /posts\n  - FETCH /nope\n');
      await waitFor('rules message', () =>
        backend.messages.some((m) => m.type === 'rules' && m.rules.includes('GET /posts')),
      );
      expect(agent.logs.find('bad ignoreRequests entry')[0]).toMatchObject({ entry: 'FETCH /nope' });
      await get('/posts');

      // Break the file: the last good rules stay (GET /posts still ignored) and the error is logged.
      fs.writeFileSync(configPath, 'ignoreRequests: [unclosed\n');
      await waitFor('error logged', () => agent.logs.find('keeping the last good ignore rules').length > 0);
      await get('/posts');
      await get('/posts/1');
      await waitFor('GET /posts/1 counted', () => backend.count((o) => o.path === '/posts/{postId}') === 1);
      expect(backend.count((o) => o.path === '/posts')).toBe(1);
      expect(agent.metrics.get('ignored_total')).toBe(3);
    } finally {
      await agent.close();
      await upstream.close();
      await backend.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sampling under load', () => {
  it('counts every interaction exactly while shape work is sampled, and every endpoint and status still gets a shape', async () => {
    const big = {
      items: Array.from({ length: 300 }, (_, i) => ({
        id: i,
        name: `n${i}`,
        tags: ['a', 'b'],
        nested: { ok: true, score: i / 3 },
      })),
    };
    // A 404 of a real endpoint (not noise: the endpoint answered 200 first).
    const upstream = await startUpstream((req, res) =>
      sendJson(res, req.url === '/list?missing' ? 404 : 200, req.url === '/list?missing' ? { error: 'nope' } : big),
    );
    const backend = await FakeBackend.start();
    // A budget of almost nothing: beyond the first sample per endpoint and status, everything is sampled out.
    const agent = await startTestAgent({
      upstream: upstream.url,
      backend: backend.url,
      token: 'x',
      tuning: { flushIntervalMs: 60_000, sampler: { budgetShare: 0.0001, burstMs: 0 } },
    });
    try {
      await fetch(`${agent.proxyUrl}/list`).then((r) => r.arrayBuffer());
      const paths = [
        ...Array.from({ length: 59 }, () => '/list'),
        ...Array.from({ length: 20 }, () => '/list?missing'),
      ];
      await Promise.all(paths.map((p) => fetch(`${agent.proxyUrl}${p}`).then((r) => r.arrayBuffer())));
    } finally {
      await agent.close();
      await upstream.close();
      await backend.stop();
    }
    expect(backend.count((o) => o.path === '/list' && o.status === 200)).toBe(60);
    expect(backend.count((o) => o.path === '/list' && o.status === 404)).toBe(20);
    const shaped = backend.observations().filter((o) => o.response?.shape);
    expect(new Set(shaped.map((o) => `${o.path} ${o.status}`))).toEqual(new Set(['/list 200', '/list 404']));
    expect(backend.observations().some((o) => o.response?.unshaped)).toBe(true);
    expect(agent.metrics.get('unshaped_total') + agent.metrics.get('shaped_total')).toBe(80);
  });

  it('shapes every interaction of a burst with --shape-budget 100, and only the guaranteed one with --shape-budget 0', async () => {
    const big = {
      items: Array.from({ length: 300 }, (_, i) => ({
        id: i,
        name: `n${i}`,
        tags: ['a', 'b'],
        nested: { ok: true, score: i / 3 },
      })),
    };
    const upstream = await startUpstream((_req, res) => sendJson(res, 200, big));
    const backend = await FakeBackend.start();
    const burst = async (shapeBudget: number) => {
      // Budget 0: the sampler's clock stands still, so the burst stays in one key window however long
      // it takes (at load 25 it outlasted the 10 s window: two more guaranteed samples).
      const stopped = Date.now();
      const agent = await startTestAgent({
        upstream: upstream.url,
        backend: backend.url,
        token: 'x',
        shapeBudget,
        tuning: { flushIntervalMs: 60_000, ...(shapeBudget === 0 ? { samplerClock: () => stopped } : {}) },
      });
      // The first exchange alone, so the guaranteed sample is the first body noted for its key: were
      // it recorded after another of the burst, that other would be a new variant, shaped as such.
      await fetch(`${agent.proxyUrl}/list`).then((r) => r.arrayBuffer());
      await Promise.all(
        Array.from({ length: 119 }, () => fetch(`${agent.proxyUrl}/list`).then((r) => r.arrayBuffer())),
      );
      await agent.close();
      return { shaped: agent.metrics.get('shaped_total'), unshaped: agent.metrics.get('unshaped_total') };
    };
    try {
      // 120 bodies of 20 KB, 119 at once: budget 0 shapes only the endpoint's guaranteed sample,
      // however long the burst takes.
      expect(await burst(0)).toEqual({ shaped: 1, unshaped: 119 });
      expect(await burst(100)).toEqual({ shaped: 120, unshaped: 0 });
    } finally {
      await upstream.close();
      await backend.stop();
    }
    // 240 exchanges of 20 KB and 121 shapes: a bound for a loaded machine, not a speed check (38 s at load 20).
  }, 180_000);
});

/** GET `url`, read until `enough(text so far)`, then close the connection (the client leaves). */
function readThenLeave(url: string, enough: (text: string) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (!enough(text)) return;
        req.destroy();
        resolve();
      });
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
  });
}

function rawGet(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve(Buffer.concat(chunks)));
      res.on('error', reject);
    });
  });
}
