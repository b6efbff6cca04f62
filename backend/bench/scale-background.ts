/**
 * What PostgreSQL did beside each of the scale bench's timed slices (issue 20, the comparison's
 * fairness): work no contender asked for in that slice, but which shares the cores with it.
 *  - sampled from `pg_stat_activity` every 100 ms: autovacuum workers at work (and on which
 *    tables), and the replicas' runtime roll-ups (their timer's statements, `TAKE_MINUTES` and the
 *    locking of the rows they add to), as seconds of the slice;
 *  - read around the slice: checkpoints done (`pg_stat_checkpointer`) and the buffers they wrote,
 *    autovacuum and autoanalyze runs finished (`pg_stat_all_tables`), WAL written, PostgreSQL's CPU;
 *  - what each kind of PostgreSQL process did with the shared buffers of tables and indexes
 *    (`pg_stat_io`, object `relation`): blocks read from the OS, written out, evicted to make room,
 *    extended, and fsyncs; and the WAL blocks each kind wrote (object `wal`). Whether a writer
 *    pays for the dirty pages the slice before it left (issue 20's order effect) shows here: client
 *    backends' writes and evictions;
 *  - rows inserted and updated in the observations' partitions and the capture summaries
 *    (`pg_stat_user_tables`): how warm the captures written were.
 * Backends report their statistics at most once a second, so those are read 1.1 s after the slice
 * (the checkpoints, vacuums and WAL with them; CPU right at its end).
 */
import type pg from 'pg';

/** Counters read before and after a slice. */
interface Counters {
  checkpoints: number;
  checkpointBuffers: number;
  vacuums: number;
  analyzes: number;
  wal: number;
  sessions: number;
  io: Map<string, Io>;
  rows: Rows;
}

/** Row versions written to the observations' partitions and the capture summaries (`pg_stat_user_tables`). */
interface Rows {
  observationsInserted: number;
  observationsUpdated: number;
  summariesInserted: number;
  summariesUpdated: number;
}

/** Blocks (8 kB) a kind of PostgreSQL process moved (`pg_stat_io`). */
interface Io {
  reads: number;
  writes: number;
  evictions: number;
  extends: number;
  fsyncs: number;
  walWrites: number;
}
const IO_PARTS = ['reads', 'writes', 'evictions', 'extends', 'fsyncs', 'walWrites'] as const;
/** The slice line's short names of IO_PARTS. */
const IO_NAMES: Record<(typeof IO_PARTS)[number], string> = {
  reads: 'read',
  writes: 'written',
  evictions: 'evicted',
  extends: 'extended',
  fsyncs: 'fsyncs',
  walWrites: 'WAL written',
};

/** What one slice had beside it. */
export interface Beside {
  seconds: number;
  /** PostgreSQL CPU seconds (all its processes) over the slice. */
  cpu: number;
  /** CPU seconds of the other processes (the replicas, the bench itself, which runs the plain writer). */
  others: Record<string, number>;
  /** Seconds an autovacuum worker was seen at work (summed over workers), and the tables seen. */
  autovacuum: number;
  tables: Set<string>;
  /** Seconds a replica's roll-up was seen in a statement or its transaction. */
  rollUp: number;
  checkpoints: number;
  checkpointBuffers: number;
  vacuums: number;
  analyzes: number;
  wal: number;
  /** Connections PostgreSQL accepted (`pg_stat_database.sessions`): each a new backend process, its caches cold. */
  sessions: number;
  /** pg_stat_io's deltas by backend type (only the types that moved any block). */
  io: Map<string, Io>;
  /** Rows inserted and updated: a writer that finds its rows stored updates them (HOT), else inserts and extends. */
  rows: Rows;
}

const SAMPLE_MS = 100;
/** How long after a slice its counters are read: PostgreSQL's backends report statistics once a second. */
const STATISTICS_MS = 1_100;
/** A roll-up's statements (runtime.repository.ts): the take, and the locking of the rows it adds to. */
const ROLL_UP = /picked AS MATERIALIZED|AS k\(project_id, method, path, kind, name, version, resolution, bucket/;

export class BackgroundSampler {
  constructor(
    /** Connected by the caller; used by this sampler only. */
    readonly client: pg.Client,
    private readonly postgresCpu: () => number,
    private readonly othersCpu: () => Record<string, number>,
  ) {}

  private async counters(): Promise<Counters> {
    const { rows } = await this.client.query<Omit<Counters, 'io' | 'rows'>>(
      `SELECT (SELECT num_done + 0 FROM pg_stat_checkpointer)::float8 AS checkpoints,
              (SELECT buffers_written FROM pg_stat_checkpointer)::float8 AS "checkpointBuffers",
              (SELECT coalesce(sum(autovacuum_count), 0) FROM pg_stat_all_tables)::float8 AS vacuums,
              (SELECT coalesce(sum(autoanalyze_count), 0) FROM pg_stat_all_tables)::float8 AS analyzes,
              (pg_current_wal_insert_lsn() - '0/0')::float8 AS wal,
              (SELECT sum(sessions) FROM pg_stat_database)::float8 AS sessions`,
    );
    const { rows: io } = await this.client.query<Io & { type: string }>(
      `SELECT backend_type AS type,
              coalesce(sum(reads) FILTER (WHERE object = 'relation'), 0)::float8 AS reads,
              coalesce(sum(writes) FILTER (WHERE object = 'relation'), 0)::float8 AS writes,
              coalesce(sum(evictions) FILTER (WHERE object = 'relation'), 0)::float8 AS evictions,
              coalesce(sum(extends) FILTER (WHERE object = 'relation'), 0)::float8 AS extends,
              coalesce(sum(fsyncs) FILTER (WHERE object = 'relation'), 0)::float8 AS fsyncs,
              coalesce(sum(writes) FILTER (WHERE object = 'wal'), 0)::float8 AS "walWrites"
         FROM pg_stat_io GROUP BY backend_type`,
    );
    const { rows: written } = await this.client.query<Rows>(
      `SELECT coalesce(sum(n_tup_ins) FILTER (WHERE relname LIKE 'observations%'), 0)::float8 AS "observationsInserted",
              coalesce(sum(n_tup_upd) FILTER (WHERE relname LIKE 'observations%'), 0)::float8 AS "observationsUpdated",
              coalesce(sum(n_tup_ins) FILTER (WHERE relname = 'capture_endpoints'), 0)::float8 AS "summariesInserted",
              coalesce(sum(n_tup_upd) FILTER (WHERE relname = 'capture_endpoints'), 0)::float8 AS "summariesUpdated"
         FROM pg_stat_user_tables`,
    );
    return {
      ...(rows[0] as Omit<Counters, 'io' | 'rows'>),
      io: new Map(io.map(({ type, ...counts }) => [type, counts])),
      rows: written[0] as Rows,
    };
  }

  /** Runs `work` as one slice: @returns its result and what PostgreSQL did beside it. */
  async around<T>(work: () => Promise<T>): Promise<{ result: T; beside: Beside }> {
    const before = await this.counters();
    const cpuBefore = this.postgresCpu();
    const othersBefore = this.othersCpu();
    const started = performance.now();
    const beside: Beside = {
      seconds: 0,
      cpu: 0,
      others: {},
      autovacuum: 0,
      tables: new Set(),
      rollUp: 0,
      checkpoints: 0,
      checkpointBuffers: 0,
      vacuums: 0,
      analyzes: 0,
      wal: 0,
      sessions: 0,
      io: new Map(),
      rows: { observationsInserted: 0, observationsUpdated: 0, summariesInserted: 0, summariesUpdated: 0 },
    };
    let running: Promise<void> = Promise.resolve();
    let last = started;
    const timer = setInterval(() => {
      running = running.then(async () => {
        const { rows } = await this.client.query<{ type: string; query: string }>(
          `SELECT backend_type AS type, query FROM pg_stat_activity
            WHERE pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')
              AND (backend_type = 'autovacuum worker' OR query ~ $1)`,
          [ROLL_UP.source],
        );
        // Each sample stands for the time since the one before (the interval stretches under load).
        const now = performance.now();
        const span = (now - last) / 1000;
        last = now;
        for (const { type, query } of rows) {
          if (type === 'autovacuum worker') {
            beside.autovacuum += span;
            const table = /(?:VACUUM|ANALYZE)(?: ANALYZE)? (?:\(to prevent wraparound\) )?(?:public\.)?(\w+)/.exec(
              query,
            )?.[1];
            if (table !== undefined) beside.tables.add(table);
          } else beside.rollUp += span;
        }
      });
    }, SAMPLE_MS);
    let result: T;
    try {
      result = await work();
    } finally {
      clearInterval(timer);
      await running.catch(() => undefined);
    }
    beside.seconds = (performance.now() - started) / 1000;
    beside.cpu = this.postgresCpu() - cpuBefore;
    for (const [part, seconds] of Object.entries(this.othersCpu()))
      beside.others[part] = seconds - (othersBefore[part] ?? 0);
    // Backends report their statistics at most once a second (idle ones within that second too).
    await new Promise((resolve) => setTimeout(resolve, STATISTICS_MS));
    const after = await this.counters();
    beside.checkpoints = after.checkpoints - before.checkpoints;
    beside.checkpointBuffers = after.checkpointBuffers - before.checkpointBuffers;
    beside.vacuums = after.vacuums - before.vacuums;
    beside.analyzes = after.analyzes - before.analyzes;
    beside.wal = after.wal - before.wal;
    beside.sessions = after.sessions - before.sessions;
    for (const part of Object.keys(beside.rows) as Array<keyof Rows>)
      beside.rows[part] = after.rows[part] - before.rows[part];
    for (const [type, counts] of after.io) {
      const was = before.io.get(type);
      const delta = Object.fromEntries(
        IO_PARTS.map((part) => [part, counts[part] - (was?.[part] ?? 0)]),
      ) as unknown as Io;
      if (IO_PARTS.some((part) => delta[part] !== 0)) beside.io.set(type, delta);
    }
    return { result, beside };
  }
}

/** One line of what a slice had beside it. */
export function besideLine(b: Beside): string {
  const tables = [...b.tables].sort().join(' ');
  return (
    `${b.seconds.toFixed(1)} s, CPU s PostgreSQL ${b.cpu.toFixed(1)}${Object.entries(b.others)
      .map(([part, seconds]) => `, ${part} ${seconds.toFixed(1)}`)
      .join('')}; WAL ${(b.wal / 1e6).toFixed(0)} MB; ` +
    `autovacuum at work ${b.autovacuum.toFixed(1)} s${tables === '' ? '' : ` (${tables})`}, ${b.vacuums} vacuums + ${b.analyzes} analyzes done; ` +
    `roll-ups ${b.rollUp.toFixed(1)} s; checkpoints ${b.checkpoints} (${b.checkpointBuffers} buffers); ` +
    `connections opened ${b.sessions}; observations inserted ${b.rows.observationsInserted} updated ${b.rows.observationsUpdated}, ` +
    `summaries inserted ${b.rows.summariesInserted} updated ${b.rows.summariesUpdated}; blocks (pg_stat_io) ${ioLine(b.io)}`
  );
}

/** pg_stat_io's deltas by backend type, the parts that moved: `client backend read 12 written 340, …`. */
export function ioLine(io: ReadonlyMap<string, Io>): string {
  if (io.size === 0) return 'none';
  return [...io]
    .map(
      ([type, counts]) =>
        `${type} ${IO_PARTS.filter((part) => counts[part] !== 0)
          .map((part) => `${IO_NAMES[part]} ${counts[part]}`)
          .join(' ')}`,
    )
    .join(', ');
}
