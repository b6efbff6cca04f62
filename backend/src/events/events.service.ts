import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DashboardEvent } from '@spectator/shared';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { RUNTIME, type Runtime } from '../runtime';

/** The PostgreSQL channel that carries dashboard events between replicas. */
export const EVENTS_CHANNEL = 'spectator_events';

/** How often per capture at most a `capture.updated` goes out (ms): batches can arrive many per second. */
const CAPTURE_UPDATE_INTERVAL_MS = 500;

type Listener = (event: DashboardEvent) => void;

/**
 * Dashboard events across replicas: published with `pg_notify`, received on every replica by a
 * dedicated LISTEN connection, and handed to the dashboards connected to that replica.
 */
@Injectable()
export class EventsService implements OnModuleInit, OnModuleDestroy {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly pendingCaptureUpdates = new Map<string, NodeJS.Timeout>();
  private client: pg.Client | null = null;
  private closed = false;
  private reconnectDelayMs = 200;
  private readonly log: Logger;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(RUNTIME) private readonly runtime: Runtime,
  ) {
    this.log = runtime.log.child({ module: 'events' });
  }

  async onModuleInit(): Promise<void> {
    await this.listen();
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    for (const timer of this.pendingCaptureUpdates.values()) clearTimeout(timer);
    this.pendingCaptureUpdates.clear();
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  /** Sends an event to the dashboards of a project on every replica. Never throws. */
  async publish(projectId: string, event: DashboardEvent): Promise<void> {
    // Shutting down: connections closing now (agents' disconnects) must not race the database pool closing.
    if (this.closed) return;
    try {
      await this.db.query('SELECT pg_notify($1, $2)', [EVENTS_CHANNEL, JSON.stringify({ projectId, event })]);
    } catch (error) {
      this.log.warn({ err: error, type: event.type }, 'event not published');
    }
  }

  /** A `capture.updated`, coalesced per capture so a busy agent does not flood dashboards. */
  captureChanged(projectId: string, captureId: string): void {
    if (this.closed || this.pendingCaptureUpdates.has(captureId)) return;
    const timer = setTimeout(() => {
      this.pendingCaptureUpdates.delete(captureId);
      void this.publish(projectId, { type: 'capture.updated', captureId });
    }, CAPTURE_UPDATE_INTERVAL_MS);
    timer.unref();
    this.pendingCaptureUpdates.set(captureId, timer);
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
    const client = new pg.Client({ connectionString: this.runtime.databaseUrl, application_name: 'spectator-backend-events' });
    client.on('notification', (message) => this.dispatch(message.payload));
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'event listener connection lost');
      this.scheduleReconnect(client);
    });
    client.on('end', () => this.scheduleReconnect(client));
    await client.connect();
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    this.client = client;
    this.reconnectDelayMs = 200;
  }

  private scheduleReconnect(lost: pg.Client): void {
    if (this.closed || this.client !== lost) return;
    this.client = null;
    const delay = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, 10_000);
    setTimeout(() => {
      if (!this.closed) this.listen().catch((error: unknown) => {
        this.log.warn({ err: error }, 'event listener reconnect failed');
        this.client = lost;
        this.scheduleReconnect(lost);
      });
    }, delay).unref();
  }

  private dispatch(payload: string | undefined): void {
    if (payload === undefined) return;
    let parsed: { projectId: string; event: DashboardEvent };
    try {
      parsed = JSON.parse(payload) as { projectId: string; event: DashboardEvent };
    } catch {
      return;
    }
    for (const listener of this.listeners.get(parsed.projectId) ?? []) {
      try {
        listener(parsed.event);
      } catch (error) {
        this.log.warn({ err: error }, 'event listener failed');
      }
    }
  }
}
