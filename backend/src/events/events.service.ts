import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DashboardEvent } from '@spectator/shared';
import pg from 'pg';
import type { Logger } from 'pino';
import { PeriodicJob } from '../common/periodic';
import { RUNTIME, type Runtime } from '../config/runtime';
import { EventsRepository, publishEvent, publishEvents, type StoredEvent } from './events.repository';

// Writers that publish inside their own transaction (a transaction's manager) call it from here, the events' service.
export { publishEvent, publishEvents };

/**
 * How often a replica sends the `capture.updated` events due (ms): each capture at most once per
 * interval, all of them in one transaction (batches of hundreds of agents arrive many per second).
 */
const CAPTURE_UPDATE_INTERVAL_MS = 500;

/** Stored events older than this are deleted: every replica has read them long before. */
const EVENT_RETENTION = '5 minutes';
const PRUNE_INTERVAL_MS = 60_000;

type Listener = (event: DashboardEvent) => void;

/**
 * Dashboard events across replicas: stored and their ids notified (`publishEvent`), received on
 * every replica by a dedicated LISTEN connection, read back in the order notified, and handed to
 * the dashboards connected to that replica.
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
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  /** Sends an event to the dashboards of a project on every replica. Never throws. */
  async publish(projectId: string, event: DashboardEvent): Promise<void> {
    // Shutting down: connections closing now (agents' disconnects) must not race the database pool closing.
    if (this.closed) return;
    try {
      await this.events.publish(projectId, event);
    } catch (error) {
      this.log.warn({ err: error, type: event.type }, 'event not published');
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
   * the same transaction, in the order given: for events many agents cause at once, such as
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

  /** Sends the events due (`publishSoon`'s, then the `capture.updated` ones) in one transaction. Never throws. */
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
      await this.events.publishAll(due);
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
