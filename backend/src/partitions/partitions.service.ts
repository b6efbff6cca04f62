import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { PeriodicJob } from '../common/periodic';
import { RUNTIME, type Runtime } from '../config/runtime';
import {
  PARTITIONED_TABLES,
  type PartitionedTable,
  partitionsAhead,
  partitionsCovering,
  type RangePartition,
} from './partitions';
import { PartitionsRepository } from './partitions.repository';

/** How often each replica makes the coming partitions. */
const PARTITIONS_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Makes the partitions of every table partitioned by time (partitions/partitions.ts) ahead of
 * time: the current period's and the next two's, at start (awaited, before the backend serves:
 * batches need them) and then every hour, on every replica (one at a time; each finds what another
 * made). Dropping stays with each table's retention (retention/, runtime/).
 */
@Injectable()
export class PartitionsService implements OnModuleInit, OnModuleDestroy {
  private readonly log: Logger;
  private readonly job: PeriodicJob;

  constructor(
    private readonly repository: PartitionsRepository,
    @Inject(RUNTIME) runtime: Runtime,
  ) {
    this.log = runtime.log.child({ module: 'partitions' });
    this.job = new PeriodicJob('making the coming partitions', PARTITIONS_INTERVAL_MS, () => this.keep(), this.log);
  }

  /**
   * Makes the coming partitions before the backend serves: made later, a batch of this week
   * would find no partition of observations, and the first folds would write runtime rows into a
   * default partition while it is attached (such a fold fails and waits for the sweep; session
   * 12's final CI read a story's counts in that gap). A failure is logged; the hourly run retries.
   */
  async onModuleInit(): Promise<void> {
    try {
      await this.keep();
    } catch (error) {
      // The catalogue could not be read: the hourly run tries again.
      this.log.warn({ err: error }, 'making the coming partitions at start failed');
    }
    this.job.start(PARTITIONS_INTERVAL_MS);
  }

  async onModuleDestroy(): Promise<void> {
    await this.job.stop();
  }

  /** Makes the partitions of `now`'s period and the next two of every table where missing. @returns those made. */
  keep(now = new Date()): Promise<string[]> {
    return this.make(PARTITIONED_TABLES, (table) => partitionsAhead(table, now));
  }

  /** Makes the partitions of `tables` holding the times from `from` to `to` (both included) where missing. @returns those made. */
  cover(tables: readonly PartitionedTable[], from: Date, to: Date): Promise<string[]> {
    return this.make(tables, (table) => partitionsCovering(table, from, to));
  }

  /** Makes the `wanted` partitions of each table that are missing; one that fails (a lock not had in time) is logged and tried at the next run. */
  private async make(
    tables: readonly PartitionedTable[],
    wanted: (table: PartitionedTable) => RangePartition[],
  ): Promise<string[]> {
    const made: string[] = [];
    for (const table of tables) {
      const stored = new Set((await this.repository.stored(table.parent)).map((p) => p.name));
      for (const partition of wanted(table)) {
        if (stored.has(partition.name)) continue;
        try {
          if (await this.repository.add(table, partition)) made.push(partition.name);
        } catch (error) {
          this.log.warn(
            { err: error, partition: partition.name },
            'could not make a partition; the next run tries again',
          );
        }
      }
    }
    if (made.length > 0) this.log.info({ made }, 'made partitions');
    return made;
  }
}
