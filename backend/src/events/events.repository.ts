import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DashboardEvent } from '@spectator/shared';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import { queryPrepared } from '../common/prepared';
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
 * Stores events through `runner` (a transaction's manager: kept only if it commits) in the order
 * given, in one statement, and returns their ids in that order. Only ids are notified (`notify`):
 * PostgreSQL refuses NOTIFY payloads of 8,000 bytes or more ("payload string too long"), which a
 * documentation commit of a few hundred endpoint ids exceeds. Listeners read the events back by id.
 */
export async function storeEvents(
  runner: Queryable,
  events: ReadonlyArray<{ projectId: string; event: DashboardEvent }>,
): Promise<string[]> {
  if (events.length === 0) return [];
  // Named: folds and batches store events all the time (parsed and planned every time unnamed).
  const rows = await queryPrepared<{ id: string }>(
    runner,
    'spectator_store_events',
    `INSERT INTO dashboard_events (project_id, event)
     SELECT e.project_id, e.event FROM unnest($1::uuid[], $2::text[]) WITH ORDINALITY AS e(project_id, event, n) ORDER BY e.n
     RETURNING id::text AS id`,
    [events.map((e) => e.projectId), events.map((e) => JSON.stringify(e.event))],
  );
  // Ids follow the insert's order (one sequence, one statement); sorted so they are notified in it.
  return rows.map((row) => row.id).sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The SQL of dashboard events (`dashboard_events` and their channel), raw SQL in one style.
 * Writers that publish inside their own transaction use `publishEvent` with its manager.
 */
@Injectable()
export class EventsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Stores events on their own (committed at once); returns their ids in order (see `storeEvents`). */
  store(events: ReadonlyArray<{ projectId: string; event: DashboardEvent }>): Promise<string[]> {
    return storeEvents(this.db, events);
  }

  /**
   * Notifies stored events' ids, in the order given, in one statement and so one transaction:
   * PostgreSQL serialises the commits of notifying transactions on one lock (held while the commit
   * is flushed), so a replica notifies what many transactions stored with one turn at it.
   */
  async notify(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query('SELECT pg_notify($1, t.id) FROM unnest($2::text[]) WITH ORDINALITY AS t(id, n) ORDER BY t.n', [
      EVENTS_CHANNEL,
      ids,
    ]);
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
