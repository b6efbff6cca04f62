/**
 * How `runtime_buckets` is partitioned (issue 20): listed by resolution (`runtime_buckets_minute`,
 * `_hour`, `_day`), and each resolution's rows ranged by bucket: one partition per day (UTC) of
 * minute rows, per week (from Monday, UTC) of hour rows and per month of day rows, named by their
 * first day (`runtime_buckets_minute_20261128`). Retention drops a partition once all of it is past
 * the horizon and deletes rows only in the one partition the horizon cuts. Rows of a time without
 * a partition (a batch spooled from before the partitions were made, a clock far ahead) go to the
 * resolution's default partition (`runtime_buckets_minute_default`) and move into their partition
 * when it is made. Migration `RuntimePartitions1795881639261` makes the same partitions (frozen).
 */
export type RuntimeResolution = 'minute' | 'hour' | 'day';

/** One range partition of one resolution's rows. */
export interface RuntimePartition {
  name: string;
  /** The first bucket it holds. */
  from: Date;
  /** The first bucket past it. */
  to: Date;
}

const DAY_MS = 86_400_000;

/** A partition's name, or a default partition's, as this module makes them: never quoted, safe to put in SQL. */
export const PARTITION_NAME = /^runtime_buckets_(minute|hour|day)_(\d{8}|default)$/;

/** The partition holding `resolution`'s rows of the bucket at `at`. */
export function partitionOf(resolution: RuntimeResolution, at: Date): RuntimePartition {
  const time = at.getTime();
  let from: number;
  let to: number;
  if (resolution === 'minute') {
    from = Math.floor(time / DAY_MS) * DAY_MS;
    to = from + DAY_MS;
  } else if (resolution === 'hour') {
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
    name: `runtime_buckets_${resolution}_${first.toISOString().slice(0, 10).replaceAll('-', '')}`,
    from: first,
    to: new Date(to),
  };
}

/** The partitions of `resolution` that hold the buckets from `from` to `to` (both included), in time order. */
export function partitionsCovering(resolution: RuntimeResolution, from: Date, to: Date): RuntimePartition[] {
  const covering: RuntimePartition[] = [];
  for (let p = partitionOf(resolution, from); p.from.getTime() <= to.getTime(); p = partitionOf(resolution, p.to))
    covering.push(p);
  return covering;
}
