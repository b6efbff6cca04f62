import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { publishEvent } from '../events/events.service';
import { toDashboardEvent, type TransitionEvent, type WebhookBody } from './transition-events';

/** The project an event belongs to. */
export interface EventProject {
  id: string;
  slug: string;
}

/**
 * Emits transition events inside the transaction that caused them: the dashboard notification
 * (`publishEvent`: delivered at commit, and dropped on rollback) and one pending delivery per
 * webhook of the project, so a delivery exists exactly when the transition was committed.
 */
@Injectable()
export class Notifier {
  private readonly wakeListeners = new Set<() => void>();

  async emit(manager: EntityManager, project: EventProject, event: TransitionEvent): Promise<void> {
    await publishEvent(manager, project.id, toDashboardEvent(event));
    const id = randomUUID();
    const body: WebhookBody = {
      id,
      type: event.type,
      project: project.slug,
      occurredAt: new Date().toISOString(),
      data: event,
    };
    const inserted = (await manager.query(
      `INSERT INTO webhook_deliveries (webhook_id, event_id, event_type, body)
       SELECT w.id, $2, $3, $4 FROM webhooks w WHERE w.project_id = $1 RETURNING id`,
      [project.id, id, event.type, JSON.stringify(body)],
    )) as unknown[];
    if (inserted.length > 0) for (const wake of this.wakeListeners) wake();
  }

  /** Called (soon, maybe before the commit) when deliveries were queued on this replica. */
  onQueued(listener: () => void): () => void {
    this.wakeListeners.add(listener);
    return () => this.wakeListeners.delete(listener);
  }
}
