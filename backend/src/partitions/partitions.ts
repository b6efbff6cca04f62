/**
 * The tables partitioned by time (issue 20, "Growing old gracefully") and their partitions: one
 * piece of code names, bounds and makes them all (`PartitionsService`), on one schedule. Each
 * table is ranged by a time column into periods (a day, a week from Monday or a month, UTC), and
 * each partition is named by its table and its first day (`observations_20261123`,
 * `runtime_buckets_minute_20261128`). Runtime rows keep a default partition per resolution for
 * rows of a time without a partition (a batch spooled from long ago), which move into their
 * partition when it is made; observations have none (a capture's `created_at` is the database's
 * `now()`, always within the periods made ahead).
 */
export type Period = 'day' | 'week' | 'month';

/** A table partitioned by range of time, as made by its migrations. */
export interface PartitionedTable {
  /** The partitioned table (a leaf partition's parent). */
  parent: string;
  /** The time column it is ranged by. */
  column: string;
  period: Period;
  /** Whether it has a default partition (`<parent>_default`) that rows of a time without a partition go to. */
  withDefault: boolean;
  /**
   * The partitions' fillfactor, when rows are updated often: room on each page keeps an update
   * heap-only (HOT, no new index entry). PostgreSQL's default (100) otherwise.
   */
  fillfactor?: number;
  /**
   * Columns ANALYZE takes no statistics of (`SET STATISTICS 0`), on every partition: never filtered,
   * joined or grouped on, they cost each analysis its most CPU (a new partition does not inherit a
   * column's statistics target, so the partition maker sets it).
   */
  withoutStatistics?: readonly string[];
}

/** Observations, by their capture's creation week (`capture_created_at`; docs/operations.md, "Partitions of observations"). */
export const OBSERVATIONS: PartitionedTable = {
  parent: 'observations',
  column: 'capture_created_at',
  period: 'week',
  withDefault: false,
  // Every batch updates the rows of keys its capture has seen: room on each page keeps those
  // updates heap-only (ObservationsRoomToUpdate1795990000000 set the same on the partitions before).
  fillfactor: 80,
  // Name lists, notes and instance digits: written and read with their row only (issue 20:
  // ObservationStatisticsNarrowed1795981000000 set the same on the partitions before).
  withoutStatistics: [
    'query',
    'request_headers',
    'response_headers',
    'request_note',
    'response_note',
    'request_instances',
    'response_instances',
  ],
};

/**
 * Runtime rows of each resolution, by bucket (docs/operations.md, "Runtime evidence"). Every
 * roll-up (every 10 s by default) rewrites the hour and day rows that had traffic since the last:
 * their pages keep room (RuntimeRowsRoomToUpdate1795932641608); minute rows, most of the rows and
 * rewritten only while their minute is recent, are packed.
 */
export const RUNTIME_ROWS = {
  minute: { parent: 'runtime_buckets_minute', column: 'bucket', period: 'day', withDefault: true },
  hour: { parent: 'runtime_buckets_hour', column: 'bucket', period: 'week', withDefault: true, fillfactor: 70 },
  day: { parent: 'runtime_buckets_day', column: 'bucket', period: 'month', withDefault: true, fillfactor: 70 },
} as const satisfies Record<string, PartitionedTable>;

/** Every table partitioned by time. */
export const PARTITIONED_TABLES: readonly PartitionedTable[] = [
  OBSERVATIONS,
  RUNTIME_ROWS.minute,
  RUNTIME_ROWS.hour,
  RUNTIME_ROWS.day,
];

/** Periods made ahead of the current one: a backend down for as long still finds them. */
export const PERIODS_AHEAD = 2;

/** One range partition of a table. */
export interface RangePartition {
  name: string;
  /** The first time it holds. */
  from: Date;
  /** The first time past it. */
  to: Date;
}

const DAY_MS = 86_400_000;

/** A partition's name, or a default partition's, as made here: never quoted, safe to put in SQL. */
export const PARTITION_NAME = /^(observations|runtime_buckets_(minute|hour|day))_(\d{8}|default)$/;

/** The partition of `table` holding the time `at`. */
export function partitionOf(table: PartitionedTable, at: Date): RangePartition {
  const time = at.getTime();
  let from: number;
  let to: number;
  if (table.period === 'day') {
    from = Math.floor(time / DAY_MS) * DAY_MS;
    to = from + DAY_MS;
  } else if (table.period === 'week') {
    // 1 January 1970 was a Thursday: day d is (d + 3) mod 7 days past a Monday.
    const day = Math.floor(time / DAY_MS);
    from = (day - ((((day + 3) % 7) + 7) % 7)) * DAY_MS;
    to = from + 7 * DAY_MS;
  } else {
    const date = new Date(time);
    from = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    to = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  }
  const first = new Date(from);
  return {
    name: `${table.parent}_${first.toISOString().slice(0, 10).replaceAll('-', '')}`,
    from: first,
    to: new Date(to),
  };
}

/** The partitions of `table` that hold the times from `from` to `to` (both included), in time order. */
export function partitionsCovering(table: PartitionedTable, from: Date, to: Date): RangePartition[] {
  const covering: RangePartition[] = [];
  for (let p = partitionOf(table, from); p.from.getTime() <= to.getTime(); p = partitionOf(table, p.to))
    covering.push(p);
  return covering;
}

/** The partition of `table` holding `now` and the next `PERIODS_AHEAD`. */
export function partitionsAhead(table: PartitionedTable, now: Date): RangePartition[] {
  const ahead: RangePartition[] = [partitionOf(table, now)];
  while (ahead.length <= PERIODS_AHEAD) ahead.push(partitionOf(table, (ahead.at(-1) as RangePartition).to));
  return ahead;
}
