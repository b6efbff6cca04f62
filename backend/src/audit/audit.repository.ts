import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { AuditAction } from '@spectator/shared';
import type { DataSource, EntityManager } from 'typeorm';

/** A row of `audit_events` as written. */
export interface AuditEntry {
  projectId: string | null;
  action: AuditAction;
  actorKind: 'person' | 'token' | 'system';
  actorId: string | null;
  actorName: string | null;
  actorEmail: string | null;
  actorSubject: string | null;
  target: string | null;
  details: Record<string, unknown>;
}

export interface AuditRow extends AuditEntry {
  id: string;
  at: Date;
}

/** The SQL of the audit log. */
@Injectable()
export class AuditRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Appends an entry, in `manager`'s transaction when given (so it commits or rolls back with what it records). */
  async insert(entry: AuditEntry, manager?: EntityManager): Promise<void> {
    await (manager ?? this.db.manager).query(
      `INSERT INTO audit_events (project_id, action, actor_kind, actor_id, actor_name, actor_email, actor_subject, target, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        entry.projectId,
        entry.action,
        entry.actorKind,
        entry.actorId,
        entry.actorName,
        entry.actorEmail,
        entry.actorSubject,
        entry.target,
        JSON.stringify(entry.details),
      ],
    );
  }

  /** A project's entries, newest first, older than `before`, of one action and one actor when given. */
  async page(
    projectId: string,
    filter: { limit: number; before?: string; action?: AuditAction; actor?: string },
  ): Promise<AuditRow[]> {
    return this.db.query(
      `SELECT id::text, at, action, actor_kind AS "actorKind", actor_id AS "actorId", actor_name AS "actorName",
              actor_email AS "actorEmail", actor_subject AS "actorSubject", target, details, project_id AS "projectId"
         FROM audit_events
        WHERE project_id = $1
          AND ($2::bigint IS NULL OR id < $2::bigint)
          AND ($3::text IS NULL OR action = $3)
          AND ($4::text IS NULL OR actor_id::text = $4 OR lower(actor_email) = lower($4) OR actor_subject = $4)
        ORDER BY id DESC
        LIMIT $5`,
      [projectId, filter.before ?? null, filter.action ?? null, filter.actor ?? null, filter.limit],
    );
  }
}
