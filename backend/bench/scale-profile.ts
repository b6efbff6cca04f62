/**
 * The scale bench's profile part (BENCH_SCALE_PROFILE, issue 20): where the CPU of each phase goes.
 *  - `PhaseProfiler`: pg_stat_statements deltas per phase (ms per 1,000 rows, WAL, buffers; with
 *    `pg_stat_statements.track = all` foreign-key checks show as nested statements), the
 *    statements that planned most, the WAL written by table (`pg_walinspect`) and what the
 *    active backends wait for, sampled from `pg_stat_activity` every 25 ms;
 *  - `replicaSplit`: the replicas' CPU per phase (from /proc) split by their V8 CPU profiles'
 *    samples (`--cpu-prof`) into the ingest path, the fold path, the pg driver, GC and the rest.
 *    V8's sampler charges a sample to whatever ran when the thread got the core back, so the
 *    shares are read as proportions only; /proc gives the seconds.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';

interface StatementStats {
  calls: number;
  ms: number;
  /** Times the statement was planned, and the planning's milliseconds (`track_planning`). */
  plans: number;
  planMs: number;
  rows: number;
  wal: number;
  fpi: number;
  dirtied: number;
  hit: number;
  read: number;
  query: string;
}
const COUNTERS = ['calls', 'ms', 'plans', 'planMs', 'rows', 'wal', 'fpi', 'dirtied', 'hit', 'read'] as const;

/** What one phase gathered, over every time it ran. */
interface PhaseStats {
  rows: number;
  statements: Map<string, StatementStats>;
  /** WAL records and bytes by table (its indexes, TOAST and partitions under it) and kind (`pg_walinspect`). */
  wal: Map<string, { records: number; bytes: number }>;
  waits: Map<string, number>;
  samples: number;
}

/** Server settings the profile needs: the statement statistics, nested statements counted too. */
export const PROFILE_FLAGS = [
  '-c',
  'shared_preload_libraries=pg_stat_statements',
  '-c',
  'pg_stat_statements.track=all',
  '-c',
  'track_io_timing=on',
  '-c',
  'pg_stat_statements.track_planning=on',
  // Every autovacuum and autoanalyze logged, with the CPU it took (`autovacuumCpu`).
  '-c',
  'log_autovacuum_min_duration=0',
];

/**
 * The CPU autovacuum took per table and kind (vacuum, analyze), summed from PostgreSQL's log lines
 * (`log_autovacuum_min_duration = 0`: "automatic analyze of table … system usage: CPU: user: … s,
 * system: … s"), most first: CPU seconds do not grow with the machine's load as wall times do.
 */
export function autovacuumCpu(log: string): Array<{ table: string; kind: string; runs: number; seconds: number }> {
  const sums = new Map<string, { table: string; kind: string; runs: number; seconds: number }>();
  const entry =
    /automatic (vacuum|analyze) of table "(?:[^".]+\.)?(?:[^".]+\.)?([^"]+)"[\s\S]*?CPU: user: ([\d.]+) s, system: ([\d.]+) s/g;
  for (const [, kind, table, user, system] of log.matchAll(entry)) {
    const key = `${table} ${kind}`;
    const sum = sums.get(key) ?? { table: table as string, kind: kind as string, runs: 0, seconds: 0 };
    sum.runs++;
    sum.seconds += Number(user) + Number(system);
    sums.set(key, sum);
  }
  return [...sums.values()].sort((a, b) => b.seconds - a.seconds);
}

/** What the profile needs in the bench's database (`pg_walinspect`: superuser, which the bench is). */
export const PROFILE_EXTENSIONS = ['pg_stat_statements', 'pg_walinspect'];

/**
 * The WAL written between two positions, by table and kind of relation: an index, a TOAST table and
 * a partition count under their table (a partition's index under its partition's parent), records
 * without a block (commits) as `-`. Everything PostgreSQL wrote meanwhile, autovacuum's included.
 */
const WAL_BY_TABLE = `
  WITH r AS (
    SELECT pg_filenode_relation(0, substring(block_ref from 'rel [0-9]+/[0-9]+/([0-9]+)')::oid) AS rel, record_length
      FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
  ), based AS (
    SELECT r.record_length, c.relkind = 'i' AS indexed, coalesce(i.indrelid, c.oid) AS base
      FROM r LEFT JOIN pg_class c ON c.oid = r.rel LEFT JOIN pg_index i ON i.indexrelid = c.oid
  ), owned AS (
    SELECT b.record_length, b.indexed, t.oid IS NOT NULL AS toasted, coalesce(t.oid, b.base) AS owner
      FROM based b LEFT JOIN pg_class t ON t.reltoastrelid = b.base
  )
  SELECT coalesce(coalesce((SELECT h.inhparent FROM pg_inherits h WHERE h.inhrelid = o.owner), o.owner)::regclass::text, '-')
         || CASE WHEN o.toasted THEN ' (TOAST)' ELSE '' END || CASE WHEN o.indexed THEN ' (index)' ELSE '' END AS key,
         count(*)::float8 AS records, sum(o.record_length)::float8 AS bytes
    FROM owned o GROUP BY 1`;

/** The bench's own sampling statements, left out of the phases' statements. */
const MEASURING = /\b(pg_locks|pg_stat_activity|pg_stat_statements)\b/;

/** pg_stat_statements and pg_stat_activity per phase. */
export class PhaseProfiler {
  private readonly phases = new Map<string, PhaseStats>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();

  /** `pool` reads the statistics, `client` (connected by the caller) samples the waits. */
  constructor(
    private readonly pool: pg.Pool,
    readonly client: pg.Client,
  ) {}

  private async snapshot(): Promise<Map<string, StatementStats>> {
    const { rows } = await this.pool.query<StatementStats & { id: string }>(
      `SELECT queryid::text || ':' || toplevel::text AS id, calls::float8 AS calls, total_exec_time::float8 AS ms,
              plans::float8 AS plans, total_plan_time::float8 AS "planMs",
              rows::float8 AS rows, wal_bytes::float8 AS wal, wal_fpi::float8 AS fpi,
              shared_blks_dirtied::float8 AS dirtied, shared_blks_hit::float8 AS hit, shared_blks_read::float8 AS read, query
         FROM pg_stat_statements`,
    );
    return new Map(rows.map((row) => [row.id, row]));
  }

  /** Runs `work` (writing `rows` rows) as phase `phase`, adding what the statements did meanwhile. */
  async around<T>(phase: string, rows: number, work: () => Promise<T>): Promise<T> {
    const before = await this.snapshot();
    let entry = this.phases.get(phase);
    if (entry === undefined)
      this.phases.set(
        phase,
        (entry = { rows: 0, statements: new Map(), wal: new Map(), waits: new Map(), samples: 0 }),
      );
    const stats = entry;
    stats.rows += rows;
    const walFrom = await this.walPosition();
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.sample(stats));
    }, 25);
    try {
      return await work();
    } finally {
      clearInterval(this.timer);
      await this.running;
      for (const [id, after] of await this.snapshot()) {
        if (MEASURING.test(after.query)) continue;
        const was = before.get(id);
        const sum = stats.statements.get(id) ?? { ...after, ...Object.fromEntries(COUNTERS.map((k) => [k, 0])) };
        for (const k of COUNTERS) sum[k] += after[k] - (was?.[k] ?? 0);
        if (sum.calls > 0) stats.statements.set(id, sum);
      }
      const { rows: wal } = await this.pool.query<{ key: string; records: number; bytes: number }>(WAL_BY_TABLE, [
        walFrom,
        await this.walPosition(),
      ]);
      for (const { key, records, bytes } of wal) {
        const was = stats.wal.get(key) ?? { records: 0, bytes: 0 };
        stats.wal.set(key, { records: was.records + records, bytes: was.bytes + bytes });
      }
    }
  }

  private async walPosition(): Promise<string> {
    const { rows } = await this.pool.query<{ at: string }>('SELECT pg_current_wal_insert_lsn()::text AS at');
    return (rows[0] as { at: string }).at;
  }

  private async sample(stats: PhaseStats): Promise<void> {
    const { rows } = await this.client.query<{ wait: string; query: string }>(
      `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS wait, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS query
         FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
    );
    stats.samples++;
    for (const { wait, query } of rows) {
      const key = `${wait} | ${query}`;
      stats.waits.set(key, (stats.waits.get(key) ?? 0) + 1);
    }
  }

  /** Per phase: the statements that took most time, then the wait events of active backends. */
  lines(top = 20): string[] {
    const lines: string[] = [];
    for (const [phase, { rows, statements, wal, waits, samples }] of this.phases) {
      const list = [...statements]
        .map(([id, s]) => ({ ...s, nested: id.endsWith(':false') }))
        .sort((a, b) => b.ms - a.ms);
      // Nested statements (foreign-key checks, track = all) are inside their top-level one's time.
      const total = [...statements].reduce((sum, [id, s]) => sum + (id.endsWith(':true') ? s.ms : 0), 0);
      const planned = [...statements].reduce((sum, [, s]) => sum + s.planMs, 0);
      const plans = [...statements].reduce((sum, [, s]) => sum + s.plans, 0);
      const perThousand = (ms: number): string => (ms / (rows / 1000)).toFixed(1);
      lines.push(
        `  ${phase}: ${rows} rows, top-level statements ${(total / 1000).toFixed(2)} s = ${perThousand(total)} ms per 1,000 rows; ` +
          `planning ${(planned / 1000).toFixed(2)} s = ${perThousand(planned)} ms per 1,000 rows (${plans} plans, ${(plans / (rows / 1000)).toFixed(1)} per 1,000 rows)`,
      );
      for (const s of list.slice(0, top))
        lines.push(
          `    ${s.nested ? '(nested) ' : ''}${(s.ms / 1000).toFixed(2)} s (${((100 * s.ms) / total).toFixed(1)} %, ${perThousand(s.ms)} ms per 1,000 rows), ` +
            `${s.calls} calls of ${(s.ms / s.calls).toFixed(2)} ms, planned ${s.plans} times (${(s.planMs / 1000).toFixed(2)} s), ${s.rows} rows, WAL ${(s.wal / 1e6).toFixed(1)} MB (${s.fpi} FPI), ` +
            `buffers ${s.hit} hit ${s.read} read ${s.dirtied} dirtied: ${s.query.replace(/\s+/g, ' ').slice(0, 160)}`,
        );
      // Planning apart: a statement planned on most calls costs little time to run but much to plan
      // (unnamed, or named and planned again after each autovacuum of a table it reads).
      const byPlanning = list.filter((s) => s.plans > 0).sort((a, b) => b.planMs - a.planMs);
      lines.push(`    most planning (calls, plans, planning per plan, plans per 1,000 rows):`);
      for (const s of byPlanning.slice(0, 8))
        lines.push(
          `      ${(s.planMs / 1000).toFixed(2)} s: ${s.calls} calls, ${s.plans} plans of ${(s.planMs / s.plans).toFixed(2)} ms, ` +
            `${(s.plans / (rows / 1000)).toFixed(2)} plans per 1,000 rows: ${s.query.replace(/\s+/g, ' ').slice(0, 110)}`,
        );
      const walBytes = [...wal.values()].reduce((sum, w) => sum + w.bytes, 0);
      lines.push(
        `    WAL by table (pg_walinspect, everything written meanwhile): ${(walBytes / 1e6).toFixed(1)} MB = ` +
          `${(walBytes / rows).toFixed(0)} B per row; records, bytes per row:`,
      );
      for (const [key, w] of [...wal].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, 14))
        lines.push(
          `      ${key}: ${(w.bytes / 1e6).toFixed(1)} MB (${((100 * w.bytes) / walBytes).toFixed(1)} %), ` +
            `${(w.records / rows).toFixed(2)} records, ${(w.bytes / rows).toFixed(0)} B per row`,
        );
      const seen = [...waits].sort((a, b) => b[1] - a[1]);
      const active = seen.reduce((sum, [, n]) => sum + n, 0) / Math.max(1, samples);
      lines.push(
        `    active backends (pg_stat_activity every 25 ms, ${samples} samples, ${active.toFixed(1)} on average):`,
      );
      for (const [key, n] of seen.slice(0, 12))
        lines.push(`      ${(n / Math.max(1, samples)).toFixed(2)} per sample: ${key}`);
    }
    return lines;
  }
}

/** A phase as the bench ran it: from `start` to `end` (µs of the monotonic clock V8's profiles use). */
export interface PhaseWindow {
  phase: string;
  start: number;
  end: number;
}

/** Now on the monotonic clock, in µs (`process.hrtime`, as V8's profile timestamps on Linux). */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

/** Parts of a replica's CPU: its own code by path, then what no backend frame explains. */
export const REPLICA_PARTS = [
  'ingest',
  'fold',
  'other backend',
  'pg driver',
  'typeorm',
  'GC',
  'socket writes',
  'native',
  'rest',
] as const;
type ReplicaPart = (typeof REPLICA_PARTS)[number];

/** Folders of backend/src whose code runs in folds (when not called from the ingest path). */
const FOLD_FOLDERS = new Set(['evidence', 'runtime', 'consumers', 'matrix', 'proposals', 'versions', 'views', 'drift']);
/** Functions of those folders that the ingest path calls for a batch's statement (the evidence hook). */
const INGEST_HOOKS = new Set([
  'queuedEvidence',
  'rowIdOf',
  'runtimeMinutes',
  'packedRuntimeMinutes',
  'consumerDays',
  'evidenceOf',
  'packedExchanges',
]);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/**
 * The part a sample belongs to: the outermost frame of backend/src decides the path (after an
 * `await` the resumed function is the outermost frame, so a fold's continuation is the fold's);
 * without one, the innermost frame's module.
 */
function partOf(stack: readonly ProfileNode[]): ReplicaPart | null {
  const leaf = stack[stack.length - 1]?.callFrame;
  if (leaf?.functionName === '(idle)') return null;
  if (leaf?.functionName === '(garbage collector)') return 'GC';
  if (leaf?.functionName === '(program)') return 'native';
  // Mostly the time a replica loses the core as it wakes a backend (the same with a Unix socket), not CPU.
  if (leaf?.functionName === 'writev' || leaf?.functionName === 'writeBuffer') return 'socket writes';
  for (const { callFrame } of stack) {
    const source = /\/src\/(\w[\w-]*)\/([\w.-]+)\.js$/.exec(callFrame.url);
    if (source === null || callFrame.url.includes('/node_modules/')) continue;
    const [, folder = '', file = ''] = source;
    if (file === 'evidence-folder') return 'fold';
    if (FOLD_FOLDERS.has(folder)) return INGEST_HOOKS.has(callFrame.functionName) ? 'ingest' : 'fold';
    if (folder === 'ingest' || folder === 'captures') return 'ingest';
    return 'other backend';
  }
  const url = leaf?.url ?? '';
  if (/\/node_modules\/(pg|pg-protocol|pg-types|postgres-array)\//.test(url)) return 'pg driver';
  if (url.includes('/node_modules/typeorm/')) return 'typeorm';
  // ws reads only agents' frames in the bench: the ingest path before the gateway's handler.
  if (url.includes('/node_modules/ws/')) return 'ingest';
  return 'rest';
}

/** Samples per phase and part (and per function, self time) of one profile. */
function samplesOf(
  profile: CpuProfile,
  windows: readonly PhaseWindow[],
  into: Map<string, Map<string, number>>,
  functions: Map<string, Map<string, number>>,
): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const parts = new Map<number, ReplicaPart | null>();
  const stackPart = (id: number): ReplicaPart | null => {
    if (!parts.has(id)) {
      const stack: ProfileNode[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.unshift(byId.get(at)!);
      parts.set(id, partOf(stack));
    }
    return parts.get(id) ?? null;
  };
  let time = profile.startTime;
  profile.samples.forEach((id, i) => {
    time += profile.timeDeltas[i] ?? 0;
    const window = windows.find((w) => time >= w.start && time < w.end);
    const part = window === undefined ? null : stackPart(id);
    if (window === undefined || part === null) return;
    const counts = into.get(window.phase) ?? new Map<string, number>();
    into.set(window.phase, counts);
    counts.set(part, (counts.get(part) ?? 0) + 1);
    const frame = byId.get(id)!.callFrame;
    const name = `${part}: ${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|src)\//, '$1/')}`;
    const perFunction = functions.get(window.phase) ?? new Map<string, number>();
    functions.set(window.phase, perFunction);
    perFunction.set(name, (perFunction.get(name) ?? 0) + 1);
  });
}

/**
 * The replicas' CPU per 1,000 rows of each phase, split by their profiles' samples: the profiles
 * of processes `pids` in `folder`, `seconds` the replicas' CPU per phase from /proc, `rows` per phase.
 */
export function replicaSplit(
  folder: string,
  pids: readonly number[],
  windows: readonly PhaseWindow[],
  seconds: ReadonlyMap<string, number>,
  rows: ReadonlyMap<string, number>,
  offMain: ReadonlyMap<string, number> = new Map(),
  topFunctions = 15,
): string[] {
  const counts = new Map<string, Map<string, number>>();
  const functions = new Map<string, Map<string, number>>();
  const files = readdirSync(folder).filter(
    (name) => name.endsWith('.cpuprofile') && pids.some((pid) => name.includes(`.${pid}.`)),
  );
  for (const file of files)
    samplesOf(JSON.parse(readFileSync(path.join(folder, file), 'utf8')) as CpuProfile, windows, counts, functions);
  const lines = [
    `  replicas' main threads' CPU per 1,000 rows (/proc), split by ${files.length} CPU profiles' samples; ` +
      `off main threads (V8's workers: TurboFan, GC's parallel and concurrent parts; libuv's pool), which the profiles do not sample, apart:`,
  ];
  for (const [phase, parts] of counts) {
    const total = [...parts.values()].reduce((sum, n) => sum + n, 0);
    const ms = ((seconds.get(phase) ?? 0) * 1000) / ((rows.get(phase) ?? 1) / 1000);
    const share = (n: number): string => ((ms * n) / total).toFixed(0);
    const off = ((offMain.get(phase) ?? 0) * 1000) / ((rows.get(phase) ?? 1) / 1000);
    lines.push(
      `    ${phase}: off main threads ${off.toFixed(0)} ms; main threads ${ms.toFixed(0)} ms = ${REPLICA_PARTS.filter(
        (part) => parts.has(part),
      )
        .map((part) => `${part} ${share(parts.get(part) ?? 0)}`)
        .join(', ')} (${total} samples)`,
    );
    const top = [...(functions.get(phase) ?? [])].sort((a, b) => b[1] - a[1]).slice(0, topFunctions);
    for (const [name, n] of top) lines.push(`      ${share(n)} ms ${name}`);
  }
  return lines;
}
