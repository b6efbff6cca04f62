import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DashboardEvent } from '@spectator/shared';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DataSource, EntityManager, EntitySubscriberInterface, QueryRunner } from 'typeorm';
import { PeriodicJob } from '../common/periodic';
import { RUNTIME, type Runtime } from '../config/runtime';
import { EventsRepository, storeEvents, type StoredEvent } from './events.repository';

/**
 * How often a replica sends the `capture.updated` events due (ms): each capture at most once per
 * interval, all of them in one statement (batches of hundreds of agents arrive many per second).
 */
const CAPTURE_UPDATE_INTERVAL_MS = 500;

/** Stored events older than this are deleted: every replica has read them long before. */
const EVENT_RETENTION = '5 minutes';
const PRUNE_INTERVAL_MS = 60_000;

/**
 * How long a replica gathers the ids of events committed before it notifies them, all in one
 * statement (ms): PostgreSQL serialises the commits of notifying transactions on one lock, which
 * folds and ingest each took at their commit (issue 20: waits over 100 ms under load).
 */
const NOTIFY_INTERVAL_MS = 100;
/** Ids kept for the next try when notifying fails (PostgreSQL away), the newest; the rest are dropped. */
const MAX_UNNOTIFIED = 10_000;

type Published = ReadonlyArray<{ projectId: string; event: DashboardEvent }>;

type Listener = (event: DashboardEvent) => void;

/**
 * Dashboard events across replicas: stored (in the transaction that caused them, if any), their
 * ids notified after the commit by the replica that stored them (gathered for NOTIFY_INTERVAL_MS,
 * one statement), received on every replica by a dedicated LISTEN connection, read back in the
 * order notified, and handed to the dashboards connected to that replica.
 */
@Injectable()
export class EventsService implements OnModuleInit, OnModuleDestroy {
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Captures changed since the last `capture.updated` events went out, with their project. */
  private readonly pendingCaptureUpdates = new Map<string, string>();
  /** Events `publishSoon` was given since they last went out, in order. */
  private readonly pendingEvents: Array<{ projectId: string; event: DashboardEvent }> = [];
  private eventsDue: NodeJS.Timeout | null = null;
  private client: pg.Client | null = null;
  private closed = false;
  private reconnectDelayMs = 200;
  private readonly log: Logger;
  /** Ids notified and not read yet, in the order notified; `reading` reads them one batch at a time. */
  private notified: string[] = [];
  private reading: Promise<void> | null = null;
  private readonly pruning: PeriodicJob;
  /** Ids of committed events not notified yet, in commit order; `notifying` sends them. */
  private unnotified: string[] = [];
  private notifyDue: NodeJS.Timeout | null = null;
  private notifying: Promise<void> | null = null;
  /** Ids stored by transactions still open, notified when they commit (forgotten on rollback). */
  private readonly inTransaction = new WeakMap<QueryRunner, string[]>();
  /** Data sources whose commits this replica follows (the app's pool, the folds' pool). */
  private readonly followed = new Set<DataSource>();
  private readonly commits: EntitySubscriberInterface = {
    afterTransactionCommit: ({ queryRunner }) => {
      // A savepoint released is not the commit: the ids wait for the transaction's own.
      if (queryRunner.isTransactionActive) return;
      const ids = this.inTransaction.get(queryRunner);
      this.inTransaction.delete(queryRunner);
      if (ids !== undefined) this.notifySoon(ids);
    },
    afterTransactionRollback: ({ queryRunner }) => {
      if (!queryRunner.isTransactionActive) this.inTransaction.delete(queryRunner);
    },
  };

  constructor(
    private readonly events: EventsRepository,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    this.log = runtime.log.child({ module: 'events' });
    this.pruning = new PeriodicJob('pruning old dashboard events', PRUNE_INTERVAL_MS, () => this.prune(), this.log);
  }

  async onModuleInit(): Promise<void> {
    await this.listen();
    this.pruning.start();
  }

  /** Deletes stored events every replica has read long ago. */
  async prune(): Promise<void> {
    await this.events.prune(EVENT_RETENTION);
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    await this.pruning.stop();
    await this.reading;
    if (this.eventsDue !== null) clearTimeout(this.eventsDue);
    this.eventsDue = null;
    this.pendingCaptureUpdates.clear();
    this.pendingEvents.splice(0);
    for (const dataSource of this.followed) {
      const at = dataSource.subscribers.indexOf(this.commits);
      if (at !== -1) dataSource.subscribers.splice(at, 1);
    }
    this.followed.clear();
    // Events committed before the end are still notified (the pool closes after this).
    if (this.notifyDue !== null) clearTimeout(this.notifyDue);
    this.notifyDue = null;
    await this.notifying;
    await this.notifyNow();
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  /** Sends an event to the dashboards of a project on every replica. Never throws. */
  async publish(projectId: string, event: DashboardEvent): Promise<void> {
    // Shutting down: connections closing now (agents' disconnects) must not race the database pool closing.
    if (this.closed) return;
    try {
      this.notifySoon(await this.events.store([{ projectId, event }]));
    } catch (error) {
      this.log.warn({ err: error, type: event.type }, 'event not published');
    }
  }

  /**
   * Publishes events inside the transaction of `manager`, in the order given (one statement): stored
   * with it, and notified after its commit with the other events this replica committed meanwhile,
   * so the transaction itself notifies nothing. Dropped when it rolls back. Without a transaction
   * they are committed at once and notified the same way.
   */
  async publishWithin(manager: EntityManager, events: Published): Promise<void> {
    const ids = await storeEvents(manager, events);
    if (ids.length === 0) return;
    const transaction = manager.queryRunner;
    if (transaction === undefined || !transaction.isTransactionActive) {
      this.notifySoon(ids);
      return;
    }
    this.follow(manager.connection);
    const held = this.inTransaction.get(transaction);
    if (held === undefined) this.inTransaction.set(transaction, ids);
    else held.push(...ids);
  }

  /** Hears the commits of `dataSource`'s transactions (TypeORM subscriber) from now on. */
  private follow(dataSource: DataSource): void {
    if (this.followed.has(dataSource)) return;
    this.followed.add(dataSource);
    dataSource.subscribers.push(this.commits);
  }

  /** Ids of committed events, notified with the others due within NOTIFY_INTERVAL_MS. */
  private notifySoon(ids: readonly string[]): void {
    if (this.closed) return;
    this.unnotified.push(...ids);
    this.scheduleNotify();
  }

  private scheduleNotify(): void {
    if (this.closed || this.notifyDue !== null || this.notifying !== null || this.unnotified.length === 0) return;
    this.notifyDue = setTimeout(() => {
      this.notifyDue = null;
      this.notifying = this.notifyNow().finally(() => {
        this.notifying = null;
        this.scheduleNotify();
      });
    }, NOTIFY_INTERVAL_MS);
    this.notifyDue.unref();
  }

  /** Notifies the ids due in one statement; on failure keeps the newest MAX_UNNOTIFIED for the next try. Never throws. */
  private async notifyNow(): Promise<void> {
    const ids = this.unnotified.splice(0);
    if (ids.length === 0) return;
    try {
      await this.events.notify(ids);
    } catch (error) {
      this.unnotified.unshift(...ids);
      const dropped = this.unnotified.length - MAX_UNNOTIFIED;
      if (dropped > 0) this.unnotified.splice(0, dropped);
      this.log.warn({ err: error, events: ids.length, dropped: Math.max(0, dropped) }, 'dashboard events not notified');
    }
  }

  /**
   * A `capture.updated`, coalesced: once per capture per CAPTURE_UPDATE_INTERVAL_MS, and every
   * capture due on this replica in one transaction, so hundreds of agents streaming at once do not
   * each take PostgreSQL's notification lock (issue 20: the only lock waits over 100 ms left).
   */
  captureChanged(projectId: string, captureId: string): void {
    if (this.closed) return;
    this.pendingCaptureUpdates.set(captureId, projectId);
    this.publishDueSoon();
  }

  /**
   * An event sent with the next `capture.updated` events (within CAPTURE_UPDATE_INTERVAL_MS), in
   * the same statement, in the order given: for events many agents cause at once, such as
   * `agent.connection` when a Deployment's pods start or stop (issue 20: one transaction each
   * queued on PostgreSQL's notification lock). Never throws; dropped once the replica shuts down.
   */
  publishSoon(projectId: string, event: DashboardEvent): void {
    if (this.closed) return;
    this.pendingEvents.push({ projectId, event });
    this.publishDueSoon();
  }

  private publishDueSoon(): void {
    if (this.eventsDue !== null) return;
    this.eventsDue = setTimeout(() => {
      this.eventsDue = null;
      void this.publishDue();
    }, CAPTURE_UPDATE_INTERVAL_MS);
    this.eventsDue.unref();
  }

  /** Stores the events due (`publishSoon`'s, then the `capture.updated` ones) in one statement. Never throws. */
  private async publishDue(): Promise<void> {
    const due = [
      ...this.pendingEvents.splice(0),
      ...[...this.pendingCaptureUpdates].map(([captureId, projectId]) => ({
        projectId,
        event: { type: 'capture.updated', captureId } as const,
      })),
    ];
    this.pendingCaptureUpdates.clear();
    if (this.closed || due.length === 0) return;
    try {
      this.notifySoon(await this.events.store(due));
    } catch (error) {
      this.log.warn({ err: error, events: due.length }, 'dashboard events not published');
    }
  }

  /** Listens to a project's events on this replica; returns the unsubscribe function. */
  subscribe(projectId: string, listener: Listener): () => void {
    const set = this.listeners.get(projectId) ?? new Set<Listener>();
    set.add(listener);
    this.listeners.set(projectId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(projectId);
    };
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.runtime.databaseUrl,
      application_name: 'spectator-backend-events',
    });
    client.on('notification', (message) => this.dispatch(message.payload));
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'event listener connection lost');
      this.scheduleReconnect(client);
    });
    client.on('end', () => this.scheduleReconnect(client));
    await client.connect();
    await this.events.listen(client);
    this.client = client;
    this.reconnectDelayMs = 200;
  }

  private scheduleReconnect(lost: pg.Client): void {
    if (this.closed || this.client !== lost) return;
    this.client = null;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, 10_000);
    setTimeout(() => {
      if (!this.closed)
        this.listen().catch((error: unknown) => {
          this.log.warn({ err: error }, 'event listener reconnect failed');
          this.client = lost;
          this.scheduleReconnect(lost);
        });
    }, delay).unref();
  }

  /** A notification carries a stored event's id: queued, then read back (in order) and dispatched. */
  private dispatch(payload: string | undefined): void {
    if (payload === undefined || !/^\d+$/.test(payload)) return;
    this.notified.push(payload);
    this.reading ??= this.readNotified().finally(() => (this.reading = null));
  }

  /** Reads the notified events, a batch at a time, and hands each to its project's listeners. */
  private async readNotified(): Promise<void> {
    while (this.notified.length > 0 && !this.closed) {
      const ids = this.notified.splice(0, 500);
      let rows: StoredEvent[];
      try {
        rows = await this.events.byIds(ids);
      } catch (error) {
        this.log.warn({ err: error, events: ids.length }, 'notified events not read');
        continue;
      }
      const byId = new Map(rows.map((row) => [row.id, row]));
      for (const id of ids) {
        const row = byId.get(id);
        if (row === undefined) continue;
        let event: DashboardEvent;
        try {
          event = JSON.parse(row.event) as DashboardEvent;
        } catch {
          continue;
        }
        for (const listener of this.listeners.get(row.projectId) ?? []) {
          try {
            listener(event);
          } catch (error) {
            this.log.warn({ err: error }, 'event listener failed');
          }
        }
      }
    }
  }
}
