/**
 * `npm run bench -w @spectator/agent`: throughput and added latency of the agent against direct
 * access and other Node proxies, measured side by side in one run. Every contender runs in its own
 * process; cells are interleaved (round → scenario → contender) so drift in machine load hits all
 * contenders alike; figures are medians over rounds. The load comes from wrk when it is installed,
 * or autocannon when `BENCH_LOADGEN=autocannon` asks for it (it stops without either); latency
 * percentiles are sub-millisecond either way.
 *
 * The observing cost (observing on against off) is too small for that table to decide: cells of
 * 3 s swing ±20 % on two cores shared by three busy processes, and two processes of the same code
 * differ by up to 15 %. A second part measures it alone, in agent processes switched between
 * observing on and off every quarter second under one continuous load each (ABC CBA, so drift hits
 * both sides alike; several processes in turn, since one process's placement and JIT state move its
 * ratio too), and reports the median of the per-group ratios with its spread (IQR) and
 * a distribution-free 95 % interval of that median: a cell is settled when the interval lies on
 * one side of the aim.
 *
 * `BENCH_ROUNDS`, `BENCH_SECONDS`: rounds and seconds per cell of the table (6, 2);
 * `BENCH_PAIRED_SECONDS`, `BENCH_WINDOW_MS`, `BENCH_PAIRED_AGENTS`: seconds per scenario, ms per
 * observing switch and agent processes (each in turn) of the observing-cost part (60, 250, 3);
 * `BENCH_PAIRED_WARMUP`: seconds each of those agents first observes each endpoint (12);
 * `BENCH_PAIRED_DUMP`: a file for each stretch's windows; `BENCH_AGENT_NODE_FLAGS`: Node flags of the agents;
 * `BENCH_AGENT_MALLOC=0`: agents without the allocator setting the CLI gives them (src/malloc.ts);
 * `BENCH_AGENT_OBSERVE=count|nowatch`: observing agents that only count, or shape but watch no body (contender.ts);
 * `BENCH_PART=paired`: the observing-cost part alone; `BENCH_SCENARIOS=32 conn` (comma-separated
 * parts of scenario names, `&` joining parts one name must all hold): those scenarios alone.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import { AGENT_MALLOC_ENV, AGENT_MALLOC_MARK } from '../src/malloc';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const PAIRED_SECONDS = Number(process.env.BENCH_PAIRED_SECONDS ?? 60);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 250);
/** `BENCH_PAIRED_WARMUP`: seconds of load, observing on, per endpoint (method and path) of the scenarios for each switched agent before it is measured. */
const PAIRED_WARMUP = Number(process.env.BENCH_PAIRED_WARMUP ?? 12);
/** `BENCH_PAIRED_DUMP`: a file each switched stretch's windows are appended to (one JSON line each), for a look at other statistics. */
const PAIRED_DUMP = process.env.BENCH_PAIRED_DUMP ?? '';
const PAIRED_AGENTS = Math.max(1, Number(process.env.BENCH_PAIRED_AGENTS ?? 3));
const ONLY_PAIRED = process.env.BENCH_PART === 'paired';
// wrk takes whole seconds, and each switched agent gets an equal share of a scenario's seconds.
if (!Number.isInteger(PAIRED_SECONDS / PAIRED_AGENTS) || PAIRED_SECONDS <= 0) {
  console.error(
    `BENCH_PAIRED_SECONDS (${PAIRED_SECONDS}) must be a positive whole multiple of BENCH_PAIRED_AGENTS (${PAIRED_AGENTS}): each agent's share is whole seconds`,
  );
  process.exit(2);
}
/** mockttp set up as Optic's capture ran it (see contender.ts); shown beside the aim, which is judged against mockttp forwarding only. */
const MOCKTTP_AS_OPTIC = 'mockttp (as Optic)';
const POST_BODY = JSON.stringify({ title: 'Hello from the bench', author: 'Ann' });

interface Scenario {
  name: string;
  path: string;
  method: 'GET' | 'POST';
  connections: number;
}

/**
 * `BENCH_SCENARIOS`: scenarios whose name holds one of these comma-separated parts (`32 conn`, `POST`); all by
 * default. A part may join several with `&`, all of which the name must hold (`list&32 conn,POST&32 conn`).
 */
const ONLY_SCENARIOS = (process.env.BENCH_SCENARIOS ?? '').split(',').filter((part) => part.trim() !== '');

const SCENARIOS: Scenario[] = [1, 32]
  .flatMap((connections) => [
    { name: `GET small JSON list, ${connections} conn`, path: '/posts', method: 'GET' as const, connections },
    { name: `POST /posts, ${connections} conn`, path: '/posts', method: 'POST' as const, connections },
    { name: `GET 100 KB JSON, ${connections} conn`, path: '/large', method: 'GET' as const, connections },
  ])
  .filter(
    (scenario) =>
      ONLY_SCENARIOS.length === 0 ||
      ONLY_SCENARIOS.some((part) => part.split('&').every((piece) => scenario.name.includes(piece.trim()))),
  );

interface Party {
  name: string;
  url: string;
  admin?: string;
  child?: ChildProcess;
  /** Settles the pending `observe on|off` command of an agent when it answers. */
  switched?: (point: SwitchPoint) => void;
}

interface Cell {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU time of the contender's process per request (all threads, GC helpers included), µs. */
  cpuPerRequest: number;
  /** CPU time of the contender's main thread per request, µs: its JavaScript, without GC helper threads. */
  mainPerRequest: number;
  /**
   * Minor page faults of the contender's process per request: fresh memory touched (a count, steady
   * under load where CPU times are not). Memory the C heap gave back to the system and took again
   * shows here: about 110 KB, 27 pages, of socket reads a 100 KB request (docs/benchmarks.md, #18).
   */
  faultsPerRequest: number;
}

const CONTENDER_SCRIPT = path.join(__dirname, 'contender.js');
/** `BENCH_AGENT_NODE_FLAGS`: Node/V8 flags for the agent contenders only (`--max-semi-space-size=2`), space-separated. */
const AGENT_NODE_FLAGS = (process.env.BENCH_AGENT_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
/**
 * The agent contenders run with the allocator settings the CLI gives the agent's process (src/malloc.ts;
 * the CLI sets them where Node can restart itself in place: the image's Node 24). `BENCH_AGENT_MALLOC=0`: without.
 */
const AGENT_ENV: NodeJS.ProcessEnv =
  process.env.BENCH_AGENT_MALLOC === '0'
    ? process.env
    : { ...process.env, ...AGENT_MALLOC_ENV, [AGENT_MALLOC_MARK]: '1' };

/** Contender processes still running: stopped when the bench ends, also when it fails. */
const spawned = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of spawned) child.kill('SIGTERM');
});

/** Start a contender process and wait for the URL it prints. */
async function spawnParty(name: string, kind: string, target = ''): Promise<Party> {
  const flags = kind.startsWith('agent') ? AGENT_NODE_FLAGS : [];
  const child = spawn(process.execPath, [...flags, CONTENDER_SCRIPT, kind, target], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: kind.startsWith('agent') ? AGENT_ENV : process.env,
  });
  const lines = readline.createInterface({ input: child.stdout! });
  // mockttp reports every request autocannon cuts at the end of a run; keep only real errors.
  readline.createInterface({ input: child.stderr! }).on('line', (line) => {
    if (
      !/Failed to handle request|You should either explicitly mock|No rules were found|^\s*$|^\s+(GET|POST)|^The configured rules|^Match |^- /.test(
        line,
      )
    )
      process.stderr.write(`[${name}] ${line}\n`);
  });
  const party: Party = { name, url: '', child };
  spawned.add(child);
  child.once('exit', () => spawned.delete(child));
  console.log(`starting ${name}`);
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening`)));
    lines.on('line', (line) => {
      let message: { url?: string; admin?: string; observe?: string } & Partial<SwitchPoint>;
      try {
        message = JSON.parse(line) as typeof message;
      } catch {
        return; // a contender's own output
      }
      if (message.admin) party.admin = message.admin;
      if (message.observe)
        party.switched?.({
          requests: message.requests ?? NaN,
          shaped: message.shaped ?? NaN,
          cpu: message.cpu ?? NaN,
          gc: message.gc ?? NaN,
          at: message.at ?? NaN,
        });
      if (message.url) {
        party.url = message.url;
        resolve();
      }
    });
  });
  return party;
}

/** Switch observing on or off in an agent contender; resolves once it has, with where the switch fell. */
function switchObserving(party: Party, on: boolean): Promise<SwitchPoint> {
  return new Promise((resolve) => {
    party.switched = resolve;
    party.child!.stdin!.write(`observe ${on ? 'on' : 'off'}\n`);
  });
}

/** CPU time a thread has run so far, µs: the scheduler's own count in ns (`/proc/…/schedstat`). */
function threadCpuOf(pid: number, tid: number | string): number {
  return Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) / 1_000;
}

/**
 * CPU time of a process so far, µs: all its threads (GC helpers included) and its main thread
 * alone. Read from the scheduler's nanosecond counts, not `/proc/<pid>/stat`, whose 10 ms clock
 * ticks are too coarse for cells of a second. NaN off Linux.
 */
function cpuOf(pid: number | undefined): { all: number; main: number } {
  try {
    if (pid === undefined) throw new Error('no process');
    const all = fs.readdirSync(`/proc/${pid}/task`).reduce((sum, tid) => sum + threadCpuOf(pid, tid), 0);
    return { all, main: threadCpuOf(pid, pid) };
  } catch {
    return { all: NaN, main: NaN };
  }
}

/** Minor page faults of a process so far (`/proc/<pid>/stat`, its 10th field); NaN off Linux. */
function faultsOf(pid: number | undefined): number {
  try {
    if (pid === undefined) throw new Error('no process');
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (2nd field) may hold spaces: count fields after its closing parenthesis.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
  } catch {
    return NaN;
  }
}

/** What one load run saw: requests answered, over how long, latency percentiles (ms), errors. */
interface Load {
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  errors: number;
}

/**
 * The load generator: wrk (C, one thread: it leaves far more of the two cores to the contenders than
 * autocannon, whose JavaScript competed with them), or autocannon when `BENCH_LOADGEN=autocannon`
 * asks for it. Without wrk and without that choice the bench stops: the run of 25 Nov 2026 most
 * likely fell back to autocannon unseen (wrk is not kept on a fresh machine), and its direct access
 * and 1-connection ratios were about half those of the runs on wrk.
 */
const LOADGEN: 'wrk' | 'autocannon' = ((): 'wrk' | 'autocannon' => {
  const chosen = process.env.BENCH_LOADGEN;
  if (chosen === 'autocannon' || chosen === 'wrk') return chosen;
  if (!spawnSync('wrk', ['--version']).error) return 'wrk';
  process.stderr.write(
    'wrk is not installed: `apt-get install wrk`, or BENCH_LOADGEN=autocannon for figures that are not comparable with runs on wrk (autocannon takes about a core of its own)\n',
  );
  process.exit(2);
})();

/** autocannon; percentiles from every response time it reports (sub-millisecond, unlike its own millisecond histogram). */
async function loadWithAutocannon(url: string, scenario: Scenario, seconds: number): Promise<Load> {
  const times: number[] = [];
  const instance = autocannon({
    url,
    connections: scenario.connections,
    duration: seconds,
    method: scenario.method,
    ...(scenario.method === 'POST' ? { body: POST_BODY, headers: { 'content-type': 'application/json' } } : {}),
  });
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) =>
    times.push(responseTime),
  );
  const result = await instance;
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? NaN;
  return {
    requests: result.requests.total,
    seconds: result.duration || seconds,
    p50: at(0.5),
    p99: at(0.99),
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

let postScriptPath: string | null = null;

/** wrk's Lua script for `POST /posts` with the bench's JSON body (written once). */
function postScript(): string {
  if (postScriptPath) return postScriptPath;
  postScriptPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spectator-bench-')), 'post.lua');
  fs.writeFileSync(
    postScriptPath,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(POST_BODY)}\nwrk.headers["Content-Type"] = "application/json"\n`,
  );
  return postScriptPath;
}

/** A wrk duration or latency (`850.00us`, `1.20ms`, `2.00s`, `1.00m`) in ms. */
function wrkMs(value: string, unit: string): number {
  return Number(value) * ({ us: 0.001, ms: 1, s: 1_000, m: 60_000 } as Record<string, number>)[unit]!;
}

/** wrk, one thread; percentiles from its `--latency` distribution (µs resolution). */
async function loadWithWrk(url: string, scenario: Scenario, seconds: number): Promise<Load> {
  const args = [
    '-t1',
    `-c${scenario.connections}`,
    `-d${seconds}s`,
    '--latency',
    ...(scenario.method === 'POST' ? ['-s', postScript()] : []),
    url,
  ];
  const output = await new Promise<string>((resolve, reject) =>
    execFile('wrk', args, { timeout: (seconds + 30) * 1_000 }, (err, stdout) =>
      err ? reject(new Error(`wrk ${args.join(' ')}: ${err.message}`)) : resolve(stdout),
    ),
  );
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m)\b/.exec(output);
  const percentile = (q: number) => {
    const match = new RegExp(`^\\s+${q}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(output);
    return match ? wrkMs(match[1]!, match[2]!) : NaN;
  };
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0);
  if (!total) throw new Error(`wrk printed no request count:\n${output}`);
  return {
    requests: Number(total[1]),
    seconds: wrkMs(total[2]!, total[3]!) / 1_000,
    p50: percentile(50),
    p99: percentile(99),
    errors: non2xx + (socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0),
  };
}

/** One load run against a party (wrk or autocannon, see LOADGEN), with its CPU time per request (all threads and main thread). */
async function measure(party: Party, scenario: Scenario, seconds: number): Promise<Cell> {
  const pid = party.child?.pid;
  const cpuBefore = cpuOf(pid);
  const faultsBefore = faultsOf(pid);
  const url = `${party.url}${scenario.path}`;
  const load =
    LOADGEN === 'wrk' ? await loadWithWrk(url, scenario, seconds) : await loadWithAutocannon(url, scenario, seconds);
  const cpuAfter = cpuOf(pid);
  const faultsAfter = faultsOf(pid);
  const requests = Math.max(1, load.requests);
  return {
    rps: load.requests / load.seconds,
    p50: load.p50,
    p99: load.p99,
    errors: load.errors,
    cpuPerRequest: (cpuAfter.all - cpuBefore.all) / requests,
    mainPerRequest: (cpuAfter.main - cpuBefore.main) / requests,
    faultsPerRequest: (faultsAfter - faultsBefore) / requests,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** Peak and current RSS of a process, MB (Linux /proc). */
function rssOf(pid: number | undefined): { peak: number; now: number } {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
    return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
  } catch {
    return { peak: NaN, now: NaN };
  }
}

async function metricsOf(party: Party): Promise<Record<string, number>> {
  if (!party.admin) return {};
  const text = await fetch(`${party.admin}/metrics`).then((r) => r.text());
  return Object.fromEntries(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => [l.split(' ')[0]!.replace('spectator_agent_', ''), Number(l.split(' ')[1])]),
  );
}

const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/** The q-quantile of sorted values (linear interpolation). */
const quantile = (sorted: number[], q: number) => {
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  return (
    (sorted[low] as number) +
    ((sorted[Math.min(low + 1, sorted.length - 1)] as number) - (sorted[low] as number)) * (at - low)
  );
};

/**
 * A distribution-free 95 % confidence interval of the median of `n` values: the order statistics
 * `[k, n + 1 - k]` (1-based) with the largest `k` such that P(Binomial(n, ½) < k) ≤ 2.5 %.
 * Null when `n` is too small for one (under 6).
 */
function medianInterval(sorted: number[]): [number, number] | null {
  const n = sorted.length;
  let below = 0; // P(X < k) for the k being tried
  let pmf = 0.5 ** n; // P(X = k - 1), starting at P(X = 0)
  let k = 0;
  for (let next = 1; next <= n; next++) {
    if (below + pmf > 0.025) break;
    below += pmf;
    pmf = (pmf * (n - next + 1)) / next;
    k = next;
  }
  return k >= 1 ? [sorted[k - 1] as number, sorted[n - k] as number] : null;
}

interface RatioSummary {
  median: number;
  q1: number;
  q3: number;
  interval: [number, number] | null;
}

function summariseRatios(ratios: number[]): RatioSummary {
  const sorted = ratios.filter(Number.isFinite).sort((a, b) => a - b);
  return {
    median: quantile(sorted, 0.5),
    q1: quantile(sorted, 0.25),
    q3: quantile(sorted, 0.75),
    interval: medianInterval(sorted),
  };
}

const showRatio = (r: RatioSummary) =>
  `${fmt(r.median, 3)} (IQR ${fmt(r.q1, 3)}–${fmt(r.q3, 3)}; 95% CI ${r.interval ? `${fmt(r.interval[0], 3)}–${fmt(r.interval[1], 3)}` : 'n/a'})`;

/** Where an observing switch fell in the agent: requests and shaped samples so far, CPU µs and GC pause ms so far, its clock in ms. */
interface SwitchPoint {
  requests: number;
  shaped: number;
  cpu: number;
  gc: number;
  at: number;
}

/** What one agent's stretch of switched load gave for one scenario (see `measureObservingCost`). */
interface Segment {
  /** Per group of three windows: on ÷ off req/s, on ÷ off CPU per request, off ÷ the other off req/s. */
  rps: number[];
  cpu: number[];
  sameCode: number[];
  /** Shaped samples per request of each on window. */
  shaped: number[];
  /** Totals over the windows after the warm-up, per side: CPU µs, GC pause µs, requests. */
  on: { cpu: number; gc: number; requests: number };
  off: { cpu: number; gc: number; requests: number };
  /** Each window: observing on, requests, agent CPU µs, GC pause µs, ms (for `BENCH_PAIRED_DUMP`). */
  windows: { on: boolean; requests: number; cpu: number; gc: number; ms: number }[];
}

/**
 * One agent under `seconds` of continuous load of one scenario, observing switched every `WINDOW_MS`
 * in the repeating order on, off, off, off, off, on (ABC CBA: the second off is an A/A control);
 * each group of three windows gives the ratios of on to off (req/s and CPU per request, counted by
 * the agent itself at each switch) and of off to off, the noise floor a verdict has to clear. The
 * first pattern of windows is dropped as warm-up.
 */
async function switchedSegment(agent: Party, scenario: Scenario, seconds: number): Promise<Segment> {
  const pattern = [true, false, false, false, false, true];
  await switchObserving(agent, true);
  const load = measure(agent, scenario, seconds);
  const points: (SwitchPoint & { on: boolean })[] = [];
  const ends = Date.now() + seconds * 1000 - WINDOW_MS;
  for (let i = 0; Date.now() < ends; i++) {
    const on = pattern[i % pattern.length]!;
    points.push({ ...(await switchObserving(agent, on)), on });
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
  }
  points.push({ ...(await switchObserving(agent, true)), on: true });
  await load;
  const windows = points.slice(0, -1).map((start, i) => {
    const end = points[i + 1]!;
    const requests = end.requests - start.requests;
    return {
      on: start.on,
      requests,
      ms: end.at - start.at,
      rps: (requests * 1000) / (end.at - start.at),
      cpuTotal: end.cpu - start.cpu,
      cpu: (end.cpu - start.cpu) / Math.max(1, requests),
      gc: (end.gc - start.gc) * 1000,
      shaped: (end.shaped - start.shaped) / Math.max(1, requests),
    };
  });
  const segment: Segment = {
    rps: [],
    cpu: [],
    sameCode: [],
    shaped: windows.filter((w) => w.on).map((w) => w.shaped),
    on: { cpu: 0, gc: 0, requests: 0 },
    off: { cpu: 0, gc: 0, requests: 0 },
    windows: windows.map((w) => ({ on: w.on, requests: w.requests, cpu: w.cpuTotal, gc: w.gc, ms: w.ms })),
  };
  // CPU and GC pauses per request over all windows of a side after the warm-up (totals, not
  // medians: a rare mark-compact costs as much as many scavenges, and a median of windows would
  // leave it out).
  for (const w of windows.slice(pattern.length)) {
    const side = w.on ? segment.on : segment.off;
    side.cpu += w.cpuTotal;
    side.gc += w.gc;
    side.requests += w.requests;
  }
  // Groups of three windows (on, off, off or off, off, on), after a warm-up of one whole pattern.
  for (let g = pattern.length; g + 3 <= windows.length; g += 3) {
    const group = windows.slice(g, g + 3);
    const on = group.find((w) => w.on)!;
    const [off, again] = group.filter((w) => !w.on) as [(typeof group)[0], (typeof group)[0]];
    segment.rps.push(on.rps / off.rps);
    segment.cpu.push(on.cpu / off.cpu);
    segment.sameCode.push(off.rps / again.rps);
  }
  return segment;
}

/**
 * The observing cost alone, in agent processes switched between observing on and off under one
 * continuous load each, so both sides share the JIT state, memory layout and CPU placement and the
 * same moment of machine load. One process is not enough: two runs of the same build differed by
 * more than either run's interval (a process's placement and JIT state weigh on its on ÷ off ratio,
 * see docs/benchmarks.md), so each scenario's `PAIRED_SECONDS` are split between `PAIRED_AGENTS`
 * processes, their stretches spread over the sitting (round → scenario → process of that round),
 * and the groups of all of them pooled.
 * @returns one aim line per scenario.
 */
async function measureObservingCost(agents: Party[]): Promise<string[]> {
  const seconds = PAIRED_SECONDS / agents.length;
  console.log(
    `\nobserving cost: ${agents.length} agent processes in turn, each warmed up observing ${PAIRED_WARMUP} s per endpoint, then under continuous load for ${fmt(seconds, 1)} s per scenario (${PAIRED_SECONDS} s in all), observing switched every ${WINDOW_MS} ms (on, off, off again, then reversed); ratios of on to off per group of windows, all processes' groups pooled: median (IQR; 95% CI of the median)`,
  );
  // Warm-up of every process, observing on, each endpoint of the scenarios in turn for
  // `PAIRED_WARMUP` s (past the sampler's 10 s window of a key, so its guaranteed sample runs in
  // optimized code once): a cold agent kept compiling and deoptimizing its observing code (`sample`,
  // `accept`, the shape work) for a minute or more, in the on windows only (see docs/benchmarks.md).
  const endpoints = [...new Map(SCENARIOS.map((scenario) => [`${scenario.method} ${scenario.path}`, scenario]))];
  if (PAIRED_WARMUP > 0)
    for (const agent of agents) {
      await switchObserving(agent, true);
      for (const [, scenario] of endpoints) await measure(agent, scenario, PAIRED_WARMUP);
    }
  const segments = new Map<Scenario, Segment[]>(SCENARIOS.map((scenario) => [scenario, []]));
  for (const [index, agent] of agents.entries())
    for (const scenario of SCENARIOS) {
      const segment = await switchedSegment(agent, scenario, seconds);
      segments.get(scenario)!.push(segment);
      if (PAIRED_DUMP)
        fs.appendFileSync(
          PAIRED_DUMP,
          `${JSON.stringify({ scenario: scenario.name, agent: index, windows: segment.windows })}\n`,
        );
    }
  const aims: string[] = [];
  for (const scenario of SCENARIOS) {
    const parts = segments.get(scenario)!;
    const pooled = (of: 'rps' | 'cpu' | 'sameCode' | 'shaped') => parts.flatMap((part) => part[of]);
    const rps = pooled('rps');
    const onOff = summariseRatios(rps);
    const aa = summariseRatios(pooled('sameCode'));
    const total = (on: boolean, of: 'cpu' | 'gc') => {
      const sides = parts.map((part) => (on ? part.on : part.off));
      return (
        sides.reduce((sum, s) => sum + s[of], 0) /
        Math.max(
          1,
          sides.reduce((sum, s) => sum + s.requests, 0),
        )
      );
    };
    console.log(
      `  ${scenario.name}: ${rps.length} groups; ${fmt(median(pooled('shaped')) * 100, 1)}% of requests shaped while observing (median of windows)`,
    );
    console.log(`    on ÷ off: req/s ${showRatio(onOff)}; CPU/req ${showRatio(summariseRatios(pooled('cpu')))}`);
    console.log(
      `    per process, median on ÷ off: req/s ${parts.map((part) => fmt(median(part.rps), 3)).join(', ')}; CPU/req ${parts.map((part) => fmt(median(part.cpu), 3)).join(', ')}`,
    );
    console.log(`    A/A: off ÷ off again: req/s ${showRatio(aa)}`);
    console.log(
      `    CPU µs/req on ${fmt(total(true, 'cpu'), 1)}, off ${fmt(total(false, 'cpu'), 1)}; of which GC pauses on ${fmt(total(true, 'gc'), 1)}, off ${fmt(total(false, 'gc'), 1)} (all windows of each side)`,
    );
    const verdict = !onOff.interval
      ? 'not settled (too few groups)'
      : onOff.interval[0] >= 0.9
        ? 'met, settled'
        : onOff.interval[1] < 0.9
          ? 'MISSED, settled'
          : 'not settled';
    aims.push(
      `${scenario.name}: observing cost ${fmt((1 - onOff.median) * 100, 1)}% of throughput (IQR ${fmt((1 - onOff.q3) * 100, 1)}–${fmt((1 - onOff.q1) * 100, 1)}%, 95% CI ${onOff.interval ? `${fmt((1 - onOff.interval[1]) * 100, 1)}–${fmt((1 - onOff.interval[0]) * 100, 1)}%` : 'n/a'}; A/A ${fmt(aa.median, 3)}; ${rps.length} groups of ${WINDOW_MS} ms windows from ${agents.length} processes; aim ≤ 10%) ${verdict}`,
    );
  }
  console.log(
    `  peak RSS of the switched agents: ${agents.map((agent) => fmt(rssOf(agent.child?.pid).peak, 1)).join(', ')} MB`,
  );
  return aims;
}

async function main(): Promise<void> {
  const started = Date.now();
  const upstream = await spawnParty('upstream', 'upstream');
  // For direct, the CPU column is the upstream's own; for proxies, the proxy process's.
  const parties: Party[] = ONLY_PAIRED ? [] : [{ name: 'direct', url: upstream.url, child: upstream.child }];
  const observing = await spawnParty('agent (observing)', 'agent-observe', upstream.url);
  const forwarding = await spawnParty('agent (not observing)', 'agent-forward', upstream.url);
  // The observing-cost part switches agents between observing on and off, each in turn.
  const switched: Party[] = [];
  for (let i = 1; i <= PAIRED_AGENTS; i++)
    switched.push(await spawnParty(`agent (observing switched) ${i}`, 'agent-observe', upstream.url));
  if (!ONLY_PAIRED) {
    parties.push(observing, forwarding);
    parties.push(await spawnParty('@fastify/http-proxy', 'fastify', upstream.url));
    parties.push(await spawnParty('http-proxy', 'http-proxy', upstream.url));
    const mockttps: [name: string, kind: string][] = [
      ['mockttp', 'mockttp'],
      [MOCKTTP_AS_OPTIC, 'mockttp-optic'],
    ];
    for (const [name, kind] of mockttps) {
      try {
        parties.push(await spawnParty(name, kind, upstream.url));
      } catch (err) {
        console.log(`${name} left out: ${(err as Error).message}`);
      }
    }
  }
  console.log(
    `agent benchmark: ${ONLY_PAIRED ? 'observing cost only' : `${ROUNDS} rounds × ${SECONDS} s per cell, interleaved; ${parties.length} contenders`}; load from ${LOADGEN}; node ${process.version}${process.env.BENCH_AGENT_OBSERVE ? `; observing agents: ${process.env.BENCH_AGENT_OBSERVE} (BENCH_AGENT_OBSERVE)` : ''}`,
  );

  // Warm-up: JIT, connection pools, the agent's first shapes per endpoint.
  for (const scenario of SCENARIOS) for (const party of parties) await measure(party, scenario, 1);

  const cells = new Map<string, Cell[]>();
  for (let round = 0; round < (ONLY_PAIRED ? 0 : ROUNDS); round++) {
    for (const scenario of SCENARIOS) {
      for (const party of parties) {
        const cell = await measure(party, scenario, SECONDS);
        const key = `${scenario.name}|${party.name}`;
        cells.set(key, [...(cells.get(key) ?? []), cell]);
      }
    }
    console.log(`round ${round + 1}/${ROUNDS} done (${Math.round((Date.now() - started) / 1000)} s)`);
  }

  const summary = (scenario: Scenario, party: Party) => {
    const runs = cells.get(`${scenario.name}|${party.name}`) ?? [];
    return {
      rps: median(runs.map((c) => c.rps)),
      p50: median(runs.map((c) => c.p50)),
      p99: median(runs.map((c) => c.p99)),
      cpu: median(runs.map((c) => c.cpuPerRequest)),
      main: median(runs.map((c) => c.mainPerRequest)),
      faults: median(runs.map((c) => c.faultsPerRequest)),
      errors: runs.reduce((s, c) => s + c.errors, 0),
    };
  };
  const aims: string[] = [];
  for (const scenario of ONLY_PAIRED ? [] : SCENARIOS) {
    const direct = summary(scenario, parties[0]!);
    console.log(`\n${scenario.name}`);
    console.log(
      `  ${'contender'.padEnd(22)} ${'req/s'.padStart(8)} ${'×direct'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'+p50 ms'.padStart(8)} ${'+p99 ms'.padStart(8)} ${'cpu µs/req'.padStart(10)} ${'main µs/req'.padStart(11)} ${'faults/req'.padStart(10)} errors`,
    );
    for (const party of parties) {
      const s = summary(scenario, party);
      console.log(
        `  ${party.name.padEnd(22)} ${fmt(s.rps, 0).padStart(8)} ${fmt(s.rps / direct.rps).padStart(8)} ${fmt(s.p50, 3).padStart(8)} ${fmt(s.p99, 3).padStart(8)} ${fmt(s.p50 - direct.p50, 3).padStart(8)} ${fmt(s.p99 - direct.p99, 3).padStart(8)} ${fmt(s.cpu, 0).padStart(10)} ${fmt(s.main, 0).padStart(11)} ${fmt(s.faults, 1).padStart(10)} ${s.errors}`,
      );
    }
    const agent = summary(scenario, observing);
    const ratios = parties
      .filter((peer) => peer !== observing && peer !== parties[0])
      .map((peer) => `${fmt(agent.rps / summary(scenario, peer).rps)}× ${peer.name}`);
    console.log(`  agent (observing) throughput = ${ratios.join(', ')} (ratios of the medians)`);
    // The aims compare cells of the same round (run back to back): the median of those per-round
    // ratios, with its interval when there are rounds enough, is steadier than a ratio of medians.
    const against = (peerName: string, aim: number): string => {
      const peerRuns = cells.get(`${scenario.name}|${peerName}`) ?? [];
      const ownRuns = cells.get(`${scenario.name}|${observing.name}`) ?? [];
      const ratio = summariseRatios(ownRuns.map((cell, round) => cell.rps / (peerRuns[round]?.rps ?? NaN)));
      const verdict = ratio.interval
        ? ratio.interval[0] >= aim
          ? 'met, settled'
          : ratio.interval[1] < aim
            ? 'MISSED, settled'
            : ratio.median >= aim
              ? 'met, not settled'
              : 'missed, not settled'
        : ratio.median >= aim
          ? 'met'
          : 'MISSED';
      return `vs ${peerName} ${showRatio(ratio)} (aim ≥ ${aim}) ${verdict}`;
    };
    const has = (name: string) => parties.some((party) => party.name === name);
    // The aim is judged against mockttp forwarding only (its fastest use); mockttp as Optic ran it, bodies read included, is shown beside it.
    aims.push(
      `${scenario.name}: ${against('@fastify/http-proxy', 1)}` +
        (has('mockttp') ? `; ${against('mockttp', 3)}` : '') +
        (has(MOCKTTP_AS_OPTIC) ? ` [${against(MOCKTTP_AS_OPTIC, 3)}]` : '') +
        (scenario.connections === 1
          ? `; added p50 ${fmt(agent.p50 - direct.p50, 3)} ms (aim < 0.5) ${agent.p50 - direct.p50 < 0.5 ? 'met' : 'MISSED'}`
          : ''),
    );
  }
  aims.push(...(await measureObservingCost(switched)));
  const observingMetrics = await metricsOf(observing);
  const benchRss = rssOf(observing.child?.pid);

  // Memory: a fresh agent (observing) streaming 1 MB JSON bodies at 32 connections.
  const memoryAgent = ONLY_PAIRED ? null : await spawnParty('agent (observing, 1 MB)', 'agent-observe', upstream.url);
  if (memoryAgent) {
    const huge = await measure(
      memoryAgent,
      { name: '1 MB', path: '/huge', method: 'GET', connections: 32 },
      SECONDS + 2,
    );
    const hugeRss = rssOf(memoryAgent.child?.pid);
    const hugeMetrics = await metricsOf(memoryAgent);
    aims.push(
      `peak RSS streaming 1 MB bodies at 32 conn: ${fmt(hugeRss.peak, 1)} MB (aim < 150) ${hugeRss.peak < 150 ? 'met' : 'MISSED'}; ${fmt(huge.rps, 0)} req/s, ${huge.errors} errors; requests ${hugeMetrics.requests_total}, counted ${hugeMetrics.observed_total}, shaped ${hugeMetrics.shaped_total}, sampled out ${hugeMetrics.unshaped_total}, dropped ${hugeMetrics.dropped_total}`,
    );
  }

  console.log('\nAims');
  for (const line of aims) console.log(`  ${line}`);
  // With the observing-cost part alone the observing process served nothing: nothing to report of it.
  if (!ONLY_PAIRED)
    console.log(
      `\nagent (observing) over the whole run: peak RSS ${fmt(benchRss.peak, 1)} MB; requests ${observingMetrics.requests_total}, counted ${observingMetrics.observed_total}, shaped ${observingMetrics.shaped_total}, sampled out ${observingMetrics.unshaped_total}, dropped ${observingMetrics.dropped_total}, batches acked ${observingMetrics.batches_acked_total}`,
    );
  console.log(`\ntotal ${Math.round((Date.now() - started) / 1000)} s`);

  if (postScriptPath) fs.rmSync(path.dirname(postScriptPath), { recursive: true, force: true });
  for (const party of [observing, forwarding, ...switched, ...parties, upstream, ...(memoryAgent ? [memoryAgent] : [])])
    party.child?.kill('SIGTERM');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
