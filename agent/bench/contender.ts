/**
 * One benchmark party in its own process: `node contender.js <kind> [upstream]`. Prints one JSON
 * line `{"url": …}` when listening; stops on SIGTERM. Kinds: upstream (the JSON API plus a
 * WebSocket sink that acknowledges agent batches), agent-observe (switched by `observe on|off`
 * lines on stdin), agent-forward (observing off), fastify, http-proxy, mockttp (forwarding only, its lightest
 * use), mockttp-optic (mockttp as Optic's `optic capture` ran it).
 */
import http from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import readline from 'node:readline';
import { WebSocketServer } from 'ws';
import { PROTOCOL_VERSION, ROUTES, type AgentMessage } from '@spectator/shared';
import { startAgent, type AgentOptions } from '../src/agent';
import { createRootLogger } from '../src/log';

/** Realistic records: the small list has 10 (~2 KB), the 100 KB body 447; the 1 MB body is as many as stay under the 1 MiB body limit, so it is shaped when sampled. */
function records(count: number): object[] {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    title: `Post number ${i + 1} about proxies`,
    author: { id: 1000 + (i % 37), name: `Author ${i % 37}`, email: `author${i % 37}@example.com` },
    tags: ['api', i % 2 ? 'json' : 'http'],
    published: i % 3 !== 0,
    createdAt: new Date(1_700_000_000_000 + i * 60_000).toISOString(),
    score: i / 7,
  }));
}

export const BODIES = {
  small: JSON.stringify(records(10)),
  large: JSON.stringify(records(447)),
  huge: JSON.stringify(records(4_600)),
};

async function upstream(): Promise<string> {
  let nextId = 1;
  const send = (res: http.ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const input = JSON.parse(Buffer.concat(chunks).toString('utf8')) as object;
        send(res, 201, JSON.stringify({ id: nextId++, ...input }));
      });
      return;
    }
    send(res, 200, req.url === '/large' ? BODIES.large : req.url === '/huge' ? BODIES.huge : BODIES.small);
  });
  server.keepAliveTimeout = 60_000;
  // The backend stand-in: welcome, then acknowledge every batch, so the agent streams as in production.
  const wss = new WebSocketServer({ server, path: ROUTES.agentStream });
  wss.on('connection', (ws) =>
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as AgentMessage;
      if (message.type === 'hello')
        ws.send(JSON.stringify({ type: 'welcome', protocol: PROTOCOL_VERSION, project: 'bench', templates: [] }));
      if (message.type === 'batch') ws.send(JSON.stringify({ type: 'ack', batchId: message.batchId }));
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * `BENCH_AGENT_OBSERVE`: how the observing agents look at bodies, to split the observing cost by
 * part. Unset: as shipped. `count`: counting only (no shape budget, so each key's guaranteed sample
 * per window alone; no interaction watched for a new variant). `nowatch`: the shipped shape budget,
 * no interaction watched for a new variant.
 */
function observeTuning(): Pick<AgentOptions, 'shapeBudget' | 'tuning'> {
  const part = process.env.BENCH_AGENT_OBSERVE ?? '';
  if (part === '') return {};
  if (part !== 'count' && part !== 'nowatch')
    throw new Error(`BENCH_AGENT_OBSERVE must be "count" or "nowatch", not "${part}"`);
  return {
    ...(part === 'count' ? { shapeBudget: 0 } : {}),
    tuning: { sampler: { maxWatchedPerKeyPerSecond: 0 } },
  };
}

async function main(kind: string, target: string): Promise<string> {
  switch (kind) {
    case 'upstream':
      return upstream();
    case 'agent-observe':
    case 'agent-forward': {
      const observe = kind === 'agent-observe';
      const agent = await startAgent({
        upstream: target,
        listen: '127.0.0.1:0',
        admin: '127.0.0.1:0',
        configPath: '/nonexistent/service.yml',
        observe,
        backend: observe ? target : null,
        token: 'bench',
        logger: createRootLogger('error'),
        ...(observe ? observeTuning() : {}),
      });
      process.stdout.write(`${JSON.stringify({ admin: agent.adminUrl })}\n`);
      // Garbage collection pauses of this process so far, ms: each switch reports them, so the
      // observing-cost part can tell how much of a window's CPU went to collecting.
      let gcMs = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) gcMs += entry.duration;
      }).observe({ entryTypes: ['gc'] });
      // `observe on` / `observe off` on stdin switch observing in this process, answered with where the
      // switch fell: the observing-cost part compares both in one process, under one continuous load.
      readline.createInterface({ input: process.stdin }).on('line', (line) => {
        const match = /^observe (on|off)$/.exec(line.trim());
        if (!match) return;
        agent.setObserving(match[1] === 'on');
        // Where the switch fell: requests and shaped samples so far, CPU µs so far (all threads), GC
        // pauses ms so far, ms on this process's clock.
        const cpu = process.cpuUsage();
        const { metrics } = agent;
        process.stdout.write(
          `${JSON.stringify({ observe: match[1], requests: metrics.get('requests_total'), shaped: metrics.get('shaped_total'), cpu: cpu.user + cpu.system, gc: gcMs, at: performance.now() })}\n`,
        );
      });
      return agent.proxyUrl;
    }
    case 'fastify': {
      const { default: Fastify } = await import('fastify');
      const { default: proxy } = await import('@fastify/http-proxy');
      const app = Fastify({ logger: false });
      await app.register(proxy, { upstream: target });
      return app.listen({ port: 0, host: '127.0.0.1' });
    }
    case 'http-proxy': {
      const { default: httpProxy } = await import('http-proxy');
      // Keep-alive to the upstream, as every other contender does.
      const proxy = httpProxy.createProxyServer({
        agent: new http.Agent({ keepAlive: true, maxSockets: 256 }),
        xfwd: true,
      });
      proxy.on('error', (_err, _req, res) => {
        res.writeHead(502);
        res.end();
      });
      const server = http.createServer((req, res) => proxy.web(req, res, { target }));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    }
    case 'mockttp': {
      const { getLocal } = await import('mockttp');
      const server = getLocal();
      await server.start({ startPort: 20_000, endPort: 60_000 });
      await server.forAnyRequest().thenForwardTo(target);
      return server.url.replace('localhost', '127.0.0.1');
    }
    case 'mockttp-optic': {
      // As Optic's capture proxy set mockttp up (projects/optic/src/commands/capture/sources/proxy.ts):
      // no traffic kept by mockttp, each request's body read in `beforeRequest` and each response's in
      // a 'response' listener, which is where Optic took its interactions from.
      const { getLocal } = await import('mockttp');
      const server = getLocal({ cors: false, debug: false, recordTraffic: false });
      await server.start({ startPort: 20_000, endPort: 60_000 });
      // mockttp 4 takes no request callback beside `thenForwardTo`'s fixed rewrite, so the callback
      // redirects each request to the upstream itself.
      await server.forAnyRequest().thenPassThrough({
        beforeRequest: (request) => {
          void request.body.buffer;
          const url = new URL(request.url);
          return { url: `${target}${url.pathname}${url.search}` };
        },
      });
      await server.on('response', (response) => {
        void response.body.buffer;
      });
      return server.url.replace('localhost', '127.0.0.1');
    }
    default:
      throw new Error(`unknown contender kind "${kind}"`);
  }
}

if (require.main === module) {
  main(process.argv[2] ?? '', process.argv[3] ?? '').then(
    (url) => process.stdout.write(`${JSON.stringify({ url })}\n`),
    (err: unknown) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
  process.on('SIGTERM', () => process.exit(0));
}
