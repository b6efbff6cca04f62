/**
 * What PostgreSQL did beside each of the scale bench's timed slices (issue 20, the comparison's
 * fairness): work no contender asked for in that slice, but which shares the cores with it.
 *  - sampled from `pg_stat_activity` every 100 ms: autovacuum workers at work (and on which
 *    tables), and the replicas' runtime roll-ups (their timer's statements, `TAKE_MINUTES` and the
 *    locking of the rows they add to), as seconds of the slice;
 *  - read around the slice: checkpoints done (`pg_stat_checkpointer`) and the buffers they wrote,
 *    autovacuum and autoanalyze runs finished (`pg_stat_all_tables`), WAL written, PostgreSQL's CPU.
 */
import type pg from 'pg';

/** Counters read before and after a slice. */
interface Counters {
  checkpoints: number;
  checkpointBuffers: number;
  vacuums: number;
  analyzes: number;
  wal: number;
}

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
}

const SAMPLE_MS = 100;
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
    const { rows } = await this.client.query<Counters>(
      `SELECT (SELECT num_done + 0 FROM pg_stat_checkpointer)::float8 AS checkpoints,
              (SELECT buffers_written FROM pg_stat_checkpointer)::float8 AS "checkpointBuffers",
              (SELECT coalesce(sum(autovacuum_count), 0) FROM pg_stat_all_tables)::float8 AS vacuums,
              (SELECT coalesce(sum(autoanalyze_count), 0) FROM pg_stat_all_tables)::float8 AS analyzes,
              (pg_current_wal_insert_lsn() - '0/0')::float8 AS wal`,
    );
    return rows[0] as Counters;
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
    const after = await this.counters();
    beside.seconds = (performance.now() - started) / 1000;
    beside.cpu = this.postgresCpu() - cpuBefore;
    for (const [part, seconds] of Object.entries(this.othersCpu()))
      beside.others[part] = seconds - (othersBefore[part] ?? 0);
    beside.checkpoints = after.checkpoints - before.checkpoints;
    beside.checkpointBuffers = after.checkpointBuffers - before.checkpointBuffers;
    beside.vacuums = after.vacuums - before.vacuums;
    beside.analyzes = after.analyzes - before.analyzes;
    beside.wal = after.wal - before.wal;
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
    `roll-ups ${b.rollUp.toFixed(1)} s; checkpoints ${b.checkpoints} (${b.checkpointBuffers} buffers)`
  );
}
