/**
 * Evidence at production scale (issue 20): many agents of one environment at once. Simulated
 * agents (by default 200 of one production build, 20 of one staging build and 3 CI runs of pull
 * requests) stream batches over real WebSockets to two backend replicas (processes of their own)
 * on one embedded PostgreSQL. Batches are realistic: many endpoints, shapes already known, most
 * endpoints documented (one OpenAPI import, approved, so its proposal moves through the steps).
 *
 * Printed, in one run:
 *  - ingest with evidence against a plain `INSERT … ON CONFLICT` of the same rows into captures of
 *    their own (a pool as large as both replicas' together), in slices E P P E per round
 *    (BENCH_SCALE_ORDER), medians of the rounds and ratio;
 *    Before each slice the evidence queue is drained (untimed), so neither runs beside the
 *    other's folds; the evidence contender is timed to its last ack ("acked", as before) and to its
 *    last batch folded ("folded": what a deployment sustains, the aim's figure); per round both
 *    ratios and the PostgreSQL-side ratio (plain ÷ evidence PostgreSQL CPU seconds, same rows);
 *    per slice its rate and what PostgreSQL did beside it (scale-background.ts: autovacuum,
 *    roll-ups, checkpoints, CPU, WAL);
 *  - the time from a batch sent to its acknowledgement: saturated (each agent keeps a window of
 *    batches in flight), and paced (each agent one batch per BENCH_SCALE_PACE_MS, as the agent
 *    flushes once a second), p50 and p99; then paced at BENCH_SCALE_SHARES of the capacity the
 *    rounds measured (the median "folded" rate), p50 and p99 per environment kind (the p99 aim's
 *    figures: under capacity, as a deployment is run);
 *  - lock waits: the longest wait seen by sampling `pg_locks` every 20 ms, and the `log_lock_waits`
 *    lines PostgreSQL wrote (`deadlock_timeout` set to 100 ms: every line is a wait over 100 ms);
 *  - a check that the stored evidence equals a full recomputation from the stored observations:
 *    the distinct exchanges of every environment row, the matrix (`GET …/versions`), the cells,
 *    the proposal's steps, the requests per version (runtime evidence, the version share) and the
 *    first row of each kind per distinct exchange (as read by the origin index, issue 18); and
 *    that the consumer calls stored (issue 19: every row names 1–3 of CONSUMERS clients, a few
 *    rows some overflow) equal the calls sent, per environment kind and consumer.
 *    A difference fails the bench;
 *  - per phase, how many capture summary writes a fold off the ingest path would merge, were it to
 *    write a capture's summaries once per window of 1, 5 or 30 s (`mergeFactors`).
 *
 * Environment (whole numbers): BENCH_SCALE_PRODUCTION (200), BENCH_SCALE_STAGING (20), BENCH_SCALE_CI
 * (3), BENCH_SCALE_ROLLOUT (0; production agents of a second build, see ROLLOUT), BENCH_SCALE_ENDPOINTS (300, a tenth undocumented), BENCH_SCALE_ROWS (rows per batch, 40),
 * BENCH_SCALE_BATCHES (per agent and slice, 4), BENCH_SCALE_ROUNDS (3), BENCH_SCALE_WINDOW (4),
 * BENCH_SCALE_PACED_SECONDS (10), BENCH_SCALE_PACE_MS (1000), BENCH_SCALE_SHARES (50,80); BENCH_SCALE_DEBUG=1 shows the replicas' stderr; BENCH_SCALE_NODE_FLAGS: Node options of the replicas
 * (space-separated, e.g. `--trace-gc`); BENCH_SCALE_REPLICA_MAIN: the replicas' `main.js` (another build's);
 * BENCH_SCALE_REPLICA_OUT: a folder for the replicas' standard output; BENCH_SCALE_WARM=1: the rounds again
 * on warm captures, printed beside (see WARM); BENCH_SCALE_KEEP_CONNECTIONS (1); BENCH_SCALE_PG_SETTINGS
 * (diagnosis: PostgreSQL settings, e.g. `shared_buffers=2GB`);
 * BENCH_SCALE_PROFILE=<folder> prints per phase the statements that took most time
 * (`pg_stat_statements`, nested ones too), those that planned most, the WAL by table
 * (`pg_walinspect`, read after each phase: a few seconds) and what active backends waited for, and the replicas'
 * CPU per 1,000 rows split into ingest path, fold path, pg driver, GC and the rest by their CPU
 * profiles (`--cpu-prof`, written to that folder; see scale-profile.ts). CPU seconds of each
 * replica (and of both: those off their main threads, and those in the kernel), of PostgreSQL and of
 * the bench itself are printed per phase in any case. Small: BENCH_SCALE_PRODUCTION=10
 * BENCH_SCALE_STAGING=4 BENCH_SCALE_CI=1 BENCH_SCALE_ROUNDS=1 BENCH_SCALE_PACED_SECONDS=3.
 */
import {
  type EnvironmentKind,
  type MatrixKind,
  STEP_OF_KIND,
  type VersionMatrixResponse,
  type WireObservation,
} from '@spectator/shared';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { rowConforms } from '../src/captures/conformance';
import { CONSUMER_CALLS } from '../src/consumers/consumers.repository';
import type { ObservationRow } from '../src/captures/observed-shapes';
import type { Queryable } from '../src/common/queryable';
import { freePort, startEmbeddedPostgres } from '../src/database/embedded';
import { evaluateCell } from '../src/evidence/cell';
import { originsDifferingFromEvidence } from '../src/evidence/evidence.repository';
import { versionsRepository } from '../src/versions/versions.repository';
import { connectTestAgent, helloMessage, type TestAgent } from '../test/support/agent-client';
import { loadAverage, median, percentile, plainInsert, runBench, scaleRows, scaleRowsOf, SHAPES } from './harness';
import { BackgroundSampler, besideLine } from './scale-background';
import {
  autovacuumCpu,
  monotonicMicros,
  PhaseProfiler,
  type PhaseWindow,
  PROFILE_EXTENSIONS,
  PROFILE_FLAGS,
  replicaSplit,
} from './scale-profile';

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, not ${raw}`);
  return value;
}

const PRODUCTION = setting('BENCH_SCALE_PRODUCTION', 200);
const STAGING = setting('BENCH_SCALE_STAGING', 20);
const CI = setting('BENCH_SCALE_CI', 3);
/**
 * A rollout (BENCH_SCALE_ROLLOUT, 0): this many of the production agents run a second build
 * (build-102) beside the first, as while a Deployment rolls out: two production rows of one
 * service folding at once, each reaching "what runs there now" and the first sightings of the
 * same endpoints.
 */
const ROLLOUT = Math.min(setting('BENCH_SCALE_ROLLOUT', 0), PRODUCTION);
const ENDPOINTS = setting('BENCH_SCALE_ENDPOINTS', 300);
const ROWS = Math.min(setting('BENCH_SCALE_ROWS', 40), ENDPOINTS);
const BATCHES = setting('BENCH_SCALE_BATCHES', 4);
const ROUNDS = setting('BENCH_SCALE_ROUNDS', 3);
const WINDOW = Math.max(1, setting('BENCH_SCALE_WINDOW', 4));
const PACED_SECONDS = setting('BENCH_SCALE_PACED_SECONDS', 10);
const PACE_MS = Math.max(1, setting('BENCH_SCALE_PACE_MS', 1000));
/**
 * Paced points at these shares of the capacity the same run measured (percent, comma-separated;
 * BENCH_SCALE_SHARES, "50,80"): the fixed-pace phase above offers 223 agents × 40 rows a second,
 * more than a deployment of two replicas stores with evidence, so its p99 measures a queue.
 */
const SHARES = (process.env.BENCH_SCALE_SHARES ?? '50,80')
  .split(',')
  .filter((share) => share.trim() !== '')
  .map((share) => {
    const value = Number(share);
    if (!Number.isInteger(value) || value <= 0 || value > 100)
      throw new Error(`BENCH_SCALE_SHARES must be whole percentages from 1 to 100, not ${share}`);
    return value;
  });
/**
 * The contenders' order in a round (BENCH_SCALE_ORDER): `abba` (the default) writes two sets of
 * rows per round, evidence (E) and plain (P) each writing both, as E P P E: each contender has one
 * slice right after the other contender and one right after itself, so whatever one leaves running
 * (autovacuum of the tables it wrote, the replicas' roll-ups) falls on both alike. `alternate` is
 * the order before session 20: one set per round, E P then P E (the plain writer ran faster right
 * after itself than right after the evidence side: 21–25 k against 14–18 k rows/s).
 */
const ORDER = process.env.BENCH_SCALE_ORDER ?? 'abba';
if (ORDER !== 'abba' && ORDER !== 'alternate')
  throw new Error(`BENCH_SCALE_ORDER must be abba or alternate, not ${ORDER}`);
const ABBA = ['E0', 'P0', 'P1', 'E1'];
/**
 * Warm captures (BENCH_SCALE_WARM=1): after the rounds, every capture writes each of the ENDPOINTS
 * once (untimed), then the rounds run again and their figures are printed beside the first ones. A
 * capture is one agent process start: the first rounds' captures are young, so most summary writes
 * (`capture_endpoints`) insert; a long-lived pod's capture knows its endpoints after ~30 batches,
 * and every later summary write is an update.
 */
const WARM = setting('BENCH_SCALE_WARM', 0) > 0;
/**
 * The plain writer's pool opens its connections before the rounds and keeps them while idle, and
 * the replicas' pools keep theirs (SPECTATOR_DATABASE_IDLE_SECONDS=0)
 * (BENCH_SCALE_KEEP_CONNECTIONS, 1; 0: node-postgres's default for both, which closes a connection
 * idle for 10 s). Its slice right after the evidence side came after two evidence slices (E P P E), more
 * than 10 s idle, and so opened ~20 new connections: new backends, each authenticating and
 * filling its catalog caches, which the slice right after plain did not (session 21: that was the
 * plain writer's order effect, 1.5× in the lead's quiet runs of session 20).
 */
const KEEP_CONNECTIONS = setting('BENCH_SCALE_KEEP_CONNECTIONS', 1) > 0;
/**
 * Server settings of the bench's PostgreSQL (BENCH_SCALE_PG_SETTINGS, `name=value` comma-separated,
 * e.g. `shared_buffers=2GB`): for diagnosis (issue 20's order effect), not the figures of record.
 */
const PG_SETTINGS = (process.env.BENCH_SCALE_PG_SETTINGS ?? '')
  .split(',')
  .filter((pair) => pair.trim() !== '')
  .map((pair) => {
    if (!/^\w+=\S+$/.test(pair.trim())) throw new Error(`BENCH_SCALE_PG_SETTINGS takes name=value pairs, not ${pair}`);
    return pair.trim();
  });
/** Connections of each replica's pool (the backend's default), and so of the plain writer's, times two. */
const REPLICA_POOL = 10;
/**
 * Seconds between each replica's roll-ups of runtime minutes (BENCH_SCALE_ROLLUP_SECONDS, passed on as
 * SPECTATOR_RUNTIME_ROLLUP_SECONDS; unset: the backend's default). The whole run's PostgreSQL CPU and WAL
 * are printed with the roll-ups in (they run on a timer, so a phase's figures hold whichever fell in it).
 */
const ROLLUP_SECONDS = process.env.BENCH_SCALE_ROLLUP_SECONDS;
/** Where profiles go (BENCH_SCALE_PROFILE), or null. */
const PROFILE = process.env.BENCH_SCALE_PROFILE ? path.resolve(process.env.BENCH_SCALE_PROFILE) : null;
/** The replicas' program (BENCH_SCALE_REPLICA_MAIN: another build's compiled `src/main.js`, to compare builds under one bench). */
const REPLICA_MAIN = path.resolve(process.env.BENCH_SCALE_REPLICA_MAIN ?? path.join(__dirname, '../src/main.js'));
/** A folder for each replica's standard output (BENCH_SCALE_REPLICA_OUT; e.g. with `--trace-gc` in BENCH_SCALE_NODE_FLAGS), or none. */
const REPLICA_OUT = process.env.BENCH_SCALE_REPLICA_OUT ? path.resolve(process.env.BENCH_SCALE_REPLICA_OUT) : null;
/** The replicas' Node options (BENCH_SCALE_NODE_FLAGS), before the profile's. */
const NODE_FLAGS = (process.env.BENCH_SCALE_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS = 100;

/**
 * A `stat` file of /proc (e.g. `/proc/1/stat`) read once, as its fields by number (as in proc(5), from 1).
 * @throws when the process or thread is gone.
 */
function statFields(file: string): (field: number) => number {
  // Fields after the command (which may hold spaces) start at the state, field 3.
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (field) => Number(fields[field - 3]);
}

/** CPU seconds of a `stat` file's process or thread: user and system (and, with `children`, those of the ones it reaped). */
function statSeconds(file: string, children = false): { user: number; system: number } {
  const at = statFields(file);
  return {
    user: (at(14) + (children ? at(16) : 0)) / TICKS,
    system: (at(15) + (children ? at(17) : 0)) / TICKS,
  };
}

/** CPU seconds a process used (and, with `children`, the ones it reaped), from /proc; 0 once it is gone. */
function cpuSeconds(pid: number, children = false): number {
  try {
    const { user, system } = statSeconds(`/proc/${pid}/stat`, children);
    return user + system;
  } catch {
    return 0;
  }
}

/**
 * A process's CPU seconds off its main thread (its other threads': V8's workers, which run
 * TurboFan and the concurrent and parallel parts of garbage collection, and libuv's pool), in the
 * kernel (all threads), and of V8's profiler thread, counted in neither, from /proc; 0 once it is gone. A V8 CPU profile (`--cpu-prof`) samples
 * the main thread only, so what it splits is the rest.
 */
function threadSeconds(pid: number): { helpers: number; kernel: number; profiler: number } {
  const seconds = { helpers: 0, kernel: 0, profiler: 0 };
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return seconds;
  }
  for (const task of tasks) {
    try {
      const file = `/proc/${pid}/task/${task}/stat`;
      const { user, system } = statSeconds(file);
      // `--cpu-prof`'s own thread (BENCH_SCALE_PROFILE) is the measurement's cost, not the replica's: apart.
      if (readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').startsWith(PROFILER_THREAD)) {
        seconds.profiler += user + system;
        continue;
      }
      seconds.kernel += system;
      if (Number(task) !== pid) seconds.helpers += user + system;
    } catch {
      // ended meanwhile
    }
  }
  return seconds;
}

/** The name of V8's profiler thread (`--cpu-prof`; 3–5 CPU-s a replica in a medium run). */
const PROFILER_THREAD = 'v8:ProfEvntProc';

/** CPU seconds of PostgreSQL: the postmaster (with the backends it reaped) and its live children. */
function postgresSeconds(dataDir: string): number {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
  } catch {
    return 0;
  }
  let total = cpuSeconds(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (statFields(`/proc/${entry}/stat`)(4) === postmaster) total += cpuSeconds(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Of both replicas' CPU seconds: those off their main threads and those in the kernel (the profiler's thread apart), and the profiler's (`threadSeconds`). */
function replicaThreads(...pids: number[]): Record<string, number> {
  const sums = pids.map(threadSeconds);
  return {
    'of the replicas: off main threads': sums.reduce((sum, s) => sum + s.helpers, 0),
    'of the replicas: in the kernel': sums.reduce((sum, s) => sum + s.kernel, 0),
    'of the replicas: the profiler': sums.reduce((sum, s) => sum + s.profiler, 0),
  };
}

/** CPU seconds per part, added up over the phases measured (and when each phase ran). */
class CpuMeter {
  readonly used = new Map<string, number>();
  readonly windows: PhaseWindow[] = [];
  constructor(private readonly parts: () => Record<string, number>) {}

  async measure<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const before = this.parts();
    const start = monotonicMicros();
    const result = await work();
    this.windows.push({ phase, start, end: monotonicMicros() });
    const after = this.parts();
    for (const [part, seconds] of Object.entries(after)) {
      const key = `${phase}\u0000${part}`;
      this.used.set(key, (this.used.get(key) ?? 0) + seconds - (before[part] ?? 0));
    }
    return result;
  }

  /** CPU seconds of the parts whose name starts with `prefix`, per phase. */
  secondsOf(prefix: string): Map<string, number> {
    const seconds = new Map<string, number>();
    for (const [key, used] of this.used) {
      const [phase, part] = key.split('\u0000') as [string, string];
      if (part.startsWith(prefix)) seconds.set(phase, (seconds.get(phase) ?? 0) + used);
    }
    return seconds;
  }

  /** One line per phase: CPU seconds of each part. */
  lines(): string[] {
    const phases = new Map<string, string[]>();
    for (const [key, seconds] of this.used) {
      const [phase, part] = key.split('\u0000') as [string, string];
      phases.set(phase, [...(phases.get(phase) ?? []), `${part} ${seconds.toFixed(1)}`]);
    }
    return [...phases].map(([phase, parts]) => `${phase}: ${parts.join(', ')}`);
  }
}
/** One pass of the rounds: its figures per round, slice and position. */
interface Pass {
  name: 'cold' | 'warm';
  backendRates: number[];
  /** Rows per second of the evidence contender timed to its last batch folded (what a deployment sustains). */
  foldedRates: number[];
  drainSeconds: number[];
  plainRates: number[];
  /** PostgreSQL's CPU seconds per contender over the rounds (its slices, the evidence's drain included). */
  postgresCpu: { evidence: number; plain: number };
  /** Each slice's rate and what PostgreSQL did beside it, by contender and by what ran just before it. */
  sliceLines: string[];
  byPosition: Map<string, number[]>;
  /** Capture summaries written in the pass (`pg_stat_user_tables`, as reported by then). */
  summaries: { inserts: number; updates: number };
}

const newPass = (name: Pass['name']): Pass => ({
  name,
  backendRates: [],
  foldedRates: [],
  drainSeconds: [],
  plainRates: [],
  postgresCpu: { evidence: 0, plain: 0 },
  sliceLines: [],
  byPosition: new Map(),
  summaries: { inserts: 0, updates: 0 },
});

/** Capture summaries inserted and updated so far (statistics a backend reports within a second busy, 10 s idle). */
async function summaryWrites(pool: pg.Pool): Promise<{ inserts: number; updates: number }> {
  const { rows } = await pool.query<{ inserts: number; updates: number }>(
    `SELECT coalesce(sum(n_tup_ins), 0)::float8 AS inserts, coalesce(sum(n_tup_upd), 0)::float8 AS updates
       FROM pg_stat_user_tables WHERE relname = 'capture_endpoints'`,
  );
  return rows[0] ?? { inserts: 0, updates: 0 };
}

/** Windows (seconds) over which `mergeFactors` merges a capture's summary writes. */
const MERGE_WINDOWS = [1, 5, 30];

/**
 * Issue 20: how many capture summary writes (one per endpoint a batch touches, `capture_endpoints`)
 * would be left if a fold off the ingest path merged the batches of one capture committed within
 * the same window of MERGE_WINDOWS seconds into one write per endpoint, per phase: the summary
 * writes the batches made ÷ the distinct (capture, window, endpoint). Read from the batches'
 * `touched_methods`/`touched_paths` and `committed_at` (their transaction's start).
 */
async function mergeFactors(
  pool: pg.Pool,
  projectId: string,
  clockOfPhase: ReadonlyMap<string, ReadonlyArray<readonly [Date, Date]>>,
): Promise<string[]> {
  const lines: string[] = [];
  for (const [phase, spans] of clockOfPhase) {
    if (phase === 'plain') continue;
    const factors: string[] = [];
    let written = 0;
    for (const seconds of MERGE_WINDOWS) {
      const { rows } = await pool.query<{ written: number; merged: number }>(
        `SELECT count(*)::float8 AS written,
                count(DISTINCT (b.capture_id, floor(extract(epoch FROM b.committed_at) / $2), t.method, t.path))::float8 AS merged
           FROM processed_batches b CROSS JOIN LATERAL unnest(b.touched_methods, b.touched_paths) AS t(method, path)
          WHERE b.project_id = $1
            AND EXISTS (SELECT FROM unnest($3::timestamptz[], $4::timestamptz[]) AS w(since, until)
                         WHERE b.committed_at BETWEEN w.since AND w.until)`,
        [projectId, seconds, spans.map(([since]) => since), spans.map(([, until]) => until)],
      );
      const row = rows[0] ?? { written: 0, merged: 0 };
      written = row.written;
      factors.push(`${seconds} s ×${(row.written / Math.max(1, row.merged)).toFixed(2)}`);
    }
    lines.push(`${phase} (${written} written) ${factors.join(', ')}`);
  }
  return lines;
}

/** Endpoints `/r{i}` with i % 10 === 9 are not documented. */
const documented = (i: number): boolean => i % 10 !== 9;

interface SimulatedAgent {
  label: string;
  environment: { kind: EnvironmentKind; build?: string; pullRequest?: string; commit?: string };
  agent: TestAgent;
  captureId: string;
  /** The capture the plain contender writes the same rows to. */
  plainCaptureId: string;
}

/** One batch's rows: ROWS distinct endpoints of ENDPOINTS (`scaleRows`). */
const rowsOf = (seed: number): WireObservation[] => scaleRows(seed, ROWS, ENDPOINTS);

/** Calls per `kind consumer` (and `kind *` for all, `kind +` for the overflow) of batches sent, added to `into`. */
function tallyConsumers(
  into: Map<string, number>,
  agents: readonly SimulatedAgent[],
  batches: readonly WireObservation[][][],
): void {
  const add = (key: string, calls: number): void => void into.set(key, (into.get(key) ?? 0) + calls);
  batches.forEach((perAgent, a) => {
    const kind = (agents[a] as SimulatedAgent).environment.kind;
    for (const observations of perAgent)
      for (const o of observations) {
        add(`${kind} *`, o.count);
        if (o.consumersOverflow) add(`${kind} +`, o.consumersOverflow);
        for (const c of o.consumers ?? []) add(`${kind} ${c.id}`, c.count);
      }
  });
}

/** The OpenAPI document of the documented endpoints: what the bench's bodies are. */
function openApiDocument(): unknown {
  const text = { type: 'string' };
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < ENDPOINTS; i++) {
    if (!documented(i)) continue;
    paths[`/r${i}`] = {
      post: {
        requestBody: {
          content: {
            'application/json': {
              schema: { type: 'object', properties: { title: text, author: text }, required: ['title', 'author'] },
            },
          },
        },
        responses: {
          '201': {
            description: 'created',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  properties: { id: { type: 'integer' }, title: text, author: text },
                  required: ['id', 'title', 'author'],
                },
              },
            },
          },
          '400': { description: 'refused' },
        },
      },
    };
  }
  return { openapi: '3.1.0', info: { title: 'scale', version: '1' }, paths };
}

/** Longest lock wait seen, sampled from `pg_locks` (and how many samples saw one). */
class LockSampler {
  maxMs = 0;
  waits = 0;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(readonly client: pg.Client) {}

  start(): void {
    this.maxMs = 0;
    this.waits = 0;
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.sample());
    }, 20);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async sample(): Promise<void> {
    const { rows } = await this.client.query<{ ms: number | null }>(
      `SELECT max(extract(epoch FROM clock_timestamp() - waitstart) * 1000)::float8 AS ms FROM pg_locks WHERE NOT granted`,
    );
    const ms = rows[0]?.ms ?? null;
    if (ms === null) return;
    this.waits++;
    this.maxMs = Math.max(this.maxMs, ms);
  }
}

/**
 * Sends each agent's batches (JSON text), keeping `window` in flight per agent, or, with `paceMs`,
 * one every `paceMs` from a random start within the first. With `endCi`, each CI agent ends its
 * capture right after sending its last batch, as a stopping agent does (its later batches still
 * count: a backend keeps batches of an ended capture).
 * @returns seconds taken, each batch's sent→ack ms, and each CI agent's last batch sent → `capture-ended` ms.
 */
async function stream(
  agents: readonly SimulatedAgent[],
  work: ReadonlyArray<readonly string[]>,
  options: { window: number } | { paceMs: number; endCi?: boolean },
): Promise<{ seconds: number; latencies: number[]; byKind: Map<string, number[]>; ciStops: number[] }> {
  const latencies: number[] = [];
  const byKind = new Map<string, number[]>();
  const ciStops: number[] = [];
  const started = performance.now();
  await Promise.all(
    agents.map(async ({ agent, environment, captureId }, a) => {
      const ends = 'paceMs' in options && options.endCi === true && environment.kind === 'ci';
      let kindLatencies = byKind.get(environment.kind);
      if (kindLatencies === undefined) byKind.set(environment.kind, (kindLatencies = []));
      const batches = work[a] as readonly string[];
      const sentAt: number[] = [];
      let next = 0;
      const send = (): void => {
        sentAt.push(performance.now());
        agent.send(batches[next++] as string);
        if (ends && next === batches.length)
          agent.send({ type: 'capture-end', captureId, endedAt: new Date().toISOString() });
      };
      let timer: NodeJS.Timeout | null = null;
      if ('window' in options) while (next < batches.length && next < options.window) send();
      else {
        const paceMs = options.paceMs;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * paceMs));
        send();
        timer = setInterval(() => {
          if (next < batches.length) send();
          if (next >= batches.length && timer) clearInterval(timer);
        }, paceMs);
      }
      // The backend handles one connection's messages in order: acks come in the order sent.
      for (let acked = 0; acked < batches.length; acked++) {
        const message = await agent.next(120_000);
        if (message.type !== 'ack') throw new Error(`unexpected ${JSON.stringify(message)}`);
        const latency = performance.now() - (sentAt[acked] as number);
        latencies.push(latency);
        kindLatencies.push(latency);
        if ('window' in options && next < batches.length) send();
      }
      if (ends) {
        const message = await agent.next(120_000);
        if (message.type !== 'capture-ended') throw new Error(`unexpected ${JSON.stringify(message)}`);
        ciStops.push(performance.now() - (sentAt[batches.length - 1] as number));
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies, byKind, ciStops };
}

/** p50 and p99 of sent→ack per environment kind (every batch is acknowledged at its commit since session 30). */
function kindLine(byKind: ReadonlyMap<string, readonly number[]>): string {
  return [...byKind.entries()]
    .map(
      ([kind, values]) =>
        `${kind} p50 ${median(values).toFixed(0)} ms p99 ${percentile(values, 99).toFixed(0)} ms (${values.length})`,
    )
    .join(', ');
}

/** Batches as JSON text, serialised before any clock starts (the agents' JSON work is not the backend's). */
function serialised(agents: readonly SimulatedAgent[], batches: readonly WireObservation[][][]): string[][] {
  return agents.map((simulated, a) =>
    (batches[a] as WireObservation[][]).map((observations) =>
      JSON.stringify({
        type: 'batch',
        batchId: randomUUID(),
        captureId: simulated.captureId,
        shapes: {},
        observations,
      }),
    ),
  );
}

/**
 * Waits until no batch's evidence is queued (every acked batch folded), at most `limitMs`.
 * @returns the seconds it took.
 */
async function untilFolded(pool: pg.Pool, limitMs = 120_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    // A build before the queue (evidence written with the batch) has nothing to fold.
    const [queued] = (
      await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM evidence_queue').catch((error: unknown) => {
        if ((error as { code?: string }).code === '42P01') return { rows: [{ n: 0 }] };
        throw error;
      })
    ).rows;
    if (!queued || queued.n === 0) return (performance.now() - started) / 1000;
    if (performance.now() - started > limitMs) throw new Error(`${queued.n} batches still queued after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Writes the same rows as plain INSERTs, POOL connections taking batches in turn. */
async function writePlain(
  pool: pg.Pool,
  agents: readonly SimulatedAgent[],
  batches: readonly WireObservation[][][],
  connections: number,
): Promise<number> {
  // Interleaved by agent, as the agents' batches arrive: every agent's first, then every second, …
  const queue = Array.from({ length: batches[0]?.length ?? 0 }, (_, b) =>
    batches.map((perAgent, a) => ({
      captureId: (agents[a] as SimulatedAgent).plainCaptureId,
      rows: perAgent[b] ?? [],
    })),
  ).flat();
  let taken = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      const client = await pool.connect();
      try {
        for (let item = queue[taken++]; item !== undefined; item = queue[taken++])
          await plainInsert(client, item.captureId, item.rows);
      } finally {
        client.release();
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

/** The replicas' counters of where acknowledgements' time went (health/metrics.service.ts), summed. */
const ACK_PARTS = {
  wait: 'spectator_ingest_batch_wait_seconds_total',
  commit: 'spectator_ingest_batch_commit_seconds_total',
  fold: 'spectator_ingest_batch_fold_wait_seconds_total',
  acks: 'spectator_ingest_batch_acks_total',
  folded: 'spectator_ingest_evidence_fold_seconds_total',
  evidence: 'spectator_ingest_evidence_batches_total',
  timedOut: 'spectator_ingest_fold_waits_timed_out_total',
} as const;
type AckParts = Record<keyof typeof ACK_PARTS, number>;

async function ackParts(urls: readonly string[], token: string): Promise<AckParts> {
  const sum: AckParts = { wait: 0, commit: 0, fold: 0, acks: 0, folded: 0, evidence: 0, timedOut: 0 };
  const metrics = async (url: string): Promise<string> =>
    (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  for (const url of urls) {
    // A kept-alive socket the replica closed as idle just as the request went out fails it ("other
    // side closed", twice in full-size runs): the read is asked again once, on a new socket.
    const text = await metrics(url).catch(() => metrics(url));
    for (const [part, name] of Object.entries(ACK_PARTS))
      sum[part as keyof AckParts] += Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  }
  return sum;
}

/** Where a phase's acknowledgements waited, from the counters before and after it: mean ms per ack. */
function ackLine(spans: ReadonlyArray<readonly [AckParts, AckParts]>): string {
  const d = (part: keyof AckParts): number =>
    spans.reduce((total, [before, after]) => total + after[part] - before[part], 0);
  const per = (part: keyof AckParts, over: keyof AckParts = 'acks'): string =>
    `${((d(part) * 1000) / d(over)).toFixed(0)} ms`;
  return `behind the connection's earlier messages ${per('wait')}, to the commit ${per('commit')}, after the commit ${per('fold')} (behind an earlier capture-ended; CI acks waited for the fold before session 30); ${d('acks')} acks; folded ${per('folded', 'evidence')} after the commit, ${d('timedOut')} of ${d('evidence')} evidence batches not within 5 s`;
}

/** A backend replica as a process of its own; resolves once it answers /api/v1/health. */
async function startReplica(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const profile = PROFILE === null ? [] : ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`];
  const child = spawn(process.execPath, [...NODE_FLAGS, ...profile, REPLICA_MAIN], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', ...env },
    stdio: ['ignore', REPLICA_OUT === null ? 'ignore' : 'pipe', 'pipe'],
  });
  if (REPLICA_OUT !== null) {
    mkdirSync(REPLICA_OUT, { recursive: true });
    child.stdout?.pipe(createWriteStream(path.join(REPLICA_OUT, `replica-${child.pid}.log`)));
  }
  const output: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => {
    output.push(chunk.toString());
    if (process.env.BENCH_SCALE_DEBUG) process.stderr.write(chunk);
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`replica exited with ${child.exitCode}: ${output.join('')}`);
    const healthy = await fetch(`${url}/api/v1/health`).then(
      (answer) => answer.status === 200,
      () => false,
    );
    if (healthy) return { url, child };
    if (Date.now() > deadline) throw new Error(`replica did not start: ${output.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What differs between the stored evidence and a recomputation from the stored observations. */
async function recomputationDiffers(
  pool: pg.Pool,
  projectId: string,
  matrixOf: (kind: MatrixKind) => Promise<VersionMatrixResponse>,
  consumersSent: ReadonlyMap<string, number>,
): Promise<{ checked: string; differences: string[] }> {
  const db: Queryable = {
    query: async <T>(text: string, values?: unknown[]): Promise<T> => (await pool.query(text, values)).rows as T,
  };
  const differences: string[] = [];
  // Every evidence capture's observations, summed per environment row and distinct exchange.
  const recomputed = `
    SELECT er.id AS row_id, er.kind, er.name, o.method, o.path, o.status,
           o.request_content_type, o.request_shape, o.response_content_type, o.response_shape,
           sum(o.count)::float8 AS count
      FROM observations o
      JOIN captures c ON c.id = o.capture_id
      JOIN environment_rows er ON er.project_id = c.project_id AND er.kind = c.environment_kind
       AND er.name = CASE WHEN c.environment_kind = 'ci' AND c.pull_request IS NOT NULL THEN 'PR #' || c.pull_request
                          ELSE coalesce(c.build, c.commit, c.environment_kind) END
     WHERE c.project_id = $1
     GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`;
  const keyed = (from: string): string =>
    `SELECT row_id, method, path, status, coalesce(request_content_type, ' ') AS rct, coalesce(request_shape, ' ') AS rs,
            coalesce(response_content_type, ' ') AS sct, coalesce(response_shape, ' ') AS ss, count::float8 AS count FROM (${from}) x`;
  const [exchanges] = (await db.query(
    `WITH r AS (${keyed(recomputed)}), s AS (${keyed('SELECT * FROM evidence_observations WHERE project_id = $1')})
     SELECT (SELECT count(*) FROM r)::int AS recomputed, (SELECT count(*) FROM s)::int AS stored,
            (SELECT count(*) FROM r FULL JOIN s USING (row_id, method, path, status, rct, rs, sct, ss)
              WHERE r.count IS DISTINCT FROM s.count)::int AS differing`,
    [projectId],
  )) as Array<{ recomputed: number; stored: number; differing: number }>;
  if (!exchanges || exchanges.differing > 0)
    differences.push(`distinct exchanges: ${exchanges?.differing} of ${exchanges?.recomputed} differ`);

  // Cells, from the recomputed exchanges and the versions, as evidence/cell.ts defines them.
  const rows = (await db.query(recomputed, [projectId])) as Array<{
    row_id: string;
    kind: MatrixKind;
    name: string;
    method: string;
    path: string;
    status: number;
    request_content_type: string | null;
    request_shape: string | null;
    response_content_type: string | null;
    response_shape: string | null;
    count: number;
  }>;
  const endpoints = (await db.query(
    'SELECT id, method, path FROM endpoints WHERE project_id = $1 AND current_version_id IS NOT NULL',
    [projectId],
  )) as Array<{ id: string; method: string; path: string }>;
  const versions = (await db.query(
    `SELECT v.id, v.endpoint_id AS "endpointId", v.major, v.minor FROM endpoint_versions v JOIN endpoints e ON e.id = v.endpoint_id WHERE e.project_id = $1`,
    [projectId],
  )) as Array<{ id: string; endpointId: string; major: number; minor: number }>;
  const documentedVersions = new Map(
    (
      await versionsRepository.byIds(
        db,
        versions.map((v) => v.id),
      )
    ).map((v) => [v.id, v]),
  );
  const shapes = new Map(
    ((await db.query('SELECT fingerprint, shape FROM shapes', [])) as Array<{ fingerprint: string; shape: never }>).map(
      (s) => [s.fingerprint, s.shape],
    ),
  );
  const byRowAndRoute = new Map<string, ObservationRow[]>();
  const rowsById = new Map<string, { kind: MatrixKind; name: string }>();
  for (const r of rows) {
    rowsById.set(r.row_id, { kind: r.kind, name: r.name });
    const list = byRowAndRoute.get(`${r.row_id} ${r.method} ${r.path}`) ?? [];
    list.push({
      method: r.method,
      path: r.path,
      status: r.status,
      requestContentType: r.request_content_type,
      requestShape: r.request_shape,
      responseContentType: r.response_content_type,
      responseShape: r.response_shape,
      count: r.count,
      query: [],
      requestHeaders: [],
    });
    byRowAndRoute.set(`${r.row_id} ${r.method} ${r.path}`, list);
  }
  const cells = new Map<string, { versionId: string | null; version: string; drift: boolean }>();
  for (const rowId of rowsById.keys())
    for (const endpoint of endpoints) {
      const seen = byRowAndRoute.get(`${rowId} ${endpoint.method} ${endpoint.path}`);
      const candidates = versions.filter((v) => v.endpointId === endpoint.id);
      if (!seen || candidates.length === 0) continue;
      cells.set(
        `${rowId} ${endpoint.id}`,
        evaluateCell(candidates, seen, (versionId, exchange) => {
          const version = documentedVersions.get(versionId);
          return version !== undefined && rowConforms(version, exchange, shapes);
        }),
      );
    }
  const stored = (await db.query(
    `SELECT c.row_id AS "rowId", c.endpoint_id AS "endpointId", c.version_id AS "versionId", c.version, c.drift
       FROM evidence_cells c JOIN environment_rows r ON r.id = c.row_id WHERE r.project_id = $1`,
    [projectId],
  )) as Array<{ rowId: string; endpointId: string; versionId: string | null; version: string; drift: boolean }>;
  let differingCells = Math.abs(stored.length - cells.size);
  for (const cell of stored) {
    const expected = cells.get(`${cell.rowId} ${cell.endpointId}`);
    if (
      !expected ||
      expected.versionId !== cell.versionId ||
      expected.version !== cell.version ||
      expected.drift !== cell.drift
    )
      differingCells++;
  }
  if (differingCells > 0) differences.push(`cells: ${differingCells} of ${cells.size} differ`);

  // The matrix as the API answers it: each row's cell of each documented endpoint.
  let matrixCells = 0;
  let differingMatrix = 0;
  const rowIdByName = new Map([...rowsById].map(([id, row]) => [`${row.kind} ${row.name}`, id]));
  for (const kind of ['ci', 'staging', 'production'] as const) {
    const matrix = await matrixOf(kind);
    matrix.rows.forEach((row, r) => {
      const rowId = rowIdByName.get(`${kind} ${row.name}`);
      matrix.endpoints.forEach((endpoint, e) => {
        const shown = matrix.cells[r]?.[e];
        const expected = rowId === undefined ? undefined : cells.get(`${rowId} ${endpoint.id}`);
        matrixCells++;
        if (
          (expected === undefined && shown?.version !== 'N/A') ||
          (expected !== undefined && (shown?.version !== expected.version || Boolean(shown.drift) !== expected.drift))
        )
          differingMatrix++;
      });
    });
  }
  if (differingMatrix > 0) differences.push(`matrix: ${differingMatrix} of ${matrixCells} cells differ`);

  // Steps: a row of kind K shows a proposal when every version it made is shown there, or a later one.
  const proposals = (await db.query(
    `SELECT p.id, array(SELECT s.step FROM proposal_steps s WHERE s.proposal_id = p.id ORDER BY s.step) AS steps
       FROM proposals p WHERE p.project_id = $1 AND p.status <> 'Open'`,
    [projectId],
  )) as Array<{ id: string; steps: string[] }>;
  const madeBy = (await db.query(
    `SELECT v.proposal_id AS "proposalId", v.endpoint_id AS "endpointId", v.major, v.minor FROM endpoint_versions v
       JOIN endpoints e ON e.id = v.endpoint_id WHERE e.project_id = $1 AND v.proposal_id IS NOT NULL`,
    [projectId],
  )) as Array<{ proposalId: string; endpointId: string; major: number; minor: number }>;
  const versionById = new Map(versions.map((v) => [v.id, v]));
  let steps = 0;
  for (const proposal of proposals) {
    const made = madeBy.filter((v) => v.proposalId === proposal.id);
    const expected = new Set<string>(['Approved']);
    for (const [rowId, row] of rowsById) {
      const shows = made.every((v) => {
        const shown = versionById.get(cells.get(`${rowId} ${v.endpointId}`)?.versionId ?? '');
        return shown !== undefined && (shown.major > v.major || (shown.major === v.major && shown.minor >= v.minor));
      });
      if (shows) expected.add(STEP_OF_KIND[row.kind]);
    }
    steps += expected.size;
    const want = [...expected].sort().join(', ');
    if (want !== proposal.steps.join(', '))
      differences.push(`proposal ${proposal.id}: steps ${proposal.steps.join(', ')}, recomputed ${want}`);
  }

  // Version share: the requests runtime evidence keeps per row, endpoint and version.
  const runtime = (await db.query(
    `SELECT environment_kind AS kind, environment_name AS name, method, path, version, sum(requests)::float8 AS requests
       FROM runtime_buckets WHERE project_id = $1 AND resolution = 'day' GROUP BY 1, 2, 3, 4, 5`,
    [projectId],
  )) as Array<{ kind: string; name: string; method: string; path: string; version: string; requests: number }>;
  const expectedShare = new Map<string, number>();
  const endpointByRoute = new Map(endpoints.map((e) => [`${e.method} ${e.path}`, e.id]));
  for (const r of rows) {
    const endpointId = endpointByRoute.get(`${r.method} ${r.path}`);
    const version = endpointId === undefined ? '' : (cells.get(`${r.row_id} ${endpointId}`)?.version ?? '');
    const k = `${r.kind} ${r.name} ${r.method} ${r.path} ${version}`;
    expectedShare.set(k, (expectedShare.get(k) ?? 0) + r.count);
  }
  let differingShare = Math.abs(runtime.length - expectedShare.size);
  for (const r of runtime)
    if (expectedShare.get(`${r.kind} ${r.name} ${r.method} ${r.path} ${r.version}`) !== r.requests) differingShare++;
  if (differingShare > 0)
    differences.push(`version share: ${differingShare} of ${expectedShare.size} (row, endpoint, version) differ`);

  // Consumer calls: what the agents sent, per environment kind and consumer.
  const consumerCalls = (await db.query(
    `SELECT c.environment_kind AS kind, e.key AS consumer, sum((e.value->>0)::bigint)::float8 AS calls
       FROM ${CONSUMER_CALLS} c CROSS JOIN LATERAL jsonb_each(c.consumers) e WHERE c.project_id = $1 GROUP BY 1, 2`,
    [projectId],
  )) as Array<{ kind: string; consumer: string; calls: number }>;
  let differingConsumers = Math.abs(consumerCalls.length - consumersSent.size);
  for (const c of consumerCalls) if (consumersSent.get(`${c.kind} ${c.consumer}`) !== c.calls) differingConsumers++;
  if (differingConsumers > 0)
    differences.push(`consumer calls: ${differingConsumers} of ${consumersSent.size} (kind, consumer) differ`);

  // Where each distinct exchange was first seen, per kind: as read by the origin index against the evidence of every row.
  const origins = await originsDifferingFromEvidence(db, projectId);
  if (origins.differing > 0) differences.push(`exchange origins: ${origins.differing} of ${origins.stored} differ`);

  return {
    checked: `${exchanges?.stored} distinct exchanges, ${origins.stored} exchange origins, ${cells.size} cells, ${matrixCells} matrix cells, ${steps} steps of ${proposals.length} proposal(s), ${expectedShare.size} version shares, ${consumersSent.size} consumer totals`,
    differences,
  };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'spectator-scale-'));
  await chmod(dir, 0o755); // the embedded PostgreSQL runs as its own user
  const lockLines: string[] = [];
  /** PostgreSQL's log, kept with BENCH_SCALE_PROFILE (autovacuum's CPU is read from it). */
  let serverLog = '';
  if (PROFILE !== null) await mkdir(PROFILE, { recursive: true });
  const database = await startEmbeddedPostgres({
    dir: path.join(dir, 'pg'),
    persistent: false,
    flags: [...(PROFILE === null ? [] : PROFILE_FLAGS), ...PG_SETTINGS.flatMap((pair) => ['-c', pair])],
    onLog: (message) => {
      if (PROFILE !== null && serverLog.length < 50e6) serverLog += message;
      // A wait's line, with the statement that waited (the lines after it, in the same chunk or the next).
      if (message.includes('still waiting for')) lockLines.push(message);
      else if (lockLines.length > 0 && /^\s*(\S+ \S+ UTC \[\d+\] )?(DETAIL|CONTEXT|STATEMENT):/m.test(message))
        lockLines[lockLines.length - 1] += message;
    },
  });
  const replicas: ChildProcess[] = [];
  let cpu = new CpuMeter(() => ({}));
  const pool = new pg.Pool({
    connectionString: database.url,
    max: 2 * REPLICA_POOL,
    ...(KEEP_CONNECTIONS ? { idleTimeoutMillis: 0 } : {}),
  });
  const sampler = new LockSampler(new pg.Client({ connectionString: database.url }));
  const background = new BackgroundSampler(
    new pg.Client({ connectionString: database.url }),
    () => postgresSeconds(path.join(dir, 'pg')),
    () => ({
      replicas: replicas.reduce((sum, child) => sum + cpuSeconds(child.pid ?? 0), 0),
      bench: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    }),
  );
  const profiler = PROFILE === null ? null : new PhaseProfiler(pool, new pg.Client({ connectionString: database.url }));
  /** Runs a phase: its CPU per process measured, and its statements profiled with BENCH_SCALE_PROFILE. */
  const phase = <T>(name: string, rows: number, work: () => Promise<T>): Promise<T> => {
    rowsOfPhase.set(name, (rowsOfPhase.get(name) ?? 0) + rows);
    const measured = (): Promise<T> => cpu.measure(name, work);
    const from = new Date();
    return (profiler === null ? measured() : profiler.around(name, rows, measured)).finally(() => {
      const spans = clockOfPhase.get(name) ?? [];
      spans.push([from, new Date()]);
      clockOfPhase.set(name, spans);
    });
  };
  const rowsOfPhase = new Map<string, number>();
  /** When each phase ran, by the wall clock (what `processed_batches.committed_at` is read against). */
  const clockOfPhase = new Map<string, Array<[Date, Date]>>();
  // Connections PostgreSQL ends when it stops at the end are no error of the bench.
  pool.on('error', () => undefined);
  sampler.client.on('error', () => undefined);
  background.client.on('error', () => undefined);
  profiler?.client.on('error', () => undefined);
  try {
    await pool.query(`ALTER SYSTEM SET log_lock_waits = on`);
    await pool.query(`ALTER SYSTEM SET deadlock_timeout = '100ms'`);
    await pool.query('SELECT pg_reload_conf()');
    const adminToken = `bench-${randomUUID()}`;
    const metricsToken = `bench-metrics-${randomUUID()}`;
    const env = {
      DATABASE_URL: database.url,
      SPECTATOR_ADMIN_TOKEN: adminToken,
      SPECTATOR_DATA_DIR: dir,
      SPECTATOR_DASHBOARD_DIR: dir,
      SPECTATOR_MAX_AGENT_CONNECTIONS_PER_PROJECT: '100000',
      SPECTATOR_METRICS_TOKEN: metricsToken,
      // The replicas' pools keep their idle connections like the plain writer's (0: never closed);
      // without KEEP_CONNECTIONS, node-postgres's default of 10 s, as before the setting existed.
      SPECTATOR_DATABASE_IDLE_SECONDS: KEEP_CONNECTIONS ? '0' : '10',
      LOG_LEVEL: 'warn',
      ...(ROLLUP_SECONDS === undefined ? {} : { SPECTATOR_RUNTIME_ROLLUP_SECONDS: ROLLUP_SECONDS }),
    };
    // The first migrates; the second starts on the migrated schema, as a rollout's replicas do.
    const first = await startReplica({ ...env, SPECTATOR_RUN_MIGRATIONS: 'true' });
    replicas.push(first.child);
    const second = await startReplica({ ...env, SPECTATOR_RUN_MIGRATIONS: 'false' });
    replicas.push(second.child);
    const urls = [first.url, second.url];
    cpu = new CpuMeter(() => ({
      'replica 1': cpuSeconds(first.child.pid ?? 0),
      'replica 2': cpuSeconds(second.child.pid ?? 0),
      // Of the replicas' seconds above (not added to them: named apart from `replica`).
      ...replicaThreads(first.child.pid ?? 0, second.child.pid ?? 0),
      postgres: postgresSeconds(path.join(dir, 'pg')),
      bench: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    }));
    const api = async <T>(method: string, route: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${first.url}/api/v1${route}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer: unknown = await response.json();
      if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(answer)}`);
      return answer as T;
    };

    const project = await api<{ id: string }>('POST', '/projects', { slug: 'scale', name: 'Scale' });
    const { token } = await api<{ token: string }>('POST', '/projects/scale/tokens', {
      name: 'agents',
      scope: 'agent',
    });
    await api('POST', '/projects/scale/openapi/import?approve=true', openApiDocument());
    await pool.query(
      `INSERT INTO shapes (fingerprint, shape) SELECT key, value FROM jsonb_each($1::jsonb) ON CONFLICT DO NOTHING`,
      [JSON.stringify(SHAPES)],
    );

    const environments: Array<{ label: string; environment: SimulatedAgent['environment'] }> = [
      ...Array.from({ length: PRODUCTION }, (_, i) => ({
        label: `production-${i}`,
        environment:
          i < PRODUCTION - ROLLOUT
            ? { kind: 'production' as const, build: 'build-100', commit: 'c100' }
            : { kind: 'production' as const, build: 'build-102', commit: 'c102' },
      })),
      ...Array.from({ length: STAGING }, (_, i) => ({
        label: `staging-${i}`,
        environment: { kind: 'staging' as const, build: 'build-101', commit: 'c101' },
      })),
      ...Array.from({ length: CI }, (_, i) => ({
        label: `ci-${i}`,
        environment: { kind: 'ci' as const, pullRequest: String(40 + i), commit: `c${i}` },
      })),
    ];
    const agents: SimulatedAgent[] = [];
    for (const [i, { label, environment }] of environments.entries()) {
      const agent = await connectTestAgent(urls[i % urls.length] as string, token);
      const hello = helloMessage({ environment, agentId: label });
      const welcome = await agent.request(hello, 60_000);
      if (welcome.type !== 'welcome') throw new Error(`${label}: ${JSON.stringify(welcome)}`);
      const plainCaptureId = randomUUID();
      await pool.query(
        `INSERT INTO captures (id, project_id, environment_kind, environment_name, reason, started_at) VALUES ($1, $2, 'local', 'local', 'agent-start', now())`,
        [plainCaptureId, project.id],
      );
      agents.push({ label, environment, agent, captureId: hello.capture.id, plainCaptureId });
    }
    if (KEEP_CONNECTIONS) {
      // The plain writer's connections, opened before anything is timed (the replicas' are open by now).
      const opened = await Promise.all(Array.from({ length: 2 * REPLICA_POOL }, () => pool.connect()));
      for (const client of opened) client.release();
    }
    await sampler.client.connect();
    await background.client.connect();
    await profiler?.client.connect();

    if (PROFILE !== null) {
      for (const extension of PROFILE_EXTENSIONS) await pool.query(`CREATE EXTENSION IF NOT EXISTS ${extension}`);
      await pool.query('SELECT pg_stat_statements_reset()');
      await pool.query('SELECT pg_stat_reset()');
    }
    // The whole run, roll-ups and the last one's wait included: PostgreSQL CPU, WAL, and how many
    // minutes wait for the roll-up (what reads merge: sampled every second).
    const walNow = async (): Promise<bigint> =>
      BigInt(
        (await pool.query<{ lsn: string }>(`SELECT (pg_current_wal_insert_lsn() - '0/0')::text AS lsn`)).rows[0]?.lsn ??
          '0',
      );
    const runStart = { cpu: postgresSeconds(path.join(dir, 'pg')), wal: await walNow(), rows: 0 };
    const waitingMinutes = (): Promise<number> =>
      pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runtime_minutes_added`).then((r) => r.rows[0]?.n ?? 0);
    let waitingPeak = 0;
    const waitingSampler = setInterval(() => {
      waitingMinutes().then(
        (n) => (waitingPeak = Math.max(waitingPeak, n)),
        () => undefined,
      );
    }, 1000);
    let lastStep = 'start';
    const saturated: number[] = [];
    const saturatedByKind = new Map<string, number[]>();
    let backendLockMs = 0;
    let plainLockMs = 0;
    const consumersSent = new Map<string, number>();
    const saturatedAcks: Array<[AckParts, AckParts]> = [];
    const rowsPerSlice = agents.length * BATCHES * ROWS;
    /** The rounds of one pass (`cold`, then `warm` with BENCH_SCALE_WARM); the first pass's saturated latencies are the run's. */
    const runRounds = async (pass: Pass, firstRound: number): Promise<void> => {
      const { backendRates, foldedRates, drainSeconds, plainRates, postgresCpu, sliceLines, byPosition } = pass;
      const label = pass.name === 'cold' ? 'round' : `${pass.name} round`;
      const summariesBefore = await summaryWrites(pool);
      for (let r = 0; r < ROUNDS; r++) {
        const round = firstRound + r;
        const steps = ORDER === 'abba' ? ABBA : r % 2 === 0 ? ['E0', 'P0'] : ['P0', 'E0'];
        const slices = ORDER === 'abba' ? 2 : 1;
        const batchesOf = Array.from({ length: slices }, (_, s) =>
          agents.map((_, a) =>
            Array.from({ length: BATCHES }, (__, b) => rowsOf(((round * 7919 + a) * 104_729 + b + s * BATCHES) >>> 0)),
          ),
        );
        for (const batches of batchesOf) tallyConsumers(consumersSent, agents, batches);
        const spent = { evidence: 0, folded: 0, plain: 0, drained: 0, cpuEvidence: 0, cpuPlain: 0 };
        let before = lastStep;
        const runBackend = async (batches: WireObservation[][][], position: string): Promise<void> => {
          const work = serialised(agents, batches);
          // Neither contender runs beside the folds of earlier batches (untimed).
          await untilFolded(pool);
          const acksBefore = await ackParts(urls, metricsToken);
          sampler.start();
          const { result, beside } = await background.around(async () => {
            const streamed = await phase('with evidence', rowsPerSlice, () => stream(agents, work, { window: WINDOW }));
            return { ...streamed, drained: await untilFolded(pool) };
          });
          const { seconds, latencies, byKind, drained } = result;
          spent.evidence += seconds;
          spent.drained += drained;
          spent.folded += seconds + drained;
          spent.cpuEvidence += beside.cpu;
          await sampler.stop();
          if (firstRound === 0) saturatedAcks.push([acksBefore, await ackParts(urls, metricsToken)]);
          backendLockMs = Math.max(backendLockMs, sampler.maxMs);
          if (firstRound === 0) {
            saturated.push(...latencies);
            for (const [kind, values] of byKind)
              saturatedByKind.set(kind, [...(saturatedByKind.get(kind) ?? []), ...values]);
          }
          const rate = rowsPerSlice / (seconds + drained);
          byPosition.set(`evidence ${position}`, [...(byPosition.get(`evidence ${position}`) ?? []), rate]);
          sliceLines.push(
            `    ${label} ${r + 1} evidence ${position}: folded ${rate.toFixed(0)} rows/s; ${besideLine(beside)}`,
          );
          console.log(sliceLines[sliceLines.length - 1]);
        };
        const runPlain = async (batches: WireObservation[][][], position: string): Promise<void> => {
          await untilFolded(pool);
          sampler.start();
          const { result: seconds, beside } = await background.around(() =>
            phase('plain', rowsPerSlice, () => writePlain(pool, agents, batches, 2 * REPLICA_POOL)),
          );
          await sampler.stop();
          spent.plain += seconds;
          spent.cpuPlain += beside.cpu;
          plainLockMs = Math.max(plainLockMs, sampler.maxMs);
          const rate = rowsPerSlice / seconds;
          byPosition.set(`plain ${position}`, [...(byPosition.get(`plain ${position}`) ?? []), rate]);
          sliceLines.push(`    ${label} ${r + 1} plain ${position}: ${rate.toFixed(0)} rows/s; ${besideLine(beside)}`);
          console.log(sliceLines[sliceLines.length - 1]);
        };
        for (const step of steps) {
          const batches = batchesOf[Number(step[1])] as WireObservation[][][];
          const position = `after ${before}`;
          if (step[0] === 'E') await runBackend(batches, position);
          else await runPlain(batches, position);
          before = step[0] === 'E' ? 'evidence' : 'plain';
        }
        lastStep = before;
        const rowsOfRound = rowsPerSlice * slices;
        backendRates.push(rowsOfRound / spent.evidence);
        foldedRates.push(rowsOfRound / spent.folded);
        drainSeconds.push(spent.drained / slices);
        plainRates.push(rowsOfRound / spent.plain);
        postgresCpu.evidence += spent.cpuEvidence;
        postgresCpu.plain += spent.cpuPlain;
        console.log(
          `${label} ${r + 1} (${steps.join(' ')}): with evidence ${backendRates[r]?.toFixed(0)} rows/s, plain ${plainRates[r]?.toFixed(0)} rows/s, ratio ${((backendRates[r] as number) / (plainRates[r] as number)).toFixed(2)}; ` +
            `folded ${foldedRates[r]?.toFixed(0)} rows/s (${drainSeconds[r]?.toFixed(1)} s after the last ack), ratio ${((foldedRates[r] as number) / (plainRates[r] as number)).toFixed(2)}; ` +
            `PostgreSQL CPU evidence ${spent.cpuEvidence.toFixed(1)} s, plain ${spent.cpuPlain.toFixed(1)} s, PostgreSQL-side ratio ${(spent.cpuPlain / spent.cpuEvidence).toFixed(2)}`,
        );
      }
      const summariesAfter = await summaryWrites(pool);
      pass.summaries = {
        inserts: summariesAfter.inserts - summariesBefore.inserts,
        updates: summariesAfter.updates - summariesBefore.updates,
      };
    };
    const cold = newPass('cold');
    await runRounds(cold, 0);
    let warm: Pass | null = null;
    if (WARM) {
      // Every capture (the evidence contender's and the plain one's) writes each endpoint once, untimed, as a
      // long-lived pod's capture has after its first ~30 batches; then the same rounds again.
      const warmBatches = agents.map((_, a) =>
        Array.from({ length: Math.ceil(ENDPOINTS / ROWS) }, (__, b) =>
          scaleRowsOf(
            (a * 7_907 + b * 1_000_033 + 5) >>> 0,
            Array.from({ length: Math.min(ROWS, ENDPOINTS - b * ROWS) }, (___, k) => b * ROWS + k),
          ),
        ),
      );
      tallyConsumers(consumersSent, agents, warmBatches);
      await untilFolded(pool);
      await phase('warm-up', agents.length * ENDPOINTS * 2, async () => {
        await stream(agents, serialised(agents, warmBatches), { window: WINDOW });
        await untilFolded(pool);
        await writePlain(pool, agents, warmBatches, 2 * REPLICA_POOL);
      });
      lastStep = 'warm-up';
      warm = newPass('warm');
      await runRounds(warm, ROUNDS);
    }
    const { backendRates, foldedRates, drainSeconds, plainRates, postgresCpu, byPosition } = cold;

    // Paced: one batch per agent every PACE_MS, as agents flush.
    const pacedBatches = agents.map((_, a) =>
      Array.from({ length: Math.max(1, Math.round((PACED_SECONDS * 1000) / PACE_MS)) }, (__, b) =>
        rowsOf((a * 31 + b * 1_000_003 + 17) >>> 0),
      ),
    );
    tallyConsumers(consumersSent, agents, pacedBatches);
    const pacedWork = serialised(agents, pacedBatches);
    const pacedAcksBefore = await ackParts(urls, metricsToken);
    sampler.start();
    const paced = await phase('paced', agents.length * (pacedBatches[0]?.length ?? 0) * ROWS, () =>
      stream(agents, pacedWork, { paceMs: PACE_MS, endCi: true }),
    );
    await sampler.stop();
    const pacedAcks: [AckParts, AckParts] = [pacedAcksBefore, await ackParts(urls, metricsToken)];
    const pacedLockMs = sampler.maxMs;

    // Paced at shares of the capacity this run measured: the median rate with evidence folded.
    const capacity = median(foldedRates);
    const sharePoints: Array<{
      share: number;
      offered: number;
      paceMs: number;
      run: Awaited<ReturnType<typeof stream>>;
      drained: number;
      lockMs: number;
    }> = [];
    for (const share of capacity > 0 ? SHARES : []) {
      const offered = (capacity * share) / 100;
      const paceMs = Math.max(1, Math.round((agents.length * ROWS * 1000) / offered));
      const count = Math.max(2, Math.round((PACED_SECONDS * 1000) / paceMs));
      const batches = agents.map((_, a) =>
        Array.from({ length: count }, (__, b) => rowsOf((a * 131 + b * 2_000_003 + share * 7_919 + 29) >>> 0)),
      );
      tallyConsumers(consumersSent, agents, batches);
      const work = serialised(agents, batches);
      await untilFolded(pool);
      sampler.start();
      const run = await phase(`paced ${share} %`, agents.length * count * ROWS, () => stream(agents, work, { paceMs }));
      const drained = await untilFolded(pool);
      await sampler.stop();
      sharePoints.push({ share, offered, paceMs, run, drained, lockMs: sampler.maxMs });
    }
    await Promise.all(agents.map(({ agent }) => agent.close()));
    // One version-share read of production (the dashboard's runtime view) with minutes waiting.
    const shareWaiting = await waitingMinutes();
    const shareStart = performance.now();
    await api('GET', '/projects/scale/runtime/share?environment=production');
    const shareMs = performance.now() - shareStart;

    // Whatever the backend still folds after the last ack (nothing, when evidence is written with the
    // batch), then the minutes it has yet to roll up into their hours and days (read beside them anyway).
    for (const table of ['evidence_queue', 'runtime_minutes_added']) {
      const [queue] = (await pool.query<{ exists: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS exists`, [table]))
        .rows;
      for (let waited = 0; queue?.exists && waited < 130_000; waited += 100) {
        const [queued] = (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows;
        if (!queued || queued.n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    clearInterval(waitingSampler);
    const runCpu = postgresSeconds(path.join(dir, 'pg')) - runStart.cpu;
    const runWal = Number((await walNow()) - runStart.wal);
    const runRows = [...rowsOfPhase.values()].reduce((a, b) => a + b, 0);
    const merging = await mergeFactors(pool, project.id, clockOfPhase);
    const check = await recomputationDiffers(
      pool,
      project.id,
      (kind) => api<VersionMatrixResponse>('GET', `/projects/scale/versions?kind=${kind}&limit=100`),
      consumersSent,
    );

    const ms = (value: number): string => `${value.toFixed(0)} ms`;
    const backendMedian = median(backendRates);
    const plainMedian = median(plainRates);
    console.log(
      `scale: ${PRODUCTION} production agents of ${ROLLOUT > 0 ? `two builds (${PRODUCTION - ROLLOUT}/${ROLLOUT}, a rollout)` : 'one build'}, ${STAGING} staging, ${CI} CI runs, on 2 replicas; ` +
        `batches of ${ROWS} rows over ${ENDPOINTS} endpoints; ${ROUNDS} rounds of ${BATCHES} batches per agent (window ${WINDOW})` +
        (PG_SETTINGS.length > 0 ? `; PostgreSQL set ${PG_SETTINGS.join(' ')} (diagnosis)` : '') +
        (KEEP_CONNECTIONS ? '' : "; the plain writer's and the replicas' idle connections closed after 10 s"),
    );
    console.log(
      `  ingest with evidence ${backendMedian.toFixed(0)} rows/s, plain INSERT … ON CONFLICT ${plainMedian.toFixed(0)} rows/s (pool of ${2 * REPLICA_POOL}): ratio ${(backendMedian / plainMedian).toFixed(2)} (aim ≥ 0.50; per round ${backendRates.map((r, i) => (r / (plainRates[i] as number)).toFixed(2)).join(' ')})`,
    );
    console.log(
      `  batch sent → ack: saturated p50 ${ms(median(saturated))} p99 ${ms(percentile(saturated, 99))}; ` +
        `paced (1 per ${PACE_MS} ms per agent, ${paced.latencies.length} batches) p50 ${ms(median(paced.latencies))} p99 ${ms(percentile(paced.latencies, 99))} (aim p99 < 1 s)`,
    );
    console.log(`    by kind: saturated ${kindLine(saturatedByKind)}; paced ${kindLine(paced.byKind)}`);
    if (paced.ciStops.length > 0)
      console.log(
        `    CI stops (paced; last batch sent → capture-ended, as a stopping agent waits): p50 ${ms(median(paced.ciStops))} max ${ms(Math.max(...paced.ciStops))} (${paced.ciStops.length})`,
      );
    const positions = [...byPosition]
      .map(([position, rates]) => `${position} ${rates.map((rate) => rate.toFixed(0)).join(' ')}`)
      .join('; ');
    console.log(
      `  with evidence folded (timed to the last batch folded; the aim's figure): ${capacity.toFixed(0)} rows/s, ratio ${(capacity / plainMedian).toFixed(2)} ` +
        `(folded ${median(drainSeconds).toFixed(1)} s after the last ack, median); order ${ORDER === 'abba' ? 'E P P E in every round' : 'E P, P E alternating'}`,
    );
    console.log(
      `  PostgreSQL-side ratio (plain ÷ evidence PostgreSQL CPU for the same rows, the rounds' slices): ${(postgresCpu.plain / postgresCpu.evidence).toFixed(2)} ` +
        `(evidence ${postgresCpu.evidence.toFixed(1)} s, plain ${postgresCpu.plain.toFixed(1)} s)`,
    );
    console.log(`  rows/s by what ran just before (one figure per slice): ${positions}`);
    const summariesLine = (pass: Pass): string =>
      `capture summaries written ${pass.summaries.inserts + pass.summaries.updates}, ${pass.summaries.inserts} of them inserts`;
    console.log(`  ${summariesLine(cold)}`);
    if (warm !== null) {
      const w = warm;
      const wBackend = median(w.backendRates);
      const wPlain = median(w.plainRates);
      console.log(
        `  warm captures (BENCH_SCALE_WARM: then every capture wrote each of the ${ENDPOINTS} endpoints, untimed, and ${ROUNDS} rounds more), beside the cold ones above: ` +
          `with evidence ${wBackend.toFixed(0)} rows/s, plain ${wPlain.toFixed(0)} rows/s, ratio ${(wBackend / wPlain).toFixed(2)} (cold ${(backendMedian / plainMedian).toFixed(2)}); ` +
          `folded ${median(w.foldedRates).toFixed(0)} rows/s, ratio ${(median(w.foldedRates) / wPlain).toFixed(2)} (cold ${(capacity / plainMedian).toFixed(2)}; per round ${w.foldedRates.map((r, i) => (r / (w.plainRates[i] as number)).toFixed(2)).join(' ')}); ` +
          `PostgreSQL-side ratio ${(w.postgresCpu.plain / w.postgresCpu.evidence).toFixed(2)} (evidence ${w.postgresCpu.evidence.toFixed(1)} s, plain ${w.postgresCpu.plain.toFixed(1)} s; cold ${(postgresCpu.plain / postgresCpu.evidence).toFixed(2)}); ${summariesLine(w)}`,
      );
      console.log(
        `    warm rows/s by what ran just before: ${[...w.byPosition].map(([position, rates]) => `${position} ${rates.map((rate) => rate.toFixed(0)).join(' ')}`).join('; ')}`,
      );
    }
    console.log('  each slice, and what PostgreSQL did beside it:');
    for (const line of [...cold.sliceLines, ...(warm?.sliceLines ?? [])]) console.log(line);
    for (const { share, offered, paceMs, run, drained, lockMs } of sharePoints)
      console.log(
        `  paced at ${share} % of capacity (${offered.toFixed(0)} rows/s offered, 1 batch per ${paceMs} ms per agent, ${run.latencies.length} batches): ` +
          `p50 ${ms(median(run.latencies))} p99 ${ms(percentile(run.latencies, 99))}; by kind ${kindLine(run.byKind)}; ` +
          `folded ${drained.toFixed(1)} s after the last ack; longest lock wait sampled ${ms(lockMs)}`,
      );
    console.log(`  where acks waited (replicas' /metrics, mean per ack): saturated ${ackLine(saturatedAcks)}`);
    console.log(`    paced ${ackLine([pacedAcks])}`);
    console.log(
      `  longest lock wait sampled: with evidence ${ms(backendLockMs)}, paced ${ms(pacedLockMs)}, plain ${ms(plainLockMs)}; ` +
        `log_lock_waits lines (waits over 100 ms): ${lockLines.length} (aim 0)`,
    );
    // Waits by the table their statement writes (or reads), most first.
    const byTable = new Map<string, number>();
    for (const wait of lockLines) {
      // PostgreSQL's NOTIFY queue is "object 0 of class 1262" (pg_database); else the relation or the statement's table.
      const table = wait.includes('object 0 of class 1262')
        ? 'NOTIFY queue'
        : (/relation "(\w+)"/.exec(wait)?.[1] ??
          /(?:INSERT INTO|UPDATE|DELETE FROM|FROM)\s+(\w+)/.exec(wait.slice(wait.indexOf('STATEMENT:')))?.[1] ??
          'unknown');
      byTable.set(table, (byTable.get(table) ?? 0) + 1);
    }
    if (byTable.size > 0)
      console.log(
        `    waits by table: ${[...byTable]
          .sort((a, b) => b[1] - a[1])
          .map(([table, n]) => `${table} ${n}`)
          .join(', ')}`,
      );
    for (const wait of lockLines.slice(0, 3))
      console.log(
        wait
          .trim()
          .split('\n')
          .map((line) => `    ${line.trim().slice(0, 240)}`)
          .join('\n'),
      );
    console.log(
      `  recomputation from stored observations: ${check.checked}: ${check.differences.length === 0 ? 'all equal' : check.differences.join('; ')}`,
    );
    console.log(
      `  capture summary writes if merged per capture over a window (written ÷ distinct (capture, endpoint) per window, from processed_batches): ${merging.join('; ')}`,
    );
    console.log(`  CPU seconds (from /proc) ${cpu.lines().join('; ')}`);
    console.log(
      `  whole run (every phase and the last roll-up; roll-up every ${ROLLUP_SECONDS ?? 'default'} s per replica): ` +
        `PostgreSQL CPU ${runCpu.toFixed(1)} s, WAL ${(runWal / 1e6).toFixed(0)} MB for ${runRows} rows ` +
        `(${((runCpu * 1e6) / runRows).toFixed(0)} ms, ${(runWal / runRows).toFixed(0)} KB per 1,000 rows); ` +
        `minutes waiting for the roll-up: peak ${waitingPeak} (sampled each second); ` +
        `production version share read with ${shareWaiting} waiting: ${ms(shareMs)}`,
    );
    if (PROFILE !== null) {
      console.log(`  statements per phase (pg_stat_statements deltas, nested statements included):`);
      for (const line of profiler?.lines() ?? []) console.log(line);
      // Row versions written per table: an update that is not HOT (heap-only) also writes every index.
      const { rows: tables } = await pool.query<{
        table: string;
        ins: number;
        upd: number;
        hot: number;
        del: number;
        indexes: number;
      }>(
        `SELECT t.relname AS table, t.n_tup_ins::int AS ins, t.n_tup_upd::int AS upd, t.n_tup_hot_upd::int AS hot, t.n_tup_del::int AS del,
                (SELECT count(*) FROM pg_index i WHERE i.indrelid = t.relid)::int AS indexes
           FROM pg_stat_user_tables t ORDER BY t.n_tup_ins + t.n_tup_upd + t.n_tup_del DESC LIMIT 15`,
      );
      console.log('  rows written per table (pg_stat_user_tables: inserted, updated (HOT), deleted; indexes):');
      for (const t of tables)
        console.log(`    ${t.table}: ${t.ins} ins, ${t.upd} upd (${t.hot} HOT), ${t.del} del; ${t.indexes} indexes`);
      // What autovacuum did to each table over the run (PostgreSQL 18 keeps each table's total time):
      // each of its vacuums and analyzes also makes every session plan the statements using it again.
      const { rows: vacuumed } = await pool.query<{
        table: string;
        vacuums: number;
        analyzes: number;
        vacuumMs: number;
        analyzeMs: number;
      }>(
        `SELECT relname AS table, autovacuum_count::int AS vacuums, autoanalyze_count::int AS analyzes,
                total_autovacuum_time::float8 AS "vacuumMs", total_autoanalyze_time::float8 AS "analyzeMs"
           FROM pg_stat_user_tables WHERE autovacuum_count + autoanalyze_count > 0
          ORDER BY total_autovacuum_time + total_autoanalyze_time DESC`,
      );
      console.log(
        `  autovacuum per table over the run (pg_stat_user_tables): ${vacuumed.reduce((n, t) => n + t.vacuums, 0)} vacuums ` +
          `${(vacuumed.reduce((n, t) => n + t.vacuumMs, 0) / 1000).toFixed(1)} s, ` +
          `${vacuumed.reduce((n, t) => n + t.analyzes, 0)} analyzes ${(vacuumed.reduce((n, t) => n + t.analyzeMs, 0) / 1000).toFixed(1)} s`,
      );
      for (const t of vacuumed.slice(0, 15))
        console.log(
          `    ${t.table}: ${t.vacuums} vacuums ${t.vacuumMs.toFixed(0)} ms, ${t.analyzes} analyzes ${t.analyzeMs.toFixed(0)} ms`,
        );
      const autovacuumCpuSums = autovacuumCpu(serverLog);
      console.log(
        `  autovacuum's CPU over the run (its log lines: user + system): ` +
          `${autovacuumCpuSums.reduce((n, t) => n + t.seconds, 0).toFixed(2)} s in ${autovacuumCpuSums.reduce((n, t) => n + t.runs, 0)} runs`,
      );
      for (const t of autovacuumCpuSums.slice(0, 12))
        console.log(`    ${t.table} ${t.kind}: ${t.runs} runs, ${t.seconds.toFixed(2)} s`);
      // The replicas write their CPU profiles as they exit.
      for (const child of replicas) {
        child.kill('SIGTERM');
        if (child.exitCode === null) await once(child, 'exit');
      }
      const pids = replicas.map((child) => child.pid ?? 0);
      // The profiles sample the main threads: they split those threads' seconds, the rest apart.
      const offMain = cpu.secondsOf('of the replicas: off');
      const profilerThread = cpu.secondsOf('of the replicas: the profiler');
      const mainThreads = new Map(
        [...cpu.secondsOf('replica')].map(([phase, seconds]) => [
          phase,
          seconds - (offMain.get(phase) ?? 0) - (profilerThread.get(phase) ?? 0),
        ]),
      );
      for (const line of replicaSplit(PROFILE, pids, cpu.windows, mainThreads, rowsOfPhase, offMain)) console.log(line);
    }
    console.log(`  load average ${loadAverage()}`);
    if (check.differences.length > 0) throw new Error('stored evidence differs from its recomputation');
  } finally {
    await sampler.stop().catch(() => undefined);
    await sampler.client.end().catch(() => undefined);
    await background.client.end().catch(() => undefined);
    await profiler?.client.end().catch(() => undefined);
    for (const child of replicas) {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    }
    await pool.end();
    await database.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

runBench(main);
