import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AgentEnvironment } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';
import { DomainError, ErrorCode } from '../common/errors';
import { FoldsBeforeRead, type FoldProject } from '../common/folds-before-read';
import { PeriodicJob } from '../common/periodic';
import { connectDataSource, createDataSource, openConnections } from '../database/data-source';
import { RUNTIME, type Runtime } from '../config/runtime';
import { ConsumersService, type QueuedConsumers } from '../consumers/consumers.service';
import { EvidenceService, type QueuedFoldListener } from '../evidence/evidence.service';
import { FoldStatistics } from './fold-statistics';
import type { RuntimeMinute } from '../runtime/runtime.repository';
import { MetricsService } from '../health/metrics.service';
import { RuntimeService } from '../runtime/runtime.service';
import type { EventProject } from '../webhooks/notifier';

/** How long a `capture-ended` waits at most for the evidence's fold (it is durable anyway). */
export const SETTLE_MS = 5_000;
/**
 * How long a gate's read (`readFolded`) waits at most for its row's queued batches to be folded
 * before it answers 503 (ask again): under the 30 s the CI gate's check waits for an answer.
 */
export const READ_FOLD_MS = 20_000;
/**
 * How soon a fold is tried again while another transaction holds the row, doubling after each try
 * up to BUSY_RETRY_MAX_MS: a fold on the other replica takes seconds under load, and each try is a
 * transaction of the folds' pool and a read of the app's.
 */
const BUSY_RETRY_MS = 20;
const BUSY_RETRY_MAX_MS = 320;
/** How often each replica looks for batches queued and not folded (another replica stopped, a fold failed). */
const SWEEP_INTERVAL_MS = 1_000;
/**
 * How long a batch waits for its row's fold after its commit, gathering what the build's other
 * pods (or the CI run's other batches) send meanwhile: acks do not wait for the fold (a CI
 * capture's end hurries it), and a fold's statements cost about the same for one batch as for
 * fifty (the rows it writes are the distinct endpoints and minutes), so a row folds about once
 * per interval on the whole deployment instead of once per batch or two (issue 20). The
 * dashboard still hears of a step within GATHER_MS and a fold.
 */
export const GATHER_MS = 500;
/** Batches queued this long are left to whichever replica's sweep finds them. */
const SWEEP_AGE_SECONDS = 2;
/**
 * Database connections of a replica's folds, a pool of their own: a fold holds its connection for
 * its whole transaction (seconds for a production row's 60 batches under load), and on the app's
 * pool (10) batches' commits waited behind them (issue 20). More folds at once wait here, in Node.
 */
export const FOLD_POOL_SIZE = 4;

/** A row's folds on this replica: one at a time, each covering the waiters that came before it started. */
interface RowFolds {
  running: boolean;
  /**
   * Each waiter's last queued batch (`evidence_queue.id`: it waits for the row's batches up to it;
   * null: a sweep, waiting for nothing in particular), when it came (`performance.now()`), whether
   * it needs the fold at once, and how to tell it.
   */
  waiting: Array<{ upTo: string | null; since: number; urgent: boolean; resolve: () => void }>;
  /** Ends the wait before the next fold (set while it gathers). */
  wake: (() => void) | null;
}

/**
 * Folds queued evidence (issue 20): after an evidence batch commits, a fold of its row begins (or
 * the one running is followed by another). Acks come at commit; `capture-ended` waits for
 * `settleEnded` (at most SETTLE_MS): until none of the row's batches queued before the end is left,
 * whichever replica folds them, so an agent that has it knows its evidence is in the matrix, the
 * steps and the runtime figures. On one replica a
 * row has one fold at a time, and every batch committed meanwhile waits for the next one, which
 * takes them all (up to FOLD_LIMIT and FOLD_BYTES per transaction), beginning GATHER_MS after the oldest of them
 * committed unless one is urgent (a CI capture's end), and folding nothing when another replica's fold
 * took them meanwhile; across replicas the row's lock decides
 * (`SKIP LOCKED`: a replica that finds it taken tries again shortly, never waiting in PostgreSQL).
 * Every second each replica folds rows whose batches were queued for more than two seconds.
 */
@Injectable()
export class EvidenceFolder implements OnModuleInit, OnModuleDestroy {
  private readonly rows = new Map<string, RowFolds>();
  private readonly log: Logger;
  private readonly sweeping: PeriodicJob;
  private readonly foldAlso: (projectId: string) => QueuedFoldListener;
  /** The folds' own pool (FOLD_POOL_SIZE connections). */
  private readonly pool: DataSource;
  /** Folds running (`run`), awaited before the pool closes. */
  private readonly running = new Set<Promise<void>>();
  /** Whether the folds' pool is closing (no fold begins then). */
  private closed = false;
  /** Ends the waits of folds gathering (`gathering`), when the replica stops. */
  private readonly stopping = new Set<() => void>();
  /** The fold tables' first statistics, taken after the first folds (fold-statistics.ts). */
  private readonly statistics: FoldStatistics;

  constructor(
    private readonly evidence: EvidenceService,
    runtimeEvidence: RuntimeService,
    consumers: ConsumersService,
    @Inject(RUNTIME) private readonly runtime: Runtime,
    private readonly metrics: MetricsService,
    private readonly foldsBeforeRead: FoldsBeforeRead = new FoldsBeforeRead(),
  ) {
    this.pool = createDataSource(runtime.databaseUrl, {
      poolSize: FOLD_POOL_SIZE,
      applicationName: 'spectator-backend-folds',
      idleSeconds: runtime.config.databaseIdleSeconds,
    });
    this.log = runtime.log.child({ module: 'evidence-folder' });
    this.statistics = new FoldStatistics(this.pool, this.log);
    this.sweeping = new PeriodicJob('folding queued evidence', SWEEP_INTERVAL_MS, () => this.sweep(), this.log);
    // Runtime minutes and consumer days are queued with the evidence, as their modules made them;
    // folded as the fold takes them, each batch's lists unpacked in its turn, written in its transaction.
    this.foldAlso = (projectId) => () => {
      const minutes = runtimeEvidence.recordFolded(projectId);
      const days = consumers.recordFolded(projectId);
      return {
        add: (batch) => {
          minutes.add(batch.minutes as unknown as readonly RuntimeMinute[]);
          days.add(batch.consumers as unknown as readonly QueuedConsumers[]);
        },
        write: async (manager, row) => {
          await minutes.write(manager, row);
          await days.write(manager, row);
        },
      };
    };
  }

  async onModuleInit(): Promise<void> {
    await connectDataSource(this.pool, this.runtime.databaseUrl, "the folds' pool");
    if (this.runtime.config.openPoolsAtStart) await openConnections(this.pool, this.log, "the folds' pool");
    this.sweeping.start();
    this.foldsBeforeRead.provide((project, environment) => this.readFolded(project, environment));
  }

  async onModuleDestroy(): Promise<void> {
    await this.sweeping.stop();
    for (const wake of this.stopping) wake();
    // A fold stopped now is rolled back and left queued (another replica's sweep, or this one's after a restart, takes it).
    await Promise.all(this.running);
    this.closed = true;
    if (this.pool.isInitialized) await this.pool.destroy();
  }

  /** Runs a fold's transaction on the folds' pool. */
  private readonly transaction = <T>(work: (manager: EntityManager) => Promise<T>): Promise<T> =>
    this.pool.transaction(work);

  /**
   * Resolves once a fold of row `rowId` that began after this call has ended, or the row's queued
   * batches up to `upTo` were folded by another replica (so a batch queued before the call is
   * folded, unless that fold failed), or after SETTLE_MS. The fold begins GATHER_MS after the oldest
   * batch waiting for it.
   */
  async settle(project: EventProject, rowId: string, upTo: string | null = null): Promise<void> {
    const started = performance.now();
    const inTime = await this.waitForFold(project, rowId, upTo, false);
    if (upTo === null) return;
    this.metrics.evidenceFoldSeconds.inc((performance.now() - started) / 1000);
    this.metrics.evidenceBatches.inc();
    if (!inTime) this.metrics.foldWaitsTimedOut.inc();
  }

  /**
   * A capture's end: resolves once none of row `rowId`'s batches queued up to now is left, on
   * this replica's folds or another's, or after SETTLE_MS. `urgent` (a CI run's end, whose gate
   * reads next) begins the fold at once instead of after GATHER_MS.
   * @returns whether none of those batches is left queued (nothing queued counts as folded): a
   * round that ended at SETTLE_MS with the row still held, or a failed fold, leaves them queued.
   */
  async settleEnded(project: EventProject, rowId: string, urgent: boolean): Promise<boolean> {
    const upTo = await this.evidence.lastQueued(project.id, rowId);
    if (upTo === null) return true;
    await this.waitForFold(project, rowId, upTo, urgent);
    return !(await this.evidence.anyQueued(project.id, rowId, upTo));
  }

  /**
   * Before a gate reads `environment`'s evidence: resolves once none of its row's batches queued
   * up to now is left, folding them at once (here, or seen folded by another replica), however long
   * a backlog or a held row delays that, up to READ_FOLD_MS. So the CI gate never reads a pull
   * request's evidence short, even when the agent's stop got its `capture-ended` unfolded (after
   * SETTLE_MS) or gave up waiting for it.
   * @throws DomainError FoldPending when batches are still queued after READ_FOLD_MS.
   */
  async readFolded(project: FoldProject, environment: AgentEnvironment): Promise<void> {
    const rowId = await this.evidence.existingRowIdOf(project.id, environment);
    if (rowId === null) return;
    const upTo = await this.evidence.lastQueued(project.id, rowId);
    if (upTo === null) return;
    this.metrics.readsWaitingForFolds.inc();
    const deadline = performance.now() + READ_FOLD_MS;
    let retryMs = BUSY_RETRY_MS;
    // Each round folds the row (or waits for another replica's fold) for up to SETTLE_MS; a round
    // that left the batches queued (the row held meanwhile, or a fold failed) is followed by another.
    while (!this.closed && performance.now() < deadline) {
      if (!(await this.waitForFold(project, rowId, upTo, true))) continue;
      if (!(await this.evidence.anyQueued(project.id, rowId, upTo))) return;
      await new Promise((resolve) => setTimeout(resolve, retryMs));
      retryMs = Math.min(retryMs * 2, BUSY_RETRY_MAX_MS);
    }
    if (!(await this.evidence.anyQueued(project.id, rowId, upTo))) return;
    this.metrics.readsUnfolded.inc();
    throw new DomainError(
      ErrorCode.FoldPending,
      `this environment's evidence is still being folded (batches queued for over ${READ_FOLD_MS / 1000} s); ask again`,
    );
  }

  private async waitForFold(
    project: EventProject,
    rowId: string,
    upTo: string | null,
    urgent: boolean,
  ): Promise<boolean> {
    let folds = this.rows.get(rowId);
    if (folds === undefined) this.rows.set(rowId, (folds = { running: false, waiting: [], wake: null }));
    let timer: NodeJS.Timeout | undefined;
    const folded = new Promise<boolean>((resolve) =>
      folds.waiting.push({ upTo, since: performance.now(), urgent, resolve: () => resolve(true) }),
    );
    if (urgent) folds.wake?.();
    if (!folds.running) this.track(this.run(project, rowId, folds));
    const inTime = await Promise.race([
      folded,
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), SETTLE_MS))),
    ]);
    clearTimeout(timer);
    return inTime;
  }

  /** Work of this replica's folds, awaited before the pool closes (`running`). */
  private track(work: Promise<void>): void {
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }

  /**
   * Folds while batches wait on this replica; each round covers the waiters that came before it
   * and begins GATHER_MS after the oldest of them came (at once for an urgent waiter, or while
   * stopping). A round whose batches another replica's fold took meanwhile folds nothing.
   */
  private async run(project: EventProject, rowId: string, folds: RowFolds): Promise<void> {
    folds.running = true;
    while (folds.waiting.length > 0) {
      const urgent = await this.gathering(folds);
      const covered = folds.waiting.splice(0);
      const upTo = lastOf(covered.map((waiter) => waiter.upTo));
      // A sweep's round (no batch of its own) folds whatever is queued.
      const taken =
        !urgent &&
        upTo !== null &&
        covered.every((waiter) => waiter.upTo !== null) &&
        !(await this.evidence.anyQueued(project.id, rowId, upTo).catch(() => true));
      if (!taken) await this.foldAll(project, rowId, upTo);
      for (const { resolve } of covered) resolve();
    }
    folds.running = false;
    this.rows.delete(rowId);
  }

  /**
   * Waits until GATHER_MS after the oldest waiter came, or an urgent one comes, or the replica stops.
   * @returns whether a waiter is urgent.
   */
  private async gathering(folds: RowFolds): Promise<boolean> {
    const urgent = (): boolean => folds.waiting.some((waiter) => waiter.urgent);
    const left = (folds.waiting[0]?.since ?? 0) + GATHER_MS - performance.now();
    if (left <= 0 || this.sweeping.isStopped || urgent()) return urgent();
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      folds.wake = resolve;
      this.stopping.add(resolve);
      timer = setTimeout(resolve, left);
    });
    clearTimeout(timer);
    if (folds.wake !== null) this.stopping.delete(folds.wake);
    folds.wake = null;
    return urgent();
  }

  /**
   * Folds the row until nothing queued before is left, the row stays busy for SETTLE_MS, or a fold
   * fails. While another transaction holds the row (a fold on another replica takes every batch
   * queued for it), it is done once none of the row's batches up to `upTo` is queued.
   */
  private async foldAll(project: EventProject, rowId: string, upTo: string | null): Promise<void> {
    const deadline = Date.now() + SETTLE_MS;
    let retryMs = BUSY_RETRY_MS;
    for (;;) {
      let folded: { folded: number; left: boolean } | 'busy';
      try {
        if (this.closed) return;
        folded = await this.evidence.foldQueued(project, rowId, this.foldAlso(project.id), this.transaction);
      } catch (error) {
        // Left queued: a later fold or the sweep takes it.
        this.log.warn({ err: error, rowId }, 'folding queued evidence failed');
        return;
      }
      if (folded !== 'busy' && folded.folded > 0) {
        // Outside the fold's transaction, beside the next folds (awaited before the pool closes).
        this.track(this.statistics.afterFold());
      }
      if (folded === 'busy') {
        if (Date.now() > deadline || this.sweeping.isStopped) return;
        if (upTo !== null && !(await this.evidence.anyQueued(project.id, rowId, upTo).catch(() => true))) return;
        await new Promise((resolve) => setTimeout(resolve, retryMs));
        retryMs = Math.min(retryMs * 2, BUSY_RETRY_MAX_MS);
        continue;
      }
      if (!folded.left) return;
    }
  }

  /** Folds the rows whose batches have waited too long. */
  private async sweep(): Promise<void> {
    for (const { projectId, slug, rowId } of await this.evidence.queuedRows(SWEEP_AGE_SECONDS, 100)) {
      if (this.sweeping.isStopped) return;
      await this.settle({ id: projectId, slug }, rowId);
    }
  }
}

/** The highest of queued batch ids (bigint texts), null when there is none; null ids (sweeps) count for nothing. */
function lastOf(ids: ReadonlyArray<string | null>): string | null {
  let last: bigint | null = null;
  for (const id of ids) if (id !== null && (last === null || BigInt(id) > last)) last = BigInt(id);
  return last === null ? null : last.toString();
}
