import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { WebhookDeliveryResponse, WebhookFormat } from '@spectator/shared';
import type { DataSource } from 'typeorm';
import type { Queryable } from '../common/queryable';
import { returningRows } from '../common/returning';

/** A registered webhook as listed (its secret is shown once, at registration). */
export interface WebhookRow {
  id: string;
  url: string;
  format: WebhookFormat;
  createdAt: Date;
  createdBy: string | null;
}

/** A delivery claimed for an attempt, with its webhook's URL and secret. */
export interface ClaimedDelivery {
  id: string;
  /** bigint, as text. */
  seq: string;
  webhookId: string;
  body: string;
  type: string;
  /** Attempts so far, this one included. */
  attempts: number;
  url: string;
  secret: string;
}

/** A delivery as its log lists it. */
export interface DeliveryRow {
  id: string;
  eventId: string;
  type: string;
  status: WebhookDeliveryResponse['status'];
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: Date;
  nextAttemptAt: Date;
  deliveredAt: Date | null;
}

/** The outcome of a failed attempt. */
export interface FailedAttempt {
  /** `failed` after the last attempt, else `pending` (tried again after `retryInMs`). */
  status: 'pending' | 'failed';
  /** The receiver's HTTP status, or null when it did not answer. */
  lastStatus: number | null;
  lastError: string;
  retryInMs: number;
}

/**
 * The SQL of webhooks and their deliveries (`webhooks`, `webhook_deliveries`), raw SQL in one
 * style. Deliveries are queued in the transaction of the transition they report (`manager`).
 */
@Injectable()
export class WebhooksRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** How many webhooks a project has. */
  async count(projectId: string): Promise<number> {
    const [row] = (await this.db.query('SELECT count(*)::int AS count FROM webhooks WHERE project_id = $1', [
      projectId,
    ])) as Array<{ count: number }>;
    return row?.count ?? 0;
  }

  /** Registers a webhook. @returns it as listed. */
  async insert(
    projectId: string,
    url: string,
    secret: string,
    createdBy: string,
    format: WebhookFormat = 'json',
  ): Promise<WebhookRow> {
    const [row] = (await this.db.query(
      'INSERT INTO webhooks (project_id, url, format, secret, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING id, url, format, created_at AS "createdAt", created_by AS "createdBy"',
      [projectId, url, format, secret, createdBy],
    )) as WebhookRow[];
    if (!row) throw new Error('webhook insert returned nothing');
    return row;
  }

  /** A project's webhooks, oldest first. */
  list(projectId: string): Promise<WebhookRow[]> {
    return this.db.query(
      'SELECT id, url, format, created_at AS "createdAt", created_by AS "createdBy" FROM webhooks WHERE project_id = $1 ORDER BY created_at, id',
      [projectId],
    );
  }

  /** Deletes a project's webhook and (by cascade) its deliveries. @returns its URL, or null when there was none. */
  async remove(projectId: string, id: string): Promise<string | null> {
    const [row] = await returningRows<{ url: string }>(
      this.db,
      'DELETE FROM webhooks WHERE id = $1 AND project_id = $2 RETURNING url',
      [id, projectId],
    );
    return row?.url ?? null;
  }

  /** Whether the project has a webhook with this id. */
  async exists(projectId: string, id: string): Promise<boolean> {
    const rows = (await this.db.query('SELECT 1 FROM webhooks WHERE id = $1 AND project_id = $2', [
      id,
      projectId,
    ])) as unknown[];
    return rows.length > 0;
  }

  /** A webhook's deliveries, newest first (at most `limit`). */
  deliveries(webhookId: string, limit: number): Promise<DeliveryRow[]> {
    return this.db.query(
      `SELECT id, event_id AS "eventId", event_type AS type, status, attempts, last_status AS "lastStatus", last_error AS "lastError",
              created_at AS "createdAt", next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt"
         FROM webhook_deliveries WHERE webhook_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [webhookId, limit],
    );
  }

  /**
   * Queues one pending delivery of each event per webhook of the project, in `manager`'s
   * transaction and one statement, each with the body of its webhook's format (none for a webhook
   * whose format's body is null).
   * @returns how many were queued.
   */
  async queue(
    projectId: string,
    events: ReadonlyArray<{ id: string; type: string; bodies: Readonly<Record<WebhookFormat, string | null>> }>,
    manager: Queryable,
  ): Promise<number> {
    if (events.length === 0) return 0;
    // A format whose body is null sends nothing for this event: its webhooks get no delivery.
    const inserted = (await manager.query(
      `INSERT INTO webhook_deliveries (project_id, webhook_id, event_id, event_type, body)
       SELECT project_id, id, event_id, event_type, body
         FROM (SELECT w.project_id, w.id, e.event_id, e.event_type, e.n,
                      CASE w.format WHEN 'slack' THEN e.slack WHEN 'teams' THEN e.teams ELSE e.json END AS body
                 FROM webhooks w
                 CROSS JOIN unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY
                            AS e(event_id, event_type, json, slack, teams, n)
                WHERE w.project_id = $1) AS w
        WHERE body IS NOT NULL
        ORDER BY n, id
       RETURNING id`,
      [
        projectId,
        events.map((e) => e.id),
        events.map((e) => e.type),
        events.map((e) => e.bodies.json),
        events.map((e) => e.bodies.slack),
        events.map((e) => e.bodies.teams),
      ],
    )) as unknown[];
    return inserted.length;
  }

  /**
   * Claims up to `limit` pending deliveries that are due and not leased, of webhooks other than
   * `skipWebhookIds`, oldest due first: counts the attempt and leases them for `leaseSeconds`
   * (`FOR UPDATE SKIP LOCKED`, so replicas claim different ones). Unsorted.
   */
  claimDue(limit: number, leaseSeconds: number, skipWebhookIds: readonly string[]): Promise<ClaimedDelivery[]> {
    return returningRows<ClaimedDelivery>(
      this.db,
      `UPDATE webhook_deliveries d SET attempts = d.attempts + 1, lease_until = now() + make_interval(secs => $2)
         FROM webhooks w
        WHERE w.project_id = d.project_id AND w.id = d.webhook_id
          AND d.id IN (SELECT id FROM webhook_deliveries
                        WHERE status = 'pending' AND next_attempt_at <= now() AND (lease_until IS NULL OR lease_until < now())
                          AND webhook_id <> ALL($3::uuid[])
                        ORDER BY next_attempt_at, seq LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING d.id, d.seq, d.webhook_id AS "webhookId", d.body, d.event_type AS type, d.attempts, w.url, w.secret`,
      [limit, leaseSeconds, skipWebhookIds],
    );
  }

  /** Records a delivery the receiver took (answered `status`, a 2xx). */
  async delivered(id: string, status: number | null): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET status = 'delivered', delivered_at = now(), last_status = $2, last_error = NULL, lease_until = NULL WHERE id = $1`,
      [id, status],
    );
  }

  /** Records a failed attempt: pending again after `retryInMs`, or failed for good. */
  async attemptFailed(id: string, attempt: FailedAttempt): Promise<void> {
    await this.db.query(
      `UPDATE webhook_deliveries SET status = $2, last_status = $3, last_error = $4, lease_until = NULL,
              next_attempt_at = now() + make_interval(secs => $5::float8 / 1000)
        WHERE id = $1`,
      [id, attempt.status, attempt.lastStatus, attempt.lastError, attempt.retryInMs],
    );
  }
}
