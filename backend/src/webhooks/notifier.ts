import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { RUNTIME, type Runtime } from '../config/runtime';
import { EventsService } from '../events/events.service';
import { formatBody } from './chat-formats';
import { toDashboardEvent, type TransitionEvent, type WebhookBody } from './transition-events';
import { WebhooksRepository } from './webhooks.repository';

/** The project an event belongs to. */
export interface EventProject {
  id: string;
  slug: string;
}

/**
 * Emits transition events inside the transaction that caused them: the dashboard event
 * (`EventsService.publishWithin`: delivered after the commit, dropped on rollback) and one pending delivery per
 * webhook of the project, so a delivery exists exactly when the transition was committed.
 */
@Injectable()
export class Notifier {
  private readonly wakeListeners = new Set<() => void>();

  /** The dashboard's public address, for links in chat messages (`SPECTATOR_PUBLIC_URL`). */
  private readonly publicUrl: string | null;

  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly events: EventsService,
    @Inject(RUNTIME) runtime: Runtime,
  ) {
    this.publicUrl = runtime.config.publicUrl;
  }

  emit(manager: EntityManager, project: EventProject, event: TransitionEvent): Promise<void> {
    return this.emitAll(manager, project, [event]);
  }

  /**
   * Emits events as `emit` does, in the order given, with one statement for their dashboard
   * events and one for their deliveries: a new build's first fold emits `version.changed` for
   * every endpoint it saw (issue 20: two round trips per event, in the fold's transaction).
   */
  async emitAll(manager: EntityManager, project: EventProject, events: readonly TransitionEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.events.publishWithin(
      manager,
      events.flatMap((event) => {
        const dashboardEvent = toDashboardEvent(event);
        return dashboardEvent === null ? [] : [{ projectId: project.id, event: dashboardEvent }];
      }),
    );
    const occurredAt = new Date().toISOString();
    const deliveries = events.map((event) => {
      const id = randomUUID();
      const body: WebhookBody = { id, type: event.type, project: project.slug, occurredAt, data: event };
      // Every format's body, so each webhook gets its own in the one INSERT (they are small: a few hundred bytes).
      const bodies = {
        json: formatBody('json', body, this.publicUrl),
        slack: formatBody('slack', body, this.publicUrl),
        teams: formatBody('teams', body, this.publicUrl),
      };
      return { id, type: event.type, bodies };
    });
    const queued = await this.webhooks.queue(project.id, deliveries, manager);
    if (queued > 0) for (const wake of this.wakeListeners) wake();
  }

  /** Called (soon, maybe before the commit) when deliveries were queued on this replica. */
  onQueued(listener: () => void): () => void {
    this.wakeListeners.add(listener);
    return () => this.wakeListeners.delete(listener);
  }
}
