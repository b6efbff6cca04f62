import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { publishEvent } from '../events/events.service';
import { toDashboardEvent, type TransitionEvent, type WebhookBody } from './transition-events';
import { WebhooksRepository } from './webhooks.repository';

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

  constructor(private readonly webhooks: WebhooksRepository) {}

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
    const queued = await this.webhooks.queue(project.id, { id, type: event.type, body: JSON.stringify(body) }, manager);
    if (queued > 0) for (const wake of this.wakeListeners) wake();
  }

  /** Called (soon, maybe before the commit) when deliveries were queued on this replica. */
  onQueued(listener: () => void): () => void {
    this.wakeListeners.add(listener);
    return () => this.wakeListeners.delete(listener);
  }
}
