import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { PeriodicJob } from '../common/periodic';
import { RUNTIME, type Runtime } from '../config/runtime';

/** How often a replica looks for captures past their retention. */
const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
/** Captures deleted per statement (with their observations), so no run holds one long transaction. */
const RETENTION_CHUNK = 50;
/** Advisory lock key: one replica prunes at a time, the others skip that hour's run. */
const RETENTION_LOCK = 0x5e_c7_a7_02;

/**
 * Deletes captures nobody needs any more: those whose last traffic is older than
 * `captureRetentionDays`, with their observations and summaries. Never the newest capture of an
 * agent (it may still be streaming into it). Evidence (the versions matrix, proposal steps) is
 * kept apart and stays; a proposal or step that named a deleted capture keeps everything but the
 * link. `captureRetentionDays` 0 keeps captures forever.
 */
@Injectable()
export class RetentionService implements OnModuleInit, OnModuleDestroy {
  private readonly log: Logger;
  private readonly job: PeriodicJob;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    this.log = runtime.log.child({ module: 'retention' });
    this.job = new PeriodicJob('pruning old captures', RETENTION_INTERVAL_MS, () => this.pruneCaptures(), this.log);
  }

  onModuleInit(): void {
    if (this.runtime.config.captureRetentionDays > 0) this.job.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.job.stop();
  }

  /**
   * Deletes the captures past retention, a chunk at a time, unless another replica is at it.
   * @returns how many captures were deleted (0 when another replica holds the lock).
   */
  async pruneCaptures(): Promise<number> {
    const days = this.runtime.config.captureRetentionDays;
    if (days <= 0) return 0;
    let total = 0;
    while (!this.job.isStopped) {
      const deleted = await this.db.transaction(async (manager) => {
        const [lock] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [
          RETENTION_LOCK,
        ])) as Array<{ locked: boolean }>;
        if (!lock?.locked) return -1;
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
          [days, RETENTION_CHUNK],
        )) as Array<{ deleted: number }>;
        return result?.deleted ?? 0;
      });
      if (deleted < 0) break;
      total += deleted;
      if (deleted < RETENTION_CHUNK) break;
    }
    if (total > 0) this.log.info({ deleted: total, retentionDays: days }, 'deleted captures past retention');
    return total;
  }
}
