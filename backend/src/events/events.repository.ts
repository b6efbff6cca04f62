import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DashboardEvent } from '@spectator/shared';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../common/queryable';

/** The PostgreSQL channel that carries dashboard events between replicas (as ids, see `publishEvent`). */
export const EVENTS_CHANNEL = 'spectator_events';

/** A stored dashboard event as notified: its id, project and JSON text. */
export interface StoredEvent {
  id: string;
  projectId: string;
  event: string;
}

/**
 * Publishes a dashboard event through `runner` (a transaction's manager: delivered at its commit,
 * dropped on rollback). The event is stored in `dashboard_events` and only its id is notified:
 * PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more ("payload string too long"), which a
 * documentation commit of a few hundred endpoint ids exceeds. Listeners read the event back by id.
 */
export function publishEvent(runner: Queryable, projectId: string, event: DashboardEvent): Promise<void> {
  return publishEvents(runner, [{ projectId, event }]);
}

/**
 * Publishes events through `runner` as `publishEvent` does, in one statement, in the order given
 * (their ids, and so their notifications, follow it): a transaction that emits hundreds (a new
 * build's first fold, a version for each endpoint) makes one round trip, not one per event.
 */
export async function publishEvents(
  runner: Queryable,
  events: ReadonlyArray<{ projectId: string; event: DashboardEvent }>,
): Promise<void> {
  if (events.length === 0) return;
  await runner.query(
    `WITH stored AS (
       INSERT INTO dashboard_events (project_id, event)
       SELECT e.project_id, e.event FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS e(project_id, event, n) ORDER BY e.n
       RETURNING id)
     SELECT pg_notify($3, stored.id::text) FROM stored ORDER BY stored.id`,
    [events.map((e) => e.projectId), events.map((e) => JSON.stringify(e.event)), EVENTS_CHANNEL],
  );
}

/**
 * The SQL of dashboard events (`dashboard_events` and their channel), raw SQL in one style.
 * Writers that publish inside their own transaction use `publishEvent` with its manager.
 */
@Injectable()
export class EventsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Stores an event and notifies its id, on its own (see `publishEvent`). */
  publish(projectId: string, event: DashboardEvent): Promise<void> {
    return publishEvent(this.db, projectId, event);
  }

  /**
   * Stores events and notifies their ids in one transaction (one statement): PostgreSQL takes its
   * notification queue's lock once per committing transaction that notified, so many events cost
   * one turn at it, not one each.
   */
  publishAll(events: ReadonlyArray<{ projectId: string; event: DashboardEvent }>): Promise<void> {
    return publishEvents(this.db, events);
  }

  /** Deletes the stored events older than `retention` (an interval every replica has read them within). */
  async prune(retention: string): Promise<void> {
    await this.db.query('DELETE FROM dashboard_events WHERE created_at < now() - $1::interval', [retention]);
  }

  /** The stored events of some ids (those still stored), in no order. */
  byIds(ids: readonly string[]): Promise<StoredEvent[]> {
    return this.db.query(
      'SELECT id::text AS id, project_id AS "projectId", event FROM dashboard_events WHERE id = ANY($1::bigint[])',
      [ids],
    );
  }

  /** Makes `client`, a dedicated connection, receive the notifications of `EVENTS_CHANNEL`. */
  async listen(client: pg.Client): Promise<void> {
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
  }
}
