import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { PeriodicJob } from '../common/periodic';
import { RUNTIME, type Runtime } from '../config/runtime';
import { RetentionRepository } from './retention.repository';

/** How often a replica looks for captures past their retention. */
const RETENTION_INTERVAL_MS = 60 * 60 * 1000;
/** Captures deleted per statement (with their observations), so no run holds one long transaction. */
const RETENTION_CHUNK = 50;
/** Agents deleted per statement (with their connections). */
const AGENTS_CHUNK = 1_000;

/**
 * Deletes captures nobody needs any more, then agents not seen within the retention (hourly, one
 * replica at a time). Captures: those whose last traffic is older than `captureRetentionDays`,
 * with their observations and summaries. A week whose every capture is past retention goes whole:
 * its partition of observations is dropped and its captures deleted; a capture of a week kept for
 * others is deleted row by row. Never the newest capture of an agent seen within the retention (it
 * may still be streaming into it). Evidence (the versions matrix, proposal steps) is kept apart and
 * stays; a proposal or step that named a deleted capture keeps everything but the link.
 * Agents: those not seen within `captureRetentionDays` go with their connections (a pod's process
 * without a spool is a new agent each time). `captureRetentionDays` 0 keeps captures and agents
 * forever. The weekly partitions are made ahead by partitions/.
 */
@Injectable()
export class RetentionService implements OnModuleInit, OnModuleDestroy {
  private readonly log: Logger;
  private readonly job: PeriodicJob;

  constructor(
    private readonly retention: RetentionRepository,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    this.log = runtime.log.child({ module: 'retention' });
    this.job = new PeriodicJob('retention', RETENTION_INTERVAL_MS, () => this.prune(), this.log);
  }

  onModuleInit(): void {
    this.job.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.job.stop();
  }

  /**
   * The hourly run: captures past retention first, then the agents not seen within it.
   * @returns how many of each were deleted.
   */
  async prune(): Promise<{ captures: number; agents: number }> {
    const captures = await this.pruneCaptures();
    return { captures, agents: await this.pruneAgents() };
  }

  /**
   * Deletes the captures past retention unless another replica is at it: first whole weeks (their
   * partition of observations dropped), then the rest a chunk at a time.
   * @returns how many captures were deleted (0 when another replica holds the lock).
   */
  async pruneCaptures(): Promise<number> {
    const days = this.runtime.config.captureRetentionDays;
    if (days <= 0) return 0;
    let total = 0;
    for (const partition of await this.retention.expiredPartitions(days)) {
      if (this.job.isStopped) return total;
      const outcome = await this.retention.dropPartition(partition, days);
      if (outcome === null) return total;
      if (outcome.dropped) {
        this.log.info({ partition: partition.name, deleted: outcome.deleted }, 'dropped a week of observations');
        total += outcome.deleted;
      }
    }
    total += await this.inChunks(RETENTION_CHUNK, () => this.retention.deleteStaleCaptures(days, RETENTION_CHUNK));
    if (total > 0) this.log.info({ deleted: total, retentionDays: days }, 'deleted captures past retention');
    return total;
  }

  /**
   * Deletes the agents not seen within the retention (after their captures, which go first),
   * a chunk at a time, unless another replica is at it.
   * @returns how many agents were deleted.
   */
  async pruneAgents(): Promise<number> {
    const days = this.runtime.config.captureRetentionDays;
    if (days <= 0) return 0;
    const total = await this.inChunks(AGENTS_CHUNK, () => this.retention.deleteStaleAgents(days, AGENTS_CHUNK));
    if (total > 0) this.log.info({ deleted: total, retentionDays: days }, 'deleted agents not seen within retention');
    return total;
  }

  /**
   * Deletes a chunk at a time until one deletes fewer than `chunk`, another replica holds the
   * lock (`null`), or the job stops.
   * @returns how many were deleted.
   */
  private async inChunks(chunk: number, deleteChunk: () => Promise<number | null>): Promise<number> {
    let total = 0;
    while (!this.job.isStopped) {
      const deleted = await deleteChunk();
      if (deleted === null) break;
      total += deleted;
      if (deleted < chunk) break;
    }
    return total;
  }
}
