import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** Advisory lock key: one replica prunes at a time, the others skip that hour's run. */
export const RETENTION_LOCK = 0x5e_c7_a7_02;

/**
 * The SQL of capture retention, raw SQL in one style. It deletes captures (their observations and
 * summaries go with them by cascade) across projects, so it is a job of its own rather than a
 * call per capture through the captures' service.
 */
@Injectable()
export class RetentionRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Deletes up to `limit` captures whose last traffic is older than `days` days, never the newest
   * capture of an agent, in one transaction under the retention lock.
   * @returns how many were deleted, or null when another replica holds the lock.
   */
  deleteStaleCaptures(days: number, limit: number): Promise<number | null> {
    return this.db.transaction(async (manager) => {
      const [lock] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [
        RETENTION_LOCK,
      ])) as Array<{
        locked: boolean;
      }>;
      if (!lock?.locked) return null;
      const [result] = (await manager.query(
        `WITH newest AS (
           SELECT DISTINCT ON (agent_id) id FROM captures WHERE agent_id IS NOT NULL ORDER BY agent_id, started_at DESC, id DESC),
         stale AS (
           SELECT c.id FROM captures c
            WHERE coalesce(c.ended_at, c.started_at) < now() - make_interval(days => $1)
              AND c.id NOT IN (SELECT id FROM newest)
              AND NOT EXISTS (SELECT 1 FROM observations o WHERE o.capture_id = c.id AND o.last_seen >= now() - make_interval(days => $1))
            LIMIT $2),
         gone AS (DELETE FROM captures WHERE id IN (SELECT id FROM stale) RETURNING 1)
         SELECT count(*)::int AS deleted FROM gone`,
        [days, limit],
      )) as Array<{ deleted: number }>;
      return result?.deleted ?? 0;
    });
  }
}
