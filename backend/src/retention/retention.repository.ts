import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../common/queryable';
import { OBSERVATIONS } from '../partitions/partitions';
import { PartitionsRepository } from '../partitions/partitions.repository';

/** Advisory lock key: one replica prunes at a time, the others skip that hour's run. */
export const RETENTION_LOCK = 0x5e_c7_a7_02;

/** A week's partition of observations: its table and the creation times of the captures it holds. */
export interface ObservationPartition {
  name: string;
  from: Date;
  to: Date;
}

/** The weekly partitions of observations (partitions/partitions.ts): nothing else is ever dropped. */
const PARTITION_NAME = /^observations_\d{8}$/;

/**
 * Whether capture `c` is past retention (`$1` days): its last traffic (its end, else its start, and
 * its observations' last sight) is older than that, and it is not the newest capture of an agent
 * seen within that time (that agent may still stream into it). An agent not seen for that long is
 * gone: without a spool its id dies with its process, so its newest capture would be kept forever.
 */
const STALE = `coalesce(c.ended_at, c.started_at) < now() - make_interval(days => $1)
  AND NOT EXISTS (SELECT FROM observations o
                   WHERE o.capture_id = c.id AND o.project_id = c.project_id AND o.capture_created_at = c.created_at
                     AND o.last_seen >= now() - make_interval(days => $1))
  AND NOT EXISTS (SELECT FROM agents a
                   WHERE a.id = c.agent_id AND a.project_id = c.project_id AND a.last_seen_at >= now() - make_interval(days => $1)
                     AND NOT EXISTS (SELECT FROM captures n WHERE n.agent_id = c.agent_id AND n.project_id = c.project_id
                                                              AND (n.started_at, n.id) > (c.started_at, c.id)))`;

/**
 * The SQL of capture retention, raw SQL in one style. It deletes captures (their observations and
 * summaries go with them by cascade) across projects, so it is a job of its own rather than a
 * call per capture through the captures' service; and it drops the weekly partitions of
 * observations whole (docs/operations.md, "Partitions of observations"; partitions/ makes them).
 */
@Injectable()
export class RetentionRepository {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly partitions: PartitionsRepository,
  ) {}

  /** The partitions of observations whose every capture was created more than `days` days ago, oldest first. */
  async expiredPartitions(days: number): Promise<ObservationPartition[]> {
    const [{ cutoff }] = (await this.db.query(`SELECT now() - make_interval(days => $1) AS cutoff`, [days])) as [
      { cutoff: Date },
    ];
    return (await this.partitions.stored(OBSERVATIONS.parent)).filter(
      (p): p is ObservationPartition =>
        PARTITION_NAME.test(p.name) && p.from !== null && p.to !== null && p.to.getTime() <= cutoff.getTime(),
    );
  }

  /**
   * Drops a week's partition of observations and deletes its captures (their summaries and batch
   * ids by cascade), when every capture created in that week is past retention (`days`); in one
   * transaction under the retention lock.
   * @returns whether it was dropped (not while a capture of the week is kept) and how many
   * captures were deleted, or null when another replica holds the lock.
   */
  dropPartition(partition: ObservationPartition, days: number): Promise<{ dropped: boolean; deleted: number } | null> {
    if (!PARTITION_NAME.test(partition.name)) throw new Error(`${partition.name} is not a partition of observations`);
    return this.db.transaction(async (manager) => {
      if (!(await this.tryLock(manager))) return null;
      // The week's partition is locked before its captures are judged: a batch that commits between
      // the judgement and the drop would otherwise be acknowledged and then dropped with the week.
      // Batches already writing there are waited for (their transactions are short), not longer;
      // one that comes after waits for this transaction and finds its capture gone (it is resent).
      await manager.query(`SET LOCAL lock_timeout = '5s'`);
      await manager.query(`LOCK TABLE ${partition.name} IN ACCESS EXCLUSIVE MODE`);
      const [kept] = (await manager.query(
        `SELECT EXISTS (SELECT FROM captures c WHERE c.created_at >= $2 AND c.created_at < $3 AND NOT (${STALE})) AS kept`,
        [days, partition.from, partition.to],
      )) as Array<{ kept: boolean }>;
      if (kept?.kept !== false) return { dropped: false, deleted: 0 };
      await manager.query(`DROP TABLE ${partition.name}`);
      const [result] = (await manager.query(
        `WITH gone AS (DELETE FROM captures WHERE created_at >= $1 AND created_at < $2 RETURNING 1)
         SELECT count(*)::int AS deleted FROM gone`,
        [partition.from, partition.to],
      )) as Array<{ deleted: number }>;
      return { dropped: true, deleted: result?.deleted ?? 0 };
    });
  }

  /**
   * Deletes up to `limit` captures past retention (`days`) whose week of observations is kept for
   * other captures, row by row, in one transaction under the retention lock.
   * @returns how many were deleted, or null when another replica holds the lock.
   */
  deleteStaleCaptures(days: number, limit: number): Promise<number | null> {
    return this.db.transaction(async (manager) => {
      if (!(await this.tryLock(manager))) return null;
      const [result] = (await manager.query(
        `WITH stale AS (SELECT c.id, c.project_id FROM captures c WHERE ${STALE} LIMIT $2),
         gone AS (DELETE FROM captures WHERE (id, project_id) IN (SELECT id, project_id FROM stale) RETURNING 1)
         SELECT count(*)::int AS deleted FROM gone`,
        [days, limit],
      )) as Array<{ deleted: number }>;
      return result?.deleted ?? 0;
    });
  }

  /**
   * Deletes up to `limit` agents not seen for `days` days (no hello, heartbeat or close since),
   * with their connections (cascade); a capture kept past its agent loses only the link (its
   * agent set to NULL, its project kept). In one transaction under the retention lock. Without a
   * spool an agent's id is new every process, so each pod process left a row behind for ever.
   * The age is checked again on each row deleted, so an agent that says hello meanwhile stays.
   * @returns how many were deleted, or null when another replica holds the lock.
   */
  deleteStaleAgents(days: number, limit: number): Promise<number | null> {
    return this.db.transaction(async (manager) => {
      if (!(await this.tryLock(manager))) return null;
      const [result] = (await manager.query(
        `WITH gone AS (
           DELETE FROM agents a
            WHERE a.last_seen_at < now() - make_interval(days => $1)
              AND (a.id, a.project_id) IN (SELECT id, project_id FROM agents
                                            WHERE last_seen_at < now() - make_interval(days => $1) LIMIT $2)
           RETURNING 1)
         SELECT count(*)::int AS deleted FROM gone`,
        [days, limit],
      )) as Array<{ deleted: number }>;
      return result?.deleted ?? 0;
    });
  }

  private async tryLock(manager: Queryable): Promise<boolean> {
    const [lock] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [RETENTION_LOCK])) as Array<{
      locked: boolean;
    }>;
    return lock?.locked === true;
  }
}
