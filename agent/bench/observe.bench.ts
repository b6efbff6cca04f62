/**
 * `node dist/bench/observe.bench.js` (`npm run bench:observe`): CPU time observing adds to one proxied request, without
 * sockets, so it can be measured quickly and steadily on a loaded machine. Each request does what
 * `forward` does while observing (request tap, sampling decision, response tap, body chunks, record)
 * against the same exchange without observing (only the objects the proxy builds anyway). The two are
 * interleaved in rounds in one process, and each round yields to the event loop every 200 requests so
 * sampled shape work runs, as it does in the agent; figures are medians of process CPU µs/request.
 *
 * The shape sampler's clock, on which its shape budget and the whole-body scan budget refill, runs
 * on requests, not on the wall: each observed request moves it on by 1/`rate` s, the scenario's rate
 * in the proxy bench (`BENCH_OBSERVE_CLOCK=wall` for the wall clock, as before session 17). On the
 * wall clock a round's share of budgeted work depended on how fast the rounds before it ran and on
 * how long the process waited for a core, so a loaded machine moved the figure both ways.
 *
 * `BENCH_OBSERVE_PART=heap`: the same rounds measure heap bytes allocated per request instead of CPU
 * (a count, not a timing: it needs no quiet machine). Run it with the young generation fixed large
 * enough that no collection falls in a round (`node --min-semi-space-size=64 --max-semi-space-size=64
 * dist/bench/observe.bench.js`, with `BENCH_REQUESTS=5000`); a round a collection fell in is left out.
 * Without a shape budget there (each key's guaranteed sample only), so the count does not depend on
 * how fast the timed shape work ran.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { PerformanceObserver } from 'node:perf_hooks';
import { LatencyHistogram } from '@spectator/shared';
import { ConsumerIds, parseConsumerSources, projectConsumerKey, pseudonym } from '../src/observe/consumers';
import { BodyTap, type SampleCarrier } from '../src/observe/exchange';
import { ObservationPipeline } from '../src/observe/pipeline';
import { summariseBody } from '../src/observe/summarise';
import { createRootLogger } from '../src/log';
import { Metrics } from '../src/metrics';
import { BODIES } from './contender';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const YIELD_EVERY = 200;
/** `wall`: budgets refill on the wall clock; otherwise on requests (see above). */
const WALL_CLOCK = process.env.BENCH_OBSERVE_CLOCK === 'wall';
/** The shape sampler's clock, ms: moved on by each observed request unless WALL_CLOCK. */
let requestClock = 0;
const samplerClock = WALL_CLOCK ? Date.now : () => requestClock;
/** `BENCH_OBSERVE_PART=heap`: the observing path's rounds count heap bytes allocated, not CPU µs (see above). */
const HEAP = process.env.BENCH_OBSERVE_PART === 'heap';
/** Garbage collections so far (heap rounds only): a round one fell in gives no figure. */
let collections = 0;
if (HEAP) new PerformanceObserver((list) => (collections += list.getEntries().length)).observe({ entryTypes: ['gc'] });

interface Scenario {
  name: string;
  method: string;
  target: (i: number) => string;
  status: number;
  requestHeaders: IncomingHttpHeaders;
  requestBody: Buffer | null;
  responseBody: Buffer;
  /** Requests a second of it in the proxy bench's paired part, observing, at 32 connections (quiet). */
  rate: number;
}

/** Headers as autocannon and the bench upstream send them (after the proxy's own handling). */
const REQUEST_HEADERS: IncomingHttpHeaders = {
  host: '127.0.0.1:4000',
  connection: 'keep-alive',
  'user-agent': 'bench',
  accept: 'application/json',
};
const POST_BODY = Buffer.from(JSON.stringify({ title: 'Hello from the bench', author: 'Ann' }));

const SCENARIOS: Scenario[] = [
  {
    name: 'GET small JSON list',
    method: 'GET',
    target: () => '/posts',
    status: 200,
    requestHeaders: REQUEST_HEADERS,
    requestBody: null,
    responseBody: Buffer.from(BODIES.small),
    rate: 16_000,
  },
  {
    name: 'POST /posts',
    method: 'POST',
    target: () => '/posts',
    status: 201,
    requestHeaders: {
      ...REQUEST_HEADERS,
      'content-type': 'application/json',
      'content-length': String(POST_BODY.length),
    },
    requestBody: POST_BODY,
    responseBody: Buffer.from(JSON.stringify({ id: 1, title: 'Hello from the bench', author: 'Ann' })),
    rate: 15_000,
  },
  {
    name: 'GET 100 KB JSON',
    method: 'GET',
    target: () => '/large',
    status: 200,
    requestHeaders: REQUEST_HEADERS,
    requestBody: null,
    responseBody: Buffer.from(BODIES.large),
    rate: 5_000,
  },
  {
    name: 'GET /posts/{id}?page',
    method: 'GET',
    target: (i) => `/posts/${i % 500}?page=${i % 7}`,
    status: 200,
    requestHeaders: REQUEST_HEADERS,
    requestBody: null,
    responseBody: Buffer.from(BODIES.small),
    rate: 16_000,
  },
];

/** Response chunks as undici hands them over (64 KiB at most). */
function chunksOf(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < body.length; at += 65_536) out.push(body.subarray(at, at + 65_536));
  return out;
}

const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Run `count` requests of a scenario; `pipeline` null = not observing. Returns CPU µs per request. */
async function run(
  pipeline: ObservationPipeline | null,
  scenario: Scenario,
  count: number,
  headersOf: (i: number) => IncomingHttpHeaders = () => scenario.requestHeaders,
): Promise<number> {
  const responseHeaders: IncomingHttpHeaders = {
    'content-type': 'application/json',
    'content-length': String(scenario.responseBody.length),
    date: new Date().toUTCString(),
    'keep-alive': 'timeout=60',
  };
  const chunks = chunksOf(scenario.responseBody);
  let sink = 0;
  const carrier: SampleCarrier = { sampleSlot: null };
  const collectionsBefore = collections;
  const started = HEAP ? process.memoryUsage().heapUsed : cpuMicros();
  const tick = 1_000 / scenario.rate;
  for (let i = 0; i < count; i++) {
    const target = scenario.target(i);
    if (pipeline) {
      requestClock += tick;
      // As forward does while observing: the clock read when the request arrives, when its response
      // starts and when it ends (time to first and last byte).
      const arrived = performance.now();
      const firstByte = performance.now() - arrived;
      carrier.sampleSlot = null; // a handler of its own per exchange in forward
      // As forward does: a body that comes in one chunk is kept by reference, its tap made and the
      // exchange sampled when the pipeline accepts it; the request body (it came whole with its
      // headers) too, unless the response's start needs it for the sampling decision.
      const sampleOnRecord = chunks.length === 1;
      const requestTap =
        scenario.requestBody && !sampleOnRecord
          ? pipeline.tap(scenario.requestHeaders['content-type'], scenario.requestHeaders['content-encoding'], true)
          : null;
      if (requestTap && scenario.requestBody) requestTap.write(scenario.requestBody);
      const sampledBytes = sampleOnRecord
        ? 0
        : pipeline.sample(scenario.method, target, scenario.status, responseHeaders, requestTap?.copied ?? 0, carrier);
      // Negative keeps a small body to notice a new variant, fingerprinted as it comes.
      const responseTap = sampleOnRecord
        ? null
        : pipeline.tap(
            responseHeaders['content-type'],
            responseHeaders['content-encoding'],
            sampledBytes !== 0,
            sampledBytes !== 0,
          );
      if (responseTap) for (const chunk of chunks) responseTap.write(chunk);
      pipeline.record({
        sampleOnRecord,
        captureId: pipeline.captureId(),
        method: scenario.method,
        target,
        status: scenario.status,
        requestHeaders: headersOf(i),
        responseHeaders,
        request: requestTap && (requestTap.bytes > 0 || !requestTap.copying) ? requestTap : null,
        response: responseTap && responseTap.bytes > 0 ? responseTap : null,
        requestBody: requestTap ? null : (scenario.requestBody ?? null),
        responseBody: sampleOnRecord ? (chunks[0] ?? null) : null,
        at: Date.now(),
        sampledBytes,
        sampleSlot: carrier.sampleSlot,
        firstByte,
        lastByte: performance.now() - arrived,
        clientLeft: false,
      });
    } else {
      for (const chunk of chunks) sink += chunk.length;
    }
    if (i % YIELD_EVERY === YIELD_EVERY - 1) await yieldToLoop();
  }
  // The rows go out once a second in the agent; drained per run here, so their cost is counted too.
  if (pipeline) sink += pipeline.drain().length;
  const cost =
    HEAP && collections !== collectionsBefore
      ? NaN
      : ((HEAP ? process.memoryUsage().heapUsed : cpuMicros()) - started) / count;
  return sink >= 0 ? cost : NaN;
}

const median = (values: number[]) => {
  // A heap round a collection fell in gives NaN (see `run`): left out.
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

async function main(): Promise<void> {
  // BENCH_OBSERVE_PART=consumers: the consumer figures only.
  if (process.env.BENCH_OBSERVE_PART === 'consumers') return consumerPerRequest();
  const metrics = new Metrics();
  const pipeline = new ObservationPipeline({
    bodyLimit: 1024 * 1024,
    captureId: () => '6f9d7c5e-0c55-4d1e-9d7a-3b1b8f0f2a10',
    rules: () => [],
    metrics,
    log: createRootLogger('silent'),
    samplerClock,
    // Heap rounds: no shape budget (only each key's guaranteed sample, on the request clock), so the
    // count does not depend on how fast timed shape work ran, which sets how many samples the budget admits.
    ...(HEAP ? { sampler: { budgetShare: 0, burstMs: 0 } } : {}),
  });
  console.log(
    `observing path: ${ROUNDS} rounds × ${REQUESTS} requests per scenario, on/off interleaved; budgets refill ${WALL_CLOCK ? 'on the wall clock' : "on requests (each 1/rate s of the sampler's clock)"}; node ${process.version}`,
  );
  // Warm-up: JIT and the first shapes.
  for (const scenario of SCENARIOS) await run(pipeline, scenario, 2_000);
  for (const scenario of SCENARIOS) {
    const on: number[] = [];
    const off: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      off.push(await run(null, scenario, REQUESTS));
      on.push(await run(pipeline, scenario, REQUESTS));
    }
    const unit = HEAP ? 'heap bytes allocated' : 'µs CPU';
    const counted = HEAP
      ? `; ${on.filter((value) => !Number.isNaN(value)).length} of ${ROUNDS} rounds without a collection`
      : '';
    console.log(
      `  ${scenario.name.padEnd(22)} observing adds ${(median(on) - median(off)).toFixed(2).padStart(6)} ${unit} per request (on ${median(on).toFixed(2)}, off ${median(off).toFixed(2)}${counted})`,
    );
  }
  console.log(
    `  counted ${metrics.get('observed_total')}, shaped ${metrics.get('shaped_total')}, sampled out ${metrics.get('unshaped_total')}, dropped ${metrics.get('dropped_total')}`,
  );
  if (HEAP) return;
  shapeWorkPerSample();
  timingPerRequest();
  await consumerPerRequest();
}

/** A JWT as clients send it (payload with sub, client_id and the usual claims; the signature is not read); `serial` makes another token of the client. */
function bearer(client: number, serial = 0): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const claims = {
    sub: `user-${client}`,
    client_id: `client-${client}`,
    iss: 'https://id.example.com',
    exp: 2e9 + serial,
  };
  return `Bearer ${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.${'s'.repeat(342)}`;
}

/**
 * What naming consumers (issue 19) costs one request: the observing path of GET /posts with a bearer
 * JWT from 100 clients, with consumers named by its client_id claim against the same without,
 * two pipelines interleaved round by round. And the pseudonym of a token never seen before (a
 * cache miss: decode, parse, HMAC), alone, beside a lookup of a token already seen.
 */
async function consumerPerRequest(): Promise<void> {
  const tokens = Array.from({ length: 100 }, (_, i) => ({ ...REQUEST_HEADERS, authorization: bearer(i) }));
  const headersOf = (i: number): IncomingHttpHeaders => tokens[i % tokens.length] as IncomingHttpHeaders;
  const config = { sources: parseConsumerSources('jwt:client_id'), key: 'bench-consumer-key-0123456789', project: 'p' };
  const make = (named: boolean) =>
    new ObservationPipeline({
      bodyLimit: 1024 * 1024,
      captureId: () => '6f9d7c5e-0c55-4d1e-9d7a-3b1b8f0f2a10',
      rules: () => [],
      metrics: new Metrics(),
      log: createRootLogger('silent'),
      consumers: named ? new ConsumerIds(config) : null,
      samplerClock,
    });
  const named = make(true);
  const plain = make(false);
  const scenario = SCENARIOS[0] as Scenario;
  await run(named, scenario, 2_000, headersOf);
  await run(plain, scenario, 2_000, headersOf);
  const on: number[] = [];
  const off: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    off.push(await run(plain, scenario, REQUESTS, headersOf));
    on.push(await run(named, scenario, REQUESTS, headersOf));
  }
  // Each round's own difference (its two runs are side by side), then their median: the difference
  // of two medians taken apart can come out negative when the noise falls in one contender's rounds.
  const extra = median(on.map((value, round) => value - (off[round] as number)));
  console.log(
    `consumers named (jwt:client_id, 100 clients): ${extra.toFixed(2)} µs CPU per request (with ${median(on).toFixed(2)}, without ${median(off).toFixed(2)}; median of ${ROUNDS} rounds' differences)`,
  );
  // A token never seen: of a client seen before (a new JWT per request, same client_id), or of a
  // new client too; now against the lookup before session 11 (by token only: decode, parse, HMAC).
  const count = 5_000;
  const tokensOf = (client: (i: number) => number) =>
    Array.from({ length: count * (ROUNDS + 1) }, (_, i) => ({ authorization: bearer(client(i), i) }));
  const cases = {
    'new token, known client': tokensOf((i) => i % 100),
    'new token, new client': tokensOf((i) => 1_000 + i),
  };
  const contenders = { now: () => new ConsumerIds(config), before: () => new TokenOnlyIds(config.key, config.project) };
  /** Reads the header only: what making each request's header costs, taken off both figures. */
  const baseline: Identifies = { identify: (headers) => headers.authorization ?? null };
  let sink = 0;
  // Each request's header is a string of its own, as the HTTP parser makes it (a string reused
  // would keep its hash and hide what a lookup by it costs); the copy costs both contenders alike.
  const fresh = (text: string): string => ` ${text}`.slice(1);
  const timed = (ids: Identifies, list: IncomingHttpHeaders[], round: number): number => {
    const started = cpuMicros();
    for (let i = round * count; i < (round + 1) * count; i++)
      sink += (ids.identify({ authorization: fresh(list[i]?.authorization as string) }, undefined) ?? '').length;
    return (cpuMicros() - started) / count;
  };
  const orders = [
    ['now', 'before', 'baseline'],
    ['baseline', 'before', 'now'],
  ] as const;
  /**
   * Rounds of each contender on `list`, interleaved (after a warm-up round), net of the baseline's
   * fastest round: the baseline keeps no state, so its slower rounds are noise (a scavenge copying
   * the contenders' caches falls in whichever loop runs), and its median once came out above a
   * contender's (a cost of −3.27 µs printed).
   */
  const compare = (made: Record<'now' | 'before', Identifies>, list: IncomingHttpHeaders[]) => {
    const all = { ...made, baseline };
    const figures: Record<string, number[]> = { now: [], before: [], baseline: [] };
    for (const which of orders[0]) timed(all[which], list, 0);
    for (let round = 1; round <= ROUNDS; round++)
      for (const which of orders[round % 2]!) figures[which]?.push(timed(all[which], list, round));
    const base = Math.min(...(figures.baseline ?? []));
    return { now: median(figures.now ?? []) - base, before: median(figures.before ?? []) - base, base };
  };
  for (const [name, list] of Object.entries(cases)) {
    const made = { now: contenders.now(), before: contenders.before() };
    // The 100 clients' claims seen first (for the known ones).
    for (const which of ['now', 'before'] as const)
      for (let i = 0; i < 100; i++) made[which].identify(headersOf(i), undefined);
    const figure = compare(made, list);
    console.log(
      `  pseudonym of a ${name}: ${figure.now.toFixed(2)} µs now, ${figure.before.toFixed(2)} µs before (token cache, JSON.parse, HMAC each time); making the header ${figure.base.toFixed(2)} µs (its fastest round), taken off`,
    );
  }
  const repeat = Array.from({ length: count * (ROUNDS + 1) }, (_, i) => headersOf(i));
  const hits = compare({ now: contenders.now(), before: contenders.before() }, repeat);
  if (sink < 0) console.log('unreachable'); // keeps the results alive
  console.log(
    `  pseudonym of a token seen before: ${hits.now.toFixed(2)} µs now, ${hits.before.toFixed(2)} µs before; making the header ${hits.base.toFixed(2)} µs (its fastest round), taken off`,
  );
}

/** What names a request's consumer (a contender of the consumer figures). */
interface Identifies {
  identify(headers: IncomingHttpHeaders, socket: undefined): string | null;
}

/** The lookup as it was before session 11, frozen: cached by header text only; a miss decodes, parses and hashes. */
class TokenOnlyIds {
  private readonly key: Buffer;
  private readonly cache = new Map<string, string>();
  constructor(secret: string, project: string) {
    this.key = projectConsumerKey(secret, project);
  }
  identify(headers: IncomingHttpHeaders, _socket: undefined): string | null {
    const text = headers.authorization;
    if (text === undefined) return null;
    let id = this.cache.get(text);
    if (id === undefined) {
      const token = text.replace(/^bearer\s+/i, '').trim();
      const first = token.indexOf('.');
      const second = token.indexOf('.', first + 1);
      let value = '';
      try {
        const payload = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8')) as Record<
          string,
          unknown
        >;
        value = typeof payload.client_id === 'string' ? payload.client_id : '';
      } catch {
        value = '';
      }
      id = value === '' ? '' : pseudonym(this.key, value);
      if (this.cache.size >= 10_000) this.cache.clear();
      this.cache.set(text, id);
    }
    return id === '' ? null : id;
  }
}

/**
 * What runtime evidence (issue 18) costs one request: the three clock reads forward makes (arrival,
 * response start, response end) and the two histogram records of the row (time to first and last
 * byte), beside the same loop without them, interleaved round by round.
 */
function timingPerRequest(): void {
  const count = 1_000_000;
  const ttfb = new LatencyHistogram();
  const ttlb = new LatencyHistogram();
  let sink = 0;
  const timed = (withTimings: boolean): number => {
    const started = cpuMicros();
    for (let i = 0; i < count; i++) {
      if (withTimings) {
        const arrived = performance.now();
        ttfb.record(performance.now() - arrived);
        ttlb.record(performance.now() - arrived);
      } else sink += i;
    }
    return ((cpuMicros() - started) * 1000) / count;
  };
  timed(true);
  timed(false);
  const on: number[] = [];
  const off: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    on.push(timed(true));
    off.push(timed(false));
  }
  if (sink < 0 || ttfb.total + ttlb.total === 0) console.log('unreachable'); // keeps the results alive
  console.log(
    `timings per request (3 clock reads, 2 histogram records): ${(median(on) - median(off)).toFixed(0)} ns CPU (medians of ${ROUNDS} rounds)`,
  );
  histogramRecordCost();
}

/**
 * What one `LatencyHistogram.record` costs alone (the bucket's logarithm and the count), on
 * durations spread over 0.05 ms–500 ms so every bucket between is hit, beside the same loop
 * reading the durations without recording them, interleaved round by round.
 */
function histogramRecordCost(): void {
  const count = 2_000_000;
  const durations = Float64Array.from({ length: 4096 }, (_, i) => 0.05 * Math.exp((i / 4096) * Math.log(10_000)));
  const histogram = new LatencyHistogram();
  let sink = 0;
  const timed = (record: boolean): number => {
    const started = cpuMicros();
    for (let i = 0; i < count; i++) {
      const ms = durations[i & 4095] as number;
      if (record) histogram.record(ms);
      else sink += ms;
    }
    return ((cpuMicros() - started) * 1000) / count;
  };
  timed(true);
  timed(false);
  const on: number[] = [];
  const off: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    on.push(timed(true));
    off.push(timed(false));
  }
  if (sink < 0 || histogram.total === 0) console.log('unreachable'); // keeps the results alive
  const perRecord = median(on) - median(off);
  console.log(
    `histogram record: ${perRecord.toFixed(0)} ns CPU per record, ${(2 * perRecord).toFixed(0)} ns per request (time to first and last byte; medians of ${ROUNDS} rounds, each of ${count} records)`,
  );
}

/**
 * What one admitted sample costs in the work queue (the bodies of one interaction summarised with
 * shape work), beside `JSON.parse` of the same bytes alone, interleaved round by round: the ratio
 * is how much of a sample is parsing, which no shape code can save.
 */
function shapeWorkPerSample(): void {
  const limit = 1024 * 1024;
  console.log(
    `shape work per sampled interaction (CPU µs, medians of ${ROUNDS} rounds), beside JSON.parse of its bodies alone:`,
  );
  for (const scenario of SCENARIOS.slice(0, 3)) {
    const bodies = [scenario.requestBody, scenario.responseBody].filter((body): body is Buffer => body !== null);
    let sink = 0;
    const summarise = (): void => {
      for (const body of bodies) {
        const tap = new BodyTap({ contentType: 'application/json', contentEncoding: '', limit, copy: true });
        for (const chunk of chunksOf(body)) tap.write(chunk);
        sink += summariseBody(tap, true, limit).key.length;
      }
    };
    const parse = (): void => {
      for (const body of bodies) sink += (JSON.parse(body.toString('utf8')) as object) === null ? 0 : 1;
    };
    const count = Math.max(10, Math.round(2_000_000 / bodies.reduce((sum, body) => sum + body.length, 0)));
    const timed = (work: () => void): number => {
      const started = cpuMicros();
      for (let i = 0; i < count; i++) work();
      return (cpuMicros() - started) / count;
    };
    timed(summarise);
    timed(parse);
    const summariseTimes: number[] = [];
    const parseTimes: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      summariseTimes.push(timed(summarise));
      parseTimes.push(timed(parse));
    }
    if (sink < 0) console.log('unreachable'); // keeps the results alive
    const whole = median(summariseTimes);
    const parsing = median(parseTimes);
    console.log(
      `  ${scenario.name.padEnd(22)} ${whole.toFixed(1).padStart(8)} µs, JSON.parse alone ${parsing.toFixed(1).padStart(8)} µs (${((parsing / whole) * 100).toFixed(0)}% of it)`,
    );
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
